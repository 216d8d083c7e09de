#!/usr/bin/env python3
"""Sluice against FastClick on the round-cost workloads, same machine, same run.

    scripts/fastclick.py --click PATH/TO/fastclick/bin/click [--runs 5] [--batches 1,4,32,256] [--sink discard]

Both engines replay the same 4096 frames from memory, one core each
(pinned to the same CPU), through the same graph (see
`sluice_lab::round_cost` and its `fastclick` example, which writes
the pcap and the Click configuration): Sluice's walker with its default
timing (delay histograms on), FastClick's `ReplayUnqueue(BURST B)` → each
NF's nearest Click element → a `Discard` (a router's usual sink; `--sink
counter` puts a `Counter` before it, which reads the clock twice a batch
for its rate estimators, labelled as such). Each engine warms up on one
pass over the frames, then times LOOPS passes inside its own process
(FastClick: a `DriverManager` reading the steady clock around them,
packets counted through the sink's `count` handler; every frame must
reach the sink). Runs interleave the engines; the table gives each
engine's median ns/pkt, the median of the paired ratios Sluice /
FastClick, and per engine the fit ns per round = T0 + T1·B (`sluice
experiment roundcost`'s fit). Run it with the Python of `make setup`
(.venv/bin/python), which has Sluice.

FastClick is not a dependency of Sluice: build it as its README gives
for speed, from github.com/tbarbette/fastclick:

    ./configure CFLAGS="-O3" CXXFLAGS="-std=c++11 -O3" --enable-batch --disable-linuxmodule \\
        --enable-userlevel --disable-dynamic-linking --enable-bound-port-transfer \\
        --disable-task-stats --disable-cpu-load --enable-intel-cpu && make

This script builds nothing of FastClick's: it prints the configure line
of the build it is given (from its config.log) and refuses a build
without batching or with task statistics or CPU-load accounting on
(each reads the clock or the cycle counter per task run), unless
`--any-build` is given, which labels the figures.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from sluice.lab import _core

ROOT = Path(__file__).resolve().parent.parent
CASES = ["replay", "chain", "branch4"]
#: Frames in the workload's pcap (one per flow).
FRAMES = 4096
#: The CPU both engines run on.
CPU = "1"
#: Defines of FastClick's configured build: (name, whether this comparison needs it on).
BUILD_DEFINES = (("HAVE_BATCH", True), ("HAVE_TASK_STATS", False), ("HAVE_CLICK_LOAD", False))


def examples(*names: str) -> list[Path]:
    """The release builds of sluice-lab's examples `names` (one cargo build)."""
    subprocess.check_call(["cargo", "build", "-q", "--release", "-p", "sluice-lab", *(a for n in names for a in ("--example", n))], cwd=ROOT)
    return [ROOT / "target" / "release" / "examples" / name for name in names]


def build_of(click: Path) -> tuple[Optional[str], list[str]]:
    """The configure line of the FastClick build `click` belongs to (None
    when its config.log is not found) and what about the build is not as
    this comparison needs it."""
    for root in (click.resolve().parent.parent, click.resolve().parent):
        log = root / "config.log"
        if not log.is_file():
            continue
        line = next((m.group(1) for m in re.finditer(r"^\s+\$ (\S*configure\b.*)$", log.read_text(errors="replace"), re.M)), None)
        headers = "".join(h.read_text(errors="replace") for h in (root / "include" / "click").glob("config*.h"))
        problems = [f"{name} is {'off' if want else 'on'}" for name, want in BUILD_DEFINES
                    if bool(re.search(rf"^#define {name} 1\b", headers, re.M)) != want]
        return line, problems
    return None, ["no config.log beside it: how it was built cannot be checked"]


def pinned(cmd: list[str]) -> str:
    """Stdout of `cmd` run on `CPU`; it must succeed."""
    run = subprocess.run(["taskset", "-c", CPU, *cmd], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"fastclick.py: {' '.join(cmd)} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return run.stdout + run.stderr


def sluice_ns(walk: Path, case: str, batch: int, loops: int) -> float:
    """Sluice's ns/pkt over `loops` passes of the frames in batches of `batch`."""
    out = pinned([str(walk), case, str(batch), str(loops * FRAMES // batch), "on"])
    m = re.search(r"(\d+) packets in \d+ rounds, (\d+) ns", out)
    if not m or int(m.group(1)) == 0:
        sys.exit(f"fastclick.py: the walk example said {out!r}")
    return int(m.group(2)) / int(m.group(1))


def click_ns(click: str, config: Path, expected: int) -> float:
    """FastClick's ns/pkt under `config`, which must deliver `expected` packets to its sink."""
    out = pinned([click, str(config)])
    m = re.search(r"sluice-fastclick (\S+) (\S+) (\d+) (\d+)", out)
    if not m:
        sys.exit(f"fastclick.py: FastClick printed no timing for {config.name}: {out.strip()[-2000:]}")
    t0, t1, n0, n1 = float(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4))
    if n1 - n0 != expected:
        sys.exit(f"fastclick.py: FastClick's sink counted {n1 - n0} packets under {config.name}, not the {expected} replayed")
    return (t1 - t0) * 1e9 / expected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--click", required=True, type=Path, help="FastClick's userlevel click binary")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", default="1,4,32,256")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--loops", type=int, default=1000, help="timed passes over the frames per measurement")
    parser.add_argument("--sink", choices=("discard", "counter"), default="discard")
    parser.add_argument("--any-build", action="store_true", help="measure a FastClick build that is not configured for speed, labelled")
    args = parser.parse_args()
    configure, problems = build_of(args.click)
    print(f"FastClick: {args.click}\n  built with: {configure or 'unknown'}")
    if problems:
        message = "FastClick's build is not as its README gives for speed: " + "; ".join(problems)
        if not args.any_build:
            sys.exit(f"fastclick.py: {message} (rebuild it, or pass --any-build to measure it anyway, labelled)")
        print(f"  WARNING: {message}; its figures below are not FastClick at its speed")
    print(f"  sink: {'Counter -> Discard (rate estimators on every batch)' if args.sink == 'counter' else 'Discard'}, BURST = B")
    batches = [int(b) for b in args.batches.split(",")]
    cases = args.cases.split(",")
    walk, writer = examples("walk", "fastclick")
    work = Path(tempfile.mkdtemp(prefix="sluice-fastclick-"))
    pcap = work / "frames.pcap"
    cells = [(case, batch) for case in cases for batch in batches]
    configs: dict[tuple[str, int], Path] = {}
    for case, batch in cells:
        configs[case, batch] = work / f"{case}-{batch}.click"
        configs[case, batch].write_text(subprocess.check_output([str(writer), case, str(batch), str(args.loops), str(pcap), args.sink], text=True))
    sluice: dict[tuple[str, int], list[float]] = {cell: [] for cell in cells}
    click: dict[tuple[str, int], list[float]] = {cell: [] for cell in cells}
    for run in range(args.runs):
        for cell in cells:
            # Both orders in turn, so that neither engine always runs first.
            for engine in ((sluice, click) if run % 2 == 0 else (click, sluice)):
                if engine is sluice:
                    sluice[cell].append(sluice_ns(walk, *cell, args.loops))
                else:
                    click[cell].append(click_ns(str(args.click), configs[cell], args.loops * FRAMES))
        print(f"run {run + 1} of {args.runs} done", flush=True)
    print(f"\n| case | B | Sluice ns/pkt | FastClick ns/pkt | Sluice / FastClick (paired, range of {args.runs}) |\n|---|---|---|---|---|")
    for cell in cells:
        ratios = [s / c for s, c in zip(sluice[cell], click[cell])]
        print(f"| {cell[0]} | {cell[1]} | {statistics.median(sluice[cell]):.1f} | {statistics.median(click[cell]):.1f} "
              f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
    if len(batches) < 2:
        return
    print("\n| case | engine | T0 ns / round | T1 ns / pkt |\n|---|---|---|---|")
    for case in cases:
        for name, engine in (("Sluice", sluice), ("FastClick", click)):
            t0, t1 = _core.round_fit([(b, statistics.median(engine[case, b]) * b) for b in batches])
            print(f"| {case} | {name} | {t0:.1f} | {t1:.2f} |")


if __name__ == "__main__":
    main()
