"""`dynamics`: how the controllers follow changes, period by period.

- `slo-wave`: GW(8) at 100 kpps per flow, every flow's SLO a square wave
  between 60 and 300 µs (at this rate a full buffer waits 320 µs).
- `load-steps`: GW(8) with a 1 ms SLO, the offered load stepping from
  50 kpps to 3 Mpps and back (spread over the flows).
- `bearer-steps`: MGW(2, 4), the QoS bearer's flows (SLO 100 µs) stepping
  from 1 to 50 kpps each, the bulk bearer steady at 200 kpps per flow.

For null, max and projgrad: per period the mean trigger of the controlled
modules, a watched flow's p95 against its SLO, and the delivered rate.
Simulator by default (`--backend engine` for the real thing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from sluice.lab import output
from sluice.pipeline import Pipeline
from sluice.pipelines import gw, mgw

CONTROLLERS = ("null", "max", "projgrad")
#: Periods of one scenario (warm-up included), and their length (ms).
PERIODS, QUICK_PERIODS = 48, 24
PERIOD_MS = 50.0


def _slo_wave(periods: int) -> tuple[Pipeline, str]:
    p = gw(8)
    half = periods // 6
    wave = [(i * half, 60.0 if i % 2 == 0 else 300.0) for i in range(periods // half)]
    for f in p.flows():
        p.set_rate(f, 100e3)
        p.set_slo(f, wave[0][1])
        p.set_schedule(f, slo_us=wave)
    return p, "flow0"


def _load_steps(periods: int) -> tuple[Pipeline, str]:
    p = gw(8)
    totals = [50e3, 500e3, 1e6, 2e6, 3e6, 1e6, 50e3]
    step = periods // len(totals)
    for f in p.flows():
        p.set_slo(f, 1000.0)
        p.set_rate(f, totals[0] / 8)
        p.set_schedule(f, rate_pps=[(i * step, total / 8) for i, total in enumerate(totals)])
    return p, "flow0"


def _bearer_steps(periods: int) -> tuple[Pipeline, str]:
    p = mgw(2, 4, slo_us=100.0, rate_pps=200e3)
    rates = [1e3, 5e3, 20e3, 50e3, 20e3, 1e3]
    step = periods // len(rates)
    for f in p.flows():
        if "_b0_" in f:
            p.set_rate(f, rates[0])
            p.set_schedule(f, rate_pps=[(i * step, r) for i, r in enumerate(rates)])
    return p, "dl_b0_u0"


SCENARIOS: dict[str, Callable[[int], tuple[Pipeline, str]]] = {
    "slo-wave": _slo_wave, "load-steps": _load_steps, "bearer-steps": _bearer_steps,
}


def run(out: Path, quick: bool, backend: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """Every scenario under every controller; writes dynamics.{json,csv,md,png} into `out`."""
    periods = QUICK_PERIODS if quick else PERIODS
    rows = []
    for name, build in SCENARIOS.items():
        for controller in CONTROLLERS:
            progress(f"{name}: {controller}")
            pipeline, watched = build(periods)
            controlled = [m["name"] for m in pipeline.validate()["modules"] if m["controlled"]]
            r = pipeline.run(controller, periods=periods - 1, warmup_periods=1, period_ms=PERIOD_MS, backend=backend)
            for i, p in enumerate(r.periods):
                flow = p["flows"][watched]
                triggers = [p["modules"][m]["trigger"] for m in controlled]
                rows.append({
                    "scenario": name, "controller": controller, "period": i, "t_s": round(p["t_s"], 3),
                    "mean_trigger": round(sum(triggers) / max(len(triggers), 1), 2),
                    "watched": watched, "p95_us": round(flow["p95_us"], 2), "slo_us": flow["slo_us"],
                    "rate_mpps": round(p["rate_pps"] / 1e6, 4), "violated": p["violated"],
                })
    report = {"backend": backend, "period_ms": PERIOD_MS, "rows": rows}
    output.write(out, "dynamics", report, markdown, plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per scenario and controller: periods in violation, mean rate, mean trigger."""
    lines = ["| scenario | controller | periods over SLO | mean Mpps | mean trigger |", "|---|---|---|---|---|"]
    for name in SCENARIOS:
        for c in CONTROLLERS:
            mine = [r for r in rows if r["scenario"] == name and r["controller"] == c]
            if not mine:
                continue
            over = sum(r["violated"] for r in mine)
            rate = sum(r["rate_mpps"] for r in mine) / len(mine)
            trig = sum(r["mean_trigger"] for r in mine) / len(mine)
            lines.append(f"| {name} | {c} | {over} of {len(mine)} | {rate:.3f} | {trig:.1f} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """One column per scenario: mean trigger, watched flow's p95 against its SLO, delivered rate."""
    from sluice.plot import save, subplots

    fig, axes = subplots(3, len(SCENARIOS), figsize=(5 * len(SCENARIOS), 8), sharex="col")
    for col, name in enumerate(SCENARIOS):
        for i, c in enumerate(CONTROLLERS):
            mine = [r for r in rows if r["scenario"] == name and r["controller"] == c]
            t = [r["t_s"] for r in mine]
            axes[0][col].plot(t, [r["mean_trigger"] for r in mine], drawstyle="steps-pre", color=f"C{i}", label=c)
            axes[1][col].plot(t, [r["p95_us"] for r in mine], drawstyle="steps-pre", color=f"C{i}", label=f"{c} p95")
            axes[2][col].plot(t, [r["rate_mpps"] for r in mine], drawstyle="steps-pre", color=f"C{i}", label=c)
            if i == 0:
                axes[1][col].plot(t, [r["slo_us"] for r in mine], drawstyle="steps-pre", color="k", ls="--", label="SLO")
        axes[0][col].set_title(name)
        axes[0][col].set_ylabel("mean trigger (pkt)")
        axes[1][col].set_ylabel(f"p95 of {mine[0]['watched'] if mine else ''} (µs)")
        axes[1][col].set_yscale("log")
        axes[2][col].set_ylabel("delivered (Mpps)")
        axes[2][col].set_xlabel("time (s)")
        for ax in axes[:, col]:
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    axes[1][0].legend(fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """Periods over SLO under projgrad, per scenario."""
    rows = [r for r in report["rows"] if r["controller"] == "projgrad"]
    parts = []
    for name in SCENARIOS:
        mine = [r for r in rows if r["scenario"] == name]
        parts.append(f"{name} {sum(r['violated'] for r in mine)}/{len(mine)}")
    return output.Headline("projgrad periods over SLO: " + ", ".join(parts), "— (Batchy Figs. 8–10: follows the steps)")
