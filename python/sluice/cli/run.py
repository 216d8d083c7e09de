"""`sluice demo`, `run`, `embed`, `soak` and `profile`: running pipelines and what they need."""

from __future__ import annotations

import json
import os
from typing import Callable, Optional, cast

import click

from sluice import _core, profiles
from sluice.cli.app import main
from sluice.cli.output import console, new_table, outputs_to_write, progress_run, report_run, summary_tables
from sluice.cli.params import LIMITS, PERIOD_MS, PERIODS, RATE, SIZE, WARMUP, ClassFlows, ClassWeights, FlowRate, LinkRate, Number, Outage, WorkerPoll
from sluice.embed import METHODS
from sluice.extras import require
from sluice.errors import Refused, writable, writable_folder
from sluice.files import write_replacing
from sluice.description import EGRESS_ALGORITHM_VALUES, PipelineDefaults, PipelineJson, SyntheticDefaults
from sluice.outputs import PeriodOutputJson
from sluice.pipeline import POLL_POLICIES, Pipeline
from sluice.poll import PollSettings
from sluice.pipelines import PIPELINES, rc
from sluice.result import RunResult
from sluice.run_params import BACKEND_KIND_VALUES, SLO_STATISTIC_VALUES, RunParams


@main.command()
@click.option("--n", "n", type=SIZE, default=16, show_default=True, help="Branches of the robot-control pipeline.")
@click.option("--periods", type=PERIODS, default=RunParams.periods, show_default=True, help="Measured control periods per controller.")
@click.option("--period-ms", type=PERIOD_MS, default=RunParams.period_ms, show_default=True, help="Control period (ms).")
@click.option("--backend", type=click.Choice(BACKEND_KIND_VALUES), default=RunParams.backend, show_default=True)
@click.option("--out", default="out", show_default=True, help="Folder for the plot and JSON reports.")
def demo(n: int, periods: int, period_ms: float, backend: str, out: str) -> None:
    """RC(n) under every built-in controller: tables and a plot."""
    writable_folder(out, "--out")
    require("plot", "the demo's plot", "matplotlib")
    pipeline = rc(n)
    results = []
    for controller in _core.controllers():
        r = progress_run(pipeline, controller, periods, RunParams.warmup_periods, period_ms=period_ms, backend=backend)
        r.to_json(os.path.join(out, f"demo-{controller}.json"))
        results.append(r)
    console.print(*summary_tables(results, focus_flow="rc"))
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


def _named_pipeline(name: str, sizes: dict[str, int], batch_size: int = PipelineDefaults.batch_size, burstiness: int = SyntheticDefaults.burstiness, pcap: Optional[str] = None) -> Pipeline:
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
    if pcap and name not in ("l2l3", "l2l3-dual", "gw"):
        raise Refused(f"--pcap applies to l2l3, l2l3-dual and gw, not {name}")
    family = {"vrf": ("m", "n"), "mgw": ("bearers", "users")}.get(name, ("n",))
    return PIPELINES[name](*(sizes[k] for k in family), batch_size=batch_size, burstiness=burstiness, **({"pcap": pcap} if pcap else {}))


@main.command()
@click.argument("pipeline_name", metavar="PIPELINE")
@family_sizes
@click.option("--controller", type=click.Choice(_core.controllers()), default="null", show_default=True)
@click.option("--backend", type=click.Choice(BACKEND_KIND_VALUES), default=RunParams.backend, show_default=True)
@click.option("--periods", type=PERIODS, default=RunParams.periods, show_default=True, help="Measured control periods.")
@click.option("--warmup", type=WARMUP, default=RunParams.warmup_periods, show_default=True, help="Warm-up periods left out of the summary.")
@click.option("--period-ms", type=PERIOD_MS, default=RunParams.period_ms, show_default=True, help="Control period (ms).")
@click.option("--batch-size", type=click.IntRange(1, int(LIMITS["max_batch"])), default=PipelineDefaults.batch_size, show_default=True, help="Batch size B (pkt).")
@click.option("--burstiness", type=SIZE, default=SyntheticDefaults.burstiness, show_default=True, help="Packets of one flow in a row at the source.")
@click.option("--pcap", "pcap", help="Replay this trace instead (l2l3, l2l3-dual, gw): destinations dealt to the flows with equal traffic.")
@click.option("--rx", "rx_port", metavar="BACKEND:IFACE", help="Receive on this port instead of the built-in source (af_packet:veth1, af_xdp:veth1); flows by destination /24.")
@click.option("--tx", "tx_port", metavar="BACKEND:IFACE", help="Transmit at every egress on this port.")
@click.option("--poll", type=click.Choice(list(POLL_POLICIES)), help="What workers do after a round that drains their input (default: the description's, else busy).")
@click.option("--worker-poll", "worker_polls", type=WorkerPoll(), multiple=True, help="Worker W's own poll policy; repeatable, overrides --poll for it.")
@click.option("--poll-model", metavar="FILE", help="The learned policy's model (default: the one shipped; `sluice train polling` writes one).")
@click.option("--rate", "rate_pps", type=RATE, help="Offered rate of every flow (pkt/s; default: as fast as the worker takes packets).")
@click.option("--flow-rate", "flow_rates", type=FlowRate(), multiple=True, help="Offered rate of one flow (pkt/s); repeatable, overrides --rate.")
@click.option("--egress-sched", type=click.Choice(EGRESS_ALGORITHM_VALUES),
              help="Share the output link among classes of flows with this scheduler (priority: the largest weight first).")
@click.option("--link-rate", type=LinkRate(), help="The scheduled link's rate: bit/s, or with a unit (1Gbit, 500Mbit, 10kbit).")
@click.option("--weights", type=ClassWeights(), help="The classes and their weights (tight=3,bulk=1).")
@click.option("--class", "class_flows", type=ClassFlows(), multiple=True, help="A class's flows (names, or a prefix ending in *); repeatable.")
@click.option("--egress-wait", is_flag=True, help="A full class makes the sources that feed it wait, rather than its packets being dropped.")
@click.option("--slo-statistic", type=click.Choice(SLO_STATISTIC_VALUES), default=RunParams.slo_statistic, show_default=True)
@click.option("--delta", type=Number(0, 0.5, max_open=True), default=RunParams.delta, show_default=True, help="δ of the SLO-aware controllers: a flow is active from (1 − δ)·SLO.")
@click.option("--spare-workers", type=click.IntRange(0, int(LIMITS["max_workers"]) - 1), default=PipelineDefaults.spare_workers, show_default=True, help="Idle workers pipeline decomposition may move flows to.")
@click.option("--outage", "outages", type=Outage(), multiple=True, help="Take worker W down from period FROM until period UNTIL (warm-up periods count), as a failed core; repeatable.")
@click.option("--no-timing", is_flag=True, help="Turn off delay histograms and busy-time measurement.")
@click.option("--keep-periods", type=PERIODS, default=RunParams.keep_periods, show_default=True,
              help="The most recent periods the report (--json, --csv, --plot) keeps; the summary counts them all.")
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
    worker_polls: tuple[tuple[int, str], ...],
    poll_model: Optional[str],
    rate_pps: Optional[float],
    flow_rates: tuple[tuple[str, float], ...],
    egress_sched: Optional[str],
    link_rate: Optional[float],
    weights: Optional[dict[str, int]],
    class_flows: tuple[tuple[str, list[str]], ...],
    egress_wait: bool,
    slo_statistic: str,
    delta: float,
    spare_workers: int,
    outages: tuple[tuple[int, int, int], ...],
    no_timing: bool,
    keep_periods: int,
    json_path: Optional[str],
    csv_path: Optional[str],
    plot_path: Optional[str],
) -> None:
    """Run PIPELINE (a family name, or a JSON description file) for a number of control periods.

    Ctrl-C stops it within a period: the report of the periods done is
    written (marked interrupted) and the command exits 130."""
    outputs_to_write((json_path, "--json"), (csv_path, "--csv"), (plot_path, "--plot"))
    if plot_path:
        require("plot", "plotting", "matplotlib")
    profiles.ensure_measured()
    pipeline = _named_pipeline(pipeline_name, {"n": n, "m": m, "bearers": bearers, "users": users}, batch_size, burstiness, pcap)
    pipeline.spare_workers = spare_workers or pipeline.spare_workers
    for worker, start, until in outages:
        pipeline.outage(worker, start, until)
    if rate_pps is not None:
        flows = [f for f in pipeline.flows() if pipeline.has_own_stream(f)]
        if not flows:
            raise Refused(f"--rate sets the rate of each flow's own stream, and no flow of {pipeline.name} has one "
                          "(its flows share a source that a splitter divides, or a trace)")
        for flow in flows:
            pipeline.set_rate(flow, rate_pps)
    for flow, pps in flow_rates:
        pipeline.set_rate(flow, pps)
    if rx_port is not None and (pcap or rate_pps is not None or flow_rates):
        raise Refused("--rx receives from a port: --pcap, --rate and --flow-rate set the built-in source")
    if poll_model is not None and poll != "learned" and not any(policy == "learned" for _, policy in worker_polls):
        raise Refused("--poll-model is the learned policy's model: give --poll learned (or --worker-poll W=learned)")
    if poll is not None:
        pipeline.set_poll(PollSettings(poll, model=poll_model if poll == "learned" else None))
    for worker, policy in worker_polls:
        pipeline.set_poll(PollSettings(policy, model=poll_model if policy == "learned" else None), worker=worker)
    if egress_sched is not None or link_rate or weights or class_flows or egress_wait:
        _schedule_egress(pipeline, egress_sched, link_rate, weights, class_flows, egress_wait)
    try:
        pipeline.use_ports(rx_port, tx_port)
    except ValueError as e:
        raise Refused(f"--rx: {e}") from None
    try:
        result = progress_run(pipeline, controller, periods, warmup, period_ms=period_ms, backend=backend,
                                    slo_statistic=slo_statistic, delta=delta, timing=not no_timing, keep_periods=keep_periods)
    except KeyboardInterrupt as e:
        partial: Optional[RunResult] = getattr(e, "result", None)
        if partial is not None:
            report_run(partial, json_path, csv_path, plot_path)
            console.print(f"interrupted after {len(partial.periods)} periods; the report of those was written", style="yellow")
        raise
    report_run(result, json_path, csv_path, plot_path)


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
    table = new_table(f"{pipeline.name} on {cores} core(s) by {method}", ["worker", "load %", "NFs"], wrapping=["NFs"])
    for core in range(cores):
        on = [v for v, c in enumerate(found.placement) if c == core]
        load = 100 * sum(instance.weights[v] for v in on) / instance.capacity
        table.add_row(str(1 + core), f"{load:.1f}", ", ".join(instance.names[v] for v in on) or "—")
    console.print(table)
    console.print(f"crossings between cores: {found.sum} over {len(found.crossings)} flows, at most {found.max} on one ({found.status}, {1e3 * found.time_s:.1f} ms)")
    if out_path:
        place(pipeline, instance, found.placement)
        write_replacing(out_path, json.dumps(pipeline.spec(), indent=1))
        console.print(f"placed description: {out_path} (sluice run {out_path})")


def _schedule_egress(pipeline: Pipeline, algorithm: Optional[str], link_bits_per_s: Optional[float], weights: Optional[dict[str, int]],
                     class_flows: tuple[tuple[str, list[str]], ...], wait: bool) -> None:
    """--egress-sched, --link-rate, --weights and --class: all four, or none (and --egress-wait with them)."""
    if not (algorithm and link_bits_per_s and weights and class_flows):
        raise Refused("a scheduled egress needs --egress-sched, --link-rate, --weights and a --class for each class")
    members: dict[str, list[str]] = {}
    for name, flows in class_flows:
        if name not in weights:
            raise Refused(f"--class {name}: no such class in --weights ({', '.join(weights)})")
        members.setdefault(name, []).extend(flows)
    missing = [c for c in weights if c not in members]
    if missing:
        raise Refused(f"--weights names class {missing[0]!r} that no --class gives flows")
    pipeline.schedule_egress(algorithm, link_bits_per_s, {c: (weights[c], members[c]) for c in weights}, on_full="wait" if wait else "drop")


def _read_description(path: str) -> PipelineJson:
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
    return cast(PipelineJson, spec)


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
@click.option("--period-ms", type=PERIOD_MS, default=RunParams.period_ms, show_default=True, help="Control period (ms).")
@click.option("--json", "json_path", help="Write the RSS figures as JSON.")
def soak(n: int, controller: str, seconds: float, period_ms: float, json_path: Optional[str]) -> None:
    """Run RC(n) on the engine for a while and report resident memory: after
    warm-up, at the end, and its trend (a line fitted to every period's RSS
    over the second half of the run, when the allocators have settled)."""
    writable(json_path, "--json")
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    trend = _Slope()

    def on_period(p: PeriodOutputJson) -> None:
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
    r = progress_run(rc(n), controller, periods, RunParams.warmup_periods, period_ms=period_ms, on_period_extra=on_period, keep_periods=10)
    s = r.summary
    slope_kib_per_min = trend.slope() * 60 / 1024
    console.print(
        f"RC({n}) under {controller}: {last['generated'] - first['generated']:.3g} packets after warm-up; "
        f"RSS {first['rss'] / 2**20:.1f} MiB after warm-up, {last['rss'] / 2**20:.1f} MiB at the end "
        f"({(last['rss'] - first['rss']) / 2**10:+.0f} KiB), trend {slope_kib_per_min:+.1f} KiB/min; "
        f"generated {s['generated']} = delivered {s['delivered']} + dropped {s['dropped']} + in flight {s['in_flight']}"
    )
    if json_path:
        write_replacing(json_path, json.dumps({"rss_after_warmup": first["rss"], "rss_at_end": last["rss"], "rss_slope_kib_per_min": slope_kib_per_min,
                                               "seconds": last["t_s"] - first["t_s"], "summary": s}, indent=1))


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
    table = new_table(f"NF cost models, batch sizes 1..{max_batch}", ["NF", "T0 ns", "T1 ns/pkt", "R²", "β=T1/(T0+T1)"])
    for name, f in sorted(report["nfs"].items()):
        table.add_row(name, f"{f['t0_ns']:.1f}", f"{f['t1_ns']:.2f}", f"{f['r2']:.3f}", f"{f['beta']:.3f}")
    console.print(table)
    if json_path:
        write_replacing(json_path, json.dumps(report, indent=1))
    console.print(f"profile saved to {profiles.save(report)}")
