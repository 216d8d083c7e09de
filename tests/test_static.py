"""The static experiment's measuring procedure, on a stand-in pipeline
whose periods say how fast the worker's core ran."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sluice.lab import static

pytestmark = pytest.mark.offline

#: The core probe's time on an undisturbed core, and in a disturbed period (ns).
USUAL_NS, SLOW_NS = 130.0, 260.0


class StandIn:
    """Every run of a controller gives `periods` periods of one rate; the
    runs listed in `disturbed` (controller → run indices) ran on a slowed
    core at half the rate and over the SLO."""

    def __init__(self, disturbed: dict[str, set[int]]) -> None:
        self.disturbed = disturbed
        self.runs: dict[str, int] = {}
        #: The controllers in the order they ran.
        self.order: list[str] = []

    def validate(self) -> dict[str, Any]:
        return {"modules": ["src", "nf", "out"]}

    def run(self, controller: str, periods: int, warmup_periods: int, **_: Any) -> Any:
        i = self.runs.get(controller, 0)
        self.runs[controller] = i + 1
        self.order.append(controller)
        slow = i in self.disturbed.get(controller, set())
        rate = 1e6 * (static.CONTROLLERS.index(controller) + 1) / (2 if slow else 1)
        period = {"warmup": False, "rate_pps": rate, "mean_batch": 8.0, "violated": slow,
                  "workers": [{"probe_ns": SLOW_NS if slow else USUAL_NS}]}
        return SimpleNamespace(periods=[{**period, "warmup": True}] * warmup_periods + [period] * periods)


def run_row(stand_in: StandIn, keep_disturbed: bool = False) -> dict[str, Any]:
    row = static.Row("stand-in", "StandIn", lambda: stand_in, own_slos=True)
    return static.run_row(row, static.Settings(1, 5, 100.0, "engine", 4, keep_disturbed=keep_disturbed), lambda _msg: None)


def test_periods_on_a_slowed_core_are_set_aside_and_the_violations_given_with_and_without_them() -> None:
    stand_in = StandIn({"projgrad": {1}})
    report = run_row(stand_in)
    assert stand_in.runs == {c: 4 for c in static.CONTROLLERS}, "every controller runs its rounds, no more"
    assert report["mpps_projgrad"] == pytest.approx(5.0)
    assert report["viol_projgrad_pct"] == 0.0 and report["viol_projgrad_all_pct"] == 25.0
    assert report["viol_null_pct"] == report["viol_null_all_pct"] == 0.0
    assert report["set_aside_pct"] == pytest.approx(100 * 5 / (4 * len(static.CONTROLLERS) * 5), abs=0.1)
    table = static.markdown([report])
    assert "set aside" in table and "/ 5.0 / 0.0 (25.0) |" in table and "/ 1.0 / 0.0 |" in table


def test_kept_disturbed_periods_count_like_the_others() -> None:
    report = run_row(StandIn({"projgrad": {1}}), keep_disturbed=True)
    assert report["mpps_projgrad"] == pytest.approx((3 * 5.0 + 2.5) / 4)
    assert report["viol_projgrad_pct"] == report["viol_projgrad_all_pct"] == 25.0 and report["set_aside_pct"] == 0.0


def test_a_controller_never_undisturbed_keeps_its_periods() -> None:
    stand_in = StandIn({"max": set(range(4))})
    report = run_row(stand_in)
    assert stand_in.runs["max"] == 4 and stand_in.runs["null"] == 4
    assert report["mpps_max"] == pytest.approx(1.0) and report["viol_max_pct"] == 100.0


def test_max_runs_first_and_the_others_in_order_and_reversed_by_turns() -> None:
    stand_in = StandIn({})
    run_row(stand_in)
    others = [c for c in static.CONTROLLERS if c != "max"]
    assert stand_in.order == ["max"] * 4 + others + others[::-1] + others + others[::-1]


def test_the_protocol_line_names_each_deviation_from_the_papers() -> None:
    always = static.PAPER.deviations()
    assert len(always) == 2 and always[0].startswith("one SLO per pipeline") and "set aside" in always[1]
    assert static.Settings.make(False, "engine") == static.PAPER
    assert static.Settings.make(False, "engine", keep_disturbed=True).deviations() == always[:1]
    quick = static.Settings.make(True, "sim", slo_statistic="mean").deviations()
    assert quick == always + ["8 warm-up + 5 measured periods (paper: 100 + 200)", "4 runs a controller, in order and reversed by turns (paper: one)",
                              "the SLO bounds each flow's mean (paper: p95)", "on the sim backend (paper: a running data plane)"]
    assert "No deviation" not in static.protocol(static.PAPER, None)
    assert "8 warm-up" in static.protocol(static.QUICK, None)
    synth = {"source": "`sluice trace synth`", "packets": 1, "flows": 1, "mean_flow_packets": 1, "slf_32": 1}
    assert "the *L2L3 rows replay `sluice trace synth` (paper: CAIDA's" in static.protocol(static.PAPER, synth)
