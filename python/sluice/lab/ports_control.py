"""Controllers on real ports: l2l3(16) receiving and transmitting on one
end of a veth pair while a sender on the other offers a fixed rate, under
Null and projected gradient. The built-in source's shape should hold on
real ports: projgrad builds the batches Null cannot, within the SLOs, and
the worker spends less of its time in rounds with work. Runs in a network
namespace of its own (`python -m sluice.lab.ports_control`)."""

from __future__ import annotations

import json
import sys
from typing import Any

from sluice import net

#: What the sender offers (pkt/s), spread evenly over the 16 flows.
RATE_PPS = 200_000.0
CONTROLLERS = ("null", "projgrad")
PERIOD_MS = 100
WARMUP = 10


def measure(backend: str, rate: float, periods: int) -> list[dict[str, Any]]:
    """Inside the namespace: one run per controller of `periods` periods
    (after a warm-up) on `backend`'s ports while `rate` pkt/s arrive."""
    from sluice.pipelines import l2l3

    rows = []
    for controller in CONTROLLERS:
        source = l2l3(16)
        for flow in source.flows():
            source.set_rate(flow, rate / 16)
        seconds = (periods + WARMUP - 1) * PERIOD_MS / 1e3
        sender = net.Sender(lambda: source.send(f"{backend}:{net.GEN_END}", seconds))
        p = l2l3(16)
        port = f"{backend}:{net.SWITCH_END}"
        p.use_ports(rx=port, tx=port, ring={"blocks": 4096, "descriptors": 4096})
        result = p.run(controller, periods=periods + WARMUP, period_ms=PERIOD_MS, warmup_periods=WARMUP, on_period=net.sending(sender))
        sent = sender.wait()
        s = result.summary
        measured = [q for q in result.periods if not q["warmup"]]
        rows.append({
            "controller": controller, "backend": backend, "offered_pps": rate,
            "sent": sent["packets"], "received": s["generated"], "delivered": s["delivered"], "missed": s["missed"],
            "mean_batch": round(s["mean_batch"], 2),
            "busy_fraction": round(sum(q["workers"][0]["busy_fraction"] for q in measured) / len(measured), 3),
            "violation_pct": s["violation_pct"],
            "lossless": s["lossless"] and sent["packets"] == s["generated"] + s["missed"],
        })
    return rows


def run(backend: str, quick: bool) -> list[dict[str, Any]]:
    """The rows, measured in a namespace of their own."""
    rows: list[dict[str, Any]] = net.run_unshared("sluice.lab.ports_control", backend, str(RATE_PPS), str(10 if quick else 30), timeout=600)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """One line per controller."""
    lines = ["| controller | backend | offered pkt/s | sent | delivered | missed at rx | mean batch | busy fraction | SLO violations % | lossless |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['controller']} | {r['backend']} | {r['offered_pps']:.0f} | {r['sent']} | {r['delivered']} | {r['missed']} | "
                     f"{r['mean_batch']} | {r['busy_fraction']} | {r['violation_pct']} | {'yes' if r['lossless'] else 'NO'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    net.pair_here()
    print(json.dumps(measure(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))))
