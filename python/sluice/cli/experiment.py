"""`sluice experiment …` and `sluice train …`: the lab's experiments and training, run from the command line."""

from __future__ import annotations

import json
from typing import Any, Callable, Optional, Sequence, TypeVar

import click

from sluice import profiles
from sluice.cli.app import main
from sluice.cli.output import console, new_table
from sluice.cli.params import PERIOD_MS, PERIODS, RATE, WARMUP, Number
from sluice.errors import INTERRUPTED, Interrupted, Refused, one_line, writable, writable_folder
from sluice.files import write_replacing
from sluice.lab import results
from sluice.run_params import BACKEND_KIND_VALUES, SLO_STATISTIC_VALUES, RunParams


def _experiment_written(name: str, out: str, report: dict[str, Any], json_path: Optional[str], *, rows_in_json: bool = True, extra: Sequence[str] = ()) -> None:
    """Writes the experiment's JSON report to `json_path` (if given; without
    its flat rows unless `rows_in_json`) and says which files are in `out`."""
    files = [f"{name}.{ext}" for ext in ("json", "csv", "md", "png")] + list(extra)
    console.print(f"written: {out}/" + ", ".join(files))
    if json_path:
        try:
            write_replacing(json_path, json.dumps(report if rows_in_json else {k: v for k, v in report.items() if k != "rows"}, indent=1))
        except OSError as e:
            raise Refused(f"could not write --json {json_path!r}: {one_line(e)} (the files in {out}/ were written)") from None


@main.group()
def experiment() -> None:
    """Experiments that print the published figures beside their own."""


@experiment.command("static")
@click.option("--quick", is_flag=True, help="Short runs for CI-sized checks: 8 warm-up + 5 measured periods, 4 runs a controller (the paper: 100 + 200, one).")
@click.option("--warmup", type=WARMUP, help="Warm-up periods of every run (overrides the paper's 100 or --quick's).")
@click.option("--periods", type=PERIODS, help="Measured periods of every run (overrides the paper's 200 or --quick's).")
@click.option("--rounds", type=click.IntRange(1, 1000), help="Runs of every controller, in order and in reverse by turns (the paper: 1).")
@click.option("--period-ms", type=PERIOD_MS, help="Control period (ms; default 100).")
@click.option("--slo-statistic", type=click.Choice(SLO_STATISTIC_VALUES), help="The delay statistic each SLO bounds (the paper: p95).")
@click.option("--only", multiple=True, help="Run only these rows (rc16, l2l3-16, gw-16, l2l3-pcap-16, …).")
@click.option("--keep-disturbed", is_flag=True, help="Count every measured period in batch and rate, also those in which the machine slowed the worker's core (its core probe ran slow).")
@click.option("--backend", type=click.Choice(BACKEND_KIND_VALUES), default=RunParams.backend, show_default=True)
@click.option("--pcap", "pcap", help="The trace of the *L2L3(16, 32, 64) rows (l2l3-pcap-N; its destinations dealt to the flows) [default: a synthetic one].")
@click.option("--out", default="out/static", show_default=True, help="Folder for static.{json,csv,md,png}.")
@click.option("--json", "json_path", help="Also write the JSON report here.")
def experiment_static(quick: bool, warmup: Optional[int], periods: Optional[int], rounds: Optional[int], period_ms: Optional[float],
                      slo_statistic: Optional[str], only: tuple[str, ...], keep_disturbed: bool, backend: str, pcap: Optional[str], out: str,
                      json_path: Optional[str]) -> None:
    """The Batchy Table 2 grid under every controller, by the paper's protocol."""
    writable(json_path, "--json")
    writable_folder(out, "--out")
    profiles.ensure_measured()
    from pathlib import Path

    from sluice.lab import static

    settings = static.Settings.make(quick, backend, warmup, periods, period_ms, rounds, slo_statistic, keep_disturbed)
    report = static.run(Path(out), settings, list(only) or None, lambda msg: console.log(msg), pcap)
    console.print(static.protocol(settings, report["trace"]) + static.markdown(report["rows"]))
    for row, why in report["not_run"].items():
        console.print(f"not run: {row}: {why}")
    _experiment_written("static", out, report, json_path)


Command = TypeVar("Command", bound=Callable[..., None])


def _repeats_option() -> Callable[[Command], Command]:
    """`--repeats N`: runs of each measured point, the experiment's figure taken over them."""
    return click.option("--repeats", type=click.IntRange(min=1), help="Runs of each measured point [default: as --quick says, or the full run's].")


@experiment.command("reframer")
@click.option("--quick", is_flag=True, help="Traces of 1 and 8 segments, T_buff 16 and 64 µs, 3 periods of 100 ms a run, 2 runs a point instead of 3.")
@click.option("--pcap", "pcap", help="Replay this capture instead of synthetic traces.")
@click.option("--out", default="out/reframer", show_default=True, help="Folder for reframer.{json,csv,md,png} and the traces.")
@click.option("--json", "json_path", help="Also write the JSON report here.")
@_repeats_option()
def experiment_reframer(quick: bool, pcap: Optional[str], out: str, json_path: Optional[str], repeats: Optional[int]) -> None:
    """The Reframer paper's chain (flow stats → router → firewall → NAT) with and
    without a Reframer at T_buff 16..256 µs, on traces of 1..32 segments; beside
    projgrad's flow-oblivious buffers, both together, and T_buff set from the SLO."""
    writable(json_path, "--json")
    writable_folder(out, "--out")
    from pathlib import Path

    from sluice.lab import reframer

    report = reframer.run(Path(out), quick, lambda msg: console.log(msg), pcap, repeats)
    console.print(reframer.markdown(report["rows"]))
    _experiment_written("reframer", out, report, json_path)


def _quick_experiment(name: str, summary: str, quick_help: str, backend: Optional[str], repeats: bool = False) -> None:
    """Registers `sluice experiment NAME [--quick] [--backend] [--out] [--json]`
    for module sluice.lab.NAME (its `run(out, quick, backend, progress)`
    and `markdown(rows)`); without a default `backend`, no `--backend`, no
    profiles and `run(out, quick, progress)`. With `repeats`, a `--repeats`
    option passed on as `run(..., repeats=N)`."""

    def command(quick: bool, out: str, json_path: Optional[str], backend: Optional[str] = None, **more: Any) -> None:
        writable(json_path, "--json")
        writable_folder(out, "--out")
        import importlib
        from pathlib import Path

        module = importlib.import_module(f"sluice.lab.{name}")
        if backend is None:
            report = module.run(Path(out), quick, lambda msg: console.log(msg), **more)
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
        options.append(click.option("--backend", type=click.Choice(BACKEND_KIND_VALUES), default=backend, show_default=True))
    if repeats:
        options.append(_repeats_option())
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
                  "3 runs of 1 s per mode instead of 5 of 3 s.", None, repeats=True)
_quick_experiment("polling", "What each poll policy costs and gives: worker CPU, throughput, loss and delay from no load to overload, load steps, decision cost, sleep precision.",
                  "Loads 0, 1%, 50%, 120% and 3 periods of 100 ms a point instead of 8 loads and 5 of 200 ms.", None)
_quick_experiment("serve", "What operating a served pipeline costs its forwarding: scrapes, route updates, a 1 M-route bulk load, memory over a long run.",
                  "3 pairs of 3 s runs and 20 s of memory instead of 5 pairs of 6 s and 120 s.", None, repeats=True)
_quick_experiment("hosts", "Two Linux hosts talking through Sluice (AF_XDP, AF_PACKET) against through Linux's own forwarding: ping RTT and TCP rate (root).",
                  "2 runs of 2 s per router instead of 5 of 5 s.", None, repeats=True)
_quick_experiment("aqm", "A ping behind bulk TCP through an egress shaped to 100 Mbit/s, tail drop and FQ-CoDel, Sluice beside Linux (root, iperf3).",
                  "2 runs of 6 s per setup instead of 5 of 12 s.", None, repeats=True)
_quick_experiment("pspat", "The PSPAT paper's tests: arbiter decisions/s, throughput against clients, 10:1 shares under overload, a victim's latency.",
                  "Runs of 0.3 s, 3 repeats, instead of 1 s and 5.", None, repeats=True)
_quick_experiment("ecmp", "How an LPM's multipath route spreads 10 000 flows of each family over 4 weighted paths, and what removing one moves.",
                  "2 000 flows instead of 10 000.", None)
_quick_experiment("twfi", "The T-WFI of DRR, WF2Q+, QFQ and FIFO behind PSPAT's arbiter on a virtual clock, against the paper's bounds (eq. 1-3).",
                  "20 000 packets of the measured client instead of 200 000.", None)


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
    console.print(embedding.markdown(report["rows"], report))
    console.print(f"best heuristic of ours: {report['best_heuristic']}")
    _experiment_written("embedding", out, report, json_path, rows_in_json=False, extra=("mgw-10.lgf", "mgw-40.lgf"))


@experiment.command("failover")
@click.option("--rate", "rate_pps", type=RATE, default=20e3, show_default=True, help="Offered rate of every flow (pkt/s).")
@click.option("--period-ms", type=PERIOD_MS, default=RunParams.period_ms, show_default=True, help="Control period (ms).")
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
@click.option("--check", is_flag=True, help="Run nothing: list the sections of OUT/RESULTS.md that are stale (a warning; exit 0).")
def experiment_all(quick: bool, only: tuple[str, ...], out: str, runs_dir: str, readme: Optional[str], check: bool) -> None:
    """Every experiment at the README's settings: RESULTS.md, plots and the headline figures."""
    from pathlib import Path

    if check:
        stale = results.check((Path(out) / "RESULTS.md").read_text() if (Path(out) / "RESULTS.md").exists() else "")
        for line in stale:
            click.echo(f"warning: {out}/RESULTS.md: {line}", err=True)
        console.print(f"{len(stale)} of {len(results.CATALOG)} sections stale" if stale else "every section is current")
        return

    # Refused now, not after an hour of experiments.
    writable_folder(out, "--out")
    writable_folder(runs_dir, "--runs")
    writable(readme, "--readme")
    # The commit the figures are of: before they run (their own files then dirty the tree).
    made = results.stamp(quick)
    names = tuple(e.name for e in results.CATALOG if not only or e.name in only)
    for entry in results.CATALOG:
        if entry.name not in names:
            continue
        args = ["experiment", entry.name, *(entry.quick_args if quick else entry.args), "--out", str(Path(runs_dir) / entry.name)]
        console.rule(entry.command(quick))
        # A stopped experiment (Ctrl-C, SIGTERM) comes back as its exit status: the rest are not run.
        if main.main(args=args, prog_name="sluice", standalone_mode=False) == INTERRUPTED:
            click.echo(f"sluice: stopped in {entry.name}; RESULTS.md not rewritten (finished experiments are in {runs_dir})", err=True)
            raise Interrupted()
    ran = results.write(Path(out), Path(runs_dir), quick, names, made)
    if readme:
        results.refresh_readme(Path(readme), Path(out) / "RESULTS.md", ran, quick)
    console.print(f"written: {out}/RESULTS.md and {out}/results/" + (f"; headline figures in {readme}" if readme else ""))


@main.group()
def train() -> None:
    """Train the models Sluice's learned parts use."""


@train.command("polling")
@click.option("--iterations", type=click.IntRange(1, 1000), default=40, show_default=True, help="Training iterations, each a run of every scenario.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=1, show_default=True, help="Seed of the exploration draws and the trees.")
@click.option("--trainings", type=click.IntRange(1, 10), default=1, show_default=True,
              help="Trainings from seeds SEED, SEED+1, …: the first's model is kept; how far apart their sleeps end is reported.")
@click.option("--quick", is_flag=True, help="Short runs (2 periods of 50 ms a scenario).")
@click.option("--model", "model_path", default="out/polling-model.json", show_default=True,
              help="Where to write the model (python/sluice/models/polling.json is the one shipped).")
@click.option("--out", default="out", show_default=True, help="Folder for polling-training.{json,png}.")
def train_polling(iterations: int, seed: int, trainings: int, quick: bool, model_path: str, out: str) -> None:
    """Train the learned poll policy by trial on the paper's six load
    scenarios, a quarter load and 90%: each iteration runs them under the current model, scores each
    run and fits the next model to sleeps drawn around each scenario's best."""
    from pathlib import Path

    from sluice.lab import polling_training

    writable_folder(out, "--out")
    writable(model_path, "--model")
    seeds = [seed + i for i in range(trainings)]
    result = polling_training.train_seeds(Path(out), Path(model_path), iterations, seeds, quick, lambda m: console.print(f"[dim]{m}[/dim]"))
    report = result["reports"][0]
    table = new_table(f"learned polling after {iterations} iterations (saturation {report['saturation_mpps']} Mpps)",
                   ["Mbit/s", "best sleep µs", "settled", "reward", "CPU %", "p99 µs"])
    last = report["history"][-1]["runs"]
    for s, mbps in enumerate(report["scenarios_mbps"]):
        settled = {True: "yes", False: "no", None: "never idle"}[report["settled"][s]]
        table.add_row(str(mbps), f"{report['best_us'][s]:.1f}", settled,
                      f"{last[s]['reward']:.1f}", f"{last[s]['cpu_pct']:.1f}", f"{last[s]['p99_us']:.1f}")
    console.print(table)
    if trainings > 1:
        apart = new_table(f"sleeps at the last iteration of {trainings} trainings (seeds {seeds[0]}–{seeds[-1]})",
                          ["Mbit/s", *[f"seed {s} µs" for s in seeds], "spread %"])
        for c in result["convergence"]:
            apart.add_row(str(c["mbps"]), *[f"{us:.1f}" for us in c["slept_us"]], f"{100 * c['spread']:.1f}")
        console.print(apart)
    console.print(f"written: {model_path}, {out}/polling-training.json, {out}/polling-training.png, {out}/polling-convergence.json")
