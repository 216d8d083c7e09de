"""The `sluice` command: `demo`, `run`, `embed`, `soak`, `profile`, `experiment` and more.
Its errors and stops follow `sluice.errors`: one line and exit 2 for a
mistake, exit 130 for Ctrl-C or SIGTERM after writing what was measured."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from typing import Any, Callable, Optional, Sequence

# numpy (through matplotlib) starts an OpenBLAS thread per core, and they
# spin for a while at start-up; on a small machine that takes time from
# the engine's pinned workers, and the plots need no parallel BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402
from rich import box
from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from sluice import _core, profiles
from sluice import net as sluice_net
from sluice.errors import INTERRUPTED, Command, Interrupted, Refused, one_line, writable, writable_folder
from sluice.embed import METHODS
from sluice.pipeline import POLL_POLICIES, Pipeline
from sluice.pipelines import PIPELINES, rc
from sluice.lab import results
from sluice.result import RunResult

class Number(click.FloatRange):
    """A float within a range, never NaN or infinite."""

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number", param, ctx)
        return number


LIMITS = _core.limits()
#: Option types within the core's bounds: a count of periods, a period length, a rate.
PERIODS = click.IntRange(1, int(LIMITS["max_periods"]))
WARMUP = click.IntRange(0, int(LIMITS["max_periods"]))
PERIOD_MS = Number(0, LIMITS["max_period_ms"], min_open=True)
RATE = Number(0, LIMITS["max_rate_pps"], min_open=True)
SIZE = click.IntRange(1, 1 << 16)

#: Wide enough for the summary table when output is not a terminal (CI logs, pipes).
console = Console(width=None if sys.stdout.isatty() else max(132, shutil.get_terminal_size().columns))


def _run_with_progress(
    pipeline: Pipeline,
    controller: str,
    periods: int,
    warmup: int,
    on_period_extra: Optional[Callable[[dict[str, Any]], None]] = None,
    **kw: Any,
) -> RunResult:
    total = periods + warmup

    def on_period(p: dict[str, Any]) -> None:
        progress.update(task, advance=1, last=_period_line(p))
        if on_period_extra is not None:
            on_period_extra(p)

    with Progress(
        TextColumn(f"{pipeline.name} · {controller}"),
        BarColumn(bar_width=10),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}", markup=False),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("periods", total=total, last="")
        return pipeline.run(
            controller,
            periods=periods,
            warmup_periods=warmup,
            on_period=on_period,
            **kw,
        )


def _period_line(p: dict[str, Any]) -> str:
    """The last period in a few words, for the progress line of a long run:
    its rate, mean batch and the worst p95 delay of its flows; the packets
    lost so far (HA copies removed by design are not lost)."""
    worst = max((f["p95_us"] for f in p["flows"].values() if f["delivered"]), default=0.0)
    lost = _lost(p["totals"]["drops"])
    count = next((f"{lost / unit:.3g}{prefix}" for unit, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")) if lost >= unit), str(lost))
    return f"{p['rate_pps'] / 1e6:.3g} Mpps · batch {p['mean_batch']:.1f} · p95 ≤ {worst:.4g} µs · lost {count}"


def _table(title: str, columns: Sequence[str], wrapping: Sequence[str] = ()) -> Table:
    """A table of `columns`, right-aligned but the `wrapping` ones (left-
    aligned lists that wrap), with rules under the title and header only.
    Headers take a line a word and cells are never cut, so a column is as
    wide as its widest word or cell and a table fits a narrow terminal."""
    table = Table(title=title, box=box.SIMPLE_HEAVY, collapse_padding=True, pad_edge=False)
    for name in columns:
        wraps = name in wrapping
        table.add_column(name if wraps else name.replace(" ", "\n"), justify="left" if wraps else "right", no_wrap=not wraps)
    return table


def _lost(drops: dict[str, int]) -> int:
    """Packets lost among `drops` (by cause): all but HA copies removed by design."""
    return sum(n for cause, n in drops.items() if cause != "duplicates")


#: Why packets were dropped, as a run's summary counts them, in words.
DROP_CAUSES = {"nf": "by NFs", "queue_full": "at full queues", "egress_full": "at full egresses (a port's ring or a class of the link)",
               "worker_down": "at a down worker", "duplicates": "HA copies whose twin passed"}


def _summary(results: list[RunResult], focus_flow: Optional[str] = None) -> list[RenderableType]:
    """The runs' rates, batches and delays over the measured periods, their
    packets over the whole run (two tables, each narrow enough for an
    80-column terminal), and for each run that dropped packets, why, and
    which flows lost packets."""
    backend = results[0].data["backend"] if results else ""
    pipeline = results[0].data["pipeline"] if results else ""
    # Workers that sleep (a poll policy other than busy): how much of their cores they used.
    sleeping = any(w["waits"] for r in results for p in r.periods for w in p["workers"])
    rates = _table(f"{pipeline} on the {backend}: measured periods",
                   ["controller", "Mpps", "× null", "mean batch", "viol. %"] + [f"{focus_flow} p95 µs (SLO)"] * bool(focus_flow) + ["CPU %"] * sleeping)
    packets = _table(f"{pipeline} on the {backend}: packets, whole run", ["controller", "generated", "delivered", "dropped", "in flight", "missed at rx", "lossless"])
    drops = []
    base = next((r.summary["rate_pps"] for r in results if r.controller == "null"), None)
    for r in results:
        s = r.summary
        ratio = f"{s['rate_pps'] / base:.2f}" if base else "—"
        row = [r.controller, f"{s['rate_pps'] / 1e6:.3f}", ratio, f"{s['mean_batch']:.1f}", f"{s['violation_pct']:.0f}"]
        if focus_flow:
            measured = [p for p in r.periods if not p["warmup"]] or r.periods
            p95 = sorted(p["flows"][focus_flow]["p95_us"] for p in measured)[len(measured) // 2]
            slo = measured[-1]["flows"][focus_flow]["slo_us"]
            row.append(f"{p95:.1f} ({slo:g})" if slo is not None else f"{p95:.1f}")
        if sleeping:
            workers = [w for p in r.periods if not p["warmup"] for w in p["workers"]] or [w for p in r.periods for w in p["workers"]]
            row.append(f"{100 * sum(w['cpu_fraction'] for w in workers) / max(1, len(workers)):.0f}")
        rates.add_row(*row)
        packets.add_row(r.controller, *(str(s[k]) for k in ("generated", "delivered", "dropped", "in_flight", "missed")), "yes" if s["lossless"] else "NO")
        if s["dropped"]:
            causes = ", ".join(f"{n} {DROP_CAUSES[cause]}" for cause, n in s["drops"].items() if n)
            # A flow lost what it generated and did not deliver; an HA flow none while one copy of each packet passed.
            lost = ", ".join(f"{f} {t['generated'] - t['delivered']}" for f, t in r.flow_totals.items() if t["generated"] > t["delivered"])
            # Packets no flow claimed (a capture's ARP or IPv6, a destination no flow's prefix holds) are nobody's loss.
            flowless = _lost(s["drops"]) - sum(t["dropped"] for t in r.flow_totals.values())
            of_no_flow = f"; {flowless} of no flow" if flowless > 0 else ""
            drops.append(f"{r.controller}: dropped {causes}; flows that lost packets: {lost or 'none'}{of_no_flow}")
        if s["in_flight"]:
            drops.append(f"{r.controller}: {s['in_flight']} packets were still inside when the run ended (the drain ran out of time) and are lost with it")
    return [rates, packets, *drops]


@click.group(cls=Command)
@click.version_option(_core.__version__, prog_name="sluice")
@click.option("--debug", is_flag=True, help="Show the traceback of an error instead of one line.")
def main(debug: bool) -> None:
    """Sluice: SLO-aware packet processing with fractional buffers."""


@main.command()
@click.option("--n", "n", type=SIZE, default=16, show_default=True, help="Branches of the robot-control pipeline.")
@click.option("--periods", type=PERIODS, default=10, show_default=True, help="Measured control periods per controller.")
@click.option("--period-ms", type=PERIOD_MS, default=100.0, show_default=True, help="Control period (ms).")
@click.option("--backend", type=click.Choice(_core.backends()), default="engine", show_default=True)
@click.option("--out", default="out", show_default=True, help="Folder for the plot and JSON reports.")
def demo(n: int, periods: int, period_ms: float, backend: str, out: str) -> None:
    """RC(n) under every built-in controller: tables and a plot."""
    writable_folder(out, "--out")
    pipeline = rc(n)
    results = []
    for controller in _core.controllers():
        r = _run_with_progress(pipeline, controller, periods, 1, period_ms=period_ms, backend=backend)
        r.to_json(os.path.join(out, f"demo-{controller}.json"))
        results.append(r)
    console.print(*_summary(results, focus_flow="rc"))
    path = os.path.join(out, "demo.png")
    from sluice.plot import plot_comparison  # matplotlib: most of a command's start-up, so only when plotting

    plot_comparison([r.data for r in results], path, flow="rc")
    console.print(f"plot: {path}; reports: {out}/demo-<controller>.json")


def family_sizes(command: Callable[..., None]) -> Callable[..., None]:
    """The options that size a built-in pipeline family: --n, --m, --bearers, --users."""
    for option in reversed([
        click.option("--n", "n", type=SIZE, default=16, show_default=True, help="Size parameter of the pipeline family (next hops, branches)."),
        click.option("--m", "m", type=SIZE, default=2, show_default=True, help="Virtual routers of VRF(m, n)."),
        click.option("--bearers", type=SIZE, default=2, show_default=True, help="Bearers of MGW(bearers, users)."),
        click.option("--users", type=SIZE, default=4, show_default=True, help="Users per bearer of MGW(bearers, users)."),
    ]):
        command = option(command)
    return command


def _named_pipeline(name: str, sizes: dict[str, int], batch_size: int = 32, burstiness: int = 1, pcap: Optional[str] = None) -> Pipeline:
    """PIPELINE as a command names it: a built-in family sized by `sizes`
    (n, m, bearers, users) or a JSON description file, which sizes itself
    (so the options that size a family, given on the command line, are refused)."""
    context = click.get_current_context()

    def given(flag: str) -> bool:
        return context.get_parameter_source(flag) == click.core.ParameterSource.COMMANDLINE
    if name.endswith(".json"):
        for flag in ("n", "m", "bearers", "users", "burstiness", "pcap"):
            if given(flag):
                raise Refused(f"--{flag} applies to the built-in pipelines; a description sets it itself")
        pipeline = Pipeline.from_spec(_read_description(name))
        if given("batch_size"):
            pipeline.batch_size = batch_size
        return pipeline
    if name not in PIPELINES:
        raise Refused(f"unknown pipeline '{name}' (known: {', '.join(PIPELINES)}, or a .json file)")
    if pcap and name not in ("l2l3", "gw"):
        raise Refused(f"--pcap applies to l2l3 and gw, not {name}")
    family = {"vrf": ("m", "n"), "mgw": ("bearers", "users")}.get(name, ("n",))
    return PIPELINES[name](*(sizes[k] for k in family), batch_size=batch_size, burstiness=burstiness, **({"pcap": pcap} if pcap else {}))


@main.command()
@click.argument("pipeline_name", metavar="PIPELINE")
@family_sizes
@click.option("--controller", type=click.Choice(_core.controllers()), default="null", show_default=True)
@click.option("--backend", type=click.Choice(_core.backends()), default="engine", show_default=True)
@click.option("--periods", type=PERIODS, default=10, show_default=True, help="Measured control periods.")
@click.option("--warmup", type=WARMUP, default=1, show_default=True, help="Warm-up periods left out of the summary.")
@click.option("--period-ms", type=PERIOD_MS, default=100.0, show_default=True, help="Control period (ms).")
@click.option("--batch-size", type=click.IntRange(1, int(LIMITS["max_batch"])), default=32, show_default=True, help="Batch size B (pkt).")
@click.option("--burstiness", type=SIZE, default=1, show_default=True, help="Packets of one flow in a row at the source.")
@click.option("--pcap", "pcap", help="Replay this trace instead (l2l3, gw): destinations dealt to the flows with equal traffic.")
@click.option("--rx", "rx_port", metavar="BACKEND:IFACE", help="Receive on this port instead of the built-in source (af_packet:veth1, af_xdp:veth1); flows by destination /24.")
@click.option("--tx", "tx_port", metavar="BACKEND:IFACE", help="Transmit at every egress on this port.")
@click.option("--poll", type=click.Choice(list(POLL_POLICIES)), help="What workers do after a round without work (default: the description's, else busy).")
@click.option("--worker-poll", "worker_polls", multiple=True, metavar="W=POLICY", help="Worker W's own poll policy; repeatable, overrides --poll for it.")
@click.option("--poll-model", metavar="FILE", help="The learned policy's model (default: the one shipped; `sluice train polling` writes one).")
@click.option("--rate", "rate_pps", type=RATE, help="Offered rate of every flow (pkt/s; default: as fast as the worker takes packets).")
@click.option("--flow-rate", "flow_rates", multiple=True, metavar="FLOW=PPS", help="Offered rate of one flow (pkt/s); repeatable, overrides --rate.")
@click.option("--egress-sched", type=click.Choice(["drr", "wf2q+", "qfq"]), help="Share the output link among classes of flows with this scheduler.")
@click.option("--link-rate", metavar="RATE", help="The scheduled link's rate: bit/s, or with a unit (1Gbit, 500Mbit, 10kbit).")
@click.option("--weights", metavar="CLASS=W,…", help="The classes and their weights (tight=3,bulk=1).")
@click.option("--class", "class_flows", multiple=True, metavar="CLASS=FLOW,…", help="A class's flows (names, or a prefix ending in *); repeatable.")
@click.option("--egress-wait", is_flag=True, help="A full class makes the sources that feed it wait, rather than its packets being dropped.")
@click.option("--slo-statistic", type=click.Choice(["p50", "p95", "p99", "max", "mean"]), default="p95", show_default=True)
@click.option("--delta", type=Number(0, 0.5, max_open=True), default=_core.DEFAULT_DELTA, show_default=True, help="δ of the SLO-aware controllers: a flow is active from (1 − δ)·SLO.")
@click.option("--spare-workers", type=click.IntRange(0, int(LIMITS["max_workers"]) - 1), default=0, show_default=True, help="Idle workers pipeline decomposition may move flows to.")
@click.option("--outage", "outages", multiple=True, metavar="W:FROM-UNTIL", help="Take worker W down from period FROM until period UNTIL (warm-up periods count), as a failed core; repeatable.")
@click.option("--no-timing", is_flag=True, help="Turn off delay histograms and busy-time measurement.")
@click.option("--json", "json_path", help="Write the report as JSON.")
@click.option("--csv", "csv_path", help="Write the per-period table as CSV.")
@click.option("--plot", "plot_path", help="Write a PNG of triggers, delays and rates.")
def run(
    pipeline_name: str,
    n: int,
    m: int,
    bearers: int,
    users: int,
    controller: str,
    backend: str,
    periods: int,
    warmup: int,
    period_ms: float,
    batch_size: int,
    burstiness: int,
    pcap: Optional[str],
    rx_port: Optional[str],
    tx_port: Optional[str],
    poll: Optional[str],
    worker_polls: tuple[str, ...],
    poll_model: Optional[str],
    rate_pps: Optional[float],
    flow_rates: tuple[str, ...],
    egress_sched: Optional[str],
    link_rate: Optional[str],
    weights: Optional[str],
    class_flows: tuple[str, ...],
    egress_wait: bool,
    slo_statistic: str,
    delta: float,
    spare_workers: int,
    outages: tuple[str, ...],
    no_timing: bool,
    json_path: Optional[str],
    csv_path: Optional[str],
    plot_path: Optional[str],
) -> None:
    """Run PIPELINE (a family name, or a JSON description file) for a number of control periods.

    Ctrl-C stops it within a period: the report of the periods done is
    written (marked interrupted) and the command exits 130."""
    for path, what in ((json_path, "--json"), (csv_path, "--csv"), (plot_path, "--plot")):
        writable(path, what)
    profiles.ensure_measured()
    pipeline = _named_pipeline(pipeline_name, {"n": n, "m": m, "bearers": bearers, "users": users}, batch_size, burstiness, pcap)
    pipeline.spare_workers = spare_workers or pipeline.spare_workers
    for item in outages:
        worker, _, span = item.partition(":")
        start, _, until = span.partition("-")
        if not (worker.isdigit() and start.isdigit() and until.isdigit()):
            raise Refused(f"--outage takes W:FROM-UNTIL (worker and periods, e.g. 1:3-5), got '{item}'")
        pipeline.outage(int(worker), int(start), int(until))
    if rate_pps is not None:
        flows = [f for f in pipeline.flows() if pipeline.has_own_stream(f)]
        if not flows:
            raise Refused(f"--rate sets the rate of each flow's own stream, and no flow of {pipeline.name} has one "
                          "(its flows share a source that a splitter divides, or a trace)")
        for flow in flows:
            pipeline.set_rate(flow, rate_pps)
    for item in flow_rates:
        flow, sep, value = item.partition("=")
        if not sep:
            raise Refused(f"--flow-rate takes FLOW=PPS, got '{item}'")
        try:
            pps = float(value)
        except ValueError:
            raise Refused(f"--flow-rate {item}: '{value}' is not a rate in pkt/s") from None
        pipeline.set_rate(flow, pps)
    if rx_port is not None and (pcap or rate_pps is not None or flow_rates):
        raise Refused("--rx receives from a port: --pcap, --rate and --flow-rate set the built-in source")
    if poll_model is not None and poll != "learned" and not any(w.endswith("=learned") for w in worker_polls):
        raise Refused("--poll-model is the learned policy's model: give --poll learned (or --worker-poll W=learned)")
    if poll is not None:
        pipeline.set_poll(poll, model=poll_model if poll == "learned" else None)
    for item in worker_polls:
        worker, _, policy = item.partition("=")
        if not worker.isdigit() or policy not in POLL_POLICIES:
            raise Refused(f"--worker-poll {item!r}: give W=POLICY, W a worker number and POLICY one of {', '.join(POLL_POLICIES)}")
        pipeline.set_poll(policy, model=poll_model if policy == "learned" else None, worker=int(worker))
    if egress_sched is not None or link_rate or weights or class_flows or egress_wait:
        _schedule_egress(pipeline, egress_sched, link_rate, weights, class_flows, egress_wait)
    try:
        pipeline.use_ports(rx_port, tx_port)
    except ValueError as e:
        raise Refused(f"--rx: {e}") from None
    try:
        result = _run_with_progress(pipeline, controller, periods, warmup, period_ms=period_ms, backend=backend,
                                    slo_statistic=slo_statistic, delta=delta, timing=not no_timing)
    except KeyboardInterrupt as e:
        partial: Optional[RunResult] = getattr(e, "result", None)
        if partial is not None:
            _report(partial, json_path, csv_path, plot_path)
            console.print(f"interrupted after {len(partial.periods)} periods; the report of those was written", style="yellow")
        raise
    _report(result, json_path, csv_path, plot_path)


@main.command("embed")
@click.argument("pipeline_name", metavar="PIPELINE")
@family_sizes
@click.option("--cores", type=click.IntRange(1, int(LIMITS["max_workers"]) - 1), required=True, help="Cores (workers 1..CORES) for the NFs; sources and sinks stay on worker 0.")
@click.option("--method", type=click.Choice(METHODS), default="path-fit", show_default=True, help="A heuristic, or the exact ILP minimising the sum or the largest of the flows' crossings.")
@click.option("--ha", "ha_flows", multiple=True, metavar="FLOW", help="A high-availability flow: its NFs get copies on disjoint cores; repeatable.")
@click.option("--k", type=click.IntRange(1, 8), default=1, show_default=True, help="Core failures the HA flows survive (copies of each).")
@click.option("--rate", "rate_pps", type=RATE, default=1e6, show_default=True, help="Rate of every flow (pkt/s) that sizes each NF's load on its core.")
@click.option("--time-limit", type=Number(0, 86400, min_open=True), default=30.0, show_default=True, help="Seconds the ILP may run.")
@click.option("--out", "out_path", help="Write the placed pipeline's description (JSON), to run with `sluice run FILE`.")
def embed_pipeline(pipeline_name: str, n: int, m: int, bearers: int, users: int, cores: int, method: str, ha_flows: tuple[str, ...], k: int,
                   rate_pps: float, time_limit: float, out_path: Optional[str]) -> None:
    """Place PIPELINE's NFs on CPU cores: few core-to-core crossings per
    flow and no core loaded past its capacity (each NF's load from its cost
    model at --rate); with --ha, the HA flows' NFs are copied onto disjoint
    cores, so that they survive --k core failures."""
    from sluice.embed import embed, from_pipeline
    from sluice.embed.live import place, resilient

    writable(out_path, "--out")
    profiles.ensure_measured()
    pipeline = _named_pipeline(pipeline_name, {"n": n, "m": m, "bearers": bearers, "users": users})
    try:
        instance = from_pipeline(pipeline, cores, rate_pps=rate_pps)
    except ValueError as err:
        raise Refused(f"{err} (its load at --rate {rate_pps:g} pkt/s a flow, in thousandths of a core)") from None
    try:
        if ha_flows:
            instance, pipeline = instance.resilient(ha_flows, k), resilient(pipeline, ha_flows, k)
    except ValueError as err:
        raise Refused(f"--ha: {err}") from None
    found = embed(instance, method, time_limit_s=time_limit)
    if found.placement is None and found.status == "unknown":
        raise Refused(f"{method} found no placement on {cores} core(s) within --time-limit {time_limit:g} s: give it longer, or a heuristic --method")
    if found.placement is None:
        raise Refused(f"{method} placed nothing on {cores} core(s) ({found.status}): give more --cores, or a lower --rate")
    table = _table(f"{pipeline.name} on {cores} core(s) by {method}", ["worker", "load %", "NFs"], wrapping=["NFs"])
    for core in range(cores):
        on = [v for v, c in enumerate(found.placement) if c == core]
        load = 100 * sum(instance.weights[v] for v in on) / instance.capacity
        table.add_row(str(1 + core), f"{load:.1f}", ", ".join(instance.names[v] for v in on) or "—")
    console.print(table)
    console.print(f"crossings between cores: {found.sum} over {len(found.crossings)} flows, at most {found.max} on one ({found.status}, {1e3 * found.time_s:.1f} ms)")
    if out_path:
        place(pipeline, instance, found.placement)
        with open(out_path, "w") as f:
            json.dump(pipeline.spec(), f, indent=1)
        console.print(f"placed description: {out_path} (sluice run {out_path})")


#: Units of --link-rate (bit/s).
LINK_UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}


def _schedule_egress(pipeline: Pipeline, algorithm: Optional[str], link_rate: Optional[str], weights: Optional[str],
                     class_flows: tuple[str, ...], wait: bool) -> None:
    """--egress-sched, --link-rate, --weights and --class: all four, or none (and --egress-wait with them)."""
    if not (algorithm and link_rate and weights and class_flows):
        raise Refused("a scheduled egress needs --egress-sched, --link-rate, --weights and a --class for each class")
    text = link_rate.strip().lower()
    unit = next((u for u in LINK_UNITS if text.endswith(u)), None)
    try:
        bits = float(text[: -len(unit)] if unit else text) * (LINK_UNITS[unit] if unit else 1.0)
    except ValueError:
        raise Refused(f"--link-rate {link_rate}: a rate in bit/s, or with a unit (1Gbit, 500Mbit)") from None

    def pairs(text: str, flag: str) -> list[tuple[str, str]]:
        out = [item.partition("=") for item in text.split(",") if item]
        if not out or any(not sep or not k for k, sep, _ in out):
            raise Refused(f"{flag} takes NAME=VALUE,…, got '{text}'")
        return [(k, v) for k, _, v in out]

    try:
        weight_of = {name: int(w) for name, w in pairs(weights, "--weights")}
    except ValueError:
        raise Refused(f"--weights {weights}: every weight is a whole number") from None
    members: dict[str, list[str]] = {}
    for item in class_flows:
        name, sep, flows = item.partition("=")
        if not sep or not flows:
            raise Refused(f"--class takes CLASS=FLOW,…, got '{item}'")
        if name not in weight_of:
            raise Refused(f"--class {name}: no such class in --weights ({', '.join(weight_of)})")
        members.setdefault(name, []).extend(f for f in flows.split(",") if f)
    missing = [c for c in weight_of if c not in members]
    if missing:
        raise Refused(f"--weights names class {missing[0]!r} that no --class gives flows")
    pipeline.schedule_egress(algorithm, bits, {c: (weight_of[c], members[c]) for c in weight_of}, on_full="wait" if wait else "drop")


def _read_description(path: str) -> dict[str, Any]:
    """The JSON description in file `path`, refused by name when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except json.JSONDecodeError as e:
        raise Refused(f"{path}: not JSON: {e}") from None
    except UnicodeDecodeError:
        raise Refused(f"{path}: not a text file (UTF-8)") from None
    if not isinstance(spec, dict):
        raise Refused(f"{path}: a description is a JSON object ({{\"modules\": …}}), not a {type(spec).__name__}")
    return spec


def _report(result: RunResult, json_path: Optional[str], csv_path: Optional[str], plot_path: Optional[str]) -> None:
    """Prints a run's tables and moves and writes the files asked for."""
    console.print(*_summary([result]))
    if result.classes:
        table = _table("scheduled egress, by class (whole run)",
                       ["class", "weight", "flows", "generated", "delivered", "dropped", "share", "p99 µs (worst flow)"], wrapping=["flows"])
        for name, c in result.classes.items():
            table.add_row(name, str(c["weight"]), ", ".join(c["flows"]), str(c["generated"]), str(c["delivered"]), str(c["dropped"]),
                          f"{c['share']:.3f}", f"{c['p99_us_max']:.1f}")
        console.print(table)
    for period, moves in result.moves.items():
        workers = sorted(set(moves.values()))
        console.print(f"decomposed after period {period}: {len(moves)} modules to worker(s) {', '.join(map(str, workers))} ({', '.join(moves)})")
    writers = ((json_path, "--json", result.to_json), (csv_path, "--csv", result.to_csv), (plot_path, "--plot", result.plot))
    failed = []
    for path, what, write in writers:
        if not path:
            continue
        try:
            write(path)
        except OSError as e:
            failed.append(f"{what} {path!r}: {one_line(e)}")
    if failed:
        raise Refused("could not write " + "; ".join(failed) + " (the other files were written)")


def _rss_bytes() -> int:
    """Resident memory of this process (bytes), from /proc."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Slope:
    """A least-squares line y = a + b·x kept as running sums: memory that does not grow with the run."""

    def __init__(self) -> None:
        self.n = self.sx = self.sy = self.sxx = self.sxy = 0.0

    def add(self, x: float, y: float) -> None:
        self.n += 1
        self.sx += x
        self.sy += y
        self.sxx += x * x
        self.sxy += x * y

    def slope(self) -> float:
        d = self.n * self.sxx - self.sx * self.sx
        return (self.n * self.sxy - self.sx * self.sy) / d if d else 0.0


@main.command()
@click.option("--n", "n", type=SIZE, default=16, show_default=True, help="Branches of the robot-control pipeline.")
@click.option("--controller", type=click.Choice(_core.controllers()), default="max", show_default=True)
@click.option("--seconds", type=Number(0, 7 * 86400, min_open=True), default=20.0, show_default=True, help="How long to run.")
@click.option("--period-ms", type=PERIOD_MS, default=100.0, show_default=True, help="Control period (ms).")
@click.option("--json", "json_path", help="Write the RSS figures as JSON.")
def soak(n: int, controller: str, seconds: float, period_ms: float, json_path: Optional[str]) -> None:
    """Run RC(n) on the engine for a while and report resident memory: after
    warm-up, at the end, and its trend (a line fitted to every period's RSS
    over the second half of the run, when the allocators have settled)."""
    writable(json_path, "--json")
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    trend = _Slope()

    def on_period(p: dict[str, Any]) -> None:
        if p["warmup"]:
            return
        reading = {"t_s": p["t_s"], "rss": float(_rss_bytes()), "generated": p["totals"]["generated"]}
        first.setdefault("t_s", reading["t_s"])
        first.setdefault("rss", reading["rss"])
        first.setdefault("generated", reading["generated"])
        last.update(reading)
        if p["period"] > periods // 2:
            trend.add(reading["t_s"], reading["rss"])

    periods = max(2, int(seconds * 1000 / period_ms))
    r = _run_with_progress(rc(n), controller, periods, 1, period_ms=period_ms, on_period_extra=on_period, keep_periods=10)
    s = r.summary
    slope_kib_per_min = trend.slope() * 60 / 1024
    console.print(
        f"RC({n}) under {controller}: {last['generated'] - first['generated']:.3g} packets after warm-up; "
        f"RSS {first['rss'] / 2**20:.1f} MiB after warm-up, {last['rss'] / 2**20:.1f} MiB at the end "
        f"({(last['rss'] - first['rss']) / 2**10:+.0f} KiB), trend {slope_kib_per_min:+.1f} KiB/min; "
        f"generated {s['generated']} = delivered {s['delivered']} + dropped {s['dropped']} + in flight {s['in_flight']}"
    )
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"rss_after_warmup": first["rss"], "rss_at_end": last["rss"], "rss_slope_kib_per_min": slope_kib_per_min,
                       "seconds": last["t_s"] - first["t_s"], "summary": s}, f, indent=1)


def _experiment_written(name: str, out: str, report: dict[str, Any], json_path: Optional[str], *, rows_in_json: bool = True, extra: Sequence[str] = ()) -> None:
    """Writes the experiment's JSON report to `json_path` (if given; without
    its flat rows unless `rows_in_json`) and says which files are in `out`."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report if rows_in_json else {k: v for k, v in report.items() if k != "rows"}, f, indent=1)
    files = [f"{name}.{ext}" for ext in ("json", "csv", "md", "png")] + list(extra)
    console.print(f"written: {out}/" + ", ".join(files))


@main.group()
def experiment() -> None:
    """Experiments that print the published figures beside their own."""


@experiment.command("static")
@click.option("--quick", is_flag=True, help="Short runs (8 warm-up + 5 measured periods; 10 without) for CI-sized checks.")
@click.option("--warmup", type=WARMUP, help="Warm-up periods of every run (overrides --quick's).")
@click.option("--periods", type=PERIODS, help="Measured periods of every run (overrides --quick's).")
@click.option("--rounds", type=click.IntRange(1, 1000), help="Runs of every controller, in order and in reverse by turns (default 4).")
@click.option("--period-ms", type=PERIOD_MS, help="Control period (ms; default 100).")
@click.option("--only", multiple=True, help="Run only these rows (rc16, l2l3-16, gw-16, …).")
@click.option("--keep-disturbed", is_flag=True, help="Count every measured period, also those in which the machine slowed the worker's core (its core probe ran slow).")
@click.option("--backend", type=click.Choice(_core.backends()), default="engine", show_default=True)
@click.option("--pcap", "pcap", help="A trace for the *L2L3(16, 32, 64) rows (l2l3-pcap-N): its destinations dealt to the flows.")
@click.option("--out", default="out/static", show_default=True, help="Folder for static.{json,csv,md,png}.")
@click.option("--json", "json_path", help="Also write the JSON report here.")
def experiment_static(quick: bool, warmup: Optional[int], periods: Optional[int], rounds: Optional[int], period_ms: Optional[float], only: tuple[str, ...],
                      keep_disturbed: bool, backend: str, pcap: Optional[str], out: str, json_path: Optional[str]) -> None:
    """The Batchy Table 2 grid under null, max, nfvnice, onoff and projgrad."""
    writable(json_path, "--json")
    writable_folder(out, "--out")
    profiles.ensure_measured()
    from pathlib import Path

    from sluice.lab import static

    settings = static.Settings.make(quick, backend, warmup, periods, period_ms, rounds, keep_disturbed)
    report = static.run(Path(out), settings, list(only) or None, lambda msg: console.log(msg), pcap)
    console.print(static.markdown(report["rows"]))
    for row, why in report["not_run"].items():
        console.print(f"not run: {row}: {why}")
    _experiment_written("static", out, report, json_path)


@experiment.command("reframer")
@click.option("--quick", is_flag=True, help="Traces of 1 and 8 segments, T_buff 16 and 64 µs, 3 periods of 100 ms a run.")
@click.option("--pcap", "pcap", help="Replay this capture instead of synthetic traces.")
@click.option("--out", default="out/reframer", show_default=True, help="Folder for reframer.{json,csv,md,png} and the traces.")
@click.option("--json", "json_path", help="Also write the JSON report here.")
def experiment_reframer(quick: bool, pcap: Optional[str], out: str, json_path: Optional[str]) -> None:
    """The Reframer paper's chain (flow stats → router → firewall → NAT) with and
    without a Reframer at T_buff 16..256 µs, on traces of 1..32 segments; beside
    projgrad's flow-oblivious buffers, both together, and T_buff set from the SLO."""
    writable(json_path, "--json")
    writable_folder(out, "--out")
    from pathlib import Path

    from sluice.lab import reframer

    report = reframer.run(Path(out), quick, lambda msg: console.log(msg), pcap)
    console.print(reframer.markdown(report["rows"]))
    _experiment_written("reframer", out, report, json_path)


def _quick_experiment(name: str, summary: str, quick_help: str, backend: Optional[str]) -> None:
    """Registers `sluice experiment NAME [--quick] [--backend] [--out] [--json]`
    for module sluice.lab.NAME (its `run(out, quick, backend, progress)`
    and `markdown(rows)`); without a default `backend`, no `--backend`, no
    profiles and `run(out, quick, progress)`."""

    def command(quick: bool, out: str, json_path: Optional[str], backend: Optional[str] = None) -> None:
        writable(json_path, "--json")
        writable_folder(out, "--out")
        import importlib
        from pathlib import Path

        module = importlib.import_module(f"sluice.lab.{name}")
        if backend is None:
            report = module.run(Path(out), quick, lambda msg: console.log(msg))
        else:
            profiles.ensure_measured()
            report = module.run(Path(out), quick, backend, lambda msg: console.log(msg))
        console.print(module.markdown(report["rows"]))
        _experiment_written(name, out, report, json_path)

    options = [
        click.option("--quick", is_flag=True, help=quick_help),
        click.option("--out", default=f"out/{name}", show_default=True, help=f"Folder for {name}.{{json,csv,md,png}}."),
        click.option("--json", "json_path", help="Also write the JSON report here."),
    ]
    if backend is not None:
        options.append(click.option("--backend", type=click.Choice(_core.backends()), default=backend, show_default=True))
    for option in reversed(options):
        command = option(command)
    experiment.command(name, help=summary)(command)


_quick_experiment("overhead", "Controller response time (read telemetry / compute / apply) on RC(1..64).",
                  "10 measured periods per branching instead of 50.", "engine")
_quick_experiment("dynamics", "How null, max and projgrad follow an SLO square wave, load steps and a bearer's rate steps.",
                  "24 periods per scenario instead of 48.", "sim")
_quick_experiment("decompose", "MGW with a slowed bulk bearer: decomposition onto a spare worker restores the QoS bearer's SLO.",
                  "10 periods per run instead of 30.", "sim")
_quick_experiment("roundcost", "What a round through the graph costs the walker: T0 and T1 of replay, a router chain and a four-branch router.",
                  "Batch sizes 1, 4, 32, 256 instead of 1..256.", "engine")
_quick_experiment("regime", "Speedup of projgrad over Null across branching × batchiness and branching × burstiness.",
                  "A 3 × 4 and 3 × 3 grid of 3-period runs instead of 6 × 7 and 6 × 6 of 5.", "sim")


_quick_experiment("ports", "What a port costs: a pipeline's rx -> Bypass(0, 0) -> tx forwarding rate against a bare loop over the same rings (root).",
                  "3 runs of 1 s per mode instead of 5 of 3 s.", None)
_quick_experiment("polling", "What each poll policy costs and gives: worker CPU, throughput, loss and delay from no load to overload, load steps, decision cost, sleep precision.",
                  "Loads 0, 1%, 50%, 120% and 3 periods of 100 ms a point instead of 8 loads and 5 of 200 ms.", None)
_quick_experiment("pspat", "The PSPAT paper's tests: arbiter decisions/s, throughput against clients, 10:1 shares under overload, a victim's latency.",
                  "Runs of 0.3 s, 3 repeats, instead of 1 s and 5.", None)


@experiment.command("embedding")
@click.option("--time-limit", type=Number(0, 86400, min_open=True), default=30.0, show_default=True, help="Seconds each ILP may run.")
@click.option("--out", default="out/embedding", show_default=True, help="Folder for embedding.{json,csv,md,png} and the instances (.lgf).")
@click.option("--json", "json_path", help="Also write the JSON report here.")
def experiment_embedding(time_limit: float, out: str, json_path: Optional[str]) -> None:
    """Resilient embedding of MGW (10 and 40 cores): every method beside the dissertation's Table 4.1."""
    writable(json_path, "--json")
    writable_folder(out, "--out")
    profiles.ensure_measured()
    from pathlib import Path

    from sluice.lab import embedding

    report = embedding.run(Path(out), time_limit, lambda msg: console.log(msg))
    console.print(embedding.markdown(report["rows"]))
    console.print(f"best heuristic of ours: {report['best_heuristic']}")
    _experiment_written("embedding", out, report, json_path, rows_in_json=False, extra=("mgw-10.lgf", "mgw-40.lgf"))


@experiment.command("failover")
@click.option("--rate", "rate_pps", type=RATE, default=20e3, show_default=True, help="Offered rate of every flow (pkt/s).")
@click.option("--period-ms", type=PERIOD_MS, default=100.0, show_default=True, help="Control period (ms).")
@click.option("--down", "down_s", type=Number(0, 3600, min_open=True), default=1.0, show_default=True, help="How long the worker stays down (s).")
@click.option("--out", default="out/failover", show_default=True, help="Folder for failover.{json,csv,md,png}.")
@click.option("--json", "json_path", help="Also write the JSON report here.")
def experiment_failover(rate_pps: float, period_ms: float, down_s: float, out: str, json_path: Optional[str]) -> None:
    """A resilient MGW embedding on the engine loses a worker for a while: HA flows lose nothing."""
    writable(json_path, "--json")
    writable_folder(out, "--out")
    profiles.ensure_measured()
    from pathlib import Path

    from sluice.lab import failover

    report = failover.run(Path(out), rate_pps, period_ms, down_s, lambda msg: console.log(msg))
    console.print(failover.markdown(report["rows"]))
    console.print(f"worker {report['failed_worker']} down; HA packets lost: {report['ha_lost']}; every packet accounted for: {report['accounted']}")
    _experiment_written("failover", out, report, json_path, rows_in_json=False)


@experiment.command("all")
@click.option("--quick", is_flag=True, help="The CI-sized variant of every experiment (minutes, not an hour).")
@click.option("--only", multiple=True, type=click.Choice(results.NAMES), help="Run only these; the pages keep the others' last figures.")
@click.option("--out", default="docs", show_default=True, help="Folder for RESULTS.md and results/NAME.png.")
@click.option("--runs", "runs_dir", default="out/results", show_default=True, help="Folder for each experiment's own outputs.")
@click.option("--readme", type=click.Path(exists=True, dir_okay=False), help="Also refresh this README's table of headline figures.")
def experiment_all(quick: bool, only: tuple[str, ...], out: str, runs_dir: str, readme: Optional[str]) -> None:
    """Every experiment at the README's settings: RESULTS.md, plots and the headline figures."""
    from pathlib import Path

    # Refused now, not after an hour of experiments.
    writable_folder(out, "--out")
    writable_folder(runs_dir, "--runs")
    writable(readme, "--readme")
    for entry in results.CATALOG:
        if only and entry.name not in only:
            continue
        args = ["experiment", entry.name, *(entry.quick_args if quick else entry.args), "--out", str(Path(runs_dir) / entry.name)]
        console.rule(entry.command(quick))
        # A stopped experiment (Ctrl-C, SIGTERM) comes back as its exit status: the rest are not run.
        if main.main(args=args, prog_name="sluice", standalone_mode=False) == INTERRUPTED:
            click.echo(f"sluice: stopped in {entry.name}; RESULTS.md not rewritten (finished experiments are in {runs_dir})", err=True)
            raise Interrupted()
    ran = results.write(Path(out), Path(runs_dir), quick)
    if readme:
        results.refresh_readme(Path(readme), Path(out) / "RESULTS.md", ran, quick)
    console.print(f"written: {out}/RESULTS.md and {out}/results/" + (f"; headline figures in {readme}" if readme else ""))


@main.command()
@click.option("--port", required=True, metavar="BACKEND:IFACE", help="The port to send on (af_packet:veth0, af_xdp:veth0).")
@click.option("--pipeline-flows", "pipeline_name", type=click.Choice(["l2l3", "gw", "rc"]), default="l2l3", show_default=True,
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
        partial: Optional[dict[str, Any]] = getattr(e, "sent", None)
        if partial is not None:
            _print_sent(partial, port)
        raise
    _print_sent(sent, port)


def _print_sent(sent: dict[str, Any], port: str) -> None:
    """One line of what `gen` sent on `port`."""
    rate = sent["packets"] / sent["seconds"] / 1e6 if sent["seconds"] > 0 else 0.0
    console.print(f"sent {sent['packets']} packets ({sent['bytes']} bytes) on {port} in {sent['seconds']:.2f} s: "
                  f"{rate:.3f} Mpps; the ring was full {sent['ring_full']} times")


@main.group()
def train() -> None:
    """Train the models Sluice's learned parts use."""


@train.command("polling")
@click.option("--iterations", type=click.IntRange(1, 1000), default=40, show_default=True, help="Training iterations, each a run of every scenario.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=1, show_default=True, help="Seed of the exploration draws and the trees.")
@click.option("--quick", is_flag=True, help="Short runs (2 periods of 50 ms a scenario).")
@click.option("--model", "model_path", default="out/polling-model.json", show_default=True,
              help="Where to write the model (python/sluice/models/polling.json is the one shipped).")
@click.option("--out", default="out", show_default=True, help="Folder for polling-training.{json,png}.")
def train_polling(iterations: int, seed: int, quick: bool, model_path: str, out: str) -> None:
    """Train the learned poll policy by trial on the paper's six load
    scenarios: each iteration runs them under the current model, scores each
    run and fits the next model to sleeps drawn around each scenario's best."""
    from pathlib import Path

    from sluice.lab import polling_training

    writable_folder(out, "--out")
    writable(model_path, "--model")
    report = polling_training.train(Path(out), Path(model_path), iterations, seed, quick, lambda m: console.print(f"[dim]{m}[/dim]"))
    table = _table(f"learned polling after {iterations} iterations (saturation {report['saturation_mpps']} Mpps)",
                   ["Mbit/s", "best sleep µs", "settled", "reward", "CPU %", "p99 µs"])
    last = report["history"][-1]["runs"]
    for s, mbps in enumerate(report["scenarios_mbps"]):
        settled = {True: "yes", False: "no", None: "never idle"}[report["settled"][s]]
        table.add_row(str(mbps), f"{report['best_us'][s]:.1f}", settled,
                      f"{last[s]['reward']:.1f}", f"{last[s]['cpu_pct']:.1f}", f"{last[s]['p99_us']:.1f}")
    console.print(table)
    console.print(f"written: {model_path}, {out}/polling-training.json, {out}/polling-training.png")


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
    writable(flows_path, "--flows")
    a = json.loads(_core.trace_analyze(path, flows_path))
    sizes = sorted(a["slf"], key=int)
    holds = sorted(a["reframer_slf_by_t_buff_us"], key=int)
    table = _table(f"{path}: {a['packets']} packets ({a['not_ipv4']} not IPv4), {a['flows']} flows, "
                   f"{a['duration_s']:.3f} s; read at {a['packets_per_s'] / 1e6:.1f} M packets/s", ["figure", *(f"B={b}" for b in sizes)])
    table.add_row("SLF (packets per run)", *(f"{a['slf'][b]:.2f}" for b in sizes))
    table.add_row("flow switches per batch", *(f"{a['switches_per_batch'][b]:.1f}" for b in sizes))
    console.print(table)
    console.print("Reframer SLF by hold time: " + ", ".join(f"{t} µs {a['reframer_slf_by_t_buff_us'][t]:.2f}" for t in holds))
    for name, unit in (("flow_size", "packets"), ("spatial_distance", "packets between"), ("temporal_distance_us", "µs between")):
        q = a[name]
        console.print(f"{name}: mean {q['mean']:.1f}, p50 {q['p50']}, p99 {q['p99']}, max {q['max']} ({unit})")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(a, f, indent=1)
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
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@click.option("--out", "out", required=True, help="The pcap to write.")
def trace_synth(packets: int, segments: int, flows_per_s: float, tcp_share: float, seed: int, out: str) -> None:
    """Write a synthetic trace with the structure of a real one: concurrent
    TCP and UDP flows of heavy-tailed sizes (mean 63 packets), TCP window
    trains and ACK streams; `--segments K` multiplexes K copies."""
    writable(out, "--out")
    s = json.loads(_core.trace_synth(out, packets, segments, flows_per_s, tcp_share, seed))
    console.print(f"{out}: {s['packets']} packets of {s['flows']} flows over {s['duration_s']:.3f} s "
                  f"(written in {s['seconds']:.1f} s)")


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


@main.command()
@click.option("--nf", "kinds", multiple=True, help="NF kinds to profile (default: all the profiler knows).")
@click.option("--max-batch", type=click.IntRange(2, int(LIMITS["max_batch"])), default=profiles.MAX_BATCH, show_default=True, help="Largest batch size profiled.")
@click.option("--reps", type=click.IntRange(1, 100_000), default=profiles.REPS, show_default=True, help="Samples (of 32 rounds) timed per batch size.")
@click.option("--json", "json_path", help="Also write the report here.")
def profile(kinds: tuple[str, ...], max_batch: int, reps: int, json_path: Optional[str]) -> None:
    """Measure each NF's cost model T(b) = T0 + T1·b; pipelines use it from then on."""
    writable(json_path, "--json")
    writable_folder(str(profiles.profile_path().parent), "the profile's folder")
    report = profiles.measure(list(kinds), max_batch, reps)
    table = _table(f"NF cost models, batch sizes 1..{max_batch}", ["NF", "T0 ns", "T1 ns/pkt", "R²", "β=T1/(T0+T1)"])
    for name, f in sorted(report["nfs"].items()):
        table.add_row(name, f"{f['t0_ns']:.1f}", f"{f['t1_ns']:.2f}", f"{f['r2']:.3f}", f"{f['beta']:.3f}")
    console.print(table)
    if json_path:
        with open(json_path, "w") as out:
            json.dump(report, out, indent=1)
    console.print(f"profile saved to {profiles.save(report)}")


if __name__ == "__main__":
    main()
