"""`sluice serve` keeps a pipeline up until SIGTERM or Ctrl-C, changed live
through its control API; `sluice ctl` speaks that API."""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
from typing import Any, Optional, Union

import click

from sluice import _core, profiles
from sluice.cli.app import main
from sluice.cli.output import console, summary_tables
from sluice.cli.params import PERIOD_MS, PERIODS, LinkRate, Number, RouterPort, RouteVia
from sluice.client import ApiError, Client
from sluice.errors import Refused, writable
from sluice.files import write_replacing
from sluice.pipeline import POLL_POLICIES, Pipeline
from sluice.pipelines import PIPELINES
from sluice.router import router
from sluice.result import RunResult
from sluice.run_params import SLO_STATISTIC_VALUES, RunParams


def default_run_dir() -> str:
    """Where `serve` keeps its socket and report, and where `ctl` looks,
    unless told: $XDG_RUNTIME_DIR/sluice (the user's private runtime
    folder), else /run/sluice for root, else a folder of the user's own
    under the temporary folder."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "sluice")
    if os.geteuid() == 0:
        return "/run/sluice"
    return os.path.join(tempfile.gettempdir(), f"sluice-{os.getuid()}")


def _load(description: str, n: int, rx_port: Optional[str], tx_port: Optional[str],
          interfaces: tuple[tuple[str, list[str]], ...] = (), routes: tuple[tuple[str, str], ...] = (), icmp_errors: bool = True) -> Pipeline:
    """DESCRIPTION as `serve` takes it: a JSON description, a Python file
    that sets `pipeline` to a `sluice.Pipeline`, a built-in family, or
    `router` between the `interfaces` (port, addresses) with `routes`
    (`icmp_errors`: see `sluice.router.router`)."""
    if (interfaces or routes or not icmp_errors) and description != "router":
        raise Refused("--interface, --route and --no-icmp-errors make the router: give `router` as the description")
    if description == "router":
        try:
            return router(interfaces, routes, icmp_errors=icmp_errors)
        except ValueError as e:
            raise Refused(f"router: {e}") from None
    if description.endswith(".json"):
        from sluice.cli.run import _read_description

        pipeline = Pipeline.from_spec(_read_description(description))
    elif description.endswith(".py"):
        built = runpy.run_path(description).get("pipeline")
        if not isinstance(built, Pipeline):
            raise Refused(f"{description}: sets no `pipeline` to a sluice.Pipeline")
        pipeline = built
    elif description in PIPELINES:
        family = PIPELINES[description]
        pipeline = family(n) if description not in ("vrf", "mgw") else family(2, n)
    else:
        raise Refused(f"unknown pipeline '{description}' (a .json or .py description, or one of {', '.join(PIPELINES)})")
    try:
        pipeline.use_ports(rx_port, tx_port)
    except ValueError as e:
        raise Refused(f"--rx: {e}") from None
    return pipeline


@main.command()
@click.argument("description")
@click.option("--run-dir", envvar="SLUICE_RUN_DIR", help="Where the control socket sluice.sock and the report are made: a folder of yours "
              "that no one else can write (made 0700 if missing). Default: $SLUICE_RUN_DIR, else $XDG_RUNTIME_DIR/sluice, /run/sluice for root, "
              "or sluice-UID in the temporary folder.")
@click.option("--n", "n", type=click.IntRange(1, 4096), default=16, show_default=True, help="Size of a built-in pipeline family.")
@click.option("--rx", "rx_port", metavar="BACKEND:IFACE", help="Receive on this port instead of the built-in source.")
@click.option("--tx", "tx_port", metavar="BACKEND:IFACE", help="Transmit at every egress on this port.")
@click.option("--interface", "interfaces", type=RouterPort(), multiple=True,
              help="`router`: a port and its interface's addresses (af_packet:sw1=10.0.1.254/24,2001:db8:1::fe/64); two or more.")
@click.option("--route", "routes", type=RouteVia(), multiple=True, help="`router`: a route through a gateway (10.9.0.0/16=10.0.2.100); repeatable.")
@click.option("--no-icmp-errors", is_flag=True, help="`router`: drop expired and unroutable packets unanswered (no time exceeded or "
              "destination unreachable; packets too big are still answered).")
@click.option("--controller", type=click.Choice(_core.controllers()), default="null", show_default=True, help="The controller to start with.")
@click.option("--period-ms", type=PERIOD_MS, default=RunParams.period_ms, show_default=True, help="Control period (ms).")
@click.option("--slo-statistic", type=click.Choice(SLO_STATISTIC_VALUES), default=RunParams.slo_statistic, show_default=True)
@click.option("--delta", type=Number(0, 0.5, max_open=True), default=RunParams.delta, show_default=True, help="δ of the SLO-aware controllers.")
@click.option("--listen", metavar="HOST:PORT", help="Also listen on this TCP address; requests must carry the token of --token-file.")
@click.option("--token-file", type=click.Path(exists=True, dir_okay=False), help="The token TCP requests carry (Authorization: Bearer TOKEN).")
@click.option("--keep-periods", type=PERIODS, default=RunParams.keep_periods, show_default=True, help="The most recent periods the final report keeps.")
@click.option("--no-timing", is_flag=True, help="Turn off delay histograms and busy-time measurement.")
@click.option("--json", "json_path", help="Write the final report here (default: RUN_DIR/report.json).")
@click.option("--state", "state_path", metavar="FILE", help="Keep the description in force in FILE (what `ctl save` writes), rewritten after "
              "every change; where FILE is there at the start, serve it and its controller instead of DESCRIPTION. Its folder, as RUN_DIR, "
              "must be yours and writable by no one else.")
def serve(description: str, run_dir: Optional[str], n: int, rx_port: Optional[str], tx_port: Optional[str],
          interfaces: tuple[tuple[str, list[str]], ...], routes: tuple[tuple[str, str], ...], no_icmp_errors: bool, controller: str, period_ms: float,
          slo_statistic: str, delta: float, listen: Optional[str], token_file: Optional[str], keep_periods: int, no_timing: bool,
          json_path: Optional[str], state_path: Optional[str]) -> None:
    """Serve DESCRIPTION until SIGTERM or Ctrl-C, then drain and write the report.

    The control API (docs/api/openapi.json) listens on RUN_DIR/sluice.sock;
    `sluice ctl --run-dir RUN_DIR …` and `sluice.Client(RUN_DIR)` speak it.
    Each change made is printed on stderr as one line."""
    if (listen is None) != (token_file is None):
        raise Refused("--listen and --token-file go together: TCP requests must carry a token")
    run_dir = _core.prepare_run_dir(run_dir or default_run_dir())
    json_path = json_path or os.path.join(run_dir, "report.json")
    writable(json_path, "--json")
    token = None
    if token_file is not None:
        with open(token_file, encoding="utf-8") as f:
            token = f.read().strip()
    profiles.ensure_measured()
    saved = _core.read_state(state_path) if state_path is not None else None
    if saved is None:
        pipeline = _load(description, n, rx_port, tx_port, interfaces, routes, icmp_errors=not no_icmp_errors)
    else:
        pipeline, controller = _saved(saved, state_path or "")
        console.print(f"serving the state in {state_path}, not {description}")
    console.print(f"serving {pipeline.name} under {controller}: control API on {os.path.join(run_dir, 'sluice.sock')}"
                  f"{f' and {listen}' if listen else ''}; SIGTERM or Ctrl-C stops it", style="bold")
    sys.stdout.flush()
    params = RunParams(period_ms=period_ms, slo_statistic=slo_statistic, delta=delta, timing=not no_timing, keep_periods=keep_periods)
    text = _core.serve(pipeline.to_json(), run_dir, controller, json.dumps(params.spec()), listen=listen, token=token, state=state_path)
    result = RunResult(json.loads(text))
    # A daemon's report: a link in its place is replaced, never followed.
    write_replacing(json_path, result.to_json(), follow_links=False)
    console.print(*summary_tables([result]))
    s = result.summary
    console.print(f"stopped after {result.data['periods_dropped'] + len(result.periods)} periods; "
                  f"generated {s['generated']} = delivered {s['delivered']} + dropped {s['dropped']} + in flight {s['in_flight']}; "
                  f"report: {json_path}")


def _saved(text: str, path: str) -> tuple[Pipeline, str]:
    """The pipeline and the controller of a state file's `text` (as `GET /v1/pipeline` answers)."""
    try:
        state = json.loads(text)
    except json.JSONDecodeError as e:
        raise Refused(f"state file {path}: not JSON: {e}") from None
    if not isinstance(state, dict) or not isinstance(state.get("description"), dict) or not isinstance(state.get("controller"), str):
        raise Refused(f"state file {path}: not a saved state (an object with a `description` and a `controller`, as `sluice ctl save` writes)")
    if state["controller"] not in _core.controllers():
        raise Refused(f"state file {path}: controller: unknown controller '{state['controller']}' (known: {', '.join(_core.controllers())})")
    return Pipeline.from_spec(state["description"]), state["controller"]


@main.group()
@click.option("--run-dir", envvar="SLUICE_RUN_DIR", help="The served pipeline's run directory (default: $SLUICE_RUN_DIR, else as `serve`'s).")
@click.option("--url", metavar="http://HOST:PORT", help="Its TCP listener instead (with --token-file).")
@click.option("--token-file", type=click.Path(exists=True, dir_okay=False), help="The TCP listener's token.")
@click.pass_context
def ctl(context: click.Context, run_dir: Optional[str], url: Optional[str], token_file: Optional[str]) -> None:
    """Read and change a running `sluice serve`."""
    if url is None:
        run_dir = run_dir or default_run_dir()
    elif context.get_parameter_source("run_dir") == click.core.ParameterSource.COMMANDLINE:
        raise Refused("give the served pipeline's --run-dir, or its --url with --token-file, not both")
    else:
        run_dir = None
    token = None
    if token_file is not None:
        with open(token_file, encoding="utf-8") as f:
            token = f.read().strip()
    context.obj = Client(run_dir, url=url, token=token, caller=f"ctl:{os.environ.get('USER', os.getuid())}")


def _call(context: click.Context, what: str, *args: Any, **kw: Any) -> Any:
    """Calls the client's `what`, turning a refusal or an absent server into one line."""
    client: Client = context.obj
    try:
        return getattr(client, what)(*args, **kw)
    except ApiError as e:
        raise Refused(e.message) from None
    except (FileNotFoundError, ConnectionRefusedError) as e:
        raise Refused(f"no sluice serve answers there: {e}") from None


@ctl.command("show")
@click.argument("what", type=click.Choice(["pipeline", "flows", "modules", "workers", "controller", "changes", "egress"]))
@click.pass_context
def ctl_show(context: click.Context, what: str) -> None:
    """Print WHAT as JSON."""
    click.echo(json.dumps(_call(context, what), indent=1))


@ctl.command("save")
@click.argument("path", metavar="FILE")
@click.pass_context
def ctl_save(context: click.Context, path: str) -> None:
    """Write the description in force and the controller to FILE, which
    `sluice serve --state FILE` serves from."""
    writable(path, "FILE")
    write_replacing(path, json.dumps(_call(context, "pipeline")))
    click.echo(f"saved to {path}")


@ctl.command("transaction")
@click.argument("path", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@click.pass_context
def ctl_transaction(context: click.Context, path: str) -> None:
    """Make the changes of FILE at one period boundary, all or none: a
    JSON list of {"method", "path", "body"}, each a request another
    endpoint takes alone (PUT /v1/flows/flow0/slo {"slo_us": 200}, …)."""
    try:
        with open(path, encoding="utf-8") as f:
            changes = json.load(f)
    except json.JSONDecodeError as e:
        raise Refused(f"{path}: not JSON: {e}") from None
    if not isinstance(changes, list) or not all(isinstance(c, dict) for c in changes):
        raise Refused(f"{path}: not a list of changes (each {{\"method\", \"path\", \"body\"}})")
    click.echo(_call(context, "request", "POST", "/v1/transactions", {"changes": changes})["applied"])


@ctl.command("metrics")
@click.pass_context
def ctl_metrics(context: click.Context) -> None:
    """Print the Prometheus exposition."""
    click.echo(_call(context, "metrics"), nl=False)


@ctl.command("config")
@click.argument("module")
@click.option("--set", "fields_path", type=click.Path(exists=True, dir_okay=False), help="Replace the configuration with this JSON file's.")
@click.pass_context
def ctl_config(context: click.Context, module: str, fields_path: Optional[str]) -> None:
    """Print an NF's configuration, or replace it whole (its tables rebuilt and swapped in)."""
    if fields_path is None:
        click.echo(json.dumps(_call(context, "config", module), indent=1))
        return
    with open(fields_path, encoding="utf-8") as f:
        click.echo(_call(context, "set_config", module, json.load(f)))


@ctl.command("slo")
@click.argument("flow")
@click.argument("slo_us", metavar="US|none")
@click.pass_context
def ctl_slo(context: click.Context, flow: str, slo_us: str) -> None:
    """Set FLOW's SLO (µs), or remove it (none)."""
    click.echo(_call(context, "set_slo", flow, None if slo_us == "none" else _number(slo_us, "US")))


@ctl.command("add-flow")
@click.argument("flow")
@click.option("--path", "path", required=True, metavar="M1,M2,…", help="Its modules from a source to a sink, comma-separated.")
@click.option("--slo", "slo_us", metavar="US", help="Its SLO (µs); none by default.")
@click.option("--prefix", "prefixes", nargs=2, multiple=True, metavar="SOURCE PREFIX", help="Packets of SOURCE (a port or capture) to PREFIX are its; repeatable.")
@click.option("--five-tuple", "tuples", nargs=6, multiple=True, metavar="SOURCE SRC DST PROTO SPORT DPORT",
              help="Packets of SOURCE with this exact 5-tuple are its (they go before any prefix); repeatable.")
@click.pass_context
def ctl_add_flow(context: click.Context, flow: str, path: str, slo_us: Optional[str], prefixes: tuple[tuple[str, str], ...],
                 tuples: tuple[tuple[str, str, str, str, str, str], ...]) -> None:
    """Add FLOW along --path, with the rules that sort packets into it."""
    rules: list[dict[str, Any]] = [{"source": source, "prefix": prefix} for source, prefix in prefixes]
    for source, src, dst, proto, sport, dport in tuples:
        number = proto if not proto.isdigit() else int(proto)
        five = {"src": src, "dst": dst, "proto": number, "sport": int(_number(sport, "SPORT")), "dport": int(_number(dport, "DPORT"))}
        rules.append({"source": source, "five_tuple": five})
    slo = None if slo_us is None else _number(slo_us, "US")
    click.echo(_call(context, "add_flow", flow, path.split(","), slo, rules))


@ctl.command("remove-flow")
@click.argument("flow")
@click.pass_context
def ctl_remove_flow(context: click.Context, flow: str) -> None:
    """Remove FLOW: its rules first; its packets in flight are counted where they end."""
    click.echo(_call(context, "remove_flow", flow))


@ctl.command("controller")
@click.argument("name", type=click.Choice(_core.controllers()))
@click.pass_context
def ctl_controller(context: click.Context, name: str) -> None:
    """Switch the controller."""
    click.echo(_call(context, "set_controller", name))


@ctl.command("trigger")
@click.argument("module")
@click.argument("trigger", metavar="PKT|auto")
@click.pass_context
def ctl_trigger(context: click.Context, module: str, trigger: str) -> None:
    """Pin MODULE's trigger at PKT, or hand it back to the controller (auto)."""
    click.echo(_call(context, "pin_trigger", module, None if trigger == "auto" else int(_number(trigger, "PKT"))))


@ctl.command("move")
@click.argument("module")
@click.argument("worker", type=click.IntRange(0))
@click.pass_context
def ctl_move(context: click.Context, module: str, worker: int) -> None:
    """Move MODULE to WORKER, with its buffered packets and state."""
    click.echo(_call(context, "move", module, worker))


@ctl.command("weight")
@click.argument("module")
@click.argument("weight", type=click.IntRange(1))
@click.pass_context
def ctl_weight(context: click.Context, module: str, weight: int) -> None:
    """Set MODULE's weighted-fair weight."""
    click.echo(_call(context, "set_weight", module, weight))


@ctl.command("egress-weight")
@click.argument("egress_class", metavar="CLASS")
@click.argument("weight", type=click.IntRange(1))
@click.pass_context
def ctl_egress_weight(context: click.Context, egress_class: str, weight: int) -> None:
    """Set a scheduled egress CLASS's weight: its share of the link against the others'."""
    click.echo(_call(context, "set_egress_weight", egress_class, weight))


@ctl.command("egress-codel")
@click.argument("egress_class", metavar="CLASS")
@click.option("--target-us", type=click.IntRange(1), help="The sojourn time it keeps the queue to (µs).")
@click.option("--interval-us", type=click.IntRange(1), help="How long it waits above the target before it acts (µs).")
@click.option("--ecn/--no-ecn", default=None, help="Mark ECN-capable packets instead of dropping them.")
@click.pass_context
def ctl_egress_codel(context: click.Context, egress_class: str, target_us: Optional[int], interval_us: Optional[int],
                     ecn: Optional[bool]) -> None:
    """Change the CoDel of a scheduled egress CLASS that has CoDel or FQ-CoDel; what is not given stays."""
    click.echo(_call(context, "set_egress_codel", egress_class, target_us, interval_us, ecn))


@ctl.command("link")
@click.argument("rate", type=LinkRate(), metavar="RATE")
@click.pass_context
def ctl_link(context: click.Context, rate: float) -> None:
    """Set the scheduled egress's link RATE (bit/s, or 1Gbit, 500Mbit)."""
    click.echo(_call(context, "set_link_rate", rate))


@ctl.command("egress-parent")
@click.argument("parent")
@click.argument("rate", type=LinkRate(), metavar="RATE")
@click.option("--ceil", type=LinkRate(), help="The most it may reach by borrowing (bit/s, or 1Gbit; default: the link's rate).")
@click.pass_context
def ctl_egress_parent(context: click.Context, parent: str, rate: float, ceil: Optional[float]) -> None:
    """Set a class-tree PARENT's RATE (bit/s, or 100Mbit) and the ceiling it may borrow up to."""
    click.echo(_call(context, "set_egress_parent", parent, rate, ceil))


@ctl.command("rate")
@click.argument("module")
@click.argument("rate_pps", metavar="PPS|unlimited")
@click.option("--stream", type=click.IntRange(0), default=0, show_default=True)
@click.pass_context
def ctl_rate(context: click.Context, module: str, rate_pps: str, stream: int) -> None:
    """Set the rate limit (pkt/s) of a built-in source's stream, or lift it (unlimited)."""
    click.echo(_call(context, "set_rate", module, None if rate_pps == "unlimited" else _number(rate_pps, "PPS"), stream))


@ctl.command("worker")
@click.argument("worker", type=click.IntRange(0))
@click.argument("state", type=click.Choice(["up", "down"]))
@click.pass_context
def ctl_worker(context: click.Context, worker: int, state: str) -> None:
    """Take WORKER down (as a failed core) or bring it back up."""
    click.echo(_call(context, "set_worker_down", worker, state == "down"))


@ctl.command("poll")
@click.argument("worker", type=click.IntRange(0))
@click.argument("policy", type=click.Choice(list(POLL_POLICIES)))
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="A setting of the policy (max_sleep_us=100); repeatable.")
@click.pass_context
def ctl_poll(context: click.Context, worker: int, policy: str, settings: tuple[str, ...]) -> None:
    """Put WORKER under a poll policy from its next round."""
    fields: dict[str, Any] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep:
            raise Refused(f"--set {setting!r}: expected KEY=VALUE")
        fields[key] = value if key == "model" else _number(value, key)
    click.echo(_call(context, "set_poll", worker, policy, **fields))


@ctl.group("neigh")
def ctl_neigh() -> None:
    """An interface's neighbours: show them, set one by hand, remove one."""


@ctl_neigh.command("show")
@click.argument("interface", required=False)
@click.pass_context
def ctl_neigh_show(context: click.Context, interface: Optional[str]) -> None:
    """Print each interface's neighbours as `ip neigh` does (one interface's with INTERFACE), then its counters."""
    shown = [i for i in _call(context.parent, "neighbors") if interface in (None, i["interface"])]  # type: ignore[arg-type]
    if interface is not None and not shown:
        raise Refused(f"no interface named '{interface}'")
    for i in shown:
        for e in i["entries"]:
            click.echo(f"{e['address']} dev {i['interface']} lladdr {e['mac']} {e['state'].upper()}")
        counters = ", ".join(f"{k} {v}" for k, v in i["counters"].items())
        click.echo(f"# {i['interface']} ({i['mac']}, mtu {i['mtu']}): {len(i['entries'])} entries; {counters}")


@ctl_neigh.command("add")
@click.argument("interface")
@click.argument("address")
@click.argument("mac")
@click.pass_context
def ctl_neigh_add(context: click.Context, interface: str, address: str, mac: str) -> None:
    """Set ADDRESS on INTERFACE at MAC (a static entry)."""
    click.echo(_call(context.parent, "add_neighbor", interface, address, mac))  # type: ignore[arg-type]


@ctl_neigh.command("del")
@click.argument("interface")
@click.argument("address")
@click.pass_context
def ctl_neigh_del(context: click.Context, interface: str, address: str) -> None:
    """Remove INTERFACE's entry of ADDRESS."""
    click.echo(_call(context.parent, "remove_neighbor", interface, address))  # type: ignore[arg-type]


@ctl.group("trace")
def ctl_trace() -> None:
    """Follow packets through the running graph, hop by hop, as VPP's `trace add` does."""


@ctl_trace.command("add")
@click.argument("module")
@click.argument("count", type=click.IntRange(1, 1000))
@click.option("--filter", "bpf_filter", metavar="BPF", help="Only packets this tcpdump-style filter takes ('icmp', 'tcp port 80', …).")
@click.pass_context
def ctl_trace_add(context: click.Context, module: str, count: int, bpf_filter: Optional[str]) -> None:
    """Follow the next COUNT packets to reach MODULE (replacing any trace)."""
    click.echo(_call(context.parent, "trace", module, count, bpf_filter))  # type: ignore[arg-type]


@ctl_trace.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@click.pass_context
def ctl_trace_show(context: click.Context, as_json: bool) -> None:
    """Print where each traced packet went: per hop, the time since its
    arrival, the worker and the module, then the gate it left by or how it ended."""
    shown = _call(context.parent, "trace_records")  # type: ignore[arg-type]
    if as_json:
        click.echo(json.dumps(shown, indent=1))
        return
    if shown["trace"] is None:
        raise Refused("no trace is attached: `sluice ctl trace add MODULE COUNT` attaches one")
    click.echo(f"trace of {shown['trace']}: {len(shown['packets'])} packets so far")
    for p in shown["packets"]:
        click.echo(f"\nPacket {p['number'] + 1} ({p['len']} bytes): {p['summary']}")
        for h in p["hops"]:
            way = {"gate": f"-> {h['detail']}", "dropped": f"dropped: {h['detail']}", "kept": "kept by the NF", "sent": "sent"}[h["way"]]
            click.echo(f"  {h['since_arrival_us']:10.3f} µs  worker {h['worker']}  {h['module']:<20} {way}")
        if p["hops_left_out"]:
            click.echo(f"  … {p['hops_left_out']} hops more")


@ctl_trace.command("clear")
@click.pass_context
def ctl_trace_clear(context: click.Context) -> None:
    """End the trace."""
    click.echo(_call(context.parent, "end_trace"))  # type: ignore[arg-type]


@ctl.command("capture")
@click.argument("at", metavar="MODULE[:GATE]")
@click.argument("name", metavar="NAME")
@click.option("--count", type=click.IntRange(1, 1_000_000), default=1000, show_default=True, help="Packets to write.")
@click.option("--filter", "bpf_filter", metavar="BPF", help="Only packets this tcpdump-style filter takes.")
@click.pass_context
def ctl_capture(context: click.Context, at: str, name: str, count: int, bpf_filter: Optional[str]) -> None:
    """Write the next packets to reach MODULE (or leave it by GATE, a name
    or number) to NAME, a new pcap file in the server's run directory,
    while the pipeline runs; the server logs when it is written."""
    module, _, gate = at.partition(":")
    click.echo(_call(context, "capture", module, name, count, (int(gate) if gate.isdigit() else gate) or None, bpf_filter))


@ctl.command("end-captures")
@click.pass_context
def ctl_end_captures(context: click.Context) -> None:
    """End every capture (what each took stays in its file)."""
    click.echo(_call(context, "end_captures"))


@ctl.command("routes")
@click.argument("module")
@click.option("--add", "adds", nargs=2, multiple=True, metavar="PREFIX GATE", help="Add a route, or replace the one of its prefix; GATE a number or the gate's name; repeatable.")
@click.option("--delete", "deletes", multiple=True, metavar="PREFIX", help="Delete a route; repeatable.")
@click.option("--file", "path", type=click.Path(exists=True, dir_okay=False), help='Routes in bulk: a JSON file {"add": [[PREFIX, GATE], …], "delete": [PREFIX, …]}.')
@click.pass_context
def ctl_routes(context: click.Context, module: str, adds: tuple[tuple[str, str], ...], deletes: tuple[str, ...], path: Optional[str]) -> None:
    """Add, replace and delete an LPM's routes, all in one change."""
    add: list[tuple[str, Union[int, str]]] = [(prefix, int(gate) if gate.isdigit() else gate) for prefix, gate in adds]
    delete = list(deletes)
    if path is not None:
        with open(path, encoding="utf-8") as f:
            bulk = json.load(f)
        if not isinstance(bulk, dict):
            raise Refused(f"{path}: expected an object with 'add' and 'delete'")
        add += [(str(p), g) for p, g in bulk.get("add", [])]
        delete += [str(p) for p in bulk.get("delete", [])]
    if not add and not delete:
        raise Refused("nothing to change: give --add, --delete or --file")
    click.echo(_call(context, "routes", module, add=add, delete=delete))


def _number(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise Refused(f"{name}: '{text}' is not a number") from None
