"""Writing an experiment's results: NAME.json, NAME.csv, NAME.md and NAME.png in one folder."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Callable, NamedTuple

from sluice.files import write_replacing


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
    write_replacing(out / f"{name}.json", json.dumps(report, indent=1))
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_replacing(out / f"{name}.csv", table.getvalue())
    write_replacing(out / f"{name}.md", markdown(rows))
    plot(rows, out / f"{name}.png")


class Headline(NamedTuple):
    """An experiment's figure for the README: ours and the paper's (one line each)."""

    ours: str
    published: str
