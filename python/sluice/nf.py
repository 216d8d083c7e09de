"""Network-function configurations: what a module runs (the Rust NF is built from these)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, Mapping, Optional, Sequence


class NF:
    """Base of every NF configuration: a dataclass whose fields are those of
    the core's NF of the same name (in snake_case)."""

    def spec(self) -> dict[str, Any]:
        """The JSON form the core reads: `type` and the fields."""
        assert is_dataclass(self), "NF configurations are dataclasses"
        kind = re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()
        return {"type": kind, **asdict(self)}

    @property
    def outgates(self) -> int:
        """Number of outgates."""
        return 1


@dataclass(frozen=True)
class Bypass(NF):
    """Burns `cycles_per_batch + cycles_per_packet * b` cycles of a nominal 2.6 GHz clock per batch, then forwards it."""

    cycles_per_batch: int
    cycles_per_packet: int


@dataclass(frozen=True)
class RandomSplit(NF):
    """Sends each packet to gate i with probability weights[i] / sum(weights)."""

    weights: Sequence[float]
    seed: int = 0

    @property
    def outgates(self) -> int:
        return len(self.weights)


@dataclass(frozen=True)
class TypeCheck(NF):
    """Frames of one EtherType to gate 0, the rest dropped (0x0800 IPv4, 0x8100 802.1Q)."""

    ether_type: int = 0x0800


@dataclass(frozen=True)
class ExactMatch(NF):
    """A hash table from a header field to a gate.

    `field` is one of dst_mac, src_mac, vlan_id, src_ip, dst_ip, src_port,
    dst_port; `table` maps keys written as the field is (a MAC, an IPv4
    address, a number) to gates; unmatched packets go to `default_gate` or
    are dropped.
    """

    field: str
    table: Mapping[str, int]
    default_gate: Optional[int] = None

    def spec(self) -> dict[str, Any]:
        table = [[str(k), g] for k, g in self.table.items()]
        return {"type": "exact_match", "field": self.field, "table": table, "default_gate": self.default_gate}

    @property
    def outgates(self) -> int:
        gates = list(self.table.values()) + ([self.default_gate] if self.default_gate is not None else [])
        return max(gates) + 1


@dataclass(frozen=True)
class Lpm(NF):
    """IPv4 longest-prefix match on the destination: {"a.b.c.d/len": gate}."""

    routes: Mapping[str, int]

    def spec(self) -> dict[str, Any]:
        return {"type": "lpm", "routes": [[p, g] for p, g in self.routes.items()]}

    @property
    def outgates(self) -> int:
        return max(self.routes.values()) + 1


@dataclass(frozen=True)
class TtlDecrement(NF):
    """IPv4 TTL minus one, checksum updated; expired packets dropped."""


@dataclass(frozen=True)
class MacRewrite(NF):
    """Sets source and destination MAC."""

    src: str
    dst: str


@dataclass(frozen=True)
class IpChecksum(NF):
    """Recomputes the IPv4 header checksum."""


@dataclass(frozen=True)
class Rule:
    """An ACL rule: prefixes, protocol, inclusive port ranges, permit or deny."""

    permit: bool
    src: str = "0.0.0.0/0"
    dst: str = "0.0.0.0/0"
    proto: Optional[int] = None
    sport: tuple[int, int] = (0, 65535)
    dport: tuple[int, int] = (0, 65535)


@dataclass(frozen=True)
class Acl(NF):
    """First-match rules on the 5-tuple: permit to gate 0, deny (and no match) dropped."""

    rules: Sequence[Rule]


@dataclass(frozen=True)
class StaticNat(NF):
    """Prefix-to-prefix translation: sources in `inside` to `outside`, destinations back."""

    inside: str
    outside: str


@dataclass(frozen=True)
class Merge(NF):
    """Several ingates into one outgate."""

    ingates: int


@dataclass(frozen=True)
class Queue(NF):
    """A task boundary (BESS's Queue): the worker keeps up to `capacity` packets (512..2^20) in front of the module and serves them a batch at a time."""

    capacity: int


@dataclass(frozen=True)
class Replicate(NF):
    """The ingress of high-availability flows: each packet out of gate 0 and a copy out of each of gates 1..copies."""

    copies: int

    @property
    def outgates(self) -> int:
        return self.copies + 1


@dataclass(frozen=True)
class Dedup(NF):
    """The egress of a high-availability flow: the first copy of each (flow, sequence number) from any of `ingates`; later copies dropped."""

    ingates: int
    flows: int


@dataclass(frozen=True)
class VlanPop(NF):
    """Removes the 802.1Q tag; untagged frames are dropped."""


@dataclass(frozen=True)
class VlanPush(NF):
    """Adds an 802.1Q tag with VLAN id `vlan`."""

    vlan: int


@dataclass(frozen=True)
class SetMetadata(NF):
    """Sets every packet's mark to `value`."""

    value: int


@dataclass(frozen=True)
class SplitByMetadata(NF):
    """Steers packets by their mark: {mark: gate}; unknown marks to `default_gate` or dropped."""

    table: Mapping[int, int]
    default_gate: Optional[int] = None

    def spec(self) -> dict[str, Any]:
        return {"type": "split_by_metadata", "table": [[k, g] for k, g in self.table.items()], "default_gate": self.default_gate}

    @property
    def outgates(self) -> int:
        return max(list(self.table.values()) + ([self.default_gate] if self.default_gate is not None else [])) + 1


@dataclass(frozen=True)
class GtpuEncap(NF):
    """Tunnels IPv4 packets in GTP-U from `src_ip` to `dst_ip`, tunnel id = the packet's mark."""

    src_ip: str
    dst_ip: str
    src_mac: str
    dst_mac: str


@dataclass(frozen=True)
class GtpuDecap(NF):
    """Takes IPv4 packets out of GTP-U, a new Ethernet header on, mark = tunnel id."""

    src_mac: str
    dst_mac: str


@dataclass(frozen=True)
class VxlanEncap(NF):
    """Tunnels Ethernet frames in VXLAN from `src_ip` to `dst_ip`, network id = the packet's mark."""

    src_ip: str
    dst_ip: str
    src_mac: str
    dst_mac: str


@dataclass(frozen=True)
class VxlanDecap(NF):
    """Takes Ethernet frames out of VXLAN, mark = network id."""


@dataclass(frozen=True)
class IpSrcRewrite(NF):
    """Sets the IPv4 source address (checksums updated)."""

    addr: str


@dataclass(frozen=True)
class TokenBucket(NF):
    """A rate limiter: `rate_pps` on average, bursts of `burst` packets; the rest dropped."""

    rate_pps: float
    burst: float = 32.0


@dataclass(frozen=True)
class Napt(NF):
    """Stateful address and port translation of `inside` behind `public`, ports first..last, idle timeout (s)."""

    inside: str
    public: str
    first_port: int = 1024
    last_port: int = 65535
    timeout_s: float = 30.0


@dataclass(frozen=True)
class FlowStats(NF):
    """Packets, bytes, first and last seen per 5-tuple flow, in a table of
    `max_flows` sized up front (beyond, new flows pass uncounted); a run of
    one flow's packets costs one lookup. Counters (`RunResult.nf_counters`):
    flows, lookups, untracked, unparsed."""

    max_flows: int = 1 << 20


@dataclass(frozen=True)
class ReframerBypass:
    """Packets a `Reframer` never holds: TCP SYN/FIN/RST (`tcp_control`),
    the first `first_packets` of every flow (so flows that short are never
    delayed), and packets whose DSCP is one of `dscp`."""

    tcp_control: bool = True
    first_packets: int = 0
    dscp: Sequence[int] = ()


@dataclass(frozen=True)
class Reframer(NF):
    """Flow-aware batching (Reframer, NSDI'22): holds each 5-tuple flow's
    packets up to `t_buff_us` and sends them flow by flow, so the batches
    behind it carry runs of one flow. A flow also leaves once it holds
    `max_burst` packets; the table tracks `max_flows` flows and the NF holds
    at most `max_held` packets (beyond, the flow waiting longest leaves
    early). Flows released together leave `priority` first:
    "oldest_in_queue", "oldest_flow" or "shortest_flow". With
    `slo_control`, the run sets the hold time each period from the delay
    slack of the flows through it, up to `t_buff_us`, growing it only while
    a µs more saves ≥ 0.1% of the measured work per packet (a period's
    `modules[name]["hold_us"]` says what it was). With `coalesce_acks`, a
    flow's pure ACKs that the next one sent with them makes redundant are
    dropped (not duplicates, SACKs, window changes or the last; counted as
    the NF's drops and as `coalesced`). Its counters
    (`RunResult.nf_counters`): packets and runs of one flow in and out,
    releases by cause, bypassed packets, flows entered and evicted."""

    t_buff_us: float
    max_burst: int = 32
    max_flows: int = 65536
    max_held: int = 4096
    priority: str = "oldest_in_queue"
    bypass: ReframerBypass = ReframerBypass()
    coalesce_acks: bool = False
    slo_control: bool = False
