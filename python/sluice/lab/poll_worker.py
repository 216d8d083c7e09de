"""The worker the polling experiments measure (`sluice experiment
polling`, its rows on a port, `sluice train polling`): L2L3(4) on one
worker polling as a policy says, its flows sharing a load set as a share
of what a busy worker carries, and what a run of it used and gave."""

from __future__ import annotations

import statistics
from typing import Any, Callable

from sluice import Pipeline
from sluice.description import PollSettingsJson
from sluice.outputs import PeriodOutputJson
from sluice.poll import POLL_KIND_VALUES, PollSettings
from sluice.lab import energy
from sluice.pipelines import l2l3

#: Every policy with the core's settings (learned: the model shipped in the
#: package, `sluice train polling` on this machine's kind).
POLICIES: dict[str, PollSettingsJson] = {kind: PollSettings(kind).spec() for kind in POLL_KIND_VALUES}
FLOWS = 4
#: Every flow's delay SLO (µs, p95): room for a sleep, as the slo-aware policy needs.
SLO_US = 2000.0
#: A "no traffic" rate per flow (pkt/s): a source needs one above zero.
IDLE_PPS = 0.1


def pipeline(poll: PollSettingsJson, load: float, saturation_pps: float, schedule: list[tuple[int, float]] | None = None,
             burst_pkts: int = 1, first_slo_us: float = SLO_US) -> Pipeline:
    """L2L3(4) on one worker polling as `poll` says (a description's `poll`
    object), its flows sharing `load` × `saturation_pps` (unlimited while
    the saturation is not known yet), stepping per `schedule` of (period,
    load); each flow's packets arriving `burst_pkts` at once, the first
    flow's SLO `first_slo_us` (µs, p95)."""
    spec = l2l3(FLOWS, slo_us=SLO_US).spec()

    def rate(share: float) -> float:
        return max(IDLE_PPS, share * saturation_pps / FLOWS)

    for s in spec["modules"][0]["source"]["synthetic"]["streams"]:
        s["rate_pps"] = rate(load) if saturation_pps else None
        s["rate_schedule"] = [[period, rate(share)] for period, share in schedule or []]
        s["burst_pkts"] = burst_pkts
    spec["flows"][0]["slo_us"] = first_slo_us
    spec["poll"] = poll
    return Pipeline.from_spec(spec)


def needed_pct(mpps: float, saturation_pps: float) -> float:
    """The core the packets of `mpps` need (%): their rate as a share of
    `saturation_pps`, what a busy worker at full batches carries."""
    return 100 * mpps * 1e6 / saturation_pps


#: What a row of the report gives of a measurement.
ROW_KEYS = ("cpu_pct", "asleep_pct", "mpps", "mean_batch", "loss_pct", "mean_us", "p99_us", "slo_viol_pct", "polls_per_s", "wait_late_us")


def measure(p: Pipeline, periods: int, period_ms: float, on_period: Callable[[PeriodOutputJson], None] | None = None) -> dict[str, Any]:
    """What the worker used and gave over `periods` after one of warm-up
    (`on_period` called after each); `mean_batch`: packets a batch its
    source (or port) made; `features`: what it logged for the learned
    policy, if it did."""
    before = energy.counter_uj()
    r = p.run("null", periods=periods, period_ms=period_ms, warmup_periods=1, backend="engine", on_period=on_period)
    used_uj = energy.used_uj(before, energy.counter_uj())
    measured = [q for q in r.periods if not q["warmup"]]
    s = r.summary
    flows = [f for q in measured for f in q["flows"].values() if f["delivered"]]
    offered = s["generated"] + s["missed"]
    return {
        "cpu_pct": 100 * statistics.fmean(q["workers"][0]["cpu_fraction"] for q in measured),
        # What the policy decided: the share of each period it asked to sleep or wait.
        "asleep_pct": 100 * statistics.fmean(q["workers"][0]["waits"] * q["workers"][0]["wait_asked_us"] / (period_ms * 1e3) for q in measured),
        "mpps": s["rate_pps"] / 1e6,
        # The first module is the source (or the port that replaced it).
        "mean_batch": statistics.fmean(next(iter(q["modules"].values()))["b"] for q in measured),
        "loss_pct": 100 * (s["missed"] + s["dropped"]) / offered if offered else 0.0,
        "mean_us": statistics.fmean(f["mean_us"] for f in flows) if flows else 0.0,
        "p99_us": max((f["p99_us"] for f in flows), default=0.0),
        # The first flow's, whose SLO may be set apart (the worst period's).
        "first_p99_us": max((f["p99_us"] for q in measured for f in list(q["flows"].values())[:1] if f["delivered"]), default=0.0),
        "slo_viol_pct": s["violation_pct"],
        "polls_per_s": statistics.fmean(q["workers"][0]["polls"] for q in measured) / (period_ms / 1e3),
        "wait_late_us": statistics.fmean(q["workers"][0]["wait_late_us"] for q in measured),
        "wait_asked_us": statistics.fmean(q["workers"][0]["wait_asked_us"] for q in measured),
        "generated": s["generated"],
        # The whole package's energy over the run (warm-up included; the other core's work too) per packet carried.
        "uj_per_pkt": used_uj / s["delivered"] if used_uj is not None and s["delivered"] else None,
        "features": [row for q in measured for row in q["workers"][0].get("poll_features", [])],
        "periods": [{"cpu_pct": 100 * q["workers"][0]["cpu_fraction"], "mpps": q["rate_pps"] / 1e6,
                     "p99_us": max((f["p99_us"] for f in q["flows"].values() if f["delivered"]), default=0.0)} for q in r.periods],
    }
