"""`failover`: a resilient embedding of MGW running on the engine survives
a core failure. The HA user's flows (downlink and uplink on bearer 0) get a
disjoint copy of every module they use; path-fit places the modules on
three workers (the I/O — sources, replicator, de-duplicators, egresses — on
a fourth); one worker running the HA originals is taken down for a second
and brought back. Per period and per flow: packets generated, delivered and
dropped; HA flows must lose nothing, the others only while the worker is down."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from sluice.embed import fitted, from_pipeline
from sluice.embed.live import place, resilient
from sluice.lab import output
from sluice.pipeline import Pipeline
from sluice.pipelines import mgw

#: The HA user's flows in mgw(2, 2).
HA_FLOWS = ("dl_b0_u0", "ul_b0_u0")
#: Workers the embedding uses (worker 0 does I/O).
CORES = 3


def run(out: Path, rate_pps: float, period_ms: float, down_s: float, progress: Callable[[str], None]) -> dict[str, Any]:
    """Runs the failover and writes failover.{json,csv,md,png} into `out`."""
    whole = from_pipeline(mgw(2, 2), cores=CORES, rate_pps=rate_pps).resilient(list(HA_FLOWS))
    instance, placement = fitted(whole, "path-fit")
    live = resilient(mgw(2, 2, rate_pps=rate_pps), HA_FLOWS)
    place(live, instance, placement)
    failed = 1 + placement[instance.names.index(live_first_module(live))]
    down = max(1, round(down_s * 1000 / period_ms))
    start = 5
    live.outage(failed, start + 1, start + 1 + down)  # + 1: the warm-up period
    periods = start + down + 5
    progress(f"worker {failed} down for periods {start}..{start + down - 1} of {periods}")
    result = live.run("null", periods=periods, warmup_periods=1, period_ms=period_ms)
    timeline = [{"t_s": p["t_s"], "flows": {n: {k: f[k] for k in ("generated", "delivered", "dropped")} for n, f in p["flows"].items()}}
                for p in result.periods]
    flows = {}
    for name, t in result.flow_totals.items():
        ha = name in HA_FLOWS
        lost = t["generated"] - t["delivered"]
        down_periods = range(start + 1, start + 1 + down + 1)  # drops may land in the period after, before the worker is back
        outside = sum(p["flows"][name]["dropped"] for i, p in enumerate(result.periods) if i not in down_periods)
        flows[name] = {"ha": ha, "generated": t["generated"], "delivered": t["delivered"], "lost": lost,
                       "dropped": t["dropped"], "dropped_outside_outage": outside}
    s = result.summary
    ha_lost = sum(f["lost"] for f in flows.values() if f["ha"])
    report = {
        "ha_lost": ha_lost,
        # The HA flows lost nothing and every packet is accounted for (the
        # other flows lose what reached the worker while it was down, by design).
        "lossless": ha_lost == 0 and s["accounted"],
        "flows": flows,
        "failed_worker": failed,
        "outage_periods": [start + 1, start + 1 + down],
        "period_ms": period_ms,
        "rate_pps": rate_pps,
        "placement": {n: 1 + c for n, c in zip(instance.names, placement)},
        "totals": {k: s[k] for k in ("generated", "delivered", "dropped", "in_flight", "missed")},
        "accounted": s["accounted"],
        "timeline": timeline,
        "rows": [{"flow": n, **f} for n, f in flows.items()],
    }
    output.write(out, "failover", report, markdown, lambda rows, path: plot(report, path))
    return report


def live_first_module(pipeline: Pipeline) -> str:
    """The first module the HA flows' packets meet (copy 0)."""
    for e in pipeline.spec()["edges"]:
        if e["from"].endswith("~replicate") and e["outgate"] == 0:
            return str(e["to"])
    raise ValueError("no replicator in the pipeline")


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per flow: generated, delivered, lost, dropped (all and outside the outage); an HA flow's drops are of the copies on the failed path."""
    lines = ["| flow | HA | generated | delivered | lost | dropped (HA: copies) | dropped outside the outage |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['flow']} | {'yes' if r['ha'] else ''} | {r['generated']} | {r['delivered']} | {r['lost']} | {r['dropped']} | {r['dropped_outside_outage']} |")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """Delivered and dropped packets per period and flow, the outage shaded."""
    from sluice.plot import save, subplots

    timeline = report["timeline"]
    t = [p["t_s"] for p in timeline]
    fig, (top, bottom) = subplots(2, 1, figsize=(8, 6), sharex=True)
    for name, f in report["flows"].items():
        style = "-" if f["ha"] else "--"
        top.plot(t, [p["flows"][name]["delivered"] / (report["period_ms"] / 1e3) / 1e3 for p in timeline], style, drawstyle="steps-pre", label=name + (" (HA)" if f["ha"] else ""))
        bottom.plot(t, [p["flows"][name]["dropped"] for p in timeline], style, drawstyle="steps-pre", label=name)
    a, b = report["outage_periods"]
    for ax in (top, bottom):
        ax.axvspan(timeline[a]["t_s"] - report["period_ms"] / 1e3, timeline[b - 1]["t_s"], color="red", alpha=0.1, label="worker down" if ax is top else None)
        ax.grid(alpha=0.3)
    top.set_ylabel("delivered (kpkt/s)")
    bottom.set_ylabel("dropped per period (pkt)")
    bottom.set_xlabel("time (s)")
    top.legend(fontsize=7, ncol=2)
    top.set_title(f"worker {report['failed_worker']} down; HA packets lost: {report['ha_lost']}")
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """What the HA flows lost while a worker was down, and whether every packet is accounted for."""
    generated = sum(f["generated"] for f in report["flows"].values() if f["ha"])
    return output.Headline(f"HA packets lost: {report['ha_lost']} of {generated}; every packet accounted for: {'yes' if report['accounted'] else 'no'}",
                           "— (dissertation §4: HA flows survive one core failure)")
