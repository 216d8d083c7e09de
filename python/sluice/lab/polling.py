"""`polling`: what each poll policy costs and gives, on L2L3(4) with one
worker on the engine, the built-in source's streams arriving at a set rate
into receive queues of 4096 packets (an emulated NIC: what arrives while a
queue is full is lost, counted).

- The load: from none through 0.1%, 1%, 10%, 50%, 90% and 100% of what a
  busy worker carries to 120% of it (measured first, in the same run);
  per policy and load the worker's share of its core (thread CPU time),
  the rate carried, the loss at the queues, mean and p99 delay, and
  periods over the flows' SLO.
- The paper's Table III: each policy's most throughput against busy polling's.
- The paper's Figure 4: the load stepping every few periods, the worker's
  CPU and the delay per period.
- What a decision costs each policy, and how late this machine's sleeps
  end (plain, and precise: an absolute deadline early by the usual
  oversleep, then a spin).

The learned policy runs the model shipped in the package, trained by
`sluice train polling` (see `polling_training`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from sluice import _core
from sluice.lab import output
from sluice.lab.poll_worker import POLICIES, SLO_US, ROW_KEYS, measure, pipeline
from sluice.lab.reference import table
from sluice.poll_model import with_default_model

LOADS = [0.0, 0.001, 0.01, 0.1, 0.5, 0.9, 1.0, 1.2]
QUICK_LOADS = [0.0, 0.01, 0.5, 1.2]
#: Figure 4's load steps (share of saturation), each held `STEP_PERIODS` periods.
STEPS = [0.01, 0.5, 0.001, 0.9, 0.1]
STEP_PERIODS = 3
QUICK_STEP_PERIODS = 2


def run(out: Path, quick: bool, progress: Callable[[str], None]) -> dict[str, Any]:
    """Every point; writes polling.{json,csv,md,png} into `out`."""
    loads = QUICK_LOADS if quick else LOADS
    periods, period_ms = (3, 100.0) if quick else (5, 200.0)
    step_periods = QUICK_STEP_PERIODS if quick else STEP_PERIODS
    progress("busy polling's saturation rate")
    saturation_pps = max(measure(pipeline(POLICIES["busy"], 0.0, 0.0), periods, period_ms)["mpps"] for _ in range(2)) * 1e6
    rows: list[dict[str, Any]] = []
    for policy in POLICIES:
        for load in loads:
            progress(f"{policy} at {load:.1%}")
            m = measure(pipeline(POLICIES[policy], load, saturation_pps), periods, period_ms)
            rows.append({"policy": policy, "load": load, "input": "emulated", **{k: round(m[k], 3) for k in ROW_KEYS}})
    top = {r["policy"]: r["mpps"] for r in rows if r["load"] == max(loads)}
    table3 = [{"policy": p, "max_mpps": mpps, "of_busy": round(mpps / top["busy"], 3) if top["busy"] else 0.0} for p, mpps in top.items()]
    progress("load steps (Figure 4)")
    schedule = [(i * step_periods + 1, share) for i, share in enumerate(STEPS)]
    steps = {}
    for policy in POLICIES:
        m = measure(pipeline(POLICIES[policy], STEPS[0], saturation_pps, schedule), len(STEPS) * step_periods, period_ms)
        steps[policy] = m["periods"]
    from sluice.lab import polling_port

    port_mpps: dict[str, float] = {}
    if polling_port.available():
        progress(f"every policy on {' and '.join(polling_port.BACKENDS)} ports (veth)")
        port = polling_port.rows(periods, period_ms)
        rows += port["rows"]
        port_mpps = port["saturation_mpps"]
    decision_ns = {p: round(_core.poll_decision_ns(json.dumps(with_default_model(spec))), 1) for p, spec in POLICIES.items()}
    sleep = json.loads(_core.sleep_error_us(50.0, 50))
    report = {"saturation_mpps": round(saturation_pps / 1e6, 3), "port_saturation_mpps": port_mpps, "periods": periods, "period_ms": period_ms, "slo_us": SLO_US,
              "table3": table3, "steps": {"loads": STEPS, "periods_each": step_periods, "by_policy": steps},
              "decision_ns": decision_ns, "sleep_error_us": {"p50": sleep["precise"]["p50"], "p99": sleep["precise"]["p99"],
                                                             "plain_p50": sleep["plain"]["p50"], "plain_p99": sleep["plain"]["p99"],
                                                             "request_us": sleep["request_us"], "spin_us": sleep["spin_us"]},
              "published": table("polling_figures.csv"), "rows": rows}
    output.write(out, "polling", report, markdown, plot)
    plot_steps(report["steps"], out / "polling-steps.png")
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per input, policy and load: CPU, time asked asleep, rate, loss, delay, violations."""
    lines = ["| input | policy | load | CPU % | asleep % | Mpps | loss % | mean µs | p99 µs | periods over SLO % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['input']} | {r['policy']} | {r['load']:.1%} | {r['cpu_pct']:.1f} | {r['asleep_pct']:.1f} | {r['mpps']:.3f} | {r['loss_pct']:.2f} | "
                     f"{r['mean_us']:.1f} | {r['p99_us']:.1f} | {r['slo_viol_pct']:.0f} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """CPU share and p99 delay against load, per policy."""
    from sluice.plot import save, subplots

    fig, (cpu, lat) = subplots(1, 2, figsize=(10, 3.6))
    rows = [r for r in rows if r["input"] == "emulated"]
    for i, policy in enumerate(dict.fromkeys(r["policy"] for r in rows)):
        pts = [r for r in rows if r["policy"] == policy]
        xs = [max(r["load"], 1e-4) for r in pts]
        cpu.plot(xs, [r["cpu_pct"] for r in pts], "o-", color=f"C{i}", label=policy)
        lat.plot(xs, [max(r["p99_us"], 0.1) for r in pts], "o-", color=f"C{i}", label=policy)
    cpu.set(xscale="log", xlabel="load (share of busy polling's saturation; 0 at the left)", ylabel="worker CPU %")
    lat.set(xscale="log", yscale="log", xlabel="load", ylabel="p99 delay (µs)")
    cpu.legend(fontsize=8)
    save(fig, path)


def plot_steps(steps: dict[str, Any], path: Path) -> None:
    """Like the paper's Figure 4: the worker's CPU and the p99 delay per
    period while the load steps, per policy."""
    from sluice.plot import save, subplots

    fig, (cpu, lat) = subplots(2, 1, figsize=(8, 5), sharex=True)
    for i, (policy, periods) in enumerate(steps["by_policy"].items()):
        xs = range(len(periods))
        cpu.plot(xs, [p["cpu_pct"] for p in periods], "o-", color=f"C{i}", label=policy)
        lat.plot(xs, [max(p["p99_us"], 0.1) for p in periods], "o-", color=f"C{i}", label=policy)
    loads = ", ".join(f"{share:.1%}" for share in steps["loads"])
    cpu.set(ylabel="worker CPU %", title=f"load steps every {steps['periods_each']} periods: {loads}")
    lat.set(yscale="log", xlabel="period", ylabel="p99 delay (µs)")
    cpu.legend(fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """CPU at no load and the most throughput, against busy polling."""
    rows = [r for r in report["rows"] if r["input"] == "emulated"]
    idle = {r["policy"]: r["cpu_pct"] for r in rows if r["load"] == 0.0}
    of_busy = {t["policy"]: t["of_busy"] for t in report["table3"]}
    return output.Headline(f"CPU at no load: learned {idle['learned']:.1f}%, slo-aware {idle['slo-aware']:.1f}%, vpp-adaptive {idle['vpp-adaptive']:.1f}%, "
                           f"metronome {idle['metronome']:.1f}% (busy {idle['busy']:.0f}%); "
                           f"most throughput ×{min(of_busy.values()):.2f}–{max(v for p, v in of_busy.items() if p != 'busy'):.2f} of busy",
                           "learned: ~20% CPU at no load plus a core at 98%; most throughput 87% of busy")
