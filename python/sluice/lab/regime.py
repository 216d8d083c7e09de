"""`regime`: where batch control pays. Speedup of projgrad over Null on a
branching pipeline — a source, an exact-match split on the destination
into n branches, one NF per branch costing T0 + T1·b with batchiness
β = T1/(T0 + T1) — across branching × batchiness (burstiness 1) and
branching × burstiness (β = 0.3), each flow's SLO at twice its p95 delay
under Null (room to batch, but not unlimited). Simulator by default
(`--backend engine` for the real thing)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable

from sluice import _core
from sluice.lab import output
from sluice.nf import Bypass, ExactMatch
from sluice.pipeline import Pipeline
from sluice.traffic import Template

#: T0 + T1 of each branch's NF (ns).
BRANCH_COST_NS = 400.0
#: SLO as a multiple of the p95 delay under Null.
SLO_OVER_NULL = 2.0
#: Batchiness of the branching × burstiness plane.
BURST_BETA = 0.3


def branching(n: int, beta: float, burstiness: int) -> Pipeline:
    """The regime pipeline: n flows, each through its own NF of batchiness `beta`."""
    p = Pipeline(f"branching({n}, β={beta}, k={burstiness})")
    src = p.source("src", burstiness=burstiness)
    split = p.module("split", ExactMatch("dst_ip", {f"20.0.{i // 250}.{i % 250 + 1}": i for i in range(n)}))
    p.connect(src, split)
    cycles = 1.0 / _core.ns_per_cycle()
    for i in range(n):
        nf = p.module(f"nf{i}", Bypass(round((1 - beta) * BRANCH_COST_NS * cycles), round(beta * BRANCH_COST_NS * cycles)))
        out = p.sink(f"out{i}")
        p.connect(split, nf, gate=i)
        p.connect(nf, out)
        p.flow(f"f{i}", [src, split, nf, out], template=Template(dst_ip=f"20.0.{i // 250}.{i % 250 + 1}"))
    return p


def _point(n: int, beta: float, burstiness: int, backend: str, periods: int) -> dict[str, Any]:
    """Null (which sets the SLOs), Max and projgrad; the speedups and projgrad's violations."""
    p = branching(n, beta, burstiness)

    def run(controller: str) -> Any:
        return p.run(controller, periods=periods, warmup_periods=1, period_ms=20.0, backend=backend)

    null = run("null")
    measured = [q for q in null.periods if not q["warmup"]]
    for f in p.flows():
        p.set_slo(f, max(SLO_OVER_NULL * statistics.mean(q["flows"][f]["p95_us"] for q in measured), 0.1))
    calib, projgrad = run("max"), run("projgrad")
    base = null.summary["rate_pps"]
    return {
        "branching": n,
        "beta": beta,
        "burstiness": burstiness,
        "speedup": round(projgrad.summary["rate_pps"] / base, 3) if base else None,
        "max_speedup": round(calib.summary["rate_pps"] / base, 3) if base else None,
        "viol_pct": round(projgrad.summary["violation_pct"], 1),
        "batch": round(projgrad.summary["mean_batch"], 2),
    }


def run(out: Path, quick: bool, backend: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """Both planes; writes regime.{json,csv,md,png} into `out`."""
    ns = [1, 4, 16] if quick else [1, 2, 4, 8, 16, 32]
    betas = [0.1, 0.3, 0.5, 0.7] if quick else [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    ks = [1, 8, 32] if quick else [1, 2, 4, 8, 16, 32]
    periods = 3 if quick else 5
    rows = []
    for n in ns:
        for beta in betas:
            progress(f"branching {n}, β {beta}")
            rows.append({"plane": "batchiness", **_point(n, beta, 1, backend, periods)})
        for k in ks:
            progress(f"branching {n}, burstiness {k}")
            rows.append({"plane": "burstiness", **_point(n, BURST_BETA, k, backend, periods)})
    report = {"backend": backend, "branch_cost_ns": BRANCH_COST_NS, "rows": rows}
    output.write(out, "regime", report, markdown, plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """One table per plane: speedup (projgrad / Null) by branching and the other axis."""
    lines = []
    for plane, axis in (("batchiness", "beta"), ("burstiness", "burstiness")):
        mine = [r for r in rows if r["plane"] == plane]
        cols = sorted({r[axis] for r in mine})
        lines += [f"**projgrad / Null, branching × {plane}** (violation % in brackets)", "",
                  "| branching | " + " | ".join(f"{axis} {c}" for c in cols) + " |", "|---|" + "---|" * len(cols)]
        for n in sorted({r["branching"] for r in mine}):
            cells = {r[axis]: f"{r['speedup']} ({r['viol_pct']:g})" for r in mine if r["branching"] == n}
            lines.append(f"| {n} | " + " | ".join(cells.get(c, "—") for c in cols) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Two contour plots of the speedup, one per plane."""
    from sluice.plot import save, subplots

    fig, axes = subplots(1, 2, figsize=(11, 4.2))
    for ax, (plane, axis, label) in zip(axes, (("batchiness", "beta", "batchiness β"), ("burstiness", "burstiness", "burstiness k (pkt)"))):
        mine = [r for r in rows if r["plane"] == plane and r["speedup"] is not None]
        ns = sorted({r["branching"] for r in mine})
        cols = sorted({r[axis] for r in mine})
        z = [[next((r["speedup"] for r in mine if r["branching"] == n and r[axis] == c), float("nan")) for n in ns] for c in cols]
        cs = ax.contourf(ns, cols, z, levels=12, cmap="viridis")
        fig.colorbar(cs, ax=ax, label="projgrad / Null")
        ax.set_xscale("log", base=2)
        if axis == "burstiness":
            ax.set_yscale("log", base=2)
        ax.set_xlabel("branching n")
        ax.set_ylabel(label)
        ax.set_title(f"speedup, branching × {plane}")
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The range of projgrad's speedup over Null, and its worst violation share."""
    speedups = [r["speedup"] for r in report["rows"] if r["speedup"] is not None]
    worst = max(r["viol_pct"] for r in report["rows"])
    return output.Headline(f"projgrad / Null {min(speedups):g}–{max(speedups):g}×, over SLO in ≤ {worst:g}% of periods", "—")
