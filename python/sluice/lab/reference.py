"""The published figures the experiments print beside their own (`published/`)."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Optional


def reference_dir() -> Optional[Path]:
    """$SLUICE_REFERENCE, else the tables shipped in the package (None when absent)."""
    env = os.environ.get("SLUICE_REFERENCE")
    folder = Path(env) if env else Path(__file__).resolve().parent / "published"
    return folder if folder.is_dir() else None


def table(name: str) -> list[dict[str, str]]:
    """Rows of reference CSV `name` ([] when it is not there)."""
    folder = reference_dir()
    if folder is None or not (folder / name).exists():
        return []
    with open(folder / name, newline="") as f:
        header, *rows = csv.reader(f)
    return [dict(zip(header, _rejoin_label(row, len(header)))) for row in rows]


def _rejoin_label(row: list[str], width: int) -> list[str]:
    """The published CSVs write labels like VRF(1,1) unquoted, so their
    commas split the first cell: the cells a row has beyond the header's
    `width` belong to its label."""
    label = len(row) - width + 1
    return [",".join(row[:label]), *row[label:]] if label > 1 else row
