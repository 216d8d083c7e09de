"""`sluice trace …`: how much locality a capture has, and synthetic captures."""

from __future__ import annotations

import json
from typing import Optional

import click

from sluice import _core
from sluice.cli.app import main
from sluice.cli.output import console, new_table
from sluice.cli.params import LIMITS, Number
from sluice.errors import writable
from sluice.extras import require
from sluice.files import write_replacing


@main.group()
def trace() -> None:
    """Traces: how much locality a capture has."""


@trace.command("analyze")
@click.argument("path", metavar="FILE")
@click.option("--json", "json_path", help="Write the analysis as JSON.")
@click.option("--plot", "plot_path", help="Write a PNG of the SLF by batch size and by Reframer hold time.")
@click.option("--flows", "flows_path", help="Write one row per flow (5-tuple, packets, bytes, first/last ns) as Parquet.")
def trace_analyze(path: str, json_path: Optional[str], plot_path: Optional[str], flows_path: Optional[str]) -> None:
    """Analyse FILE (pcap or pcapng) in one streaming pass: flows, the SLF at
    batch sizes 32..1024, distances between a flow's packets, flow sizes, and
    the SLF a Reframer would reach."""
    writable(json_path, "--json")
    writable(plot_path, "--plot")
    if plot_path:
        require("plot", "plotting", "matplotlib")
    writable(flows_path, "--flows")
    a = json.loads(_core.trace_analyze(path, flows_path))
    sizes = sorted(a["slf"], key=int)
    holds = sorted(a["reframer_slf_by_t_buff_us"], key=int)
    table = new_table(f"{path}: {a['packets']} packets ({a['not_ip']} not IP), {a['flows']} flows, "
                   f"{a['duration_s']:.3f} s; read at {a['packets_per_s'] / 1e6:.1f} M packets/s", ["figure", *(f"B={b}" for b in sizes)])
    table.add_row("SLF (packets per run)", *(f"{a['slf'][b]:.2f}" for b in sizes))
    table.add_row("flow switches per batch", *(f"{a['switches_per_batch'][b]:.1f}" for b in sizes))
    console.print(table)
    console.print("Reframer SLF by hold time: " + ", ".join(f"{t} µs {a['reframer_slf_by_t_buff_us'][t]:.2f}" for t in holds))
    for name, unit in (("flow_size", "packets"), ("spatial_distance", "packets between"), ("temporal_distance_us", "µs between")):
        q = a[name]
        console.print(f"{name}: mean {q['mean']:.1f}, p50 {q['p50']}, p99 {q['p99']}, max {q['max']} ({unit})")
    if json_path:
        write_replacing(json_path, json.dumps(a, indent=1))
    if plot_path:
        from sluice.plot import save, subplots

        fig, (left, right) = subplots(1, 2, figsize=(9, 3.5))
        left.plot([int(b) for b in sizes], [a["slf"][b] for b in sizes], marker="o")
        left.set(xscale="log", xlabel="batch size B", ylabel="SLF (packets per run)")
        right.plot([int(t) for t in holds], [a["reframer_slf_by_t_buff_us"][t] for t in holds], marker="o")
        right.set(xlabel="Reframer hold time (µs)", ylabel="reachable SLF")
        save(fig, plot_path)


@trace.command("synth")
@click.option("--packets", type=click.IntRange(1, 10**10), default=1_000_000, show_default=True, help="Packets to write.")
@click.option("--segments", type=click.IntRange(1, 255), default=1, show_default=True,
              help="Independent copies of the flow process multiplexed (more: more flows interleaved).")
@click.option("--flows-per-s", type=Number(LIMITS["min_synth_flows_per_s"], LIMITS["max_synth_flows_per_s"]), default=3_500.0, show_default=True, help="New flows a second, per segment.")
@click.option("--tcp-share", type=click.FloatRange(0, 1), default=0.8, show_default=True, help="Share of flows that are TCP.")
@click.option("--ipv6-share", type=click.FloatRange(0, 1), default=0.0, show_default=True, help="Share of flows over IPv6.")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@click.option("--out", "out", required=True, help="The pcap to write.")
def trace_synth(packets: int, segments: int, flows_per_s: float, tcp_share: float, ipv6_share: float, seed: int, out: str) -> None:
    """Write a synthetic trace with the structure of a real one: concurrent
    TCP and UDP flows of heavy-tailed sizes (mean 63 packets), TCP window
    trains and ACK streams, over IPv4 and (`--ipv6-share`) IPv6;
    `--segments K` multiplexes K copies."""
    writable(out, "--out")
    s = json.loads(_core.trace_synth(out, packets, segments, flows_per_s, tcp_share, seed, ipv6_share))
    console.print(f"{out}: {s['packets']} packets of {s['flows']} flows over {s['duration_s']:.3f} s "
                  f"(written in {s['seconds']:.1f} s)")
