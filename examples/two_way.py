"""The smallest interesting case, built by hand: a two-way splitter feeding
two NFs (each 1000 cycles per batch + 100 per packet), one flow per branch,
one with a tight delay SLO (15 µs) and one loose (100 µs).

    .venv/bin/python examples/two_way.py [--periods N] [--backend engine|sim] [--plot two_way.png]
"""

from __future__ import annotations

import argparse
from typing import Optional

import sluice
from sluice import Bypass, Pipeline, RandomSplit, Stream


def build(loose_worker: Optional[int] = None) -> Pipeline:
    """The pipeline; `loose_worker` puts the loose branch on another worker."""
    p = Pipeline("two-way", batch_size=32)
    src = p.source("src", [Stream()])
    split = p.module("split", RandomSplit([1, 1]))
    tight = p.module("tight_nf", Bypass(1000, 100))
    loose = p.module("loose_nf", Bypass(1000, 100), worker=loose_worker)
    out_tight, out_loose = p.sink("out_tight"), p.sink("out_loose")
    p.connect(src, split)
    p.connect(split, tight, gate=0)
    p.connect(split, loose, gate=1)
    p.connect(tight, out_tight)
    p.connect(loose, out_loose)
    p.flow("tight", [src, split, tight, out_tight], slo_us=15)
    p.flow("loose", [src, split, loose, out_loose], slo_us=100)
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--periods", type=int, default=10)
    ap.add_argument("--period-ms", type=float, default=100.0)
    ap.add_argument("--backend", choices=sluice.backends(), default="engine")
    ap.add_argument("--plot", help="write a PNG per controller, CONTROLLER inserted before the suffix")
    args = ap.parse_args()
    pipeline = build()
    print(f"{'controller':>10} {'Mpps':>7} {'batch':>6} {'viol%':>6} {'tight p95 µs':>13} {'loose p95 µs':>13}")
    for controller in sluice.controllers():
        r = pipeline.run(controller, periods=args.periods, period_ms=args.period_ms, backend=args.backend)
        last = [p for p in r.periods if not p["warmup"]][-1]["flows"]
        s = r.summary
        print(
            f"{controller:>10} {s['rate_pps'] / 1e6:7.3f} {s['mean_batch']:6.1f} {s['violation_pct']:6.0f}"
            f" {last['tight']['p95_us']:13.1f} {last['loose']['p95_us']:13.1f}"
        )
        if args.plot:
            stem, dot, ext = args.plot.rpartition(".")
            r.plot(f"{stem}-{controller}.{ext}" if dot else f"{args.plot}-{controller}")


if __name__ == "__main__":
    main()
