#!/usr/bin/env python3
"""Where a walker round goes: instructions per round of each round-cost
workload (see `sluice_lab::round_cost`), by part of the engine,
counted by callgrind (repeatable where times move ±30%).

    scripts/round_breakdown.py [--rounds N] [--batches 1,32]

Needs valgrind. Builds the `walk` example, runs each workload under
`valgrind --tool=callgrind --toggle-collect=walk::run_rounds` (the
rounds alone, timing on) and prints a markdown table: instructions per
round per part. Instructions are not time: a TSC read is a few
instructions of "clock reads" that cost ~9 ns here."""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ["replay", "chain", "branch4"]

#: Parts of a round, each recognised by the source file its instructions
#: come from, or for inlined library code by the function they run in.
PARTS: list[tuple[str, tuple[str, ...]]] = [
    ("clock reads and conversion", ("quanta", "rdtsc")),
    ("delivery and delay histogram", ("graph/delivery.rs", "telemetry.rs", "hdrhistogram", "record_n")),
    ("NF work (parse, rewrite, route)", ("sluice-nf/", "src/wire/", "sluice_nf::")),
    ("source fill (synthetic replay)", ("sluice-traffic/", "SyntheticSource", "memcpy", "memmove")),
    ("packet pool (alloc, free)", ("pool.rs", "PacketPool")),
    ("walker: arrive, buffer, run, gates", ("graph/walk.rs", "buffer.rs", "batch.rs", "graph::walk")),
    ("round: entries, sampling, probe", ("graph/round.rs", "graph/gates.rs", "core_probe", "run_rounds", "graph::round")),
]

LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(\S.*?):(\S.*?)(?:\s+\[.*\])?$")


def part_of(source: str, function: str) -> str:
    for name, keys in PARTS:
        if any(k in source for k in keys):
            return name
    for name, keys in PARTS:
        if any(k in function for k in keys):
            return name
    return "other"


def profile(walk: Path, case: str, batch: int, rounds: int) -> dict[str, float]:
    """Instructions per round of `case` at batch size `batch`, by part."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--toggle-collect=walk::run_rounds",
                        str(walk), case, str(batch), str(rounds), "on"], check=True, capture_output=True)
        text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(out)],
                              check=True, capture_output=True, text=True).stdout
    parts: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        m = LINE.match(line)
        if m and "PROGRAM TOTALS" not in line:
            parts[part_of(m.group(2), m.group(3))] += int(m.group(1).replace(",", "")) / rounds
    return dict(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20_000)
    ap.add_argument("--batches", default="1,32")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sluice-lab", "--example", "walk"], cwd=ROOT, check=True)
    walk = ROOT / "target" / "release" / "examples" / "walk"
    columns = [(c, b) for c in CASES for b in batches]
    results = {col: profile(walk, *col, args.rounds) for col in columns}
    print("| instructions per round | " + " | ".join(f"{c} B={b}" for c, b in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name in [p for p, _ in PARTS] + ["other"]:
        print(f"| {name} | " + " | ".join(f"{results[col].get(name, 0):.0f}" for col in columns) + " |")
    print("| **total** | " + " | ".join(f"**{sum(results[col].values()):.0f}**" for col in columns) + " |")


if __name__ == "__main__":
    main()
