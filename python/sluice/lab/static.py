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

from sluice.lab import output
from sluice.lab.reference import table
from sluice.pipeline import Pipeline
from sluice.pipelines import gw, l2l3, l2l3_dual, mgw, rc, vrf

#: Controllers in the order of the published table, then ours (not in it).
CONTROLLERS = ["null", "max", "nfvnice", "onoff", "projgrad", "wfq-opt"]
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
    rows.append(Row("l2l3-dual-16", "L2L3-dual(16)", functools.partial(l2l3_dual, 16)))
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
    """Destination /24s in the trace (each flow of *L2L3 needs at least one)."""
    from sluice import _core

    return sum(1 for prefix, _ in _core.pcap_prefixes(pcap) if ":" not in prefix)


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
    #: Count the periods in which the machine slowed the worker's core too
    #: (see `DISTURBED`).
    keep_disturbed: bool = False

    @staticmethod
    def make(quick: bool, backend: str, warmup: Optional[int] = None, periods: Optional[int] = None,
             period_ms: Optional[float] = None, rounds: Optional[int] = None, keep_disturbed: bool = False) -> Settings:
        """`--quick`'s counts or the full ones, each overridden where given."""
        default = Settings(8, 5 if quick else 10, 100.0, backend, 4, keep_disturbed)
        given: dict[str, Any] = {"warmup": warmup, "periods": periods, "period_ms": period_ms, "rounds": rounds}
        return dataclasses.replace(default, **{k: v for k, v in given.items() if v is not None})


#: A measured period counts only where its worker's core probe (a fixed
#: piece of arithmetic the engine times every millisecond) ran at most
#: this much slower than its usual time on the machine: the lowest tenth
#: of the row's periods. On a shared VM a busy neighbour slows the worker's
#: core by up to half for a second at a time, whatever the controller; that
#: moved Max's rate on L2L3(16) from 12 to 8 Mpps and put projgrad, which
#: holds its flows at 0.9 of the SLO, over it for the spell. Every
#: controller's periods are judged alike, and the row says how many were
#: set aside.
DISTURBED = 1.25


def _probe_ns(period: dict[str, Any]) -> float:
    """The period's core-probe time on its slowest worker (ns; 0 without one)."""
    return max((w["probe_ns"] for w in period["workers"]), default=0.0)


#: The runs under Max that set a row's SLO.
CALIBRATION = "calibration"


class Periods:
    """The measured periods of a row's runs, and which of them the machine
    disturbed (see `DISTURBED`)."""

    def __init__(self, keep_disturbed: bool) -> None:
        self.keep_disturbed = keep_disturbed
        #: Per controller (and `CALIBRATION`), the measured periods of its runs.
        self.by_runs: dict[str, list[dict[str, Any]]] = {}

    def add(self, runs: str, result: Any) -> None:
        self.by_runs.setdefault(runs, []).extend(p for p in result.periods if not p["warmup"])

    def measured(self, runs: str) -> list[dict[str, Any]]:
        """Every measured period of `runs` (a controller, or `CALIBRATION`)."""
        return self.by_runs.get(runs, [])

    def usual_probe_ns(self) -> float:
        """The probe's time on an undisturbed core: the lowest tenth of
        every period's so far (0 where nothing timed it)."""
        times = sorted(t for periods in self.by_runs.values() for p in periods if (t := _probe_ns(p)) > 0)
        return times[len(times) // 10] if times else 0.0

    def undisturbed(self, runs: str) -> list[dict[str, Any]]:
        """The measured periods of `runs` the machine did not disturb (all
        of them with `keep_disturbed`)."""
        periods = self.measured(runs)
        usual = self.usual_probe_ns()
        if self.keep_disturbed or usual == 0:
            return periods
        return [p for p in periods if _probe_ns(p) <= DISTURBED * usual]

    def counted(self, runs: str) -> list[dict[str, Any]]:
        """The periods `runs`' figures come from: the undisturbed ones, or
        all of them where the machine disturbed every one."""
        return self.undisturbed(runs) or self.measured(runs)

    def set_aside_pct(self) -> float:
        """Share of all measured periods set aside (%)."""
        total = sum(len(periods) for periods in self.by_runs.values())
        kept = sum(len(self.counted(runs)) for runs in self.by_runs)
        return 100.0 * (total - kept) / total if total else 0.0


def run_row(row: Row, s: Settings, progress: Callable[[str], None]) -> dict[str, Any]:
    """One row: calibrate its SLO under Max (unless its flows bring their
    own), then every controller."""
    pipeline = row.build()
    periods = Periods(s.keep_disturbed)
    wanted = s.rounds * s.periods
    slo_us = None
    if not row.own_slos:
        progress(f"{row.label}: calibrating the SLO under max")
        # As many runs as each controller gets: the SLO follows the
        # machine's speed during calibration, and one run's speed is noisy.
        for _ in range(s.rounds):
            periods.add(CALIBRATION, pipeline.run("max", periods=s.periods, warmup_periods=s.warmup, period_ms=s.period_ms, backend=s.backend))
        slo_flows = list(filter(row.slo_flows, pipeline.flows()))
        delays = [p["flows"][f]["mean_us"] for p in periods.counted(CALIBRATION) for f in slo_flows]
        slo_us = max(SLO_SHARE * statistics.mean(delays), 0.1)
        for flow in slo_flows:
            pipeline.set_slo(flow, slo_us)
    statistic = "p95" if row.own_slos else "mean"
    out: dict[str, Any] = {"pipeline": row.label, "name": row.name, "modules": len(pipeline.validate()["modules"]),
                           "slo_statistic": statistic, "slo_us": None if slo_us is None else round(slo_us, 2)}
    # Every controller runs `rounds` times, the rounds in order and in
    # reverse by turns: a machine that speeds up or slows down during the
    # row then shifts every controller alike. Up to `rounds` more go to
    # the controllers that still have fewer than `rounds × periods`
    # undisturbed periods.
    for i in range(2 * s.rounds):
        todo = [c for c in (CONTROLLERS if i % 2 == 0 else CONTROLLERS[::-1])
                if i < s.rounds or len(periods.undisturbed(c)) < wanted]
        for c in todo:
            progress(f"{row.label}: {c}")
            periods.add(c, pipeline.run(c, periods=s.periods, warmup_periods=s.warmup, period_ms=s.period_ms, backend=s.backend,
                                        slo_statistic=statistic))
    for c in CONTROLLERS:
        counted = periods.counted(c)
        out[f"batch_{c}"] = round(statistics.mean(p["mean_batch"] for p in counted), 2)
        out[f"mpps_{c}"] = round(statistics.mean(p["rate_pps"] for p in counted) / 1e6, 3)
        out[f"viol_{c}_pct"] = round(100.0 * sum(p["violated"] for p in counted) / len(counted), 1)
    out["projgrad_over_null"] = round(out["mpps_projgrad"] / out["mpps_null"], 2) if out["mpps_null"] else None
    out["set_aside_pct"] = round(periods.set_aside_pct(), 1)
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
        slo += f" · {r['set_aside_pct']}% of periods disturbed, set aside" if r.get("set_aside_pct") else ""
        lines.append(f"| {r['pipeline']}{slo} | {r['modules']} | " + " | ".join(cells) + f" | {r['projgrad_over_null']} |")
        p = pub.get(r["pipeline"])
        if p:
            cells = [f"{p[f'batch_{c}']} / {p[f'mpps_{c}']} / {p[f'viol_{c}_pct']}" if f"mpps_{c}" in p else "—" for c in CONTROLLERS]
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
        ref = [p if p and f"mpps_{c}" in p else None for p in ref]
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


#: The rows the README's headline names, when they ran.
HEADLINE_ROWS = ("l2l3-16", "gw-16", "rc16")


def headline(report: dict[str, Any]) -> output.Headline:
    """projgrad / Null on the headline rows, and how often projgrad was over its SLO."""
    rows = [r for r in report["rows"] if r["name"] in HEADLINE_ROWS] or report["rows"]
    pub = published()
    ours = ", ".join(f"{r['pipeline']} {r['projgrad_over_null']}×" for r in rows)
    worst = max(r["viol_projgrad_pct"] for r in rows)
    theirs = ", ".join(f"{r['pipeline']} {float(p['mpps_projgrad']) / float(p['mpps_null']):.2f}×"
                       for r in rows if (p := pub.get(r["pipeline"])))
    return output.Headline(f"projgrad / Null: {ours}; over SLO in ≤ {worst:g}% of periods", theirs or "—")
