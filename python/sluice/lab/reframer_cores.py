"""The Reframer paper's Figure 14 on this machine's cores: (a) the chain's
rate at saturation with and without a Reframer (T_buff 128 µs, as the
paper's) on 1 and `CORES` workers, and (b) the Reframer's own capacity (a
replay, the Reframer, a sink) on as many. Each worker replays the trace and
runs a whole copy of its pipeline, as the paper's NIC spreads flows over
cores by RSS; on a machine with more cores, `CORES` is all it takes to go
on (the paper goes to 8)."""

from __future__ import annotations

from typing import Any

from sluice.lab.reframer_chain import chain, saturation

#: Workers (cores) of the largest point.
CORES = 2
#: The paper's hold in Figure 14 (µs).
T_BUFF_US = 128.0


def scaling(trace: str, segments: int, periods: int, period_ms: float, repeats: int) -> list[dict[str, Any]]:
    """Mpps at saturation on 1..`CORES` workers: the chain alone, the
    chain behind a Reframer (14a), and the Reframer alone (14b)."""
    configs: list[tuple[str, dict[str, Any]]] = [("chain", {}), ("reframer + chain", {"t_buff_us": T_BUFF_US}), ("reframer alone", {"t_buff_us": T_BUFF_US, "nfs": ()})]
    rows = []
    for config, settings in configs:
        one = None
        for cores in range(1, CORES + 1):
            sat = saturation(chain(trace, copies=cores, **settings), "null", periods, period_ms, repeats)
            one = one or sat["pps"]
            rows.append({"segments": segments, "config": config, "cores": cores, "mpps": round(sat["pps"] / 1e6, 2),
                         "per_core_vs_one": round(sat["pps"] / cores / one, 2), "delivered": sat["delivered"], "lossless": sat["accounted"]})
    return rows


def markdown(rows: list[dict[str, Any]], paper: str) -> str:
    """Figure 14: Mpps by workers, per configuration; `paper` says the paper's."""
    lines = [f"**By cores** (Figure 14; saturation, T_buff {T_BUFF_US:g} µs, each worker a whole copy; Mpps, per core against one core in brackets; {paper}):", "",
             "| segments | configuration | " + " | ".join(f"{c} worker(s)" for c in range(1, CORES + 1)) + " |",
             "|---|---|" + "---|" * CORES]
    for (k, config) in dict.fromkeys((r["segments"], r["config"]) for r in rows):
        at = sorted((r for r in rows if (r["segments"], r["config"]) == (k, config)), key=lambda r: int(r["cores"]))
        lines.append(f"| {k or 'pcap'} | {config} | " + " | ".join(f"{r['mpps']} ({r['per_core_vs_one']})" + ("" if r["lossless"] else " lossy") for r in at) + " |")
    return "\n".join(lines) + "\n"
