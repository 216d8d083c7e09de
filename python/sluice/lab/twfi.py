"""`twfi`: the T-WFI of each scheduling algorithm behind PSPAT's arbiter
(the paper's §5), measured on a virtual clock against its bounds: eq. (2)
for QFQ, eq. (3) for DRR, plus the arbiter's scan period Δ_A (eq. (1); no
FIFO after the link here, Δ_D = 0). What is measured is how late a packet
completes at most against the fluid system (the side the bounds hold;
one may also complete early). The measured client has half the
link; one other has the least share (0.005 from 25 clients on), as in
the paper's example. Deterministic: the same figures on every machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from sluice.lab import _core
from sluice.lab import output

CLIENTS = [5, 25, 100]
ALGORITHMS = ["drr", "wf2q+", "qfq", "fifo"]
#: The arbiter's scan periods Δ_A (units of L/B, one 1500-byte packet's time).
SCANS = [0.0, 2.0]


def paper_example(algorithm: str, clients: int) -> Optional[float]:
    """The paper's §5.2 figure for the client with half the link (units of
    L/B): QFQ 12 whatever the clients, DRR 226 at 25 and 301 at 100."""
    if algorithm == "qfq":
        return 12.0
    return {25: 226.0, 100: 301.0}.get(clients) if algorithm == "drr" else None


def run(out: Path, quick: bool, progress: Callable[[str], None]) -> dict[str, Any]:
    """Measures every algorithm at every client count and scan period; writes twfi.{json,csv,md,png} into `out`."""
    packets = 20_000 if quick else 200_000
    rows = []
    for clients in CLIENTS:
        for algorithm in ALGORITHMS:
            progress(f"{algorithm}, {clients} clients")
            for scan in SCANS:
                measured, bound = _core.pspat_twfi(algorithm, clients, packets, scan)
                rows.append({"clients": clients, "algorithm": algorithm, "scan_lb": scan, "twfi_lb": round(measured, 2) + 0.0,
                             "bound_lb": None if bound is None else round(bound, 2)})
    report = {"packets": packets, "rows": rows}
    output.write(out, "twfi", report, markdown, plot)
    return report


def _shown(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:g}"


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per client count and algorithm: the T-WFI without and with Δ_A, our
    bound (QFQ's with its 2048-byte budget as L_k) and the paper's example."""
    scans = sorted({r["scan_lb"] for r in rows})
    head = " | ".join(f"T-WFI, Δ_A = {s:g} (bound)" for s in scans)
    lines = [f"| clients | algorithm | {head} | paper's example (Δ_A = 0) |", "|---|---|" + "---|" * (len(scans) + 1)]
    keys = sorted({(r["clients"], r["algorithm"]) for r in rows}, key=lambda k: (k[0], ALGORITHMS.index(k[1])))
    for clients, algorithm in keys:
        cells = []
        for s in scans:
            r = next(r for r in rows if (r["clients"], r["algorithm"], r["scan_lb"]) == (clients, algorithm, s))
            cells.append(f"{r['twfi_lb']:g} ({_shown(r['bound_lb'])})")
        lines.append(f"| {clients} | {algorithm} | " + " | ".join(cells) + f" | {_shown(paper_example(algorithm, clients))} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """T-WFI against clients per algorithm (Δ_A = 0), bounds dashed."""
    from sluice.plot import save, subplots

    fig, ax = subplots(figsize=(6, 4))
    for algorithm in ALGORITHMS:
        mine = [r for r in rows if r["algorithm"] == algorithm and r["scan_lb"] == 0.0]
        line, = ax.plot([r["clients"] for r in mine], [max(r["twfi_lb"], 0.1) for r in mine], "o-", label=algorithm)
        bounded = [r for r in mine if r["bound_lb"] is not None]
        if bounded:
            ax.plot([r["clients"] for r in bounded], [r["bound_lb"] for r in bounded], "--", color=line.get_color(), label=f"{algorithm} bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("clients")
    ax.set_ylabel("T-WFI of the half-link client (L/B)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """QFQ's and DRR's T-WFI at 25 clients, Δ_A = 0, against the paper's bounds."""
    rows = {r["algorithm"]: r for r in report["rows"] if r["clients"] == 25 and r["scan_lb"] == 0.0}
    return output.Headline(f"T-WFI at 25 clients: QFQ {rows['qfq']['twfi_lb']:g}, DRR {rows['drr']['twfi_lb']:g}, WF²Q+ {rows['wf2q+']['twfi_lb']:g} L/B",
                           "bounds QFQ 12, DRR 226 L/B")
