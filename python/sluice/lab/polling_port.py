"""The polling experiment on real ports, for `sluice experiment polling`:
L2L3(4) receiving on a port at one end of a veth pair (AF_PACKET, and
AF_XDP where built: a worker waiting for an interrupt blocks on the
socket), a sender putting its flows on the other end at a share of the
most the port carries to a busy worker. Per backend, policy and load: the
worker's CPU share, the rate, what the sender sent that the pipeline did
not receive, delay.

Runs in a network namespace of its own (`unshare --net`); where the
machine allows none (no root, `unshare` or `ip`) there are no port rows."""

from __future__ import annotations

import json
import sys
from typing import Any

from sluice import _core, net
from sluice.lab import poll_worker
from sluice.description import PollSettingsJson

#: Loads as shares of the port's most under busy polling (0: no sender).
LOADS = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75]
QUICK_LOADS = [0.0, 0.01, 0.5]
#: The backends whose sockets a worker can wait on, those this build has.
BACKENDS = [b for b in _core.port_backends() if b in ("af_packet", "af_xdp")]


def available() -> bool:
    """Whether this machine can make the namespace."""
    return net.can_unshare()


def rows(periods: int, period_ms: float, quick: bool) -> dict[str, Any]:
    """Every backend, policy and load (fewer `quick`), run in a namespace of
    its own: {"saturation_mpps": {backend: Mpps}, "rows"}."""
    loads = QUICK_LOADS if quick else LOADS
    got: dict[str, Any] = net.run_unshared(__name__, str(periods), str(period_ms), json.dumps(loads), timeout=600)
    return got


def _run(backend: str, poll: PollSettingsJson, rate_pps: float | None, periods: int, period_ms: float) -> dict[str, Any]:
    """The pipeline receiving on `backend`'s port under `poll` while the
    sender sends at `rate_pps` in all (None: as fast as it can; 0: not at all)."""
    receiver = poll_worker.pipeline(poll, 0.0, 0.0)
    receiver.use_ports(rx=f"{backend}:{net.SWITCH_END}", ring={"blocks": 4096, "descriptors": 4096})
    sent: dict[str, Any] = {"packets": 0}
    senders = []
    if rate_pps != 0:
        source = poll_worker.pipeline(poll_worker.POLICIES["busy"], 1.0, rate_pps or 0.0)
        # The sender stops a period before the run, so that what it sent has arrived.
        senders.append(net.Sender(lambda: source.send(f"{backend}:{net.GEN_END}", (periods - 1) * period_ms / 1e3)))
    m = poll_worker.measure(receiver, periods, period_ms, on_period=net.sending(*senders))
    for s in senders:
        sent = s.wait()
    received = m["generated"]
    m["loss_pct"] = 100 * max(0, sent["packets"] - received) / sent["packets"] if sent["packets"] else 0.0
    m["sent"] = sent["packets"]
    return m


def _measure(periods: int, period_ms: float, loads: list[float]) -> dict[str, Any]:
    """In the namespace, per backend: the port's most under busy polling, then every policy at each of `loads`."""
    net.pair_here()
    saturation, out = {}, []
    for backend in BACKENDS:
        saturation_pps = _run(backend, poll_worker.POLICIES["busy"], None, periods, period_ms)["mpps"] * 1e6
        saturation[backend] = round(saturation_pps / 1e6, 3)
        for name, poll in poll_worker.POLICIES.items():
            for load in loads:
                m = _run(backend, poll, load * saturation_pps, periods, period_ms)
                out.append({"policy": name, "load": load, "input": backend, **{k: round(m[k], 3) for k in poll_worker.ROW_KEYS}})
    return {"saturation_mpps": saturation, "rows": out}


if __name__ == "__main__":
    print(json.dumps(_measure(int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3]))))
