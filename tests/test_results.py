"""`sluice experiment all`: the results page and the README's headline
figures come from the experiments' own reports, and a second run changes
nothing but figures."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from test_cli import sluice

from sluice.lab import results

README = """# A project

Some text.

<!-- headline-figures:begin -->
stale
| [overhead](docs/RESULTS.md#overhead) | kept 1 ms | 89.1 ms | `sluice experiment overhead --quick` |
<!-- headline-figures:end -->

More text.
"""


def _shape(text: str) -> str:
    """The text with every number replaced: what must not change between runs."""
    return re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", text)


def test_all_writes_the_results_page_and_the_readme_block(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(README)
    notes = tmp_path / "docs" / "notes"
    notes.mkdir(parents=True)
    (notes / "regime.md").write_text("Why the figure is what it is.\n")
    # An earlier page whose overhead figures no run here remakes: they stay.
    earlier = "# Measured results\n\n## Headline figures\n\n| [overhead](#overhead) | kept 1 ms | 89.1 ms | `x` |\n\n## overhead\n\nAn earlier table.\n"
    (tmp_path / "docs" / "RESULTS.md").write_text(earlier)
    args = ("experiment", "all", "--quick", "--only", "regime", "--out", "docs", "--runs", "runs", "--readme", "README.md")
    first = sluice(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    page = (tmp_path / "docs" / "RESULTS.md").read_text()
    assert "## Machine" in page and "| cores |" in page
    assert "## regime" in page and "`sluice experiment regime --quick`" in page
    assert "| branching |" in page, "the experiment's own table"
    assert "![regime](results/regime.png)" in page and (tmp_path / "docs" / "results" / "regime.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "docs" / "results" / "regime.json").read_text())["rows"], "the raw report beside the plot"
    assert re.search(r"^Measured at commit `unknown` on \d{4}-\d\d-\d\d, quick mode, on .+\.$", page, re.M), "stamped (no checkout here)"
    assert "Why the figure is what it is." in page, "the hand-written note sits under its table"
    assert "| [overhead](#overhead) | kept 1 ms |" in page and page.index("## overhead\n\nAn earlier table.") < page.index("## regime"), \
        "an experiment that did not run keeps its row and section, in the catalog's order"
    readme = (tmp_path / "README.md").read_text()
    assert "stale" not in readme and readme.startswith("# A project") and readme.rstrip().endswith("More text.")
    assert readme.index("| [overhead](docs/RESULTS.md#overhead) | kept 1 ms |") < readme.index("| [regime]"), "the README keeps it too"
    row = next(line for line in readme.splitlines() if line.startswith("| [regime]"))
    assert "(docs/RESULTS.md#regime)" in row and "projgrad / Null" in row and "`sluice experiment regime --quick`" in row
    second = sluice(*args, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert _shape((tmp_path / "docs" / "RESULTS.md").read_text()) == _shape(page)
    assert _shape((tmp_path / "README.md").read_text()) == _shape(readme)


def test_a_readme_without_the_block_is_refused(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# No block\n")
    out = sluice("experiment", "all", "--quick", "--only", "regime", "--out", "docs", "--runs", "runs", "--readme", "README.md", cwd=tmp_path)
    assert out.returncode != 0 and "no <!-- headline-figures:begin -->" in out.stderr


def test_check_names_the_sections_whose_code_changed_since_their_stamp() -> None:
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    # A commit before the lab was its own package: every experiment's code changed since.
    moved = subprocess.run(["git", "rev-list", "-1", "HEAD", "--", "python/sluice/experiments"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    old = subprocess.run(["git", "rev-parse", "--short", f"{moved}^"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    section = "## {name}\n\nMeasured at commit `{commit}` on 2026-11-28, quick mode.\n\n"
    page = "".join(section.format(name=e.name, commit=head) for e in results.CATALOG)
    assert results.check(page) == [], "nothing is stale at HEAD"
    page = page.replace(section.format(name="regime", commit=head), section.format(name="regime", commit=old))
    page = page.replace(section.format(name="static", commit=head), "## static\n\nA table.\n\n")
    page = page.replace(f"`{head}` on 2026-11-28, quick mode.\n\n", "`abc1234-dirty` on 2026-11-28, quick mode.\n\n", 1)
    stale = {line.split(":")[0]: line for line in results.check(page)}
    assert "its code changed since" in stale["regime"] and "regime.py" in stale["regime"], stale
    assert "no stamp" in stale["static"], stale
    assert "not at a commit" in stale["overhead"], stale
    assert results.sources("static")[0].name in {"static.py", "output.py"} and any(p.name == "static.py" for p in results.sources("static"))
