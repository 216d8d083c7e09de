"""`sluice experiment all`: the results page and the README's headline
figures come from the experiments' own reports, and a second run changes
nothing but figures."""

from __future__ import annotations

import re
from pathlib import Path

from test_cli import sluice

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
