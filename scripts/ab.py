#!/usr/bin/env python3
"""A/B of two builds of Sluice on the engine, run interleaved in one session.

    scripts/ab.py --base REV [--runs 5] "run l2l3 --n 16 --controller max --periods 5" ...
    scripts/ab.py --base REV --walk [--runs 9] "chain 1" "replay 1" "branch4 4" ...

With --walk, each case is a round-cost workload and batch size that the
walker runs alone (the `walk` example of sluice-lab, pinned to core 1):
a change to the data path measured without the control loop around it.

Builds REV (a git revision) the way `make setup` builds the working tree
(release, its own virtualenv under /tmp/sluice-ab/REV), then runs every
case with both builds in turn, A (REV) then B (this tree) then B then A,
and prints each case's delivered rate: the median of each build and the
median, least and greatest of the paired ratios B/A. A ratio within the
machine's noise (±30% between runs here, less between paired ones) is no
change.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


def checkout(rev: str) -> Path:
    """Where revision `rev` is checked out and built (its tree in `tree/`)."""
    sha = subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "--short", rev], text=True).strip()
    home = Path("/tmp/sluice-ab") / sha
    tree = home / "tree"
    if not tree.exists():
        home.mkdir(parents=True, exist_ok=True)
        subprocess.check_call(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), sha])
    return home


def build_walk(tree: Path, target: Path) -> Path:
    """The `walk` example of the tree at `tree`, built (release) into `target`."""
    subprocess.check_call(["cargo", "build", "--release", "-q", "-p", "sluice-lab", "--example", "walk"], cwd=tree, env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    return target / "release" / "examples" / "walk"


def build(rev: str) -> Path:
    """The `sluice` command of revision `rev`, built once."""
    home = checkout(rev)
    tree = home / "tree"
    sluice = home / "venv" / "bin" / "sluice"
    if sluice.exists():
        return sluice
    subprocess.check_call([sys.executable, "-m", "venv", str(home / "venv")])
    pip = [str(home / "venv" / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.check_call(pip + ["maturin>=1.5,<2"])
    subprocess.check_call(pip + [str(tree)], env={"CARGO_TARGET_DIR": str(home / "target"), "PATH": "/usr/bin:/bin:" + str(Path.home() / ".cargo/bin")})
    return sluice


def rate(sluice: Path, case: str) -> float:
    """Delivered Mpps of one run of `sluice CASE`."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.check_call([str(sluice), *shlex.split(case), "--json", out.name], stdout=subprocess.DEVNULL)
        return float(json.load(open(out.name))["summary"]["rate_pps"]) / 1e6


def walk_rate(walk: Path, case: str) -> float:
    """Mpps of the walker alone on round-cost workload `case` ("chain 1": workload and batch size)."""
    workload, batch = case.split()
    rounds = str(4_000_000 // int(batch))
    out = subprocess.check_output(["taskset", "-c", "1", str(walk), workload, batch, rounds, "on"], text=True).split()
    return int(out[0]) / int(out[-2]) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="git revision of build A")
    parser.add_argument("--runs", type=int, default=5, help="paired runs per case")
    parser.add_argument("--walk", action="store_true", help="cases are walker workloads (`chain 1`), not `sluice` runs")
    parser.add_argument("cases", nargs="+", help="arguments of `sluice` (a run that accepts --json)")
    args = parser.parse_args()
    measure: Callable[[Path, str], float] = rate
    if args.walk:
        home = checkout(args.base)
        a, b = build_walk(home / "tree", home / "target"), build_walk(ROOT, ROOT / "target")
        measure = walk_rate
    else:
        a, b = build(args.base), ROOT / ".venv" / "bin" / "sluice"
    print(f"A = {args.base} ({a}), B = this tree ({b}); {args.runs} paired runs per case")
    print(f"{'case':60} {'A Mpps':>8} {'B Mpps':>8} {'B/A med':>8} {'min':>6} {'max':>6}")
    for case in args.cases:
        ra: list[float] = []
        rb: list[float] = []
        for i in range(args.runs):
            order = [(a, ra), (b, rb)] if i % 2 == 0 else [(b, rb), (a, ra)]
            for sluice, into in order:
                into.append(measure(sluice, case))
        ratios = [y / x for x, y in zip(ra, rb)]
        print(f"{case:60} {statistics.median(ra):8.3f} {statistics.median(rb):8.3f} {statistics.median(ratios):8.3f} {min(ratios):6.3f} {max(ratios):6.3f}", flush=True)


if __name__ == "__main__":
    main()
