"""The Reframer paper's Figures 16 and 18 on the in-chain Reframer: the
chain's delay at loads below the baseline's saturation, with and without a
Reframer (Figure 16; the paper offers ~90% of the baseline's capacity), and
a Reframer that holds only long flows (Figure 18: each flow's first
`SHORT_FLOW_PACKETS` pass unheld, so a flow that short is never delayed),
its rate at saturation against one holding every flow.

The delays are over every packet of the replay: the engine classifies a
trace's packets into flows by destination prefix, which cannot tell a short
flow's packets from a long one's, so the delay of the short flows alone
(Figure 18's) is not measured."""

from __future__ import annotations

from typing import Any

from sluice.lab.reframer_chain import chain, measure, saturation
from sluice.nf import ReframerBypass

#: Offered load as a share of the baseline's capacity (the paper: ~0.9).
LOAD_SHARES = [0.5, 0.7, 0.8, 0.9]
QUICK_LOAD_SHARES = [0.5, 0.9]
#: The holds beside the baseline at each load (µs).
T_BUFF_US = [16.0, 64.0]
#: Figure 18: packets of each flow sent before its Reframer holds any (pkt).
SHORT_FLOW_PACKETS = 8
#: The hold of Figure 18's Reframer (µs).
BYPASS_T_BUFF_US = 64.0
#: Figure 18's Reframer, as `chain` takes it.
SHORT_FLOWS_UNHELD: dict[str, Any] = {"t_buff_us": BYPASS_T_BUFF_US, "bypass": ReframerBypass(first_packets=SHORT_FLOW_PACKETS)}


def _row(segments: int, config: str, t_buff_us: float, share: float, base_pps: float, m: dict[str, Any]) -> dict[str, Any]:
    return {"segments": segments, "config": config, "t_buff_us": t_buff_us, "load_share": share,
            "load_mpps": round(share * base_pps / 1e6, 2), "carried_mpps": round(m["pps"] / 1e6, 2),
            "mean_us": round(m["mean_us"], 1), "p99_us": round(m["p99_us"], 1), "lossless": m["accounted"]}


def at_loads(trace: str, segments: int, base_pps: float, shares: list[float], periods: int, period_ms: float,
             measured: dict[float, dict[tuple[str, float], dict[str, Any]]]) -> list[dict[str, Any]]:
    """Figure 16 and 18's delays: the baseline, a Reframer at each
    `T_BUFF_US` and one letting short flows through, at each share of the
    baseline's capacity `base_pps`; a point `measured` has already (by
    share, then (config, T_buff)) is taken from there."""
    configs: list[tuple[str, float, dict[str, Any]]] = [("baseline", 0.0, {}), *(("reframer", t, {"t_buff_us": t}) for t in T_BUFF_US),
                                                        ("short flows unheld", BYPASS_T_BUFF_US, SHORT_FLOWS_UNHELD)]

    def delay(share: float, config: str, t: float, settings: dict[str, Any]) -> dict[str, Any]:
        known = measured.get(share, {}).get((config, t))
        return known or measure(chain(trace, rate_pps=share * base_pps, **settings), "null", periods, period_ms)

    return [_row(segments, config, t, share, base_pps, delay(share, config, t, settings)) for share in shares for config, t, settings in configs]


def short_flows_unheld(trace: str, segments: int, all_held_pps: float, periods: int, period_ms: float, repeats: int) -> dict[str, Any]:
    """Figure 18's rate: a Reframer at `BYPASS_T_BUFF_US` letting each
    flow's first `SHORT_FLOW_PACKETS` through, at saturation, against one
    holding every flow (`all_held_pps`)."""
    sat = saturation(chain(trace, **SHORT_FLOWS_UNHELD), "null", periods, period_ms, repeats)
    return {"segments": segments, "mpps": round(sat["pps"] / 1e6, 2), "all_held_mpps": round(all_held_pps / 1e6, 2),
            "vs_all_held": round(sat["pps"] / all_held_pps, 3) if all_held_pps else None,
            "bypassed_share": round(sat["bypassed_share"], 3), "slf_out": round(sat["slf_out"], 2), "lossless": sat["accounted"]}


def markdown(load: list[dict[str, Any]], bypass: list[dict[str, Any]], paper: str) -> str:
    """Figure 16/18's delays by load, then Figure 18's rates; `paper` says the paper's."""
    lines = [f"**At loads below saturation** (Figures 16 and 18; mean / p99 delay µs, the rate carried in brackets, Mpps; {paper}):", "",
             "| segments | load (share of baseline) | baseline | " + " | ".join(f"reframer {t:g} µs" for t in T_BUFF_US)
             + f" | reframer {BYPASS_T_BUFF_US:g} µs, first {SHORT_FLOW_PACKETS} pkts of each flow unheld |",
             "|---|---|---|" + "---|" * (len(T_BUFF_US) + 1)]
    for (k, share) in dict.fromkeys((r["segments"], r["load_share"]) for r in load):
        at = [r for r in load if (r["segments"], r["load_share"]) == (k, share)]
        cells = [f"{r['mean_us']} / {r['p99_us']} ({r['carried_mpps']})" + ("" if r["lossless"] else " lossy") for r in at]
        lines.append(f"| {k or 'pcap'} | {share:.0%} ({at[0]['load_mpps']} Mpps) | " + " | ".join(cells) + " |")
    lines += ["", f"**Short flows unheld at saturation** (Figure 18; Reframer {BYPASS_T_BUFF_US:g} µs):", "",
              "| segments | Mpps | holding every flow, Mpps | ratio | packets unheld | SLF out |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['segments'] or 'pcap'} | {r['mpps']} | {r['all_held_mpps']} | {r['vs_all_held']} | {r['bypassed_share']:.1%} | {r['slf_out']} |"
              for r in bypass]
    return "\n".join(lines) + "\n"
