"""Plots of runs (matplotlib, headless)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Sequence, Union

from sluice.errors import signals_held
from sluice.extras import missing
from sluice.files import write_replacing
from sluice.outputs import RunOutputJson

with signals_held():  # a Ctrl-C in matplotlib's import would leave its parser half-built
    try:
        import matplotlib
    except ImportError as e:
        raise missing("plot", "plotting", e) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

#: At most this many lines per panel; the rest are summarised by the total.
MAX_LINES = 12


def subplots(*args: Any, **kwargs: Any) -> tuple[Figure, Any]:
    """matplotlib's `subplots`, drawn headless (the experiments' plots)."""
    return plt.subplots(*args, **kwargs)


def save(fig: Figure, path: Union[str, Path]) -> None:
    """Lays `fig` out, writes it to `path` (a PNG, unless its suffix names
    another format) and frees it. Rendered in memory first: matplotlib's
    own writer lets a failed write (a full disk) pass unnoticed."""
    fig.tight_layout()
    image = io.BytesIO()
    try:
        fig.savefig(image, format=Path(path).suffix[1:].lower() or "png", dpi=110)
    finally:
        plt.close(fig)
    try:
        write_replacing(path, image.getvalue())
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from e  # a failed write names no file


def plot_run(report: RunOutputJson, path: str) -> None:
    """Three panels over time of one run's report (what `sluice run --json`
    writes): triggers, p95 delay vs SLO, rates."""
    periods = report["periods"]
    t = [p["t_s"] for p in periods]
    fig, (ax_trig, ax_delay, ax_rate) = plt.subplots(3, 1, figsize=(9, 10), sharex=True)
    controlled = [n for n, m in periods[0]["modules"].items() if m["controlled"]] if periods else []
    for name in controlled[:MAX_LINES]:
        ax_trig.step(t, [p["modules"][name]["trigger"] for p in periods], where="post", label=name)
    ax_trig.set_ylabel("trigger (pkt)")
    ax_trig.set_title(f"{report['pipeline']} — {report['controller']} on {report['backend']}")
    flows = list(periods[0]["flows"]) if periods else []
    for i, name in enumerate(flows[:MAX_LINES]):
        color = f"C{i % 10}"
        ax_delay.plot(t, [p["flows"][name]["p95_us"] for p in periods], color=color, label=f"{name} p95")
        slo = [p["flows"][name]["slo_us"] for p in periods]
        if any(s is not None for s in slo):
            ax_delay.plot(t, [s if s is not None else float("nan") for s in slo], color=color, ls="--", lw=1)
    ax_delay.set_yscale("log")
    ax_delay.set_ylabel("p95 delay (µs); SLO dashed")
    for name in flows[:MAX_LINES]:
        ax_rate.plot(t, [p["flows"][name]["rate_pps"] / 1e6 for p in periods], lw=1, label=name)
    ax_rate.plot(t, [p["rate_pps"] / 1e6 for p in periods], color="k", lw=2, label="total")
    ax_rate.set_ylabel("rate (Mpps)")
    ax_rate.set_xlabel("time (s)")
    for ax in (ax_trig, ax_delay, ax_rate):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, ncol=3, loc="upper right")
    save(fig, path)


def plot_comparison(reports: Sequence[RunOutputJson], path: str, flow: str) -> None:
    """Controllers side by side, from their runs' reports: total rate, mean
    batch, and one flow's p95 vs its SLO."""
    fig, (ax_rate, ax_batch, ax_delay) = plt.subplots(1, 3, figsize=(14, 4))
    for i, r in enumerate(reports):
        controller = r["controller"]
        periods = [p for p in r["periods"] if not p["warmup"]]
        t = [p["t_s"] for p in periods]
        color = f"C{i}"
        ax_rate.plot(t, [p["rate_pps"] / 1e6 for p in periods], color=color, label=controller)
        ax_batch.plot(t, [p["mean_batch"] for p in periods], color=color, label=controller)
        ax_delay.plot(t, [p["flows"][flow]["p95_us"] for p in periods], color=color, label=f"{controller} p95")
        slo = [p["flows"][flow]["slo_us"] for p in periods]
    if reports and any(s is not None for s in slo):
        ax_delay.plot(t, [s if s is not None else float("nan") for s in slo], color="k", ls="--", label="SLO")
    ax_rate.set_title("delivered (Mpps)")
    ax_batch.set_title("mean batch at controlled NFs (pkt)")
    ax_delay.set_title(f"flow {flow}: p95 delay (µs)")
    ax_delay.set_yscale("log")
    for ax in (ax_rate, ax_batch, ax_delay):
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save(fig, path)
