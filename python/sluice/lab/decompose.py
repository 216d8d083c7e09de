"""`decompose`: pipeline decomposition restores the QoS bearer's SLO.

MGW(2, 4) with a slowed bulk bearer: its per-user work costs 25 µs a packet
(think deep inspection), so one round on the single worker can take longer
than the QoS bearer's 50 µs SLO whatever the triggers — an inherent
violation. QoS flows offer 10 kpps each, bulk flows 2.5 kpps each (the bulk
work alone keeps a core about half busy). Each controller runs twice: on
one worker, and with a spare worker that pipeline decomposition may use.
Per period: the worst QoS flow's p95 against its SLO, the bulk flows' p95,
and each worker's busy share. Simulator by default (`--backend engine`
for the real thing)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable

from sluice import _core
from sluice.lab import output
from sluice.outputs import PeriodOutputJson
from sluice.pipeline import Pipeline
from sluice.pipelines import mgw

CONTROLLERS = ("null", "projgrad")
#: The QoS bearer's SLO (µs), the bulk bearer's per-packet work (µs).
SLO_US, BULK_WORK_US = 50.0, 25.0
#: Offered rate per QoS and per bulk flow (pkt/s).
QOS_PPS, BULK_PPS = 10e3, 2.5e3
#: Periods per run (warm-up included), and their length (ms).
PERIODS, QUICK_PERIODS = 30, 10
PERIOD_MS = 50.0


def slowed_mgw(spare_workers: int) -> Pipeline:
    """MGW(2, 4) with the bulk bearer's per-user work at BULK_WORK_US a packet."""
    p = mgw(2, 4, slo_us=SLO_US)
    for f in p.flows():
        p.set_rate(f, QOS_PPS if "_b0_" in f else BULK_PPS)
    spec = p.spec()
    for m in spec["modules"]:
        if m["name"].startswith(("bypass_dl1_", "bypass_ul1_")):
            m["nf"]["cycles_per_packet"] = round(BULK_WORK_US * 1e3 / _core.ns_per_cycle())
    spec["spare_workers"] = spare_workers
    return Pipeline.from_spec(spec)


def _worst(p: PeriodOutputJson, bearer: str) -> float:
    """The largest p95 over the flows of `bearer` ("_b0_" or "_b1_") in period `p` (µs)."""
    return float(max(f["p95_us"] for name, f in p["flows"].items() if bearer in name))


def run(out: Path, quick: bool, backend: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """Both controllers with and without a spare; writes decompose.{json,csv,md,png} into `out`."""
    periods = QUICK_PERIODS if quick else PERIODS
    rows, timelines = [], []
    for controller in CONTROLLERS:
        for spares in (0, 1):
            progress(f"{controller}, {spares} spare worker(s)")
            r = slowed_mgw(spares).run(controller, periods=periods - 1, warmup_periods=1, period_ms=PERIOD_MS, backend=backend)
            split = min(r.moves, default=None)
            qos = [_worst(p, "_b0_") for p in r.periods]
            bulk = [_worst(p, "_b1_") for p in r.periods]
            after = qos[split + 1:] if split is not None else qos[1:]
            s = r.summary
            rows.append({
                "controller": controller, "spare_workers": spares,
                "decomposed_after_period": split, "moved_modules": len(r.moves.get(split, {})) if split is not None else 0,
                "qos_p95_first_us": round(qos[0], 1), "qos_p95_after_median_us": round(statistics.median(after), 1),
                "periods_over_slo_after": sum(q > SLO_US for q in after), "periods_after": len(after),
                "bulk_p95_median_us": round(statistics.median(bulk), 1),
                "rate_kpps": round(s["rate_pps"] / 1e3, 1), "lossless": s["lossless"],
                "dropped": s["dropped"],
            })
            timelines.append({"controller": controller, "spare_workers": spares, "decomposed_after_period": split, "moves": r.moves,
                              "qos_p95_us": qos, "bulk_p95_us": bulk,
                              "busy": [[w["busy_fraction"] for w in p["workers"]] for p in r.periods]})
    report = {"backend": backend, "period_ms": PERIOD_MS, "slo_us": SLO_US, "bulk_work_us": BULK_WORK_US,
              "qos_pps": QOS_PPS, "bulk_pps": BULK_PPS, "rows": rows, "timelines": timelines}
    output.write(out, "decompose", report, markdown, lambda _rows, path: plot(report, path))
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per controller and spare count: when decomposition came, the QoS p95 before and after, violations, rate."""
    lines = ["| controller | spare workers | decomposed after period | modules moved | QoS p95 first period (µs) | QoS p95 after, median (µs) "
             f"| periods over the {SLO_US:g} µs SLO after | bulk p95 median (µs) | kpps | lossless |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        split = "—" if r["decomposed_after_period"] is None else r["decomposed_after_period"]
        lines.append(f"| {r['controller']} | {r['spare_workers']} | {split} | {r['moved_modules']} | {r['qos_p95_first_us']} "
                     f"| {r['qos_p95_after_median_us']} | {r['periods_over_slo_after']} of {r['periods_after']} "
                     f"| {r['bulk_p95_median_us']} | {r['rate_kpps']} | {'yes' if r['lossless'] else 'no'} |")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """Per controller: the worst QoS flow's p95 per period with and without a spare, and the workers' busy shares."""
    from sluice.plot import save, subplots

    fig, axes = subplots(2, len(CONTROLLERS), figsize=(6 * len(CONTROLLERS), 6), sharex=True)
    for col, controller in enumerate(CONTROLLERS):
        top, bottom = axes[0][col], axes[1][col]
        for t in (t for t in report["timelines"] if t["controller"] == controller):
            label = "one worker" if t["spare_workers"] == 0 else "with a spare"
            top.plot(t["qos_p95_us"], drawstyle="steps-post", label=f"QoS p95, {label}")
            for w in range(len(t["busy"][0])):
                bottom.plot([b[w] for b in t["busy"]], drawstyle="steps-post", label=f"worker {w}, {label}")
            if t["decomposed_after_period"] is not None:
                for ax in (top, bottom):
                    ax.axvline(t["decomposed_after_period"] + 1, color="k", ls=":", label="decomposed" if ax is top else None)
        top.axhline(report["slo_us"], color="k", ls="--", label="SLO")
        top.set_yscale("log")
        top.set_title(controller)
        top.set_ylabel("worst QoS flow p95 (µs)")
        bottom.set_ylabel("busy share")
        bottom.set_xlabel("period")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The QoS bearer under projgrad with a spare worker, after decomposition."""
    r = next(r for r in report["rows"] if r["controller"] == "projgrad" and r["spare_workers"] == 1)
    return output.Headline(f"QoS p95 {r['qos_p95_first_us']} → {r['qos_p95_after_median_us']} µs (SLO {report['slo_us']:g}), "
                           f"{r['periods_over_slo_after']} of {r['periods_after']} periods over after",
                           "— (dissertation §3: decomposition restores the SLO)")
