"""`reframer`: the Reframer paper's chain (flow statistics → router with 200
routes → firewall with 10 000 rules → NAT, every NF flow-aware) on traces
from `sluice trace synth` at 1 to 32 parallel segments (or a user's pcap),
replayed from memory as fast as the chain takes them.

Per trace, each configuration runs at saturation (the fastest of a few
runs: Mpps, ns and cycles per packet, the run length of one flow at the
chain's first NF) and at a fixed load of half the baseline's capacity
(mean and p99 delay):

- `baseline`: the chain alone.
- `reframer`: a Reframer before the chain on the same worker (the paper's
  "in-chain"), T_buff 16..256 µs.
- `split`, `external`: the replay on a worker of its own, the chain on
  another; `external` adds a Reframer (64 µs) to the replay's worker (the
  paper's dedicated box). Their gain is against `split` (two cores each).
- `projgrad`: Batchy's controller with fractional buffers on the chain
  (flow-oblivious), the flow's SLO `SLO_US`.
- `both`: a Reframer (64 µs) and projgrad.
- `reframer-slo`: a Reframer whose T_buff the run sets from the flow's
  delay slack, up to 256 µs.

SLF in is the trace's (its run length in batches of 32, as the replay cuts
it); SLF out is what the chain's first NF sees. Violations count measured
periods whose p95 delay is over the SLO (rows with an SLO only).

Beside the table, per trace: the delays at 50-90% of the baseline's
capacity and a Reframer that lets short flows through (Figures 16 and 18,
`reframer_load`); on the first trace, the rates on one and two workers
(Figure 14, `reframer_cores`)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from sluice import _core
from sluice.lab import output, reframer_cores, reframer_load
from sluice.lab.reference import table
from sluice.lab.reframer_chain import NF_NAMES, chain, measure, saturation

SEGMENTS = [1, 4, 16, 32]
#: Quick (CI-sized): the one-segment trace alone.
QUICK_SEGMENTS = [1]
T_BUFF_US = [16.0, 32.0, 64.0, 128.0, 256.0]
QUICK_T_BUFF_US = [16.0, 64.0]
#: Packets of each synthetic trace (replayed in a loop).
PACKETS = 1_000_000
QUICK_PACKETS = 300_000
#: The hold of the `external`, `both` rows and the bound of `reframer-slo` (µs).
T_BUFF_FIXED_US = 64.0
T_BUFF_BOUND_US = 256.0
#: The flow's delay SLO where a row has one (µs, p95).
SLO_US = 300.0
#: Share of the baseline's capacity offered in the latency runs.
LOAD_SHARE = 0.5
#: Saturation runs per point, the fastest kept: a spell in which the VM
#: slows a core (two workers share two cores here) touches one of them.
REPEATS = 3
QUICK_REPEATS = 2


def _configs(t_buffs: list[float]) -> list[tuple[str, dict[str, Any], str]]:
    """(config, chain settings, controller) of every row after the baseline."""
    rows: list[tuple[str, dict[str, Any], str]] = [("reframer", {"t_buff_us": t}, "null") for t in t_buffs]
    rows += [("split", {"external": True}, "null"),
             ("external", {"t_buff_us": T_BUFF_FIXED_US, "external": True}, "null"),
             ("projgrad", {"slo_us": SLO_US, "priced": True}, "projgrad"),
             ("both", {"t_buff_us": T_BUFF_FIXED_US, "slo_us": SLO_US, "priced": True}, "projgrad"),
             ("reframer-slo", {"t_buff_us": T_BUFF_BOUND_US, "slo_control": True, "slo_us": SLO_US}, "null")]
    return rows


def run(out: Path, quick: bool, progress: Callable[[str], None], pcap: Optional[str] = None, repeats: Optional[int] = None) -> dict[str, Any]:
    """Every point, its saturation the fastest of `repeats` runs (default 2 quick, else 3); writes
    reframer.{json,csv,md,png} into `out` (the traces too)."""
    segments = QUICK_SEGMENTS if quick else SEGMENTS
    t_buffs = QUICK_T_BUFF_US if quick else T_BUFF_US
    periods, period_ms = (3, 100.0) if quick else (5, 200.0)
    repeats = repeats or (QUICK_REPEATS if quick else REPEATS)
    out.mkdir(parents=True, exist_ok=True)
    traces: list[tuple[int, str]] = [(0, pcap)] if pcap else []
    for k in ([] if pcap else segments):
        path = out / f"synth-k{k}.pcap"
        progress(f"trace synth: {k} segment(s)")
        _core.trace_synth(str(path), QUICK_PACKETS if quick else PACKETS, k)
        traces.append((k, str(path)))
    ns_per_cycle = _core.ns_per_cycle()
    shares = reframer_load.QUICK_LOAD_SHARES if quick else reframer_load.LOAD_SHARES
    rows: list[dict[str, Any]] = []
    load_rows: list[dict[str, Any]] = []
    bypass_rows: list[dict[str, Any]] = []
    core_rows: list[dict[str, Any]] = []
    for k, trace in traces:
        slf_in = json.loads(_core.trace_analyze(trace))["slf"]["32"]
        progress(f"{Path(trace).name}: baseline")
        base = saturation(chain(trace), "null", periods, period_ms, repeats)
        load = LOAD_SHARE * base["pps"]
        costs = {m: max(1.0, base["nf_ns"][m]) for m in NF_NAMES}
        points = [("baseline", {}, "null"), *_configs(t_buffs)]
        # The delay of each configuration at `LOAD_SHARE`, by (config, T_buff).
        at_load: dict[tuple[str, float], dict[str, Any]] = {}
        split_pps = base["pps"]
        for config, settings, controller in points:
            progress(f"{Path(trace).name}: {config} {settings.get('t_buff_us', '')}")
            settings = dict(settings)
            priced = settings.pop("priced", False)
            priced_costs = costs if priced else None
            sat = base if config == "baseline" else saturation(chain(trace, costs=priced_costs, **settings), controller, periods, period_ms, repeats)
            lat = measure(chain(trace, rate_pps=load, costs=priced_costs, **settings), controller, periods, period_ms)
            at_load[(config, settings.get("t_buff_us", 0.0))] = lat
            ns = 1e9 / sat["pps"] if sat["pps"] else 0.0
            if config == "split":
                split_pps = sat["pps"]
            ref = split_pps if settings.get("external") else base["pps"]
            rows.append({
                "config": config, "segments": k, "t_buff_us": settings.get("t_buff_us", 0.0),
                "slf_in": round(slf_in, 2), "slf_out": round(sat["slf_out"], 2),
                "mpps": round(sat["pps"] / 1e6, 2), "gain": round(sat["pps"] / ref, 2),
                "ns_per_packet": round(ns, 1), "cycles_per_packet": round(ns / ns_per_cycle),
                "nf_ns_per_packet": {m: round(v, 1) for m, v in sat["nf_ns"].items()},
                "load_mpps": round(load / 1e6, 2), "mean_us": round(lat["mean_us"], 1), "p99_us": round(lat["p99_us"], 1),
                "viol_pct": round(lat["viol_pct"], 1) if "slo_us" in settings else 0.0,
                "hold_us": round(statistics.fmean(lat["holds_us"]), 1) if lat["holds_us"] and lat["holds_us"][0] is not None else None,
                "lossless": sat["accounted"] and lat["accounted"],
            })
        progress(f"{Path(trace).name}: loads {', '.join(f'{x:.0%}' for x in shares)} of the baseline's capacity")
        load_rows += reframer_load.at_loads(trace, k, base["pps"], shares, periods, period_ms, {LOAD_SHARE: at_load})
        all_held = next(r for r in rows if (r["segments"], r["config"], r["t_buff_us"]) == (k, "reframer", reframer_load.BYPASS_T_BUFF_US))
        bypass_rows.append(reframer_load.short_flows_unheld(trace, k, 1e6 * all_held["mpps"], periods, period_ms, repeats))
        if k == traces[0][0]:
            progress(f"{Path(trace).name}: by cores")
            core_rows = reframer_cores.scaling(trace, k, periods, period_ms, repeats)
    report = {"packets": QUICK_PACKETS if quick else PACKETS, "periods": periods, "period_ms": period_ms, "slo_us": SLO_US,
              "load_share": LOAD_SHARE, "published": table("reframer_figures.csv"), "rows": rows,
              "load": load_rows, "short_flows_unheld": bypass_rows, "cores": core_rows}
    output.write(out, "reframer", report, lambda rows: figures_markdown(report), lambda rows, path: plot(rows, path, load_rows))
    return report


def _published(figure: str, configuration_part: str, metric: str) -> str:
    """A published figure of `reframer_figures.csv` ('' when absent)."""
    for r in table("reframer_figures.csv"):
        if r["figure"] == figure and configuration_part in r["configuration"] and r["metric"] == metric:
            return f"{r['value']} {r['unit']}".strip()
    return ""


def markdown(rows: list[dict[str, Any]]) -> str:
    """One row per point; the paper's figures beside the matching ones."""
    paper = {16: _published("fig12", "T_buff 16 us", "SLF out"), 64: _published("fig12", "T_buff 64 us", "SLF out"),
             128: _published("fig12", "T_buff 128 us", "SLF out")}
    lines = ["| segments | config | T_buff µs | SLF in → out | Mpps | × baseline | ns/pkt (cycles) | mean / p99 µs at load | SLO violations % | paper SLF out |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = r["hold_us"] if r["hold_us"] is not None else r["t_buff_us"]
        lines.append(f"| {r['segments'] or 'pcap'} | {r['config']} | {t:g} | {r['slf_in']} → {r['slf_out']} | {r['mpps']} | {r['gain']} | "
                     f"{r['ns_per_packet']} ({r['cycles_per_packet']}) | {r['mean_us']} / {r['p99_us']} | {r['viol_pct']} | "
                     f"{paper.get(int(r['t_buff_us']), '') if r['config'] == 'reframer' else ''} |")
    lines.append("")
    lines.append("Per NF at saturation (ns per packet, sampled busy time): " + "; ".join(
        f"{r['config']} {r['t_buff_us']:g} (k={r['segments']}): " + ", ".join(f"{m} {v}" for m, v in r["nf_ns_per_packet"].items())
        for r in rows if r["config"] in ("baseline", "reframer") and (r["config"] == "baseline" or r["t_buff_us"] == T_BUFF_FIXED_US)))
    return "\n".join(lines) + "\n"


def figures_markdown(report: dict[str, Any]) -> str:
    """The table of every point, then Figures 16/18 and 14's, with the paper's figures named."""
    fig16 = (f"the paper at ~90% of its baseline's capacity with T_buff 64 µs: mean {_published('fig16', 'in-chain T_buff 64', 'mean latency change')}, "
             f"p99.9 {_published('fig16', 'in-chain at 30', 'p99.9 latency change')}; short flows unheld: rate {_published('fig18', 'bypassing', 'throughput change vs delaying all')} "
             "against holding all")
    fig14 = f"the paper: one core of Reframer alone {_published('fig14b', 'one core', 'capacity')}, scaling almost linearly with cores"
    return "\n".join([markdown(report["rows"]), reframer_load.markdown(report["load"], report["short_flows_unheld"], fig16),
                      reframer_cores.markdown(report["cores"], fig14)])


def plot(rows: list[dict[str, Any]], path: Path, load: Sequence[dict[str, Any]] = ()) -> None:
    """Like the paper's Figures 12 and 16: throughput and SLF out against
    T_buff per trace, mean delay at half the baseline's capacity, and mean
    delay against load on the first trace."""
    from sluice.plot import save, subplots

    fig, (thr, slf, lat, by_load) = subplots(1, 4, figsize=(17, 3.6))
    for i, k in enumerate(dict.fromkeys(r["segments"] for r in rows)):
        pts = sorted((r for r in rows if r["segments"] == k and r["config"] in ("baseline", "reframer")), key=lambda r: r["t_buff_us"])
        xs = [r["t_buff_us"] for r in pts]
        label = f"{k} segment(s)" if k else "pcap"
        thr.plot(xs, [r["mpps"] for r in pts], "o-", color=f"C{i}", label=label)
        slf.plot(xs, [r["slf_out"] for r in pts], "o-", color=f"C{i}", label=label)
        lat.plot(xs, [r["mean_us"] for r in pts], "o-", color=f"C{i}", label=label)
    thr.set(xlabel="T_buff (µs; 0 = no Reframer)", ylabel="Mpps at saturation")
    slf.set(xlabel="T_buff (µs)", ylabel="SLF at the chain")
    lat.set(xlabel="T_buff (µs)", ylabel=f"mean delay at {LOAD_SHARE:.0%} load (µs)")
    thr.legend(fontsize=8)
    first = [r for r in load if r["segments"] == load[0]["segments"]] if load else []
    for i, (config, t) in enumerate(dict.fromkeys((r["config"], r["t_buff_us"]) for r in first)):
        pts = [r for r in first if (r["config"], r["t_buff_us"]) == (config, t)]
        by_load.plot([100 * r["load_share"] for r in pts], [r["mean_us"] for r in pts], "o-", color=f"C{i}",
                     label=config + (f" {t:g} µs" if t else ""))
    by_load.set(xlabel="load (% of the baseline's capacity)", ylabel="mean delay (µs)", yscale="log")
    if first:
        by_load.legend(fontsize=7)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The in-chain gain at 64 µs on the one-segment trace, and SLF out."""
    rows = report["rows"]
    at = next((r for r in rows if r["config"] == "reframer" and r["t_buff_us"] == T_BUFF_FIXED_US), rows[0])
    ext = next((r for r in rows if r["config"] == "external" and r["segments"] == at["segments"]), at)
    return output.Headline(f"T_buff 64 µs, {at['segments']} segment(s): SLF {at['slf_in']} → {at['slf_out']}, in-chain ×{at['gain']}, own core ×{ext['gain']}",
                           f"SLF {_published('fig12', 'baseline', 'SLF')} → {_published('fig12', 'T_buff 64 us', 'SLF out')}; "
                           f"in-chain +{_published('fig15', 'in-chain', 'throughput gain')}, own box +84–100%")
