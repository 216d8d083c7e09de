#!/usr/bin/env python3
"""Where a round goes, counted in instructions (callgrind), which machines
do not move: instructions per packet and per round of each round-cost
workload (see `sluice_lab::round_cost`), by part, for Sluice's walker
and, given FastClick's `click`, for FastClick on the same frames
through the same graph (the configuration `scripts/fastclick.py` times).

    scripts/round_breakdown.py [--batches 1,4,32] [--cases replay,chain,branch4] [--click PATH/TO/click] [--passes 8]

Needs valgrind. Each engine runs twice under callgrind, once with one
pass over the workload's 4096 frames after its warm-up and once with
1 + PASSES passes; the difference, per function, divided by the packets
the extra passes moved, is the steady state's cost with start-up,
loading and warm-up taken out, the same way for both engines (Sluice:
the `walk` example, timing on; FastClick: its `DriverManager` replays,
packets counted by the sink), Sluice's counted inside its rounds
alone (its clock's calibration at start-up runs for a time, not a
number of instructions). A FastClick "round" is one
`ReplayUnqueue` burst of B packets. Instructions are not time: a TSC
read is a few instructions that cost ~7 ns here."""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
CASES = ["replay", "chain", "branch4"]
#: Frames in the workload (one per flow), one pass.
FRAMES = 4096

#: A part of an engine's round: its name and the source files or
#: functions (for inlined library code) its instructions come from.
Parts = list[tuple[str, tuple[str, ...]]]

SLUICE_PARTS: Parts = [
    ("clock reads and conversion", ("quanta", "rdtsc")),
    ("delivery and delay histogram", ("graph/delivery.rs", "telemetry.rs", "hdrhistogram", "record_n")),
    ("NF work (parse, rewrite, route)", ("sluice-nf/", "src/wire/", "sluice_nf::")),
    ("source fill (synthetic replay)", ("sluice-traffic/", "SyntheticSource", "memcpy", "memmove")),
    ("packet pool (alloc, free)", ("pool.rs", "PacketPool")),
    ("walker: arrive, buffer, run, gates", ("graph/walk.rs", "buffer.rs", "batch.rs", "graph::walk")),
    ("round: entries, sampling, probe", ("graph/round.rs", "graph/gates.rs", "core_probe", "run_rounds", "graph::round")),
]

FASTCLICK_PARTS: Parts = [
    ("source (ReplayUnqueue: clone, copy)", ("ReplayUnqueue", "Packet::clone", "expensive_uniqueify", "memcpy", "memmove", "memset")),
    ("NF elements", ("Classifier", "CheckIPHeader", "IPRouteTable", "RadixIPLookup", "DecIPTTL", "EtherRewrite", "SetIPChecksum", "click_in_cksum")),
    ("sink and packet pool (kill, recycle)", ("Discard", "fast_kill", "Packet::kill", "recycle", "WritablePacket")),
    ("batch plumbing (push, split)", ("PacketBatch", "push_batch", "Port::", "Element::")),
    ("task scheduling", ("RouterThread", "Task::", "run_task", "Timer")),
]

LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(\S.*?):(\S.*?)(?:\s+\[.*\])?$")


def part_of(parts: Parts, source: str, function: str) -> str:
    """The part `function` (in file `source`) belongs to: by its file first, then by its name."""
    for name, keys in parts:
        if any(k in source for k in keys):
            return name
    for name, keys in parts:
        if any(k in function for k in keys):
            return name
    return "other"


def callgrind(cmd: list[str], parts: Parts, collect: Optional[str] = None) -> tuple[dict[str, int], str]:
    """Instructions of `cmd`'s run by part (only inside function `collect`,
    where given), and its stdout."""
    toggle = [f"--toggle-collect={collect}"] if collect else []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *toggle, *cmd], check=True, capture_output=True, text=True)
        text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(out)],
                              check=True, capture_output=True, text=True).stdout
    by_part: dict[str, int] = defaultdict(int)
    for line in text.splitlines():
        m = LINE.match(line)
        if m and "PROGRAM TOTALS" not in line:
            by_part[part_of(parts, m.group(2), m.group(3))] += int(m.group(1).replace(",", ""))
    return by_part, run.stdout


def steady(run: Callable[[int], tuple[dict[str, int], int]], passes: int) -> tuple[dict[str, float], int]:
    """Instructions per packet by part of the steady state: `run(n)` runs
    n passes and returns its instructions by part and the packets it
    moved; the difference of 1 + `passes` passes and 1 pass. Returns it
    and the packets the difference moved."""
    (small, moved_small), (large, moved_large) = run(1), run(1 + passes)
    packets = moved_large - moved_small
    if packets <= 0:
        raise SystemExit(f"round_breakdown.py: the longer run moved {moved_large} packets, the shorter {moved_small}")
    return {part: (large.get(part, 0) - small.get(part, 0)) / packets for part in set(small) | set(large)}, packets


def sluice(walk: Path, case: str, batch: int, passes: int) -> tuple[dict[str, float], float]:
    """Sluice's instructions per packet by part, and its packets per round."""
    rounds_of: dict[int, int] = {}

    def run(n: int) -> tuple[dict[str, int], int]:
        rounds_of[n] = n * FRAMES // batch
        # The rounds alone: the clock's calibration at start-up runs for a time, not a count of instructions.
        by_part, out = callgrind([str(walk), case, str(batch), str(rounds_of[n]), "on"], SLUICE_PARTS, collect="walk::run_rounds")
        m = re.search(r"(\d+) packets in", out)
        if not m:
            raise SystemExit(f"round_breakdown.py: the walk example said {out!r}")
        return by_part, int(m.group(1))

    per_packet, packets = steady(run, passes)
    return per_packet, packets / (rounds_of[1 + passes] - rounds_of[1])


def fastclick(click: Path, writer: Path, work: Path, case: str, batch: int, passes: int) -> dict[str, float]:
    """FastClick's instructions per packet by part."""
    def run(n: int) -> tuple[dict[str, int], int]:
        config = work / f"{case}-{batch}-{n}.click"
        config.write_text(subprocess.check_output([str(writer), case, str(batch), str(n), str(work / "frames.pcap")], text=True))
        by_part, out = callgrind([str(click), str(config)], FASTCLICK_PARTS)
        m = re.search(r"sluice-fastclick \S+ \S+ (\d+) (\d+)", out)
        if not m:
            raise SystemExit(f"round_breakdown.py: FastClick printed no count under {config.name}")
        return by_part, int(m.group(2))

    return steady(run, passes)[0]


def part_table(title: str, parts: Parts, columns: list[tuple[str, int]], results: dict[tuple[str, int], dict[str, float]]) -> str:
    """Markdown: instructions per packet by part, a column per (case, B)."""
    lines = [f"| {title}, instructions per packet | " + " | ".join(f"{c} B={b}" for c, b in columns) + " |", "|---|" + "---|" * len(columns)]
    for name in [p for p, _ in parts] + ["other"]:
        lines.append(f"| {name} | " + " | ".join(f"{results[col].get(name, 0):.0f}" for col in columns) + " |")
    lines.append("| **total** | " + " | ".join(f"**{sum(results[col].values()):.0f}**" for col in columns) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="1,4,32")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--passes", type=int, default=8, help="passes over the frames the difference is taken over")
    ap.add_argument("--click", type=Path, help="FastClick's userlevel click binary (see scripts/fastclick.py for its build)")
    args = ap.parse_args()
    columns = [(c, int(b)) for c in args.cases.split(",") for b in args.batches.split(",")]
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sluice-lab", "--example", "walk", "--example", "fastclick"], cwd=ROOT, check=True)
    examples = ROOT / "target" / "release" / "examples"
    ours = {col: sluice(examples / "walk", *col, args.passes) for col in columns}
    theirs: Optional[dict[tuple[str, int], dict[str, float]]] = None
    if args.click is not None:
        with tempfile.TemporaryDirectory() as tmp:
            theirs = {col: fastclick(args.click, examples / "fastclick", Path(tmp), *col, args.passes) for col in columns}
    header = ["case", "B", "Sluice instr/pkt", "Sluice instr/round"]
    if theirs is not None:
        header += ["FastClick instr/pkt", "FastClick instr/round", "Sluice / FastClick"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for col in columns:
        per_packet, per_round = sum(ours[col][0].values()), ours[col][1]
        row = f"| {col[0]} | {col[1]} | {per_packet:.0f} | {per_packet * per_round:.0f} |"
        if theirs is not None:
            click_packet = sum(theirs[col].values())
            row += f" {click_packet:.0f} | {click_packet * col[1]:.0f} | {per_packet / click_packet:.2f} |"
        print(row)
    print()
    print(part_table("Sluice", SLUICE_PARTS, columns, {col: ours[col][0] for col in columns}))
    if theirs is not None:
        print()
        print(part_table("FastClick", FASTCLICK_PARTS, columns, theirs))


if __name__ == "__main__":
    main()
