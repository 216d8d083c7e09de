"""The reference pipelines of ../shared/PIPELINES.md, one call each."""

from __future__ import annotations

from sluice.nf import Bypass, RandomSplit
from sluice.pipeline import Pipeline
from sluice.traffic import Stream

#: Delay SLO of the robot-control flow (µs).
RC_SLO_US = 35.0
#: Delay SLO of the bulk flows of RC (µs).
BULK_SLO_US = 100_000.0


def rc(n: int = 16, *, batch_size: int = 32, seed: int = 1) -> Pipeline:
    """Robot control: a random split over n gates; gate 0 is the robot-control
    flow through Bypass(1, 1) with a 35 µs SLO, gates 1..n-1 bulk flows
    through Bypass(10000, 0) with a 100 ms SLO."""
    if n < 1:
        raise ValueError(f"rc(n) needs n ≥ 1 branches, got {n}")
    p = Pipeline(f"rc({n})", batch_size=batch_size)
    src = p.source("src", [Stream()])
    split = p.module("split", RandomSplit([1.0] * n, seed=seed))
    p.connect(src, split)
    for i in range(n):
        name, nf, slo = ("rc", Bypass(1, 1), RC_SLO_US) if i == 0 else (f"bulk{i}", Bypass(10_000, 0), BULK_SLO_US)
        nf_module = p.module(name, nf)
        out = p.sink(f"out_{name}")
        p.connect(split, nf_module, gate=i)
        p.connect(nf_module, out)
        p.flow(name, [src, split, nf_module, out], slo_us=slo)
    return p


#: Pipelines by the name the CLI uses.
PIPELINES = {"rc": rc}
