"""PSPAT's throughput test (Figure 7) with real frames, for `sluice
experiment pspat`: `clients` clients put 60-byte UDP frames, a flow each,
on one end of a veth pair as fast as they can,

- `pspat`: as the workers of one Sluice pipeline whose flows go through its
  scheduled egress (DRR, a class a flow, a link far above what the veth
  carries, a source waiting while its class is full) and out on the veth
  with AF_PACKET, the arbiter on a thread of its own;
- `tc`: as sender threads, each its own AF_PACKET socket, through an HTB
  qdisc on the veth, a class a client at an unlimited rate (Linux TC, the
  paper's baseline: clients take the qdisc's lock per packet; this kernel
  has no DRR or QFQ qdisc);
- `none`: the same senders with no qdisc (veth's own noqueue): the veth's
  rate, the bound of both.

The rate is what the veth sent (its tx counter) over the time the clients
sent. Each point runs in a network namespace of its own (`unshare --net`);
where the machine allows none (no root, `unshare`, `ip` or `tc`), there
are no rows."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from sluice import net

#: The architectures, as the throughput table names them.
ARCHITECTURES = ("pspat", "tc", "none")
#: The emulated link of the scheduled egress: far above what a veth carries here (bit/s).
UNLIMITED_BPS = 100e9


def available() -> bool:
    """Whether this machine can make the namespace and the qdisc."""
    return net.can_unshare("tc")


def measure(architecture: str, clients: int, seconds: float) -> dict[str, float]:
    """The frames the veth sent while `clients` clients of `architecture`
    sent for `seconds`, and their rate (Mpps), in a namespace of its own."""
    got: dict[str, float] = net.run_unshared(__name__, architecture, str(clients), str(seconds), timeout=120 + 4 * seconds)
    return got


def _tx_packets() -> int:
    """The sending end's tx packets, from this namespace's /proc/net/dev."""
    for line in Path("/proc/net/dev").read_text().splitlines():
        name, _, counters = line.partition(":")
        if name.strip() == net.GEN_END:
            return int(counters.split()[9])
    raise RuntimeError(f"no {net.GEN_END} in /proc/net/dev")


def _dst(i: int) -> str:
    return f"20.0.{i + 1}.1"


def _senders(clients: int, seconds: float) -> tuple[int, float]:
    """The clients as sender threads; the frames the veth sent while they
    sent, and how long that was (s)."""
    senders = [net.greedy_sender(f"c{i}", _dst(i), seconds) for i in range(clients)]
    before, start = _tx_packets(), time.perf_counter()
    for s in senders:
        s.start()
    for s in senders:
        s.wait()
    return _tx_packets() - before, time.perf_counter() - start


def _qdisc(clients: int) -> None:
    """An HTB qdisc on the sending end, a class a client at the unlimited
    rate, told apart by destination (this kernel has no DRR or QFQ qdisc;
    HTB's leaves of one priority take turns by DRR)."""
    net.tc("qdisc", "add", "dev", net.GEN_END, "root", "handle", "1:", "htb")
    for i in range(clients):
        net.htb_class("1:", f"1:{i + 1}", UNLIMITED_BPS, UNLIMITED_BPS, _dst(i))


def _pspat(clients: int, seconds: float) -> tuple[int, float]:
    """The clients as workers of one pipeline with a scheduled egress; the
    frames the veth sent over its measured periods, and how long they took (s)."""
    from sluice import Pipeline
    from sluice.traffic import Template

    p = Pipeline("pspat-frames")
    for i in range(clients):
        src = p.source(f"src{i}", worker=i)
        out = p.tx_port(f"out{i}", f"af_packet:{net.GEN_END}", worker=i)
        p.connect(src, out)
        p.flow(f"c{i}", [f"src{i}", f"out{i}"], template=Template(dst_ip=_dst(i)))
    p.schedule_egress("drr", UNLIMITED_BPS, {f"c{i}": (1, [f"c{i}"]) for i in range(clients)}, on_full="wait")
    # The time and the veth's count at the end of each period: from the
    # end of the warm-up (the second) to the end of the run.
    marks: list[tuple[float, int]] = []
    period_ms, warmup = 100.0, 2
    p.run("null", periods=max(2, round(seconds * 1e3 / period_ms)), period_ms=period_ms, warmup_periods=warmup,
          on_period=lambda _period: marks.append((time.perf_counter(), _tx_packets())))
    (t0, n0), (t1, n1) = marks[warmup - 1], marks[-1]
    return n1 - n0, t1 - t0


def _measure(architecture: str, clients: int, seconds: float) -> dict[str, float]:
    """In the namespace: the veth pair, then one point."""
    net.pair_here()
    if architecture == "tc":
        _qdisc(clients)
    frames, took_s = (_pspat if architecture == "pspat" else _senders)(clients, seconds)
    return {"frames": frames, "mpps": frames / took_s / 1e6}


if __name__ == "__main__":
    print(json.dumps(_measure(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))))
