"""What the `sluice` command prints and writes of a run: its progress line,
its summary tables, and the files asked for."""

from __future__ import annotations

import shutil
import sys
from typing import Any, Callable, Optional, Sequence

from rich import box
from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from sluice import _core
from sluice.errors import Refused, one_line, unwritable
from sluice.outputs import DropsJson, PeriodOutputJson
from sluice.pipeline import Pipeline
from sluice.result import RunResult

#: Wide enough for the summary table when output is not a terminal (CI logs, pipes).
console = Console(width=None if sys.stdout.isatty() else max(132, shutil.get_terminal_size().columns))
#: Warnings and the steps of long work, on standard error.
warnings = Console(stderr=True, width=None if sys.stderr.isatty() else max(132, shutil.get_terminal_size().columns))


def outputs_to_write(*outputs: tuple[Optional[str], str]) -> None:
    """Checks the files a command writes when its work is done (path,
    option) before it starts: refuses when none of those asked for can be
    written (the work would be lost), and otherwise warns of each that
    cannot — the command writes the others and fails at its end naming it."""
    asked = [(path, what) for path, what in outputs if path]
    reasons = [reason for path, what in asked if (reason := unwritable(path, what)) is not None]
    if asked and len(reasons) == len(asked):
        raise Refused("; ".join(reasons))
    for reason in reasons:
        warnings.print(f"warning: {reason}: the other files are written when the work is done", style="yellow")


#: Modules from which a run says how long it will take and shows each step
#: on standard error, terminal or not: its checks and start take seconds.
LARGE_MODULES = 5_000
#: What checking and starting a pipeline took here (s per module), and its
#: report each period (s per module): mgw(64, 250), 96 147 modules, 25 s and 8 s.
START_S_PER_MODULE, PERIOD_S_PER_MODULE = 2.6e-4, 8e-5


def progress_run(
    pipeline: Pipeline,
    controller: str,
    periods: int,
    warmup: int,
    on_period_extra: Optional[Callable[[PeriodOutputJson], None]] = None,
    **kw: Any,
) -> RunResult:
    total = periods + warmup
    try:
        modules, flows = len(pipeline.modules()), len(pipeline.flows())
    except (TypeError, KeyError):
        modules = flows = 0  # a malformed description: the core names what is wrong with it
    # (One the core refuses is refused, in one line, before any of this is said.)
    large = LARGE_MODULES <= modules <= _core.limits()["max_modules"] and flows <= _core.limits()["max_flows"]
    if large:
        start, each = modules * START_S_PER_MODULE, modules * PERIOD_S_PER_MODULE
        warnings.print(f"{pipeline.name}: {modules} modules and {flows} flows: about {start:.0f} s to check and start, "
                       f"then about {each:.0f} s a period for its report ({start + total * each:.0f} s in all); each period is shown as it ends", soft_wrap=True)

    def on_period(p: PeriodOutputJson) -> None:
        progress.update(task, advance=1, last=_period_line(p))
        if large and not console.is_terminal:
            warnings.print(f"period {p['period'] + 1} of {total}: {_period_line(p)}", markup=False)
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


def _period_line(p: PeriodOutputJson) -> str:
    """The last period in a few words, for the progress line of a long run:
    its rate, mean batch and the worst p95 delay of its flows; the packets
    lost so far (HA copies removed by design are not lost)."""
    worst = max((f["p95_us"] for f in p["flows"].values() if f["delivered"]), default=0.0)
    lost = _lost(p["totals"]["drops"])
    count = next((f"{lost / unit:.3g}{prefix}" for unit, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")) if lost >= unit), str(lost))
    return f"{p['rate_pps'] / 1e6:.3g} Mpps · batch {p['mean_batch']:.1f} · p95 ≤ {worst:.4g} µs · lost {count}"


def new_table(title: str, columns: Sequence[str], wrapping: Sequence[str] = ()) -> Table:
    """A table of `columns`, right-aligned but the `wrapping` ones (left-
    aligned lists that wrap), with rules under the title and header only.
    Headers take a line a word and cells are never cut, so a column is as
    wide as its widest word or cell and a table fits a narrow terminal."""
    table = Table(title=title, box=box.SIMPLE_HEAVY, collapse_padding=True, pad_edge=False)
    for name in columns:
        wraps = name in wrapping
        table.add_column(name if wraps else name.replace(" ", "\n"), justify="left" if wraps else "right", no_wrap=not wraps)
    return table


def _lost(drops: DropsJson) -> int:
    """Packets lost among `drops` (by cause): all but HA copies removed by design."""
    return sum(n for cause, n in drops.items() if cause != "duplicates" and isinstance(n, int))


#: Why packets were dropped, as a run's summary counts them, in words.
DROP_CAUSES = {"nf": "by NFs", "queue_full": "at full queues", "egress_full": "at full egresses (a port's ring or a class of the link)", "aqm": "by queue management (CoDel)",
               "worker_down": "at a down worker", "duplicates": "HA copies whose twin passed"}


def summary_tables(results: list[RunResult], focus_flow: Optional[str] = None) -> list[RenderableType]:
    """The runs' rates, batches and delays over the measured periods, their
    packets over the whole run (two tables, each narrow enough for an
    80-column terminal), and for each run that dropped packets, why, and
    which flows lost packets."""
    backend = results[0].data["backend"] if results else ""
    pipeline = results[0].data["pipeline"] if results else ""
    # Workers that sleep (a poll policy other than busy): how much of their cores they used.
    sleeping = any(w["waits"] for r in results for p in r.periods for w in p["workers"])
    rates = new_table(f"{pipeline} on the {backend}: measured periods",
                   ["controller", "Mpps", "× null", "mean batch", "viol. %"] + [f"{focus_flow} p95 µs (SLO)"] * bool(focus_flow) + ["CPU %"] * sleeping)
    packets = new_table(f"{pipeline} on the {backend}: packets, whole run", ["controller", "generated", "delivered", "dropped", "in flight", "missed at rx", "lossless"])
    drops = []
    base = next((r.summary["rate_pps"] for r in results if r.controller == "null"), None)
    for r in results:
        s = r.summary
        # A rate the simulator's model bounds is no rate: "—", and why below.
        rated = r.rate_bound is None and base is not None and not any(x.rate_bound for x in results if x.controller == "null")
        ratio = f"{s['rate_pps'] / base:.2f}" if rated and base else "—"
        mpps = "—" if r.rate_bound else f"{s['rate_pps'] / 1e6:.3f}"
        row = [r.controller, mpps, ratio, f"{s['mean_batch']:.1f}", f"{s['violation_pct']:.0f}"]
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
    bounds = {r.rate_bound for r in results if r.rate_bound}
    return [rates, packets, *drops, *(f"Mpps —: {why}" for why in bounds)]


def report_run(result: RunResult, json_path: Optional[str], csv_path: Optional[str], plot_path: Optional[str]) -> None:
    """Prints a run's tables and moves and writes the files asked for."""
    console.print(*summary_tables([result]))
    if result.classes:
        table = new_table("scheduled egress, by class (whole run)",
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
