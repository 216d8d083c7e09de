"""Controllers written in Python run behind the same interface."""

from __future__ import annotations

import statistics
from typing import Any, Callable

import pytest
from conftest import L2L3_COSTS, Costs

from sluice import Controller, Pipeline, RunResult
from sluice.pipelines import gw, l2l3, rc, vrf

pytestmark = pytest.mark.offline


class Fixed(Controller):
    name = "fixed"

    def init(self, model: dict[str, Any]) -> dict[str, Any]:
        assert model["batch_size"] == 32 and model["modules"][2]["name"] == "rc"
        return {"triggers": {"bulk1": 16}}

    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        assert set(telemetry["flows"]) == {"rc", "bulk1"}
        return {"triggers": {"rc": 3}}


def test_actions_of_a_python_controller_take_effect() -> None:
    r = rc(2).run(Fixed(), periods=2, period_ms=5, backend="sim")
    assert r.controller == "fixed"
    assert r.periods[0]["modules"]["bulk1"]["trigger"] == 16
    assert r.periods[-1]["modules"]["rc"]["trigger"] == 3


class Broken(Controller):
    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("oops")


class Unknown(Controller):
    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        return {"triggers": {"nowhere": 1}}


def test_python_controller_errors_reach_the_caller() -> None:
    with pytest.raises(KeyError, match="oops"):
        rc(2).run(Broken(), periods=1, period_ms=5, backend="sim")
    with pytest.raises(ValueError, match="the controller's step returned unknown module 'nowhere'"):
        rc(2).run(Unknown(), periods=1, period_ms=5, backend="sim")


def test_delta_reaches_the_built_in_controllers() -> None:
    # A wider band stops RC(16)'s robot-control buffer further below its SLO.
    runs = {d: rc(16).run("projgrad", periods=10, period_ms=50, backend="sim", delta=d) for d in (0.05, 0.2)}
    triggers = {d: r.periods[-1]["modules"]["rc"]["trigger"] for d, r in runs.items()}
    assert 1 < triggers[0.2] < triggers[0.05], triggers
    assert [r.data["delta"] for r in runs.values()] == [0.05, 0.2]
    for bad, why in ((-0.01, r"δ = -0.01 must be in \[0, 0.5\)"), (0.5, r"δ = 0.5 must be in \[0, 0.5\)"), (float("nan"), "nan is not a finite number")):
        with pytest.raises(ValueError, match=f"RunParams: delta: {why}"):
            rc(2).run("projgrad", periods=1, period_ms=5, backend="sim", delta=bad)


def test_example_controller_runs() -> None:
    import python_controller

    r = rc(4).run(python_controller.Additive(), periods=3, period_ms=5, backend="sim")
    assert r.periods[1]["modules"]["bulk1"]["trigger"] == 4


#: NF costs (T0 ns, T1 ns/pkt) as `sluice profile` measured them on the
#: development machine (README), so that the simulator runs L2L3 as it runs there.
MEASURED = {"type_check": (17.3, 2.57), "exact_match": (10.5, 6.08), "lpm": (2.7, 4.83),
            "ttl_decrement": (7.4, 6.84), "mac_rewrite": (12.6, 1.75), "ip_checksum": (0.0, 12.87)}


def one_slo_at_80_percent_of_max(p: Pipeline, period_ms: float) -> float:
    """80% of the flows' mean delay (µs) over three periods of Max on the
    simulator, the first left out: the static experiment's one SLO."""
    under_max = p.run("max", periods=3, period_ms=period_ms, backend="sim")
    return 0.8 * statistics.mean(float(f["mean_us"]) for q in under_max.periods[1:] for f in q["flows"].values())


def test_projgrad_reaches_a_kkt_point_on_l2l3_16_within_10_periods(nf_costs: Callable[[Costs], None]) -> None:
    """On the simulator, SLOs at 80% of Max's mean delay: the triggers stop
    moving by period 10 and no flow is over its SLO from then on."""
    nf_costs(MEASURED)
    slo = one_slo_at_80_percent_of_max(l2l3(16), period_ms=50)
    r = l2l3(16, slo_us=slo).run("projgrad", periods=20, period_ms=50, backend="sim", warmup_periods=0)
    triggers = [[m["trigger"] for m in p["modules"].values()] for p in r.periods]
    held = 5
    settled = next(i for i in range(len(triggers) - held) if all(t == triggers[i] for t in triggers[i : i + held + 1]))
    assert settled <= 10, f"triggers first held still from period {settled}"
    assert not any(p["violated"] for p in r.periods[settled:]), "no SLO violated once settled"
    assert r.periods[-1]["mean_batch"] > 2 * r.periods[0]["mean_batch"], "buffers are in use"


def test_projgrad_grows_the_buffers_recovery_cut_back_while_other_flows_sit_at_their_targets(
        nf_costs: Callable[[Costs], None]) -> None:
    """L2L3(16) on the simulator settles at triggers of about 20 with one
    mean-delay SLO at 80% of Max's mean; for one period 13 of the 16 flows
    get 80% of it and recovery cuts their next hops to about 15. Back at
    the SLO those grow again while the three others sit within a packet of
    their growth targets: the projection holds those three, paying for
    the others' growth with their own buffers. (Before, those three
    stopped every step within a packet, and rounding up then taking back
    the raises that held them up made it 0: 255 packets of trigger against
    320 for 16 periods.)"""
    nf_costs(L2L3_COSTS)
    slo = one_slo_at_80_percent_of_max(l2l3(16), period_ms=100)
    p = l2l3(16, slo_us=slo)
    dip = 12
    for flow in p.flows()[:13]:
        p.set_schedule(flow, slo_us=[(dip, 0.8 * slo), (dip + 1, slo)])
    r = p.run("projgrad", periods=dip + 8, period_ms=100, backend="sim", warmup_periods=0, slo_statistic="mean")

    def packets(period: int) -> int:
        return sum(m["trigger"] for m in r.periods[period]["modules"].values())

    assert packets(dip) > 300, "settled near 20 a next hop"
    assert packets(dip + 1) < packets(dip) - 50, "recovery cut"
    assert packets(dip + 7) > packets(dip + 1) + 10, [packets(i) for i in range(dip, dip + 8)]
    assert not any(q["violated"] for q in r.periods[dip + 1:])


#: NF costs (T0 ns, T1 ns/pkt) of GW's NFs as `sluice profile` measured them
#: on the development machine after the checksum change (README).
GW_COSTS = {"type_check": (21.5, 1.99), "exact_match": (26.5, 8.24), "lpm": (28.7, 7.44), "acl": (13.7, 5.82),
            "static_nat": (9.3, 10.69), "ttl_decrement": (26.8, 4.96), "mac_rewrite": (19.3, 1.25),
            "ip_checksum": (31.8, 5.94)}


def projgrad_at_80_percent_of_max(p: Pipeline, periods: int) -> RunResult:
    """Each flow's SLO at 80% of its own mean delay under Max, projgrad
    bounding the mean, on the simulator: harder than the static
    experiment's one SLO per pipeline, as the flow Max serves first in its
    flush round gets the tightest SLO."""
    under_max = p.run("max", periods=4, period_ms=100, backend="sim")
    for f in p.flows():
        p.set_slo(f, 0.8 * statistics.mean(q["flows"][f]["mean_us"] for q in under_max.periods[1:]))
    return p.run("projgrad", periods=periods, period_ms=100, backend="sim", warmup_periods=0, slo_statistic="mean")


def test_projgrad_keeps_every_gw_16_flow_inside_its_mean_delay_slo(nf_costs: Callable[[Costs], None]) -> None:
    """GW(16) with per-flow SLOs at 80% of Max's. The first flow of the
    walk has the tightest SLO, and the other branches' runs hold its
    packets up: growing those must not push it over."""
    nf_costs(GW_COSTS)
    r = projgrad_at_80_percent_of_max(gw(16), periods=12)
    assert [i for i, q in enumerate(r.periods) if q["violated"]] == []
    assert r.periods[-1]["rate_pps"] > 1.5 * r.periods[0]["rate_pps"], "buffers pay"


def test_projgrad_starts_a_buffer_where_rounds_are_even_at_the_largest_trigger_that_waits_no_longer(
        nf_costs: Callable[[Costs], None]) -> None:
    """VRF(2,4) on the simulator: its splits deal every round's batch out
    alike, so each LPM gets 16 packets a round and each next hop 4, and a
    trigger just above those waits a round gap, as 32 and 8 do. Started
    just above, the buffers spent the flows' budgets for a sliver of
    batching, and projgrad ended at 0.91 of on-off's rate."""
    nf_costs(GW_COSTS)
    p = vrf(2, 4)
    r = projgrad_at_80_percent_of_max(p, periods=10)
    onoff = p.run("onoff", periods=10, period_ms=100, backend="sim", warmup_periods=0, slo_statistic="mean")
    assert [i for i, q in enumerate(r.periods) if q["violated"]] == []
    assert r.periods[-1]["rate_pps"] >= 0.98 * onoff.periods[-1]["rate_pps"]


def test_projgrad_takes_back_the_raise_that_moved_a_flow_over(nf_costs: Callable[[Costs], None]) -> None:
    """L2L3(16) on the simulator, SLOs at 80% of each flow's mean delay
    under Max. Raising some branches' triggers moves their runs into other
    branches' waits (a change of phase the model does not see) and can put
    those over their SLO; recovery takes that raise back, so no flow stays
    over for two periods running."""
    nf_costs(GW_COSTS)
    r = projgrad_at_80_percent_of_max(l2l3(16), periods=25)
    over = [i for i, q in enumerate(r.periods) if q["violated"]]
    assert not any(i + 1 in over for i in over), f"periods over the SLO: {over}"
    assert r.periods[-1]["rate_pps"] > 1.5 * r.periods[0]["rate_pps"], "buffers pay"


def test_projgrad_prices_waits_in_whole_rounds_after_decomposition(nf_costs: Callable[[Costs], None]) -> None:
    """The decompose experiment's MGW after the split: the shared tail gets
    the QoS flows' packets eight to a round, one round every 80 µs. A
    trigger that does not divide eight leaves packets waiting for the next
    round, far over the 50 µs SLO; one that does costs nothing."""
    from sluice.lab.decompose import PERIOD_MS, SLO_US, slowed_mgw

    nf_costs(GW_COSTS)
    r = slowed_mgw(1).run("projgrad", periods=20, warmup_periods=1, period_ms=PERIOD_MS, backend="sim")
    qos = [max(f["p95_us"] for name, f in p["flows"].items() if "_b0_" in name) for p in r.periods]
    assert min(r.moves) == 0, "decomposed after the first period"
    assert all(q <= SLO_US for q in qos[1:]), f"QoS p95 per period: {qos}"
    assert any(m["trigger"] > 0 for m in r.periods[-1]["modules"].values()), "a buffer in use"
