"""The dissertation's case study (§4.3.5, Figures 4.1 and 4.5) on the
engine: MGW with one HA user (its downlink and uplink resilient to one
core failure) embedded on this machine's cores by ILP-sum and best-fit
(resilient: the HA flows' modules copied, the copies on other cores),
worst-case (round-robin, not resilient) and one core (every module on one
worker). Each runs at saturation (its rate: the fastest of a few runs), then
at a fixed rate while the first module worker is down for `down_s`: what the
HA flows lost, against what every flow lost.

Sources, sinks, replicators and de-duplicators run on an I/O worker of
their own (worker 0), the embedded modules on workers 1..`CORES`, as the
dissertation's BESS had its traffic generator apart."""

from __future__ import annotations

from typing import Any, Callable

from sluice.embed import Instance, fitted, from_pipeline
from sluice.embed.live import place, resilient
from sluice.lab.failover import HA_FLOWS
from sluice.pipeline import Pipeline
from sluice.pipelines import mgw

#: Module workers (this machine's cores).
CORES = 2
#: The dissertation's methods in its Figure 4.5, resilient first.
METHODS = ("ilp-sum", "best-fit", "worst-case", "1 core")
RESILIENT = ("ilp-sum", "best-fit")
#: Saturation runs of each embedding (the fastest kept).
REPEATS = 3


def _placed(method: str, time_limit_s: float) -> tuple[Instance, list[int]]:
    """MGW(2, 2)'s instance (its HA flows made resilient where `method` is)
    and `method`'s placement of it on `CORES` workers."""
    whole = from_pipeline(mgw(2, 2), cores=CORES, rate_pps=1e6)
    if method in RESILIENT:
        whole = whole.resilient(list(HA_FLOWS))
    if method == "1 core":
        return whole, [0] * len(whole.names)
    return fitted(whole, method, time_limit_s=time_limit_s)


def _live(method: str, instance: Instance, placement: list[int], rate_pps: float | None) -> Pipeline:
    """MGW(2, 2) at `rate_pps` a flow (None: as fast as the workers go),
    resilient where `method` is, its modules where `placement` puts them."""
    live = mgw(2, 2, rate_pps=rate_pps)
    if method in RESILIENT:
        live = resilient(live, HA_FLOWS)
    place(live, instance, placement, io_worker=0, first_worker=1)
    return live


def case_study(rate_pps: float, period_ms: float, down_s: float, time_limit_s: float,
               progress: Callable[[str], None]) -> list[dict[str, Any]]:
    """Per method: Mpps at saturation, and the packets lost (HA flows and
    all) while worker 1 is down for `down_s` at `rate_pps` a flow."""
    rows = []
    down = max(1, round(down_s * 1000 / period_ms))
    start = 3
    for method in METHODS:
        progress(f"embedding on the engine: {method}")
        instance, placement = _placed(method, time_limit_s)
        ha = [f for f in instance.flows if f.name.split("~")[0] in HA_FLOWS]
        crossings = sum(sum(placement[a] != placement[b] for a, b in zip(f.path, f.path[1:])) for f in ha)
        sat = _live(method, instance, placement, None)
        rates = [sat.run("null", periods=5, warmup_periods=2, period_ms=period_ms).summary["rate_pps"] for _ in range(REPEATS)]
        live = _live(method, instance, placement, rate_pps)
        live.outage(1, start + 1, start + 1 + down)  # + 1: the warm-up period
        r = live.run("null", periods=start + down + 3, warmup_periods=1, period_ms=period_ms)
        totals = r.flow_totals
        ha_generated = sum(totals[f]["generated"] for f in HA_FLOWS)
        rows.append({"method": method, "resilient": method in RESILIENT, "ha_crossings": crossings,
                     "mpps": round(max(rates) / 1e6, 3),
                     "ha_lost": ha_generated - sum(totals[f]["delivered"] for f in HA_FLOWS), "ha_generated": ha_generated,
                     "all_lost": sum(t["generated"] - t["delivered"] for t in totals.values()),
                     "all_generated": sum(t["generated"] for t in totals.values()),
                     "all_delivered": sum(t["delivered"] for t in totals.values()),
                     "accounted": r.summary["accounted"]})
    return rows


def markdown(rows: list[dict[str, Any]], paper: str) -> str:
    """Per method: its rate at saturation and what a core's failure cost."""
    lines = [f"**On the engine** (Figures 4.1 and 4.5: MGW(2, 2), its HA user resilient where the method is, modules on {CORES} workers, "
             f"I/O on a third; worker 1 down for a second at a fixed rate; {paper}):", "",
             "| method | resilient | HA crossings | Mpps at saturation | HA packets lost in the outage | all packets lost | accounted |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['method']} | {'yes' if r['resilient'] else 'no'} | {r['ha_crossings']} | {r['mpps']} | {r['ha_lost']} of {r['ha_generated']} | "
              f"{r['all_lost']} of {r['all_generated']} | {'yes' if r['accounted'] else 'no'} |" for r in rows]
    return "\n".join(lines) + "\n"
