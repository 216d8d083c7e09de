#!/usr/bin/env python3
"""Sluice against FastClick on the round-cost workloads, same machine, same run.

    scripts/fastclick.py --click PATH/TO/fastclick/bin/click [--runs 5] [--batches 1,4,32,256] [--click-burst N]

Both engines replay the same frames from memory, one core each (pinned
to the same CPU), through the same graph (see `sluice_pipeline::round_cost`
and its `fastclick` example, which writes the pcap and the Click
configuration): Sluice's walker with timing on, FastClick userlevel
built with `--enable-batch` (`ReplayUnqueue` → the NFs' nearest Click
elements → `Discard`). Each engine is timed as a whole process at two
packet counts, and the difference over the packets between them is its
ns/pkt: start-up and loading cancel out. Runs interleave the engines;
the table gives each engine's median ns/pkt, the median of the paired
ratios Sluice / FastClick, and per engine the fit ns per round = T0 +
T1·B (`sluice experiment roundcost`'s fit). With `--click-burst N`
FastClick replays in bursts of N whatever B (as a configuration that
leaves `ReplayUnqueue`'s burst at its default does). Run it with the Python of
`make setup` (.venv/bin/python), which has Sluice.

FastClick is not a dependency of Sluice: build it yourself, e.g. from
github.com/tbarbette/fastclick with
`./configure --enable-userlevel --disable-linuxmodule --enable-batch --disable-dpdk && make`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from sluice import _core

ROOT = Path(__file__).resolve().parent.parent
CASES = ["replay", "chain", "branch4"]
#: Frames in the workload's pcap (one per flow).
FRAMES = 4096
#: Replays of the pcap in the short and the long run of each measurement.
LOOPS = (40, 400)
#: The CPU both engines run on.
CPU = "1"


def example(name: str) -> Path:
    """The release build of example `name` of sluice-pipeline."""
    subprocess.check_call(["cargo", "build", "-q", "--release", "-p", "sluice-pipeline", "--example", name], cwd=ROOT)
    return ROOT / "target" / "release" / "examples" / name


def seconds(cmd: list[str]) -> float:
    """Wall time of `cmd` pinned to `CPU` (s); it must succeed."""
    start = time.perf_counter()
    subprocess.run(["taskset", "-c", CPU, *cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def ns_per_pkt(run: Callable[[int], list[str]]) -> float:
    """ns/pkt of an engine whose command for `loops` replays is `run(loops)`."""
    short, long = (seconds(run(loops)) for loops in LOOPS)
    return (long - short) * 1e9 / ((LOOPS[1] - LOOPS[0]) * FRAMES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--click", required=True, help="FastClick's userlevel click binary")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", default="1,4,32,256")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--click-burst", type=int, help="FastClick's burst whatever B (ReplayUnqueue's default is 64); default: B")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    walk, writer = example("walk"), example("fastclick")
    work = Path(tempfile.mkdtemp(prefix="sluice-fastclick-"))
    pcap = work / "frames.pcap"
    configs: dict[tuple[str, int, int], Path] = {}
    for case in args.cases.split(","):
        for batch in batches:
            for loops in LOOPS:
                path = work / f"{case}-{batch}-{loops}.click"
                burst = args.click_burst or batch
                path.write_text(subprocess.check_output([str(writer), case, str(burst), str(loops), str(pcap)], text=True))
                configs[case, batch, loops] = path
    cells = sorted({(c, b) for c, b, _ in configs}, key=lambda cb: (args.cases.split(",").index(cb[0]), cb[1]))
    sluice: dict[tuple[str, int], list[float]] = {cell: [] for cell in cells}
    click: dict[tuple[str, int], list[float]] = {cell: [] for cell in cells}
    for run in range(args.runs):
        for case, batch in cells:
            # Both orders in turn, so that neither engine always runs first.
            order = [sluice, click] if run % 2 == 0 else [click, sluice]
            for engine in order:
                if engine is sluice:
                    ns = ns_per_pkt(lambda loops: [str(walk), case, str(batch), str(loops * FRAMES // batch), "on"])
                else:
                    ns = ns_per_pkt(lambda loops: [args.click, str(configs[case, batch, loops])])
                engine[case, batch].append(ns)
        print(f"run {run + 1} of {args.runs} done", flush=True)
    print("\n| case | B | Sluice ns/pkt | FastClick ns/pkt | Sluice / FastClick (paired) |\n|---|---|---|---|---|")
    for cell in cells:
        ratios = [s / c for s, c in zip(sluice[cell], click[cell])]
        print(f"| {cell[0]} | {cell[1]} | {statistics.median(sluice[cell]):.1f} | {statistics.median(click[cell]):.1f} "
              f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
    print("\n| case | engine | T0 ns / round | T1 ns / pkt |\n|---|---|---|---|")
    for case in dict.fromkeys(c for c, _ in cells):
        batches = [batch for c, batch in cells if c == case]
        if len(batches) < 2:
            continue
        for name, engine in (("Sluice", sluice), ("FastClick", click)):
            t0, t1 = _core.round_fit([(b, statistics.median(engine[case, b]) * b) for b in batches])
            print(f"| {case} | {name} | {t0:.1f} | {t1:.2f} |")

if __name__ == "__main__":
    main()
