"""Writing an experiment's results: NAME.json, NAME.csv, NAME.md and NAME.png in one folder."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Callable, NamedTuple


def write(
    out: Path,
    name: str,
    report: dict[str, Any],
    markdown: Callable[[list[dict[str, Any]]], str],
    plot: Callable[[list[dict[str, Any]], Path], None],
) -> None:
    """The report as JSON, its rows as CSV, the markdown table and the plot."""
    rows: list[dict[str, Any]] = report["rows"]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1))
    with open(out / f"{name}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out / f"{name}.md").write_text(markdown(rows))
    plot(rows, out / f"{name}.png")


class Headline(NamedTuple):
    """An experiment's figure for the README: ours and the paper's (one line each)."""

    ours: str
    published: str
