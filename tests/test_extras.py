"""The product without its extras, as a plain `pip install` leaves it:
click and rich, the core without its lab. It imports and runs pipelines,
and each command that needs an extra says which one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Runs the CLI (`sys.argv[1:]`) with the extras' packages unimportable and
#: the lab's compiled module taken out, as in a core built without it.
WITHOUT_EXTRAS = """
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"matplotlib", "ortools", "highspy", "sklearn", "numpy", "scipy"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Absent())
import sluice._core
del sys.modules["sluice.lab._core"]
from sluice.cli import main
main(sys.argv[1:], prog_name="sluice")
"""


def sluice_without_extras(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_pipeline_runs_without_the_extras_and_a_plot_names_its_extra(tmp_path: Path) -> None:
    run = sluice_without_extras("run", "rc", "--n", "2", "--backend", "sim", "--periods", "2", "--period-ms", "10", "--json", "r.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "r.json").stat().st_size > 0
    plot = sluice_without_extras("run", "rc", "--n", "2", "--backend", "sim", "--periods", "1", "--period-ms", "10", "--plot", "r.png", cwd=tmp_path)
    assert plot.returncode == 2 and "plotting needs matplotlib, which is not installed: pip install 'sluice[plot]'" in plot.stderr, plot.stderr
    assert "delivered" not in plot.stdout, "refused before it ran"


def test_the_ilp_and_the_lab_name_their_extras(tmp_path: Path) -> None:
    heuristic = sluice_without_extras("embed", "mgw", "--cores", "10", "--method", "path-fit", cwd=tmp_path)
    assert heuristic.returncode == 0, heuristic.stderr
    ilp = sluice_without_extras("embed", "mgw", "--cores", "10", "--method", "ilp-sum", "--time-limit", "1", cwd=tmp_path)
    assert ilp.returncode == 2 and "pip install 'sluice[embed]'" in ilp.stderr, ilp.stderr
    lab = sluice_without_extras("experiment", "twfi", "--out", "out", cwd=tmp_path)
    assert lab.returncode == 2 and "the lab's measurements are not in this build of sluice._core" in lab.stderr, lab.stderr
