"""The Python API: building, validating, running, and what a run returns."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

import jsonschema_rs
import pytest
from conftest import ENGINE_AND_SIM, L2L3_COSTS, Costs

import sluice
from sluice import _core
from sluice import Bypass, Pipeline, RandomSplit, Stream
from sluice.nf import Lpm, Reframer, TtlDecrement
from sluice.pipelines import l2l3, rc
from sluice.schedulers import CoDelConfig, FqCoDelConfig
from sluice.run_params import RunParams
from sluice.traffic import Template


def small(nf: Bypass = Bypass(100, 10), slo_us: Optional[float] = 100, **flow_kw: object) -> Pipeline:
    """source → one Bypass → sink, one flow "f"."""
    p = Pipeline("small")
    src = p.source("src")
    module = p.module("nf", nf)
    out = p.sink("out")
    p.chain(src, module, out)
    p.flow("f", [src, module, out], slo_us=slo_us, **flow_kw)  # type: ignore[arg-type]
    return p


def test_validate_returns_the_model_with_defaults() -> None:
    model = rc(4).validate()
    names = [m["name"] for m in model["modules"]]
    assert names[:3] == ["src", "split", "rc"]
    controlled = {m["name"]: m["controlled"] for m in model["modules"]}
    assert controlled["rc"] and controlled["bulk1"], "Bypass with a known profile and β ≤ 0.5 is controlled"
    assert not controlled["split"], "no profile, not controlled"
    assert model["flows"][0]["slo_ns"] == 35_000


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda p: p.flow("g", ["src", "nf", "out"], slo_us=0), "flow 'g': delay SLO must be > 0 µs"),
        (lambda p: p.flow("g", ["src", "out"], slo_us=5), "flow 'g': path does not follow the graph: no edge from 'src' to 'out'"),
        (lambda p: p.flow("g", ["src", "ghost"], slo_us=5), "flow 'g' path names unknown module 'ghost'"),
        (lambda p: p.module("lonely", Bypass(1, 1)), "module 'lonely' outgate 0 is dangling"),
        (lambda p: p.connect("nf", "out", gate=3), "module 'nf' has no outgate 3 (it has 1)"),
        (lambda p: setattr(p, "batch_size", 0), "batch size 0 is out of range 1..=256"),
        (lambda p: setattr(p, "batch_size", 257), "batch size 257 is out of range 1..=256"),
    ],
)
def test_bad_pipelines_are_refused_with_the_culprit_named(mutate, message) -> None:  # type: ignore[no-untyped-def]
    p = small()
    mutate(p)
    with pytest.raises(ValueError, match=re.escape(message)):
        p.validate()


def test_a_cycle_is_refused() -> None:
    p = Pipeline()
    src = p.source("src", [Stream()])
    a = p.module("a", RandomSplit([1, 1]))
    b = p.module("b", Bypass(1, 1))
    p.connect(src, a)
    p.connect(a, b, gate=0)
    p.connect(b, a)
    p.connect(a, p.sink("out"), gate=1)
    with pytest.raises(ValueError, match="cycle through module"):
        p.validate()


def test_unknown_controller_and_backend_are_named() -> None:
    with pytest.raises(ValueError, match="unknown controller 'magic'"):
        small().run("magic", periods=1, period_ms=5)
    with pytest.raises(ValueError, match=re.escape("RunParams: backend: unknown kind `fpga` (known: engine, sim)")):
        small().run("null", periods=1, period_ms=5, backend="fpga")


@pytest.mark.parametrize(
    ("run", "error", "message"),
    [
        (lambda p: p.run(123), TypeError, "controller must be a built-in's name or a sluice.controller.Controller, not int"),
        (lambda p: p.run(periods=-1), ValueError, "RunParams: periods: invalid value: integer `-1`"),
        (lambda p: p.run(periods=2.5), ValueError, "RunParams: periods: invalid type: floating point `2.5`"),
        (lambda p: p.run(warmup_periods=-1), ValueError, "RunParams: warmup_periods: invalid value: integer `-1`"),
        (lambda p: p.run(keep_periods=0), ValueError, "RunParams: keep_periods: 0 is out of range 1..="),
        (lambda p: p.run(period_ms=0), ValueError, "RunParams: period_ms: control period 0 ms must be > 0"),
        (lambda p: p.run(slo_statistic="p90"), ValueError, "RunParams: slo_statistic: unknown kind `p90`"),
        (lambda p: p.run(delta=0.5), ValueError, "RunParams: delta: δ = 0.5 must be in [0, 0.5)"),
    ],
)
def test_a_bad_run_argument_is_named(run: Callable[[Pipeline], object], error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        run(small())


def test_a_python_controller_s_nan_trigger_is_named() -> None:
    class Broken(sluice.Controller):
        name = "broken"

        def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
            return {"triggers": {"nf": float("nan")}}

    with pytest.raises(ValueError, match=re.escape("controller 'broken': step() returned nan at triggers.nf: not a finite number")):
        small().run(Broken(), periods=2, period_ms=5, backend="sim")


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_run_report_has_the_documented_shape_and_accounts_losslessly(backend: str) -> None:
    seen: list[int] = []
    r = rc(4).run("max", periods=2, period_ms=20, backend=backend, on_period=lambda p: seen.append(p["period"]))
    assert seen == [0, 1, 2]
    d = json.loads(r.to_json())
    assert {"pipeline", "controller", "backend", "batch_size", "period_ms", "summary", "periods"} <= set(d)
    assert d["pipeline"] == "rc(4)" and d["controller"] == "max" and d["backend"] == backend
    assert {"rate_pps", "mean_batch", "violation_pct", "generated", "delivered", "dropped", "in_flight"} <= set(d["summary"])
    period = d["periods"][-1]
    assert {"t_s", "rate_pps", "mean_batch", "flows", "modules"} <= set(period)
    assert {"rate_pps", "p50_us", "p95_us", "p99_us", "max_us", "slo_us"} <= set(period["flows"]["rc"])
    assert {"trigger", "x", "r", "b_in", "b"} <= set(period["modules"]["rc"])
    assert period["modules"]["rc"]["trigger"] == 32
    s = r.summary
    assert s["generated"] > 0 and s["generated"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert s["in_flight"] == 0
    for p in r.periods:
        t = p["totals"]
        assert t["generated"] == t["delivered"] + t["dropped"] + t["in_flight"]


def test_engine_and_simulator_agree_on_batches_and_shares() -> None:
    """RC(4) under Max: the same batch sizes and delivered shares per flow on both backends."""
    results = {b: rc(4).run("max", periods=3, period_ms=50, backend=b) for b in ("engine", "sim")}

    def shares(r: sluice.RunResult) -> dict[str, float]:
        measured = [p for p in r.periods if not p["warmup"]]
        per_flow = {f: sum(p["flows"][f]["rate_pps"] for p in measured) for f in measured[0]["flows"]}
        total = sum(per_flow.values())
        return {f: v / total for f, v in per_flow.items()}

    def arrival_batch(r: sluice.RunResult, module: str) -> float:
        return float(r.periods[-1]["modules"][module]["b_in"])

    engine, sim = results["engine"], results["sim"]
    assert engine.summary["mean_batch"] == pytest.approx(32, abs=0.5)
    assert sim.summary["mean_batch"] == pytest.approx(32, abs=0.5)
    for flow, share in shares(sim).items():
        assert shares(engine)[flow] == pytest.approx(share, abs=0.02), flow
        assert share == pytest.approx(0.25, abs=0.02)
    for module in ("rc", "bulk1", "bulk2", "bulk3"):
        assert arrival_batch(engine, module) == pytest.approx(arrival_batch(sim, module), rel=0.1)


class _SetTwice(sluice.Controller):
    """No buffers in period 0; in period 1 one of L2L3(4)'s next hops gets
    the trigger all four get from period 2 on."""

    name = "set-twice"

    def __init__(self) -> None:
        self.periods = 0

    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        self.periods += 1
        if self.periods == 1:
            return {"triggers": {"ttl0": 20}}
        return {"triggers": {f"ttl{i}": 20 for i in range(4)}}


def _mean_delay_spread(r: sluice.RunResult, period: int) -> float:
    """How far apart the flows' mean delays lie in `period` (share of the least)."""
    means = [f["mean_us"] for f in r.periods[period]["flows"].values()]
    return max(means) / min(means) - 1


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_sibling_flows_wait_alike_whatever_the_gate_order_and_trigger_history(backend: str,
                                                                              nf_costs: Callable[[Costs], None]) -> None:
    """A splitter serves its gates in a drawn order, so no branch always
    goes first; and buffers set alike fire in step once set, whatever
    their triggers were before (every buffer at a trigger some buffer just
    took releases what it holds, ttl0 too though its trigger stays).
    Releasing only the buffers whose trigger changed (here not ttl0's)
    spreads the four flows' mean delays by 2.4% in the simulator in
    periods 2 and 3, against 0.2% now; the walker with a fixed order and
    triggers read at each arrival spread them 10%. The engine runs the
    same rule (0.3–0.7% alone here, 2.6–4.8% under the old rule), but a
    period in which its worker loses its core spreads them by whatever
    the packets then in buffers lost (6–9% beside one busy loop on two
    cores, up to 50% beside two): the engine's spread is the machine's,
    so only the simulator's is bounded; the engine's run checks that the
    triggers land."""
    nf_costs(L2L3_COSTS)
    r = l2l3(4).run(_SetTwice(), periods=4, period_ms=20, backend=backend)
    if backend == "sim":
        assert max(_mean_delay_spread(r, period) for period in (0, 2, 3)) < 0.01
    assert {m["trigger"] for name, m in r.periods[3]["modules"].items() if name.startswith("ttl")} == {20}


def test_a_splitter_serves_the_gate_with_the_tighter_slo_first() -> None:
    """Two like branches behind a split; the flow on gate 1 has the tighter
    SLO, so its branch runs first in every round and its packets never
    wait for the other branch's run (5000 cycles)."""
    p = Pipeline("two-like")
    src = p.source("src")
    split = p.module("split", RandomSplit([1, 1]))
    a, b = p.module("a", Bypass(5000, 10)), p.module("b", Bypass(5000, 10))
    out_a, out_b = p.sink("out_a"), p.sink("out_b")
    p.connect(src, split)
    p.connect(split, a, gate=0); p.connect(a, out_a)
    p.connect(split, b, gate=1); p.connect(b, out_b)
    p.flow("loose", [src, split, a, out_a], slo_us=1000)
    p.flow("tight", [src, split, b, out_b], slo_us=100)
    flows = p.run("null", periods=2, period_ms=20, backend="sim").periods[-1]["flows"]
    run_us = 5000 * _core.ns_per_cycle() / 1000
    assert flows["tight"]["mean_us"] + 0.9 * run_us < flows["loose"]["mean_us"], flows


def test_a_flows_rate_paces_its_stream() -> None:
    p = small(Bypass(10, 1), slo_us=1000, rate_pps=50_000)
    r = p.run("null", periods=3, period_ms=50, backend="sim")
    assert r.summary["rate_pps"] == pytest.approx(50_000, rel=0.01)


def test_rate_and_slo_schedules_change_per_period() -> None:
    p = small(rate_pps=10_000, rate_schedule=[(2, 40_000)], slo_schedule=[(2, 300)])
    r = p.run("null", periods=3, period_ms=20, warmup_periods=0, backend="sim")
    rates = [round(q["flows"]["f"]["rate_pps"], -3) for q in r.periods]
    slos = [q["flows"]["f"]["slo_us"] for q in r.periods]
    assert rates == [10_000, 10_000, 40_000]
    assert slos == [100, 100, 300]


def test_csv_and_plot_are_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = rc(2).run("null", periods=2, period_ms=10, backend="sim")
    csv_path, png_path = tmp_path / "r.csv", tmp_path / "r.png"
    text = r.to_csv(str(csv_path))
    header = text.splitlines()[0].split(",")
    assert "flow.rc.p95_us" in header and "module.rc.trigger" in header
    assert len(text.splitlines()) == 1 + 3
    r.plot(str(png_path))
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(OSError, match="No space left"):
        r.plot("/dev/full")


def test_two_way_example_builds_and_runs() -> None:
    import two_way

    r = two_way.build().run("max", periods=2, period_ms=10, backend="sim")
    assert set(r.periods[-1]["flows"]) == {"tight", "loose"}
    assert r.periods[-1]["flows"]["tight"]["slo_us"] == 15


def test_weighted_fair_mode_with_backpressure_is_lossless() -> None:
    p = rc(4)
    p.scheduler = {"mode": "wfq", "backpressure_pkts": 256}
    for backend in ("sim", "engine"):
        r = p.run("max", periods=2, period_ms=20, backend=backend)
        s = r.summary
        assert s["delivered"] > 0 and s["dropped"] == 0
        assert s["generated"] == s["delivered"] + s["in_flight"]
    with pytest.raises(ValueError, match=re.escape("Scheduler: mode: unknown kind `edf` (known: rtc, wfq)")):
        Pipeline(scheduler="edf")
    with pytest.raises(ValueError, match=re.escape('Scheduler: backpressure_pkts: applies to mode "wfq" only')):
        Pipeline(backpressure_pkts=64)


def test_modules_placed_on_another_worker_receive_over_rings() -> None:
    import two_way

    p = two_way.build(loose_worker=1)
    r = p.run("max", periods=2, period_ms=20, backend="engine")
    last = r.periods[-1]
    assert len(last["workers"]) == 2
    assert last["flows"]["loose"]["delivered"] > 0
    s = r.summary
    assert s["in_flight"] == 0 and s["generated"] == s["delivered"] + s["dropped"]


def test_arrivals_beyond_the_receive_queue_are_counted_as_missed() -> None:
    p = small(Bypass(10_000, 0), slo_us=None, rate_pps=50e6)  # far beyond what Bypass(10000, 0) can take
    s = p.run("null", periods=2, period_ms=20, backend="sim").summary
    assert s["missed"] > 0
    assert s["generated"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert s["generated"] + s["missed"] == pytest.approx(50e6 * 0.06, rel=0.01), "every arrival is either generated or missed"


def test_a_spare_worker_idles_while_no_worker_is_in_inherent_violation() -> None:
    p = rc(4)
    p.spare_workers = 1
    assert Pipeline.from_spec(p.spec()).spare_workers == 1
    r = p.run("null", periods=3, period_ms=20, backend="sim")
    assert r.moves == {}, "three bulk branches at full batches (~12 µs) fit in the 35 µs SLO"
    assert all(len(q["workers"]) == 2 and q["workers"][1]["busy_fraction"] == 0 for q in r.periods)
    with pytest.raises(ValueError, match="spare_workers: invalid value: integer `-1`"):
        Pipeline("x", spare_workers=-1).validate()


def test_a_reframer_sends_flows_as_runs_and_names_its_counters() -> None:
    p = Pipeline("reframed")
    src = p.source("src", [Stream(Template(src_port=1000 + i), flow="f", rate_pps=100_000) for i in range(16)])
    ref = p.module("reframer", Reframer(t_buff_us=50, max_burst=64))
    ttl = p.module("ttl", TtlDecrement())
    out = p.sink("out")
    p.chain(src, ref, ttl, out)
    p.flow("f", [src, ref, ttl, out])
    r = p.run("null", periods=3, period_ms=10, backend="sim")
    c = r.nf_counters("reframer")
    assert c["packets_in"] == c["packets_out"] == r.flow_totals["f"]["delivered"] > 0
    assert c["packets_out"] / c["runs_out"] > 4 * c["packets_in"] / c["runs_in"], c
    assert r.nf_counters("ttl") == {}
    assert r.periods[-1]["modules"]["reframer"]["nf"]["released_timeout"] > 0
    with pytest.raises(KeyError, match=r"no module 'reframr' in this run of reframed \(it has src, reframer, ttl, out\)"):
        r.nf_counters("reframr")


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_a_bypass_that_costs_nothing_runs_as_an_uncontrolled_pass_through(backend: str) -> None:
    p = small(Bypass(0, 0), slo_us=None, rate_pps=100_000)
    assert {m["name"]: m["controlled"] for m in p.validate()["modules"]}["nf"] is False
    s = p.run("projgrad", periods=2, period_ms=20, backend=backend).summary
    assert s["lossless"] and s["delivered"] > 0, s


def _closed(schema: Any) -> Any:
    """`schema` with every object that lists its fields refusing others:
    a key the core writes that its type does not declare fails too."""
    if isinstance(schema, dict):
        closed = {k: _closed(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            closed["additionalProperties"] = False
        return closed
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


def _validator(output: str, definition: Optional[str] = None) -> Any:
    schema = _closed(json.loads(_core.part_schema(output)))
    if definition is not None:
        schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema_rs.validator_for(schema)


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_what_a_run_returns_is_what_its_generated_types_say(backend: str) -> None:
    # The report, each period on_period receives and the model: exactly
    # the fields of sluice.outputs' TypedDicts, which the same schema wrote.
    p = Pipeline("outputs")
    src = p.source("src", [Stream(Template(dst_ip=f"20.0.{i}.1"), flow=f"flow{i}", rate_pps=20_000) for i in range(2)])
    lpm = p.module("lpm", Lpm({f"20.0.{i}.0/24": i for i in range(2)}))
    p.chain(src, p.module("reframer", Reframer(t_buff_us=20)), lpm)
    for i in range(2):
        p.connect(lpm, p.sink(f"out{i}"), gate=i)
        p.flow(f"flow{i}", ["src", "reframer", "lpm", f"out{i}"], slo_us=500)
    p.schedule_egress("drr", 1e9, {"tight": (3, ["flow0"]), "bulk": (1, ["flow*"])})
    periods: list[Any] = []
    r = p.run("projgrad", periods=2, period_ms=20, backend=backend, on_period=periods.append)
    _validator("report").validate(r.data)
    for period in periods:
        _validator("report", "PeriodOutput").validate(period)
    _validator("model").validate(p.validate())
    assert periods and all(q["classes"] for q in periods) and r.data["egress_classes"]
    assert r.nf_counters("reframer"), "an NF's own counters, named"
    with pytest.raises(jsonschema_rs.ValidationError, match="unexpected"):
        _validator("report").validate({**r.data, "undeclared": 1})


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_a_module_s_drops_are_reported_by_reason(backend: str) -> None:
    # One stream has a route, one has none: the LPM's drops are all "no_route", in the totals and the periods.
    p = Pipeline("reasons")
    src = p.source("src", [Stream(Template(dst_ip="20.0.1.1"), flow="routed", rate_pps=20_000), Stream(Template(dst_ip="30.0.1.1"), rate_pps=20_000)])
    p.chain(src, p.module("lpm", Lpm({"20.0.1.0/24": 0})), p.sink("out"))
    p.flow("routed", ["src", "lpm", "out"])
    r = p.run("null", periods=3, period_ms=20, backend=backend)
    dropped = r.data["module_totals"]["lpm"]["dropped"]
    assert dropped > 0 and r.data["module_totals"]["lpm"]["nf_drops"] == {"no_route": dropped}
    assert all(q["modules"]["lpm"].get("nf_drops", {}) == ({"no_route": q["modules"]["lpm"]["dropped"]} if q["modules"]["lpm"]["dropped"] else {}) for q in r.periods)
    assert "nf_drops" not in r.data["module_totals"]["out"], "a module that dropped nothing says no reason"


def test_codel_keeps_an_overloaded_class_near_its_target_delay_where_tail_drop_fills_its_queue() -> None:
    # 1 % more than a 10 Mbit/s link carries, into a queue of 1 000: after
    # 6 s (the simulator's time) tail drop has filled it (60 ms), CoDel holds it near 5 ms.
    def last_period(codel: bool) -> dict[str, Any]:
        p = Pipeline("aqm")
        src = p.source("src", [Stream(Template(dst_ip="20.0.1.1"), flow="bulk", rate_pps=15_030)])
        p.chain(src, p.sink("out"))
        p.flow("bulk", ["src", "out"])
        p.schedule_egress("fifo", 10e6, {"bulk": (1, ["bulk"])}, queue_pkts=1000, codel={"bulk": CoDelConfig()} if codel else None)
        r = p.run("null", periods=60, period_ms=100, backend="sim")
        assert r.summary["accounted"], r.summary
        last: dict[str, Any] = r.periods[-1]["flows"]["bulk"]
        return last
    tail, codel = last_period(False), last_period(True)
    assert tail["p50_us"] > 50_000 and tail["dropped"] == 0, tail
    assert codel["p99_us"] < 10_000 and codel["dropped"] > 0, codel
    with pytest.raises(ValueError, match="codel: target_us 5000 must be below interval_us 5000"):
        p = small()
        p.schedule_egress("fifo", 1e6, {"all": (1, ["f"])}, codel={"all": CoDelConfig(interval_us=5000)})
        p.validate()


def test_codel_on_the_rings_between_workers_drops_what_waited_too_long_and_counts_it() -> None:
    # A source on worker 0 as fast as it goes, an NF on worker 1 that takes
    # 20 µs a packet: the ring between them fills (4 096 packets, some 80 ms
    # of the NF) and pushes back. Under CoDel (target 1 ms) what waited too
    # long is dropped where it leaves the ring, counted at the NF as `aqm`.
    def run(codel: Optional[CoDelConfig]) -> Any:
        p = Pipeline("rings")
        src = p.source("src", [Stream(Template(dst_ip="20.0.1.1"), flow="f")])
        slow = p.module("slow", Bypass(0, 52_000), worker=1)
        p.chain(src, slow, p.sink("out"))
        p.flow("f", ["src", "slow", "out"])
        p.ring_codel = codel
        r = p.run("null", periods=10, period_ms=100, backend="engine")
        assert r.summary["accounted"], r.summary
        return r
    pushed_back, managed = run(None), run(CoDelConfig(target_us=1_000, interval_us=10_000))
    assert pushed_back.summary["drops"]["aqm"] == 0 and pushed_back.summary["dropped"] == 0
    drops = managed.summary["drops"]
    assert drops["aqm"] > 0 and managed.data["module_totals"]["slow"]["aqm_dropped"] == drops["aqm"], drops
    p = small()
    p.ring_codel = CoDelConfig(target_us=5_000, interval_us=5_000)
    with pytest.raises(ValueError, match="ring_codel: target_us 5000 must be below interval_us 5000"):
        p.validate()


def test_fq_codel_lets_a_sparse_flow_pass_the_bulk_flow_of_its_class() -> None:
    # The bulk flow above and a sparse one (100 pkt/s to another address)
    # in one class, for 10 s: both managements drop the bulk flow's packets,
    # FQ-CoDel none of the sparse flow's, which has a queue of its own. (How
    # long each waits is `sluice experiment aqm`'s figure, and the arbiter's
    # virtual-clock test's.)
    def last_period(**management: dict[str, Any]) -> dict[str, Any]:
        p = Pipeline("aqm")
        src = p.source("src", [Stream(Template(dst_ip="20.0.1.1"), flow="bulk", rate_pps=15_030), Stream(Template(dst_ip="20.0.2.1"), flow="sparse", rate_pps=100)])
        p.chain(src, p.sink("out"))
        p.flow("bulk", ["src", "out"])
        p.flow("sparse", ["src", "out"])
        p.schedule_egress("fifo", 10e6, {"all": (1, ["bulk", "sparse"])}, queue_pkts=1000, **management)
        r = p.run("null", periods=100, period_ms=100, backend="sim")
        assert r.summary["accounted"], r.summary
        drops = r.summary["drops"]
        assert drops["aqm"] > 0 and drops["egress_full"] == 0 and r.data["module_totals"]["out"]["aqm_dropped"] == drops["aqm"], "CoDel's drops are its own reason"
        last: dict[str, Any] = r.periods[-1]["flows"]
        return last
    codel, fq = last_period(codel={"all": CoDelConfig()}), last_period(fq_codel={"all": FqCoDelConfig()})
    assert codel["bulk"]["dropped"] > 0 and fq["bulk"]["dropped"] > 0 and fq["sparse"]["dropped"] == 0, (codel, fq)
    with pytest.raises(ValueError, match="class 'all': codel and fq_codel: a class has one of them, not both"):
        p = small()
        p.schedule_egress("fifo", 1e6, {"all": (1, ["f"])}, codel={"all": CoDelConfig()}, fq_codel={"all": FqCoDelConfig()})
        p.validate()


def test_a_class_tree_gives_each_parent_its_rate_and_the_rest_by_the_rates_up_to_the_ceilings() -> None:
    # A 10 Mbit/s link, three flows each offering 16 Mbit/s: parent A is
    # given 2 (ceiling: the link's) with classes of weights 1 and 3, parent
    # B 4 with a ceiling of 6. The 4 left over goes 1:2 by the rates, over
    # B's ceiling: B 6, A 4 (1 and 3 by the weights).
    p = Pipeline("tree")
    flows = ["a1", "a2", "b"]
    src = p.source("src", [Stream(Template(dst_ip=f"20.0.{i}.1", size=1000), flow=f, rate_pps=2000) for i, f in enumerate(flows, 1)])
    lpm = p.module("lpm", Lpm({f"20.0.{i}.0/24": i - 1 for i in (1, 2, 3)}))
    p.connect(src, lpm)
    for g, f in enumerate(flows):
        p.connect(lpm, p.sink(f"out_{f}"), gate=g)
        p.flow(f, ["src", "lpm", f"out_{f}"])
    classes = {"a1": (1, ["a1"]), "a2": (3, ["a2"]), "b": (1, ["b"])}
    p.schedule_egress("drr", 10e6, classes, queue_pkts=200, overhead_bytes=0, parents={"A": (2e6, None), "B": (4e6, 6e6)}, under={"a1": "A", "a2": "A", "b": "B"})
    r = p.run("null", periods=30, period_ms=100, backend="sim")
    assert r.summary["accounted"], r.summary
    measured = [q for q in r.periods[10:] if not q["warmup"]]
    mbit_s = {f: sum(q["flows"][f]["rate_pps"] for q in measured) / len(measured) * 8000 / 1e6 for f in flows}
    for f, want in {"a1": 1.0, "a2": 3.0, "b": 6.0}.items():
        assert abs(mbit_s[f] - want) <= 0.05 * want, mbit_s
    with pytest.raises(ValueError, match="class 'b' names no parent: with parents, every class is under one"):
        p.schedule_egress("drr", 10e6, classes, parents={"A": (2e6, None)}, under={"a1": "A", "a2": "A"})
        p.validate()
    with pytest.raises(ValueError, match="parent 'B': ceil_bits_per_s 1000000 must be ≥ rate_bits_per_s 4000000"):
        p.schedule_egress("drr", 10e6, classes, parents={"A": (2e6, None), "B": (4e6, 1e6)}, under={"a1": "A", "a2": "A", "b": "B"})
        p.validate()


def test_packets_left_inside_when_a_run_ends_are_not_lossless() -> None:
    # A 10 kbit/s link that makes its sources wait: the drain at the end
    # delivers what 10 s (of the simulator's time) let out, ~150 packets.
    p = l2l3(4)
    p.schedule_egress("wf2q+", 1e4, {"all": (1, ["flow*"])}, on_full="wait")
    s = p.run("null", periods=2, period_ms=50, backend="sim").summary
    assert s["accounted"] and s["dropped"] == 0 and s["in_flight"] > 0 and not s["lossless"], s


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_ipv6_and_ipv4_streams_are_routed_by_their_own_prefixes_and_a_bad_one_is_named(backend: str) -> None:
    p = Pipeline("dual-stack")
    v4, v6 = Template(dst_ip="20.0.1.1"), Template(src_ip="2001:db8::1", dst_ip="2001:db8:1::1", size=80)
    src = p.source("src", [Stream(v4, flow="v4", rate_pps=20_000), Stream(v6, flow="v6", rate_pps=20_000)])
    ttl = p.module("hop_limit", TtlDecrement())
    lpm = p.module("lpm", Lpm({"20.0.1.0/24": 0, "2001:db8:1::/48": 1}))
    out4, out6 = p.sink("out4"), p.sink("out6")
    p.chain(src, ttl, lpm)
    p.connect(lpm, out4, gate=0)
    p.connect(lpm, out6, gate=1)
    p.flow("v4", [src, ttl, lpm, out4], slo_us=1000)
    p.flow("v6", [src, ttl, lpm, out6], slo_us=1000)
    r = p.run("null", periods=3, period_ms=20, backend=backend)
    assert r.summary["lossless"], r.summary
    assert r.flow_totals["v4"]["delivered"] > 0 and r.flow_totals["v6"]["delivered"] > 0, r.flow_totals
    with pytest.raises(ValueError, match=r"module 'nf': '2001:db8::/129' is not an IPv6 prefix"):
        small(Lpm({"2001:db8::/129": 0})).validate()  # type: ignore[arg-type]
    mixed = small(template=Template(src_ip="10.0.0.1", dst_ip="2001:db8::1"))
    with pytest.raises(ValueError, match="source '10.0.0.1' and destination '2001:db8::1' are of different IP families"):
        mixed.validate()


def _resident_bytes() -> int:
    """This process's resident set (bytes)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_a_long_run_keeps_its_last_periods_and_counts_them_all() -> None:
    """A report keeps the last `keep_periods` periods (by default as many as
    `sluice serve` keeps), so a run's memory is bounded by that count and not
    by its length: rc(16) takes ~10 KiB a period kept, 7 MiB over the 650
    after the window filled had they been kept."""
    rss: list[int] = []
    r = rc(16).run("null", periods=1350, warmup_periods=0, period_ms=1, backend="sim", on_period=lambda _: rss.append(_resident_bytes()))
    assert len(r.periods) == RunParams.keep_periods == 600
    assert r.data["periods_dropped"] == 750 and r.periods[-1]["period"] == 1349
    assert r.summary["delivered"] == sum(t["delivered"] for t in r.flow_totals.values()) > 0, "the summary counts every period"
    assert rss[-1] - rss[700] < 2 * 2**20, f"grew {(rss[-1] - rss[700]) / 2**20:.1f} MiB after the window filled"
