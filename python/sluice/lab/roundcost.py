"""`roundcost`: what a round through the graph costs the walker, apart from
the NFs' own work. Three workloads on one worker, no controller: `replay`
(source → egress), `chain` (Ethernet check → LPM → TTL → MAC rewrite →
checksum → egress) and `branch4` (LPM → four branches of TTL → MAC rewrite
→ checksum), 4096 interleaved flows, 500 routes. For each, with timing
(delay histograms, busy time, core probe) on and off, the time of a round
at batch sizes 1..256 and the fit ns per round = T0 + T1·B: T0 is the
walker's per-round cost, T1 the per-packet cost. One NF visit costs the
chain's T0 less the replay's, over the chain's five NFs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from sluice.lab import _core
from sluice.lab import output

BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
QUICK_BATCHES = [1, 4, 32, 256]
#: Measurements of each point, the least taken.
REPEATS = 5


def run(out: Path, quick: bool, backend: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """Measures every workload and writes roundcost.{json,csv,md,png} into `out` (`backend` is always the engine's walker)."""
    batches = QUICK_BATCHES if quick else BATCHES
    rows: list[dict[str, Any]] = []
    t0s: dict[tuple[str, bool], float] = {}
    for case in _core.round_cases():
        for timing in (True, False):
            progress(f"{case}, timing {'on' if timing else 'off'}")
            # Every batch size in turn, REPEATS times, the least of each: a
            # spell in which the machine slows the core touches one repeat.
            times = {b: float("inf") for b in batches}
            for _ in range(REPEATS):
                for b in batches:
                    times[b] = min(times[b], _core.round_ns(case, b, timing))
            t0, t1 = _core.round_fit(list(times.items()))
            t0s[(case, timing)] = t0
            rows.append({"case": case, "timing": timing, "t0_ns": round(t0, 1), "t1_ns": round(t1, 2),
                         **{f"ns_per_pkt_b{b}": round(t / b, 1) for b, t in times.items()}})
    visits = {timing: round(_core.round_visit_ns(t0s[("chain", timing)], t0s[("replay", timing)]), 1) for timing in (True, False)}
    report = {"batches": batches, "visit_ns": {"on": visits[True], "off": visits[False]}, "rows": rows}
    output.write(out, "roundcost", report, markdown, plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """T0 and T1 per workload and timing, and ns per packet at each batch size."""
    batches = sorted(int(k.removeprefix("ns_per_pkt_b")) for k in rows[0] if k.startswith("ns_per_pkt_b"))
    lines = ["| workload | timing | T0 ns / round | T1 ns / pkt | " + " | ".join(f"ns/pkt B={b}" for b in batches) + " |",
             "|---|---|---|---|" + "---|" * len(batches)]
    for r in rows:
        cells = " | ".join(str(r[f"ns_per_pkt_b{b}"]) for b in batches)
        lines.append(f"| {r['case']} | {'on' if r['timing'] else 'off'} | {r['t0_ns']} | {r['t1_ns']} | {cells} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """ns per packet against batch size, per workload (timing on solid, off dashed)."""
    from sluice.plot import save, subplots

    fig, ax = subplots(figsize=(6, 4))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    for r in rows:
        batches = sorted(int(k.removeprefix("ns_per_pkt_b")) for k in r if k.startswith("ns_per_pkt_b"))
        color = f"C{cases.index(r['case'])}"
        ax.plot(batches, [r[f"ns_per_pkt_b{b}"] for b in batches], "o-" if r["timing"] else "o--", color=color,
                label=f"{r['case']} (timing {'on' if r['timing'] else 'off'})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size B (pkt)")
    ax.set_ylabel("ns per packet")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The chain's and the empty round's T0 and an NF visit, timing on (against FastClick in one
    run: scripts/fastclick.py, docs/notes/roundcost.md)."""
    by = {r["case"]: r for r in report["rows"] if r["timing"]}
    return output.Headline(f"round T0: chain {by['chain']['t0_ns']} ns, empty {by['replay']['t0_ns']} ns; NF visit {report['visit_ns']['on']} ns",
                           "— (FastClick, same run: scripts/fastclick.py)")
