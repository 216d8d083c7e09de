"""`overhead`: how long the controller takes to respond to a period on
RC(n): reading the telemetry, computing (projgrad), applying the actions
(Batchy Table 1)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable

from sluice.lab import output
from sluice.lab.reference import table
from sluice.pipelines import rc

BRANCHING = [1, 2, 4, 8, 16, 32, 64]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(out: Path, quick: bool, backend: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """Measures every branching and writes overhead.{json,csv,md,png} into `out`."""
    periods = 10 if quick else 50
    rows = []
    for n in BRANCHING:
        progress(f"RC({n})")
        r = rc(n).run("projgrad", periods=periods, warmup_periods=1, period_ms=20.0, backend=backend)
        responses = [p["response"] for p in r.periods if not p["warmup"]]
        totals = [(x["read_ns"] + x["compute_ns"] + x["apply_ns"]) / 1e6 for x in responses]
        parts = {k: sum(x[k] for x in responses) for k in ("read_ns", "compute_ns", "apply_ns")}
        whole = sum(parts.values()) or 1
        rows.append({
            "branching": n,
            "response_ms": round(statistics.median(totals), 4),
            "p99_ms": round(_percentile(totals, 0.99), 4),
            "stats_pct": round(100 * parts["read_ns"] / whole, 1),
            "gradient_pct": round(100 * parts["compute_ns"] / whole, 1),
            "control_pct": round(100 * parts["apply_ns"] / whole, 1),
        })
    report = {"backend": backend, "periods": periods, "rows": rows}
    output.write(out, "overhead", report, markdown, plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Ours beside the published response times."""
    pub = {int(r["branching"]): r for r in table("batchy_table1_overhead.csv")}
    lines = ["| RC(n) | response ms (p99) | stats / gradient / control % | published ms | published stats / gradient / control % |",
             "|---|---|---|---|---|"]
    for r in rows:
        p = pub.get(r["branching"])
        published = (f"{p['response_ms']} | {p['stats_pct']} / {p['gradient_pct']} / {p['control_pct']}") if p else "— | —"
        lines.append(f"| {r['branching']} | {r['response_ms']} ({r['p99_ms']}) | "
                     f"{r['stats_pct']} / {r['gradient_pct']} / {r['control_pct']} | {published} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Response time against branching, ours and published."""
    from sluice.plot import save, subplots

    pub = table("batchy_table1_overhead.csv")
    fig, ax = subplots(figsize=(6, 4))
    ax.plot([r["branching"] for r in rows], [r["response_ms"] for r in rows], "o-", label="Sluice (median)")
    ax.plot([r["branching"] for r in rows], [r["p99_ms"] for r in rows], "o--", label="Sluice (p99)")
    if pub:
        ax.plot([int(r["branching"]) for r in pub], [float(r["response_ms"]) for r in pub], "s-", color="k", label="Batchy (published)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("branching n of RC(n)")
    ax.set_ylabel("controller response (ms)")
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The controller's response on the largest RC(n) measured."""
    r = max(report["rows"], key=lambda r: r["branching"])
    pub = {int(p["branching"]): p for p in table("batchy_table1_overhead.csv")}.get(r["branching"])
    return output.Headline(f"RC({r['branching']}) response {r['response_ms']} ms (p99 {r['p99_ms']})",
                           f"{pub['response_ms']} ms" if pub else "—")
