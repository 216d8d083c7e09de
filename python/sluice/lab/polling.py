"""`polling`: what each poll policy costs and gives, on L2L3(4) with one
worker on the engine, the built-in source's streams arriving at a set rate
into receive queues of 4096 packets (an emulated NIC: what arrives while a
queue is full is lost, counted).

- The load: from none through 1%, 10%, 25%, 50%, 75%, 90% and 100% of
  what a busy worker carries to 120% of it (measured first, in the same
  run); per policy and load the worker's share of its core (thread CPU
  time) beside the share the packets need (the load carried, as a share
  of what a busy worker at full batches carries), the rate carried, the
  mean batch, the loss at the queues, mean and p99 delay, and periods
  over the flows' SLO.
- The paper's Figure 1: the sizes of a worker's consecutive rounds at a
  constant half load, busy polling against the batching policies.
- The paper's Table III: each policy's most throughput against busy polling's.
- The paper's Figure 4: the load stepping every few periods, the worker's
  CPU and the delay per period.
- What a decision costs each policy, and how late this machine's sleeps
  end (plain, and precise: an absolute deadline early by the usual
  oversleep, then a spin).
- Energy: joules a packet from RAPL where the machine has it; where it
  does not (a VM), the report says so and estimates nothing.

The learned policy runs the model shipped in the package, trained by
`sluice train polling` (see `polling_training`)."""

from __future__ import annotations

import json
from pathlib import Path
import statistics
from typing import Any, Callable

from sluice.lab import _core
from sluice.lab import energy, output
from sluice.lab.poll_worker import POLICIES, SLO_US, ROW_KEYS, measure, needed_pct, pipeline
from sluice.lab.reference import table
from sluice.poll_model import HISTORY, with_default_model
from sluice.description import PollSettingsJson

LOADS = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.2]
QUICK_LOADS = [0.0, 0.01, 0.5, 1.2]
#: Figure 1: the constant load, and the policies whose rounds it shows.
FIGURE1_LOAD = 0.5
FIGURE1_POLICIES = ("busy", "slo-batching", "learned")
#: Under load, the batching policies against busy polling, over several runs:
#: the loads, the policies, and the runs (full; quick).
SPREAD_LOADS = [0.25, 0.5, 0.75, 1.2]
SPREAD_POLICIES = ("busy", "slo-batching", "learned")
SPREAD_RUNS, QUICK_SPREAD_RUNS = 5, 1
#: Held out from the training: the same loads with each flow's packets
#: arriving in bursts (pkt; a quarter of a receive queue at once), and with
#: one flow's SLO tight (µs, p95; the others keep `SLO_US`).
BURST_PKTS = 1024
TIGHT_SLO_US = 200.0
QUICK_HELD_OUT_LOADS = [0.5]
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
            rows.append({"policy": policy, "load": load, "input": "emulated", "needed_pct": round(needed_pct(m["mpps"], saturation_pps), 1),
                         **{k: round(m[k], 3) for k in ROW_KEYS}, "uj_per_pkt": m["uj_per_pkt"]})
    top = {r["policy"]: r["mpps"] for r in rows if r["load"] == max(loads)}
    table3 = [{"policy": p, "max_mpps": mpps, "of_busy": round(mpps / top["busy"], 3) if top["busy"] else 0.0} for p, mpps in top.items()]
    under_load = spread(saturation_pps, QUICK_SPREAD_RUNS if quick else SPREAD_RUNS, periods, period_ms, progress)
    held = held_out(saturation_pps, QUICK_HELD_OUT_LOADS if quick else SPREAD_LOADS, periods, period_ms, progress)
    progress(f"round sizes at {FIGURE1_LOAD:.0%} load (Figure 1)")
    rounds = {policy: round_sizes(POLICIES[policy], FIGURE1_LOAD, saturation_pps, period_ms) for policy in FIGURE1_POLICIES}
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
        port = polling_port.rows(periods, period_ms, quick)
        rows += port["rows"]
        port_mpps = port["saturation_mpps"]
    decision_ns = {p: round(_core.poll_decision_ns(json.dumps(with_default_model(spec))), 1) for p, spec in POLICIES.items()}
    sleep = json.loads(_core.sleep_error_us(50.0, 50))
    report = {"saturation_mpps": round(saturation_pps / 1e6, 3), "port_saturation_mpps": port_mpps, "periods": periods, "period_ms": period_ms, "slo_us": SLO_US,
              "energy": energy.source(), "figure1": {"load": FIGURE1_LOAD, "rounds": rounds}, "under_load": under_load, "held_out": held, "table3": table3, "steps": {"loads": STEPS, "periods_each": step_periods, "by_policy": steps},
              "decision_ns": decision_ns, "sleep_error_us": {"p50": sleep["precise"]["p50"], "p99": sleep["precise"]["p99"],
                                                             "plain_p50": sleep["plain"]["p50"], "plain_p99": sleep["plain"]["p99"],
                                                             "request_us": sleep["request_us"], "spin_us": sleep["spin_us"]},
              "published": table("polling_figures.csv"), "rows": rows}
    output.write(out, "polling", report, lambda rows: markdown_under_load(under_load) + "\n" + markdown_held_out(held) + "\n" + markdown(rows), plot)
    plot_steps(report["steps"], out / "polling-steps.png")
    plot_rounds(report["figure1"], out / "polling-rounds.png")
    return report


def spread(saturation_pps: float, runs: int, periods: int, period_ms: float, progress: Callable[[str], None]) -> list[dict[str, Any]]:
    """Per policy of `SPREAD_POLICIES` and load of `SPREAD_LOADS`, over
    `runs` runs (each policy in turn within a run): the median, least and
    most CPU share, the share the packets need and the target CPU
    (1.15 × needed + 5 points), the throughput against busy polling's in
    the same run, the least mean batch and the most loss and periods over SLO."""
    got: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for run in range(runs):
        for load in SPREAD_LOADS:
            progress(f"under load, run {run + 1}/{runs}: {load:.0%}")
            for p, m in beside_busy(load, saturation_pps, periods, period_ms).items():
                got.setdefault((p, load), []).append(m)
    out = []
    for (policy, load), ms in got.items():
        cpu = sorted(m["cpu_pct"] for m in ms)
        needed = round(statistics.median(needed_pct(m["mpps"], saturation_pps) for m in ms), 1)
        out.append({"policy": policy, "load": load, "runs": len(ms), "cpu_pct": round(statistics.median(cpu), 1), "cpu_min": round(cpu[0], 1),
                    "cpu_max": round(cpu[-1], 1), "needed_pct": needed, "target_cpu_pct": round(1.15 * needed + 5, 1),
                    "of_busy": round(statistics.median(m["of_busy"] for m in ms), 3), "of_busy_min": round(min(m["of_busy"] for m in ms), 3),
                    "least_batch": round(min(m["mean_batch"] for m in ms), 1), "most_loss_pct": round(max(m["loss_pct"] for m in ms), 3),
                    "most_slo_viol_pct": round(max(m["slo_viol_pct"] for m in ms), 1)})
    return out


def beside_busy(load: float, saturation_pps: float, periods: int, period_ms: float, **traffic: Any) -> dict[str, dict[str, Any]]:
    """Each policy of `SPREAD_POLICIES` in turn, busy first, at `load` (and
    `traffic`, the worker pipeline's burst and first-SLO settings): what
    `measure` gives, with `of_busy`, its rate over busy polling's in the same run."""
    measured = {p: measure(pipeline(POLICIES[p], load, saturation_pps, **traffic), periods, period_ms) for p in SPREAD_POLICIES}
    busy = measured["busy"]["mpps"]
    return {p: {**m, "of_busy": m["mpps"] / busy if busy else 0.0} for p, m in measured.items()}


def held_out(saturation_pps: float, loads: list[float], periods: int, period_ms: float, progress: Callable[[str], None]) -> list[dict[str, Any]]:
    """Per traffic the policies were not trained on (bursts of
    `BURST_PKTS`; one flow's SLO `TIGHT_SLO_US`), load of `loads` and
    policy of `SPREAD_POLICIES` (in turn, busy first): one run's CPU
    against what the packets need, throughput against busy polling's,
    mean batch, loss, p99 delay of the tightest flow and periods over SLO."""
    patterns: dict[str, dict[str, Any]] = {"bursty": {"burst_pkts": BURST_PKTS}, "tight SLO": {"first_slo_us": TIGHT_SLO_US}}
    out = []
    for pattern, settings in patterns.items():
        for load in loads:
            progress(f"held out, {pattern}: {load:.0%}")
            out += [{"pattern": pattern, "policy": p, "load": load, "cpu_pct": round(m["cpu_pct"], 1), "needed_pct": round(needed_pct(m["mpps"], saturation_pps), 1),
                     "of_busy": round(m["of_busy"], 3), "mean_batch": round(m["mean_batch"], 1), "loss_pct": round(m["loss_pct"], 3),
                     "first_p99_us": round(m["first_p99_us"], 1), "slo_viol_pct": round(m["slo_viol_pct"], 1)}
                    for p, m in beside_busy(load, saturation_pps, periods, period_ms, **settings).items()]
    return out


def markdown_held_out(held: list[dict[str, Any]]) -> str:
    """The held-out table: per traffic pattern, load and policy."""
    lines = [f"Held out (bursts of {BURST_PKTS} packets per flow; flow 0's SLO {TIGHT_SLO_US:.0f} µs), one run each:", "",
             "| traffic | load | policy | CPU % | needed % | Mpps of busy | batch | loss % | flow 0 p99 µs | periods over SLO % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in held:
        lines.append(f"| {r['pattern']} | {r['load']:.0%} | {r['policy']} | {r['cpu_pct']:.1f} | {r['needed_pct']:.1f} | ×{r['of_busy']:.3f} | "
                     f"{r['mean_batch']:.1f} | {r['loss_pct']:.2f} | {r['first_p99_us']:.1f} | {r['slo_viol_pct']:.0f} |")
    return "\n".join(lines) + "\n"


def round_sizes(poll: PollSettingsJson, load: float, saturation_pps: float, period_ms: float) -> list[int]:
    """The sizes of the worker's last consecutive rounds (at most
    `HISTORY`, the latest last) under `poll` at a constant `load`:
    the round sizes the learned policy's features hold at the run's last decision."""
    logged: PollSettingsJson = {**poll, "log_features": True}
    m = measure(pipeline(logged, load, saturation_pps), 2, period_ms)
    last = m["features"][-1] if m["features"] else []
    return [int(n) for n in reversed(last[:HISTORY])]


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per input, policy and load: CPU against what the packets need, time asked asleep, rate, batch, loss, delay, violations."""
    lines = ["| input | policy | load | CPU % | needed % | asleep % | Mpps | batch | loss % | mean µs | p99 µs | periods over SLO % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        # On a port the sender, not the worker, sets the most a busy worker carries: nothing says what the packets need.
        needed = f"{r['needed_pct']:.1f}" if "needed_pct" in r else "–"
        lines.append(f"| {r['input']} | {r['policy']} | {r['load']:.1%} | {r['cpu_pct']:.1f} | {needed} | {r['asleep_pct']:.1f} | {r['mpps']:.3f} | "
                     f"{r['mean_batch']:.1f} | {r['loss_pct']:.2f} | {r['mean_us']:.1f} | {r['p99_us']:.1f} | {r['slo_viol_pct']:.0f} |")
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


def plot_rounds(figure1: dict[str, Any], path: Path) -> None:
    """Like the paper's Figure 1: packets each consecutive round took at a constant load, per policy."""
    from sluice.plot import save, subplots

    fig, ax = subplots(1, 1, figsize=(8, 3.4))
    for i, (policy, sizes) in enumerate(figure1["rounds"].items()):
        ax.step(range(len(sizes)), sizes, where="mid", color=f"C{i}", label=policy)
    ax.set(xlabel="round (consecutive, the last of the run at the right)", ylabel="packets in the round",
           title=f"round sizes at a constant {figure1['load']:.0%} load")
    ax.legend(fontsize=8)
    save(fig, path)


def markdown_under_load(under_load: list[dict[str, Any]]) -> str:
    """The spread table: per policy and load, CPU (median, range) against the target, throughput against busy, batch, loss, SLO."""
    lines = ["| policy | load | runs | CPU % median (range) | needed % | target CPU % | Mpps of busy (least) | least batch | most loss % | most periods over SLO % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in under_load:
        lines.append(f"| {r['policy']} | {r['load']:.0%} | {r['runs']} | {r['cpu_pct']:.1f} ({r['cpu_min']:.1f}–{r['cpu_max']:.1f}) | {r['needed_pct']:.1f} | "
                     f"{r['target_cpu_pct']:.1f} | ×{r['of_busy']:.3f} (×{r['of_busy_min']:.3f}) | {r['least_batch']:.1f} | {r['most_loss_pct']:.2f} | {r['most_slo_viol_pct']:.0f} |")
    return "\n".join(lines) + "\n"


def headline(report: dict[str, Any]) -> output.Headline:
    """CPU under load against busy polling and what the packets need, CPU at no load, the most throughput."""
    rows = [r for r in report["rows"] if r["input"] == "emulated"]
    idle = {r["policy"]: r["cpu_pct"] for r in rows if r["load"] == 0.0}
    loaded = [r for r in report["under_load"] if r["policy"] == "slo-batching" and r["load"] < 1]
    under_load = ", ".join(f"{r['load']:.0%} load {r['cpu_pct']:.0f}% (needs {r['needed_pct']:.0f})" for r in loaded)
    of_busy = {t["policy"]: t["of_busy"] for t in report["table3"]}
    return output.Headline(f"slo-batching CPU at {under_load}, busy 100%; CPU at no load: slo-batching {idle['slo-batching']:.1f}%, "
                           f"learned {idle['learned']:.1f}% (busy {idle['busy']:.0f}%); "
                           f"most throughput ×{min(of_busy.values()):.2f}–{max(v for p, v in of_busy.items() if p != 'busy'):.2f} of busy",
                           "learned at 1 Gbit/s: 45% CPU (busy 100%); most throughput 87% of busy")
