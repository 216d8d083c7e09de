"""`all`: every experiment at the settings the README quotes, and the pages
they make: `RESULTS.md` (each experiment's command, table, plot and a short
hand-written note from `notes/NAME.md`, and the machine they ran on) and
the README's table of headline figures.

Each section is stamped with the commit, date and mode it was measured at,
and its raw report is kept beside its plot (`results/NAME.json`), so a
figure can be traced to the code that made it; `check` says which sections
are stale: their experiment's code changed since their stamp. Nothing else
on the pages depends on when or how often they are made: running `make
results` twice on one machine changes only numbers and stamps."""

from __future__ import annotations

import ast
import datetime
import importlib
import os
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from sluice.lab import output


@dataclass(frozen=True)
class Entry:
    """One experiment as the results pages run it."""

    name: str
    #: What it measures, in a line.
    title: str
    #: Options of `sluice experiment NAME` at the README's settings, and for a CI-sized run.
    args: tuple[str, ...]
    quick_args: tuple[str, ...]

    def headline(self, report: dict[str, Any]) -> output.Headline:
        """The README's figure of `report` (the module's own `headline`)."""
        module = importlib.import_module(f"sluice.lab.{self.name}")
        h: output.Headline = module.headline(report)
        return h

    def command(self, quick: bool) -> str:
        """The command that re-runs it."""
        return " ".join(("sluice", "experiment", self.name) + (self.quick_args if quick else self.args))


CATALOG = (
    Entry("static", "Batchy's Table 2: every reference pipeline under every controller", (),
          ("--quick", "--rounds", "2", "--only", "l2l3-16", "--only", "gw-16", "--only", "rc16")),
    Entry("overhead", "Controller response time on RC(1..64) (Batchy's Table 1)", (), ("--quick",)),
    Entry("roundcost", "What a round through the graph costs the walker, apart from the NFs' work", (), ("--quick",)),
    Entry("dynamics", "Following an SLO square wave, load steps and a bearer's rate steps", (), ("--quick",)),
    Entry("regime", "Where batching pays: branching × batchiness and × burstiness", (), ("--quick",)),
    Entry("decompose", "A slowed bulk bearer: decomposition onto a spare worker restores the QoS SLO", (), ("--quick",)),
    Entry("embedding", "The dissertation's Table 4.1: resilient embedding of MGW", (), ("--time-limit", "5")),
    Entry("failover", "A resilient MGW loses a worker for a second", (), ()),
    Entry("pspat", "The PSPAT paper's tests of a scheduled egress: the arbiter, throughput against clients, 10:1 shares, a victim's latency", (), ("--quick",)),
    Entry("twfi", "The PSPAT paper's T-WFI (§5) of each scheduling algorithm on a virtual clock, against its bounds", (), ("--quick",)),
    Entry("reframer", "The Reframer paper's chain with and without a Reframer, beside projgrad's flow-oblivious buffers", (), ("--quick",)),
    Entry("polling", "Poll policies from no load to overload: the worker's CPU, throughput, loss and delay", (), ("--quick",)),
    Entry("ports", "What a port costs: rx → Bypass(0, 0) → tx on a veth pair (AF_PACKET, AF_XDP) or between DPDK null devices, against a bare loop over the same rings", (), ("--quick",)),
    Entry("hosts", "Two Linux hosts as they come (offloads on, no neighbour set by hand) through Sluice's router against Linux's own forwarding: round trips, TCP both families, UDP at 1 Gbit/s", (), ("--quick",)),
    Entry("aqm", "A ping behind bulk TCP through an egress shaped to 100 Mbit/s: Sluice's FQ-CoDel and tail drop beside Linux's", (), ("--quick",)),
    Entry("ecmp", "How a multipath route spreads flows over its paths: shares against the weights, paths kept, what a removal moves", (), ("--quick",)),
    Entry("serve", "What operating a served pipeline costs its forwarding: scrapes, route updates, a bulk load, memory over a long run", (), ("--quick",)),
)

NAMES = tuple(e.name for e in CATALOG)

#: Where the README's table of headline figures starts and ends.
README_BEGIN, README_END = "<!-- headline-figures:begin -->", "<!-- headline-figures:end -->"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _first(text: str, pattern: str, default: str = "unknown") -> str:
    m = re.search(pattern, text, re.M)
    return m.group(1).strip() if m else default


def machine() -> dict[str, str]:
    """What the figures ran on: processor, cores, memory, kernel, build."""
    cpuinfo = _read("/proc/cpuinfo")
    memory_kib = int(_first(_read("/proc/meminfo"), r"^MemTotal:\s+(\d+)", "0"))
    return {
        "processor": _first(cpuinfo, r"^model name\s*:\s*(.+)$"),
        "cores": str(os.cpu_count()),
        "memory": f"{memory_kib / 2**20:.0f} GiB",
        "kernel": f"{platform.system()} {platform.release()}",
        "build": "release profile",
    }


def _git(*args: str) -> Optional[str]:
    """What `git ARGS` prints, or None where it fails (not a checkout, no git)."""
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


#: How a section says what it was measured at: commit, date, mode and (since sections are
#: re-run apart, on whatever machine the checkout is on then) the processor.
STAMP = re.compile(r"^Measured at commit `([0-9a-f]+|unknown)(-dirty)?` on (\S+), (quick|full) mode(?:, on (.+))?\.$", re.M)


def stamp(quick: bool) -> str:
    """The line that stamps a section made now: this checkout's commit
    (`-dirty` with uncommitted changes), today's date, the mode, the processor."""
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = "-dirty" if _git("status", "--porcelain") else ""
    mode = "quick" if quick else "full"
    return f"Measured at commit `{commit}{dirty}` on {datetime.date.today().isoformat()}, {mode} mode, on {machine()['processor']}."


def sources(name: str) -> list[Path]:
    """The files of experiment `name`'s code: its module and the lab modules it imports."""
    lab = Path(__file__).parent
    found: list[Path] = []
    todo = [lab / f"{name}.py"]
    while todo:
        path = todo.pop()
        if path in found or not path.exists():
            continue
        found.append(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "sluice.lab":
                todo += [lab / f"{a.name}.py" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sluice.lab."):
                todo.append(lab / f"{node.module.rsplit('.', 1)[1]}.py")
    return sorted(found)


def check(page_text: str) -> list[str]:
    """What is stale on results page `page_text`, a line per section: a
    section without a stamp, stamped at a commit not in this history or
    with uncommitted changes, or whose experiment's code changed since."""
    stale = []
    for entry in CATALOG:
        section = _kept_section(page_text, entry.name)
        if section is None:
            stale.append(f"{entry.name}: not on the page")
            continue
        m = STAMP.search(section)
        if m is None:
            stale.append(f"{entry.name}: no stamp (measured before sections were stamped)")
        elif m.group(2) or m.group(1) == "unknown":
            stale.append(f"{entry.name}: measured at {m.group(1)}{m.group(2) or ''}, not at a commit")
        elif _git("cat-file", "-e", f"{m.group(1)}^{{commit}}") is None:
            stale.append(f"{entry.name}: commit {m.group(1)} is not in this history")
        else:
            changed = _git("diff", "--name-only", m.group(1), "HEAD", "--", *map(str, sources(entry.name)))
            if changed:
                stale.append(f"{entry.name}: its code changed since {m.group(1)} ({', '.join(Path(f).name for f in changed.split())})")
    return stale


def _notes(notes: Path, name: str) -> str:
    path = notes / f"{name}.md"
    return path.read_text().strip() + "\n" if path.exists() else ""


def _kept_row(text: str, name: str) -> str | None:
    """Experiment `name`'s row of the headline table in `text` (a results page or a README), if it has one."""
    m = re.search(rf"^\| \[{re.escape(name)}\]\(.*$", text, re.M)
    return m.group(0) if m else None


def _kept_section(text: str, name: str) -> str | None:
    """Experiment `name`'s section of results page `text` (its heading up to the next), if it has one."""
    m = re.search(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", text, re.M | re.S)
    return m.group(0).rstrip() + "\n" if m else None


def page(ran: list[tuple[Entry, dict[str, Any], str]], quick: bool, notes: Path, before: str = "", made: str = "") -> str:
    """RESULTS.md: the machine, the headline figures, then each experiment
    `(entry, report, markdown table)` with its command, plot, note and the
    stamp `made` (default: this checkout now); an experiment that did not
    run keeps its row and section of the page `before`, where it had them."""
    by_name = {entry.name: (entry, report, table) for entry, report, table in ran}
    made = made or stamp(quick)
    lines = ["# Measured results", "",
             "Made by `make results` (`sluice experiment all --out docs --readme README.md`; `make results QUICK=1` for",
             "the CI-sized runs). The tables and plots are regenerated; the notes under them are hand-written in",
             "`docs/notes/NAME.md`. Each section says the commit, date and mode it was measured at; its raw report",
             "is `results/NAME.json`. `make results-check` lists the sections whose experiment changed since.",
             "", "## Machine", "", "Where the page was last written; each section names the processor it ran on.", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in machine().items()]
    lines += ["", "The machine is a shared two-core VM: a figure moves by up to ±30% between runs, so figures are",
              "medians and ratios measured in one run.", "", "## Headline figures", "", *headline_table(ran, quick, "", before), ""]
    for entry in CATALOG:
        if entry.name not in by_name:
            kept = _kept_section(before, entry.name)
            lines += [kept] if kept else []
            continue
        _, _, table = by_name[entry.name]
        lines += [f"## {entry.name}", "", entry.title + ".", "", made, "", f"`{entry.command(quick)}`", "", table.strip(), "",
                  f"![{entry.name}](results/{entry.name}.png)", ""]
        note = _notes(notes, entry.name)
        if note:
            lines += [note]
    return "\n".join(lines).rstrip() + "\n"


def headline_table(ran: list[tuple[Entry, dict[str, Any], str]], quick: bool, page: str, before: str = "") -> list[str]:
    """One row per experiment: ours, the paper's, the command; each
    experiment links to its section of `page` (the results page's path).
    An experiment that did not run keeps its row of `before` (the text
    the table replaces), where it had one."""
    by_name = {entry.name: (entry, report) for entry, report, _ in ran}
    rows = ["| experiment | Sluice | published | command |", "|---|---|---|---|"]
    for entry in CATALOG:
        if entry.name not in by_name:
            kept = _kept_row(before, entry.name)
            rows += [kept] if kept else []
            continue
        h = entry.headline(by_name[entry.name][1])
        rows.append(f"| [{entry.name}]({page}#{entry.name}) | {h.ours} | {h.published} | `{entry.command(quick)}` |")
    return rows


def refresh_readme(readme: Path, results_page: Path, ran: list[tuple[Entry, dict[str, Any], str]], quick: bool) -> None:
    """Replaces the README's headline table (between its markers) with this
    run's, linking to `results_page`; experiments that did not run keep their rows."""
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no {README_BEGIN} … {README_END} block for the headline figures")
    head, rest = text.split(README_BEGIN, 1)
    before, tail = rest.split(README_END, 1)
    results = os.path.relpath(results_page, readme.parent)
    readme.write_text(head + README_BEGIN + "\n" + "\n".join(headline_table(ran, quick, results, before)) + "\n" + README_END + tail)


def write(out: Path, runs: Path, quick: bool, names: tuple[str, ...], made: str) -> list[tuple[Entry, dict[str, Any], str]]:
    """Collects the report, table and plot of experiments `names`, just run
    into `runs/NAME/`, and writes `out/RESULTS.md` (their sections stamped
    `made`, the line `stamp` gave before they ran) and `out/results/NAME.{png,json}`;
    the others keep what `out/RESULTS.md` had of them."""
    import json

    ran = []
    (out / "results").mkdir(parents=True, exist_ok=True)
    for entry in CATALOG:
        folder = runs / entry.name
        if entry.name not in names or not (folder / f"{entry.name}.json").exists():
            continue
        report = json.loads((folder / f"{entry.name}.json").read_text())
        ran.append((entry, report, (folder / f"{entry.name}.md").read_text()))
        shutil.copyfile(folder / f"{entry.name}.png", out / "results" / f"{entry.name}.png")
        shutil.copyfile(folder / f"{entry.name}.json", out / "results" / f"{entry.name}.json")
    (out / "RESULTS.md").write_text(page(ran, quick, out / "notes", _read(str(out / "RESULTS.md")), made))
    return ran
