"""The static experiment's measuring procedure, on a stand-in pipeline
whose periods say how fast the worker's core ran."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sluice.lab import static

#: The core probe's time on an undisturbed core, and in a disturbed period (ns).
USUAL_NS, SLOW_NS = 130.0, 260.0


class StandIn:
    """Every run of a controller gives `periods` periods of one rate; the
    runs listed in `disturbed` (controller → run indices) ran on a slowed
    core at half the rate and over the SLO."""

    def __init__(self, disturbed: dict[str, set[int]]) -> None:
        self.disturbed = disturbed
        self.runs: dict[str, int] = {}

    def validate(self) -> dict[str, Any]:
        return {"modules": ["src", "nf", "out"]}

    def run(self, controller: str, periods: int, warmup_periods: int, **_: Any) -> Any:
        i = self.runs.get(controller, 0)
        self.runs[controller] = i + 1
        slow = i in self.disturbed.get(controller, set())
        rate = 1e6 * (static.CONTROLLERS.index(controller) + 1) / (2 if slow else 1)
        period = {"warmup": False, "rate_pps": rate, "mean_batch": 8.0, "violated": slow,
                  "workers": [{"probe_ns": SLOW_NS if slow else USUAL_NS}]}
        return SimpleNamespace(periods=[{**period, "warmup": True}] * warmup_periods + [period] * periods)


def run_row(stand_in: StandIn, keep_disturbed: bool = False) -> dict[str, Any]:
    row = static.Row("stand-in", "StandIn", lambda: stand_in, own_slos=True)
    return static.run_row(row, static.Settings(1, 5, 100.0, "engine", 4, keep_disturbed), lambda _msg: None)


def test_periods_on_a_slowed_core_are_set_aside_and_made_up_for_by_another_run() -> None:
    stand_in = StandIn({"projgrad": {1}})
    report = run_row(stand_in)
    assert stand_in.runs["projgrad"] == 5 and stand_in.runs["null"] == 4, "one more run for the controller short of periods"
    assert report["mpps_projgrad"] == pytest.approx(5.0) and report["viol_projgrad_pct"] == 0.0
    assert report["set_aside_pct"] == pytest.approx(100 * 5 / ((4 * len(static.CONTROLLERS) + 1) * 5), abs=0.1)
    assert "set aside" in static.markdown([report])


def test_kept_disturbed_periods_count_like_the_others() -> None:
    report = run_row(StandIn({"projgrad": {1}}), keep_disturbed=True)
    assert report["mpps_projgrad"] == pytest.approx((3 * 5.0 + 2.5) / 4)
    assert report["viol_projgrad_pct"] == 25.0 and report["set_aside_pct"] == 0.0


def test_extra_runs_stop_at_twice_the_rounds_and_a_controller_never_undisturbed_keeps_its_periods() -> None:
    stand_in = StandIn({"max": set(range(8))})
    report = run_row(stand_in)
    assert stand_in.runs["max"] == 8 and stand_in.runs["null"] == 4
    assert report["mpps_max"] == pytest.approx(1.0) and report["viol_max_pct"] == 100.0
