"""`ecmp`: how an LPM's multipath route spreads flows over its paths (a
hash of each packet's 5-tuple into a resilient bucket table). Real UDP
frames of 10 000 flows of each family, each of its own source address and
port, go through the `lpm` NF over 4 paths weighted 1:1:1:1 and 1:2:3:4;
per path, its share of the flows against its weight's; the flows whose
packets, sent again in the reverse order, take another path; and the
flows that move when the last path is removed, against that path's
share. Deterministic: the same figures on every machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from sluice.lab import _core
from sluice.lab import output

WEIGHTS = ([1, 1, 1, 1], [1, 2, 3, 4])
FAMILIES = ("ipv4", "ipv6")
#: The LPM's `hash_seed`.
SEED = 11


def run(out: Path, quick: bool, progress: Callable[[str], None]) -> dict[str, Any]:
    """Spreads the flows of each family over each set of weights; writes ecmp.{json,csv,md,png} into `out`."""
    flows = 2_000 if quick else 10_000
    rows = []
    for weights in WEIGHTS:
        for family in FAMILIES:
            progress(f"{family} over weights {weights}")
            shares, split, moved, moved_from_others = _core.ecmp_spread(weights, flows, family == "ipv6", SEED)
            expected = [w / sum(weights) for w in weights]
            rows.append({"weights": ":".join(map(str, weights)), "family": family, "flows": flows, "shares": [round(s, 4) for s in shares],
                         "worst_deviation": round(max(abs(s - e) / e for s, e in zip(shares, expected)), 4), "split_flows": split,
                         "moved": round(moved, 4), "removed_share": round(shares[-1], 4), "moved_from_others": moved_from_others})
    report = {"flows": flows, "seed": SEED, "rows": rows}
    output.write(out, "ecmp", report, markdown, plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per weights and family: the paths' shares, the worst deviation from the weights', split flows, and the moves on a removal."""
    lines = ["| weights | family | flows | shares of the flows | worst deviation from the weights' | flows on two paths "
             "| moved when the last path is removed (its share) | of them from other paths |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        shares = " / ".join(f"{s:.3f}" for s in r["shares"])
        lines.append(f"| {r['weights']} | {r['family']} | {r['flows']} | {shares} | {100 * r['worst_deviation']:.1f} % | {r['split_flows']} "
                     f"| {r['moved']:.4f} ({r['removed_share']:.4f}) | {r['moved_from_others']} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Each path's share over its weight's, per weights and family."""
    from sluice.plot import save, subplots

    fig, ax = subplots(figsize=(6, 3))
    for i, r in enumerate(rows):
        weights = [int(w) for w in r["weights"].split(":")]
        ratios = [s / (w / sum(weights)) for s, w in zip(r["shares"], weights)]
        ax.plot(range(len(ratios)), ratios, "o-", label=f"{r['weights']} {r['family']}", color=f"C{i}")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("path")
    ax.set_ylabel("share of flows / weight's share")
    ax.legend(fontsize=7)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The worst deviation from the weights, the split flows, what a removal moves."""
    rows = report["rows"]
    worst = max(r["worst_deviation"] for r in rows)
    others = sum(r["moved_from_others"] for r in rows)
    return output.Headline(f"{report['flows']} flows over 4 paths: within {100 * worst:.1f} % of the weights, {sum(r['split_flows'] for r in rows)} flows "
                           f"on two paths; removing a path moves its flows and {others} others", "— (target: within 5 %, none on two paths, only the removed path's move)")
