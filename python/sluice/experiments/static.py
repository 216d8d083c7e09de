"""`static`: the Batchy Table 2 grid — each pipeline under every controller,
with one SLO for every SLO flow of a pipeline: 80% of the mean delay
measured under Max (over those flows), bounding each flow's mean delay,
the statistic the SLO was taken from. (Bounding the p95 by 80% of a mean
would ask for less than half of Max's p95: a fractional buffer's wait is
spread evenly up to its fill time, so under Max a flow's p95 is about
twice its mean.) One SLO per pipeline, not 80% of each flow's own mean:
under Max every buffer flushes in the same round, and which flows that
round serves first changes from run to run (GW(16): its first flow's mean
10–26 µs over four runs, the mean over flows 19–21 µs), so per-flow SLOs
were that run's phase, not the pipeline's. Pipelines whose flows bring
their own SLOs, like RC, keep them, on the p95."""

from __future__ import annotations

import dataclasses
import functools
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.experiments import output
from sluice.experiments.reference import table
from sluice.pipeline import Pipeline
from sluice.pipelines import gw, l2l3, mgw, rc, vrf

#: Controllers in the order of the published table.
CONTROLLERS = ["null", "max", "nfvnice", "onoff", "projgrad"]
#: SLO as a share of the mean delay under Max.
SLO_SHARE = 0.8


@dataclass(frozen=True)
class Row:
    """One pipeline of the grid."""

    name: str
    label: str
    build: Callable[[], Pipeline]
    own_slos: bool = False
    #: Which flows get an SLO (default: all).
    slo_flows: Callable[[str], bool] = lambda _flow: True  # noqa: E731


def _not_in(part: str, flow: str) -> bool:
    return part not in flow


#: Flows (next hops) of the published trace rows *L2L3(n).
PCAP_FLOWS = (16, 32, 64)


def grid(pcap: Optional[str] = None) -> list[Row]:
    """The rows this build can run; the trace rows (*L2L3(16, 32, 64))
    only with a trace `pcap`."""
    rows = [Row(f"l2l3-{n}", f"L2L3({n})", functools.partial(l2l3, n)) for n in (1, 4, 8, 16)]
    rows += [Row(f"gw-{n}", f"GW({n})", functools.partial(gw, n)) for n in (1, 8, 16, 64)]
    rows += [Row(f"vrf-{m}-{n}", f"VRF({m},{n})", functools.partial(vrf, m, n)) for m, n in ((1, 1), (2, 4), (16, 4), (12, 8))]
    for b in (2, 4, 8, 16):
        bulk = f"_b{b - 1}_"
        rows.append(Row(f"mgw-{b}-4", f"MGW({b},4)", functools.partial(mgw, b, 4), slo_flows=functools.partial(_not_in, bulk)))
    rows.append(Row("rc16", "RC(16)", functools.partial(rc, 16), own_slos=True))
    if pcap:
        fits = [n for n in PCAP_FLOWS if n <= _destinations(pcap)]
        rows += [Row(f"l2l3-pcap-{n}", f"*L2L3({n})", functools.partial(l2l3, n, pcap=pcap)) for n in fits]
    return rows


@functools.lru_cache(maxsize=4)
def _destinations(pcap: str) -> int:
    """Destination /24s in the trace (each flow needs at least one)."""
    from sluice import _core

    return len(_core.pcap_prefixes(pcap))


def not_run(pcap: Optional[str]) -> dict[str, str]:
    """Rows of the published grid left out, and why."""
    if not pcap:
        return {"*L2L3(16, 32, 64)": "need a real trace, which this build does not ship: `--pcap FILE` adds them"}
    destinations = _destinations(pcap)
    return {f"*L2L3({n})": f"the trace has {destinations} destination /24s, fewer than the {n} flows"
            for n in PCAP_FLOWS if n > destinations}


@dataclass(frozen=True)
class Settings:
    """How long each run lasts and how often each controller runs. The
    warm-up covers the periods projgrad takes to grow its buffers to the
    SLOs: five to eight on GW(16) and L2L3(16) on the engine. A machine's
    speed shifts from run to run more than within one (a two-core VM: runs
    of the same pipeline under Max spread 7% between runs of one second,
    2% between the periods of one run), so a controller's figures are the
    mean of `rounds` short runs rather than of one or two long ones.
    `--quick`'s 4 rounds of 5 measured periods give 20 a controller: the
    fewest at which a violation share of 5% is one period over rather
    than none."""

    warmup: int
    periods: int
    period_ms: float
    backend: str
    rounds: int

    @staticmethod
    def make(quick: bool, backend: str, warmup: Optional[int] = None, periods: Optional[int] = None,
             period_ms: Optional[float] = None, rounds: Optional[int] = None) -> Settings:
        """`--quick`'s counts or the full ones, each overridden where given."""
        default = Settings(8, 5 if quick else 10, 100.0, backend, 4)
        given: dict[str, Any] = {"warmup": warmup, "periods": periods, "period_ms": period_ms, "rounds": rounds}
        return dataclasses.replace(default, **{k: v for k, v in given.items() if v is not None})


def _measured(result: Any) -> list[dict[str, Any]]:
    return [p for p in result.periods if not p["warmup"]]


def run_row(row: Row, s: Settings, progress: Callable[[str], None]) -> dict[str, Any]:
    """One row: calibrate its SLO under Max (unless its flows bring their
    own), then every controller."""
    pipeline = row.build()
    slo_us = None
    if not row.own_slos:
        progress(f"{row.label}: calibrating the SLO under max")
        # As many runs as each controller gets: the SLO follows the
        # machine's speed during calibration, and one run's speed is noisy.
        under_max = [pipeline.run("max", periods=s.periods, warmup_periods=s.warmup, period_ms=s.period_ms, backend=s.backend)
                     for _ in range(s.rounds)]
        slo_flows = list(filter(row.slo_flows, pipeline.flows()))
        delays = [p["flows"][f]["mean_us"] for r in under_max for p in _measured(r) for f in slo_flows]
        slo_us = max(SLO_SHARE * statistics.mean(delays), 0.1)
        for flow in slo_flows:
            pipeline.set_slo(flow, slo_us)
    statistic = "p95" if row.own_slos else "mean"
    out: dict[str, Any] = {"pipeline": row.label, "name": row.name, "modules": len(pipeline.validate()["modules"]),
                           "slo_statistic": statistic, "slo_us": None if slo_us is None else round(slo_us, 2)}
    # Every controller runs `rounds` times, the rounds in order and in
    # reverse by turns, and its figures are the mean of its runs: a machine
    # that speeds up or slows down during the row then shifts every
    # controller alike.
    order = [c for i in range(s.rounds) for c in (CONTROLLERS if i % 2 == 0 else CONTROLLERS[::-1])]
    summaries: dict[str, list[dict[str, Any]]] = {c: [] for c in CONTROLLERS}
    for c in order:
        progress(f"{row.label}: {c}")
        r = pipeline.run(c, periods=s.periods, warmup_periods=s.warmup, period_ms=s.period_ms, backend=s.backend, slo_statistic=statistic)
        summaries[c].append(r.summary)
    for c, runs in summaries.items():
        out[f"batch_{c}"] = round(statistics.mean(r["mean_batch"] for r in runs), 2)
        out[f"mpps_{c}"] = round(statistics.mean(r["rate_pps"] for r in runs) / 1e6, 3)
        out[f"viol_{c}_pct"] = round(statistics.mean(r["violation_pct"] for r in runs), 1)
    out["projgrad_over_null"] = round(out["mpps_projgrad"] / out["mpps_null"], 2) if out["mpps_null"] else None
    return out


def published() -> dict[str, dict[str, str]]:
    """The published rows by label (Batchy Table 2)."""
    return {r["pipeline"]: r for r in table("batchy_table2.csv")}


def markdown(rows: list[dict[str, Any]]) -> str:
    """Our rows, and the published ones beside them."""
    pub = published()
    head = "| pipeline | modules | " + " | ".join(f"{c} batch / Mpps / viol %" for c in CONTROLLERS) + " | projgrad / null |"
    lines = [head, "|" + "---|" * (3 + len(CONTROLLERS))]
    for r in rows:
        cells = [f"{r[f'batch_{c}']} / {r[f'mpps_{c}']} / {r[f'viol_{c}_pct']}" for c in CONTROLLERS]
        slo = f" · SLO {r['slo_us']} µs" if r["slo_us"] is not None else ""
        lines.append(f"| {r['pipeline']}{slo} | {r['modules']} | " + " | ".join(cells) + f" | {r['projgrad_over_null']} |")
        p = pub.get(r["pipeline"])
        if p:
            cells = [f"{p[f'batch_{c}']} / {p[f'mpps_{c}']} / {p[f'viol_{c}_pct']}" for c in CONTROLLERS]
            ratio = float(p["mpps_projgrad"]) / float(p["mpps_null"])
            lines.append(f"| *published* | {p['modules']} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Throughput of each controller relative to Null, ours and published."""
    from sluice.plot import save, subplots

    pub = published()
    fig, ax = subplots(figsize=(max(6, 1.2 * len(rows)), 4))
    width = 0.8 / len(CONTROLLERS)
    for i, c in enumerate(CONTROLLERS):
        xs = [j + i * width for j in range(len(rows))]
        ax.bar(xs, [r[f"mpps_{c}"] / r["mpps_null"] if r["mpps_null"] else 0 for r in rows], width, label=c, color=f"C{i}")
        ref = [pub.get(r["pipeline"]) for r in rows]
        ax.scatter([x for x, p in zip(xs, ref) if p], [float(p[f"mpps_{c}"]) / float(p["mpps_null"]) for p in ref if p],
                   marker="_", s=200, color="k", zorder=3)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))], [r["pipeline"] for r in rows])
    ax.set_ylabel("throughput / Null (black: published)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    save(fig, path)


def run(out: Path, settings: Settings, only: Optional[list[str]], progress: Callable[[str], None],
        pcap: Optional[str] = None) -> dict[str, Any]:
    """Runs the grid (or the rows named in `only`; the trace rows with
    `pcap`) and writes static.{json,csv,md,png} into `out`."""
    rows = grid(pcap)
    if only:
        unknown = sorted(set(only) - {r.name for r in rows})
        if unknown:
            need = "; the l2l3-pcap-N rows need a trace (--pcap FILE) with N destination /24s" if any(u.startswith("l2l3-pcap") for u in unknown) else ""
            raise ValueError(f"unknown rows {unknown} (known: {', '.join(r.name for r in rows)}{need})")
        rows = [r for r in rows if r.name in only]
    results = [run_row(r, settings, progress) for r in rows]
    report = {"settings": settings.__dict__, "slo_share": SLO_SHARE, "rows": results, "not_run": not_run(pcap)}
    output.write(out, "static", report, markdown, plot)
    return report
