"""The 10:1 share test on Linux's HTB, for `sluice experiment pspat`: two
greedy senders (one a flow, each its own thread and AF_PACKET socket)
transmit on one end of a veth pair whose egress is an HTB qdisc with a
parent class at the link rate and two children at 10/11 and 1/11 of it
(each may borrow up to the link); a Sluice pipeline receiving on the other
end counts each flow's packets per window (one control period a window).

Runs in a network namespace of its own (`unshare --net`), so it touches
none of the machine's interfaces; where the machine allows none (no root,
no `unshare`, `ip` or `tc`), there are no HTB rows."""

from __future__ import annotations

import json
import sys
from typing import Optional

from sluice import net

#: The two flows: weight, destination, HTB class.
FLOWS = [("heavy", 10, "20.0.1.1", "1:10"), ("light", 1, "20.0.2.1", "1:11")]
#: Bytes HTB charges a frame: the 60-byte template, no FCS.
FRAME_BYTES = 60
#: An "unlimited" link: far above what two senders put through a veth here (bit/s).
UNLIMITED_BPS = 10e9


def available() -> bool:
    """Whether this machine can make the namespace and the qdisc."""
    return net.can_unshare("tc")


def windows(link_pps: Optional[float], seconds: float, window_ms: float) -> list[list[int]]:
    """Packets of each flow per window at a link of `link_pps` (None:
    unlimited), the test run in a namespace of its own."""
    got: list[list[int]] = net.run_unshared(__name__, str(link_pps or 0.0), str(seconds), str(window_ms), timeout=120 + 4 * seconds)
    return got


def _link(bps: float) -> None:
    """The veth pair, its sender's end (veth0) shaped by HTB at `bps`."""
    net.pair_here()
    total = sum(w for _, w, _, _ in FLOWS)
    net.tc("qdisc", "add", "dev", net.GEN_END, "root", "handle", "1:", "htb", "default", "11")
    net.tc("class", "add", "dev", net.GEN_END, "parent", "1:", "classid", "1:1", "htb", "rate", f"{bps:.0f}bit", "ceil", f"{bps:.0f}bit")
    for _, weight, dst, cls in FLOWS:
        net.htb_class("1:1", cls, bps * weight / total, bps, dst, "quantum", str(1514 * weight))


def _measure(link_pps: float, seconds: float, window_ms: float) -> list[list[int]]:
    """In the namespace: the link, the senders, the counting pipeline."""
    from sluice import Pipeline
    from sluice.nf import Lpm

    _link(link_pps * FRAME_BYTES * 8 if link_pps > 0 else UNLIMITED_BPS)
    receiver = Pipeline("htb-share")
    prefixes = {name: dst.rsplit(".", 1)[0] + ".0/24" for name, _, dst, _ in FLOWS}
    split = receiver.module("split", Lpm({prefixes[name]: gate for gate, (name, _, _, _) in enumerate(FLOWS)}))
    receiver.connect(receiver.rx_port("in", f"af_packet:{net.SWITCH_END}", prefixes), split)
    for gate, (name, _, _, _) in enumerate(FLOWS):
        receiver.connect(split, receiver.sink(f"out-{name}"), gate)
        receiver.flow(name, ["in", "split", f"out-{name}"])
    senders = [net.greedy_sender(name, dst, seconds) for name, _, dst, _ in FLOWS]
    periods = int(seconds * 1e3 / window_ms) + 6
    result = receiver.run("null", periods=periods, period_ms=window_ms, warmup_periods=1, on_period=net.sending(*senders))
    for s in senders:
        s.wait()
    counts = [[q["flows"][name]["delivered"] for name, _, _, _ in FLOWS] for q in result.periods if not q["warmup"]]
    # Windows while both sent: from the first with traffic, the edges left out.
    busy = [i for i, c in enumerate(counts) if sum(c) > 0]
    return counts[busy[0] + 1:busy[-1]] if len(busy) > 3 else []


if __name__ == "__main__":
    print(json.dumps(_measure(float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]))))
