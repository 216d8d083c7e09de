"""Group 1 and 5 of the robustness issue: loss is never silent, lossless
means lossless, and every flow's numbers are right."""

from __future__ import annotations

import pytest
from conftest import ENGINE_AND_SIM

from sluice import Bypass, Pipeline, RandomSplit, Stream
from sluice.pipelines import rc


def _rc4_on_two_workers() -> Pipeline:
    p = rc(4)
    for name in p.modules():
        if name.startswith(("bulk", "out_bulk")):
            p.set_worker(name, 1)
    return p


@pytest.mark.parametrize("controller", ["nfvnice", "wfq-opt"])
@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_backpressure_crosses_the_ring_so_rc4_on_two_workers_loses_nothing(controller: str, backend: str) -> None:
    r = _rc4_on_two_workers().run(controller, periods=3, period_ms=20, backend=backend)
    s = r.summary
    assert s["lossless"] and s["dropped"] == 0 and s["accounted"], s
    assert s["delivered"] > 1000
    for flow, t in r.flow_totals.items():
        assert t["generated"] > 0 and t["generated"] == t["delivered"] + t["dropped"], (flow, t)


def test_flows_a_splitter_decides_count_what_they_were_given() -> None:
    totals = rc(4).run("max", periods=2, period_ms=10, backend="sim").flow_totals
    assert all(t["generated"] > 0 and t["generated"] == t["delivered"] for t in totals.values()), totals


def test_an_outage_charges_its_drops_to_the_flows_that_lost_them() -> None:
    p = Pipeline("two-way")
    src = p.source("src", [Stream()])
    split = p.module("split", RandomSplit([1, 1]))
    tight = p.module("tight_nf", Bypass(100, 10), worker=1)
    loose = p.module("loose_nf", Bypass(100, 10))
    out_t, out_l = p.sink("out_tight", worker=1), p.sink("out_loose")
    p.connect(src, split)
    p.connect(split, tight, gate=0)
    p.connect(tight, out_t)
    p.connect(split, loose, gate=1)
    p.connect(loose, out_l)
    p.flow("tight", [src, split, tight, out_t], slo_us=50)
    p.flow("loose", [src, split, loose, out_l], slo_us=500)
    p.outage(1, 1, 3)
    r = p.run("null", periods=3, period_ms=10, backend="sim")
    s, t = r.summary, r.flow_totals
    assert s["accounted"] and not s["lossless"] and s["drops"]["worker_down"] == s["dropped"] > 0, s
    assert t["tight"]["dropped"] == s["dropped"] and t["loose"]["dropped"] == 0, t
    for f in t.values():
        assert f["generated"] == f["delivered"] + f["dropped"], t


def test_the_run_table_says_lossless_only_when_nothing_was_lost(sluice) -> None:  # type: ignore[no-untyped-def]
    out = sluice("run", "rc", "--n", "4", "--periods", "1", "--period-ms", "10", "--backend", "sim")
    assert out.code == 0 and "yes" in out.out, out.err
