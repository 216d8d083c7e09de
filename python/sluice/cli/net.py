"""`sluice gen` and `sluice net …`: traffic onto real ports, and a namespace to try them in."""

from __future__ import annotations

from typing import Optional

import click

from sluice import net as sluice_net
from sluice.cli.app import main
from sluice.cli.output import console
from sluice.cli.params import RATE, SIZE, Number
from sluice.errors import Refused
from sluice.outputs import SentJson
from sluice.pipeline import Pipeline
from sluice.pipelines import PIPELINES


@main.command()
@click.option("--port", required=True, metavar="BACKEND:IFACE", help="The port to send on (af_packet:veth0, af_xdp:veth0).")
@click.option("--pipeline-flows", "pipeline_name", type=click.Choice(["l2l3", "l2l3-dual", "gw", "rc"]), default="l2l3", show_default=True,
              help="Send this built-in pipeline's flows (their templates).")
@click.option("--n", "n", type=SIZE, default=16, show_default=True, help="Size of that pipeline (next hops, branches).")
@click.option("--pcap", "pcap", help="Send this trace instead, in a loop.")
@click.option("--rate", "rate_pps", type=RATE, help="Total rate (pkt/s; default: as fast as the port takes them).")
@click.option("--seconds", type=Number(0, 7 * 86400, min_open=True), default=10.0, show_default=True, help="How long to send.")
def gen(port: str, pipeline_name: str, n: int, pcap: Optional[str], rate_pps: Optional[float], seconds: float) -> None:
    """Send traffic on a real port, at a rate: a pipeline's flows or a trace."""
    if pcap:
        pipeline = Pipeline("gen")
        src = pipeline.pcap_source("src", pcap, rate_pps=rate_pps)
        pipeline.connect(src, pipeline.sink("out"))
    else:
        pipeline = PIPELINES[pipeline_name](n)
        flows = [f for f in pipeline.flows() if pipeline.has_own_stream(f)]
        if rate_pps is not None and not flows:
            raise Refused(f"--rate: no flow of {pipeline.name} has a stream of its own")
        for flow in flows:
            pipeline.set_rate(flow, rate_pps / len(flows) if rate_pps is not None else None)
    try:
        sent = pipeline.send(port, seconds)
    except KeyboardInterrupt as e:
        partial: Optional[SentJson] = getattr(e, "sent", None)
        if partial is not None:
            _print_sent(partial, port)
        raise
    _print_sent(sent, port)


def _print_sent(sent: SentJson, port: str) -> None:
    """One line of what `gen` sent on `port`."""
    rate = sent["packets"] / sent["seconds"] / 1e6 if sent["seconds"] > 0 else 0.0
    console.print(f"sent {sent['packets']} packets ({sent['bytes']} bytes) on {port} in {sent['seconds']:.2f} s: "
                  f"{rate:.3f} Mpps; the ring was full {sent['ring_full']} times")


@main.group()
def net() -> None:
    """A network namespace with a veth pair, for real ports without touching the machine's interfaces."""


@net.command("up")
@click.option("--queues", type=click.IntRange(1, 64), default=1, show_default=True, help="Queues each way: one per worker receiving over AF_XDP (af_xdp:veth1@Q).")
def net_up(queues: int) -> None:
    """Make namespace 'sluice' with veth0 <-> veth1, both up."""
    sluice_net.up(queues=queues)
    console.print(f"namespace '{sluice_net.NAMESPACE}': {sluice_net.GEN_END} <-> {sluice_net.SWITCH_END}. In it, e.g.:\n"
                  f"  ip netns exec {sluice_net.NAMESPACE} sluice run l2l3 --n 16 --rx af_packet:{sluice_net.SWITCH_END} "
                  f"--tx af_packet:{sluice_net.SWITCH_END}\n"
                  f"  ip netns exec {sluice_net.NAMESPACE} sluice gen --port af_packet:{sluice_net.GEN_END} --rate 200000")


@net.command("down")
def net_down() -> None:
    """Remove namespace 'sluice' and its veth pair."""
    sluice_net.down()
    console.print(f"namespace '{sluice_net.NAMESPACE}' removed")
