"""Network-function configurations: what a module runs, one class per NF
of the core, with its fields, defaults and documentation.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional, Sequence

from sluice.checked import NF, Table

__all__ = ["NF", "FIELD_VALUES", "PRIORITY_VALUES", "Rule", "ReframerBypass", "Bypass", "RandomSplit", "TypeCheck", "ExactMatch", "Lpm", "TtlDecrement", "MacRewrite", "IpChecksum", "Acl", "StaticNat", "Merge", "Queue", "Replicate", "Dedup", "VlanPop", "VlanPush", "SetMetadata", "SplitByMetadata", "GtpuEncap", "GtpuDecap", "VxlanEncap", "VxlanDecap", "IpSrcRewrite", "DscpMark", "TokenBucket", "Napt", "FlowStats", "Reframer", "InterfaceInput", "NextHop", "InterfaceSplit"]


#: The names of `Field`.
FIELD_VALUES: tuple[str, ...] = ("dst_mac", "src_mac", "vlan_id", "src_ip", "dst_ip", "src_port", "dst_port")


#: The names of `Priority`.
PRIORITY_VALUES: tuple[str, ...] = ("oldest_in_queue", "oldest_flow", "shortest_flow")


@dataclass(frozen=True)
class Rule:
    """One rule as descriptions write it.

    `src`: Source prefix, "10.0.0.0/8" or "2001:db8::/32" (default any). A rule
        whose prefixes are IPv6 matches IPv6 packets, one whose prefixes are
        IPv4 IPv4 packets; one with both any matches either.
    `dst`: Destination prefix, of the source's family unless either is any
        (default any).
    `proto`: IP protocol number (default any).
    `sport`: Source port range, inclusive (default any).
    `dport`: Destination port range, inclusive (default any).
    `permit`: Permit (gate 0) or deny (drop gate).
    """

    permit: bool
    src: str = "0.0.0.0/0"
    dst: str = "0.0.0.0/0"
    proto: Optional[int] = None
    sport: tuple[int, int] = (0, 65535)
    dport: tuple[int, int] = (0, 65535)


@dataclass(frozen=True)
class ReframerBypass:
    """Packets a `reframer` never holds, as descriptions write them.

    `tcp_control`: TCP segments with SYN, FIN or RST.
    `first_packets`: The first this many packets of every flow (so flows this
        short are never delayed).
    `dscp`: Packets with one of these DSCP values (0..=63).
    """

    tcp_control: bool = True
    first_packets: int = 0
    dscp: Sequence[int] = ()


@dataclass(frozen=True)
class Bypass(NF):
    """`bypass`: burns `cycles_per_batch + cycles_per_packet · b` cycles of a
    nominal 2.6 GHz clock per batch of b packets, then forwards it (a
    stand-in for an NF of known cost).

    `cycles_per_batch`: Cycles per batch (nominal 2.6 GHz clock).
    `cycles_per_packet`: Cycles per packet (nominal 2.6 GHz clock).
    """

    kind: ClassVar[str] = "bypass"

    cycles_per_batch: int
    cycles_per_packet: int


@dataclass(frozen=True)
class RandomSplit(NF):
    """`random_split`: sends each packet to gate i with probability
    `weights[i] / Σ weights`.

    `weights`: One weight per outgate (≥ 0, positive sum).
    `seed`: RNG seed (deterministic runs).
    """

    kind: ClassVar[str] = "random_split"

    weights: Sequence[float]
    seed: int = 0


@dataclass(frozen=True)
class TypeCheck(NF):
    """`type_check`: frames of the EtherTypes named to gate 0, the rest dropped.

    `ether_type`: The EtherType (2048 = 0x0800 IPv4, 34525 = 0x86DD IPv6, 33024
        = 0x8100 802.1Q).
    `also`: More EtherTypes that pass (a dual-stack router's: `[34525]`).
    """

    kind: ClassVar[str] = "type_check"

    ether_type: int = 2048
    also: Sequence[int] = ()


@dataclass(frozen=True)
class ExactMatch(NF):
    """`exact_match`: a hash table from a header field to a gate; unmatched
    packets to `default_gate`, or dropped.

    `field`: The field the table keys on (one of "dst_mac", "src_mac",
        "vlan_id", "src_ip", "dst_ip", "src_port", "dst_port").
    `table`: (key, gate) entries; keys written as the field is (a MAC, an IPv4
        or IPv6 address, a number).
    `default_gate`: Gate of unmatched packets (absent: drop them).
    """

    kind: ClassVar[str] = "exact_match"

    field: str
    table: Table[str]
    default_gate: Optional[int] = None


@dataclass(frozen=True)
class Lpm(NF):
    """`lpm`: longest-prefix match on the IPv4 or IPv6 destination; misses go to the drop gate.

    `routes`: (prefix, gate) routes, IPv4 ("20.0.1.0/24") and IPv6
        ("2001:db8::/32") alike.
    `unreachable`: Answer a packet no route matches with a destination
        unreachable from the interface it came in on, out of the gate after the
        routes' (the description's `interfaces` say their addresses); else drop
        it.
    `multipath`: (prefix, [(gate, weight)]) routes spread over several gates by
        a hash of each packet's 5-tuple, so that a flow keeps its path; each
        path's share of the flows follows its weight (≥ 1), and removing a path
        moves only its flows. A prefix is a route or a multipath route, not
        both.
    `hash_seed`: The seed of the multipath routes' flow hash: routers in a row
        given different seeds split one set of flows differently.
    `hash_flow_label`: Hash an IPv6 packet's flow label with its 5-tuple
        (Linux's `fib_multipath_hash_fields` flowlabel): the packets of one
        5-tuple whose sender gave them different labels may take different
        paths.
    """

    kind: ClassVar[str] = "lpm"

    routes: Table[str]
    unreachable: bool = False
    multipath: Sequence[tuple[str, Sequence[tuple[int, int]]]] = ()
    hash_seed: int = 0
    hash_flow_label: bool = False


@dataclass(frozen=True)
class TtlDecrement(NF):
    """`ttl_decrement`: IPv4 TTL or IPv6 hop limit minus one, IPv4's checksum
    updated; expired packets dropped, or with `icmp` answered with a time
    exceeded by gate 1.

    `icmp`: Answer expired packets with a time exceeded from the interface they
        came in on, out of gate 1 (the description's `interfaces` say their
        addresses); else drop them.
    """

    kind: ClassVar[str] = "ttl_decrement"

    icmp: bool = False


@dataclass(frozen=True)
class MacRewrite(NF):
    """`mac_rewrite`: sets source and destination MAC.

    `src`: New source MAC.
    `dst`: New destination MAC.
    """

    kind: ClassVar[str] = "mac_rewrite"

    src: str
    dst: str


@dataclass(frozen=True)
class IpChecksum(NF):
    """`ip_checksum`: recomputes the IPv4 header checksum; IPv6 passes unchanged.
    """

    kind: ClassVar[str] = "ip_checksum"


@dataclass(frozen=True)
class Acl(NF):
    """`acl`: first-match rules on the 5-tuple: permit to gate 0, deny (and
    no match) to the drop gate.

    `rules`: Rules in priority order.
    """

    kind: ClassVar[str] = "acl"

    rules: Sequence[Rule]


@dataclass(frozen=True)
class StaticNat(NF):
    """`static_nat`: prefix-to-prefix translation, sources in `inside` to
    `outside`, destinations back.

    `inside`: Inside prefix ("a.b.c.d/len").
    `outside`: Outside prefix of the same length.
    """

    kind: ClassVar[str] = "static_nat"

    inside: str
    outside: str


@dataclass(frozen=True)
class Merge(NF):
    """`merge`: several ingates into one outgate.

    `ingates`: Number of ingates (≥ 1).
    """

    kind: ClassVar[str] = "merge"

    ingates: int


@dataclass(frozen=True)
class Queue(NF):
    """`queue`: a task boundary (BESS's Queue): the worker keeps up to
    `capacity` packets in front of the module and serves them a batch at a time.

    `capacity`: Packets the queue holds (pkt, 512..=2^20).
    """

    kind: ClassVar[str] = "queue"

    capacity: int


@dataclass(frozen=True)
class Replicate(NF):
    """`replicate`: the ingress of high-availability flows: each packet out of
    gate 0 and a copy out of each of gates 1..=copies.

    `copies`: Copies per packet (≥ 1).
    """

    kind: ClassVar[str] = "replicate"

    copies: int


@dataclass(frozen=True)
class Dedup(NF):
    """`dedup`: the egress of a high-availability flow: the first copy of each
    (flow, sequence number) from any of `ingates`; later copies dropped.

    `ingates`: Number of ingates (paths, ≥ 1).
    `flows`: Flow ids 0..flows are de-duplicated.
    """

    kind: ClassVar[str] = "dedup"

    ingates: int
    flows: int


@dataclass(frozen=True)
class VlanPop(NF):
    """`vlan_pop`: removes the 802.1Q tag; untagged frames are dropped.
    """

    kind: ClassVar[str] = "vlan_pop"


@dataclass(frozen=True)
class VlanPush(NF):
    """`vlan_push`: adds an 802.1Q tag with VLAN id `vlan` (priority 0).

    `vlan`: VLAN id (0..=4095).
    """

    kind: ClassVar[str] = "vlan_push"

    vlan: int


@dataclass(frozen=True)
class SetMetadata(NF):
    """`set_metadata`: sets every packet's mark to `value`.

    `value`: The mark.
    """

    kind: ClassVar[str] = "set_metadata"

    value: int


@dataclass(frozen=True)
class SplitByMetadata(NF):
    """`split_by_metadata`: steers packets by their mark; unknown marks to
    `default_gate`, or dropped.

    `table`: (mark, gate) entries.
    `default_gate`: Gate of unknown marks (absent: drop them).
    """

    kind: ClassVar[str] = "split_by_metadata"

    table: Table[int]
    default_gate: Optional[int] = None


@dataclass(frozen=True)
class GtpuEncap(NF):
    """`gtpu_encap`: tunnels IP packets in GTP-U from `src_ip` to `dst_ip`,
    tunnel id = the packet's mark.

    `src_ip`: Outer source address, IPv4 or IPv6.
    `dst_ip`: Outer destination address, of the source's family.
    `src_mac`: Outer source MAC.
    `dst_mac`: Outer destination MAC.
    """

    kind: ClassVar[str] = "gtpu_encap"

    src_ip: str
    dst_ip: str
    src_mac: str
    dst_mac: str


@dataclass(frozen=True)
class GtpuDecap(NF):
    """`gtpu_decap`: takes IP packets out of GTP-U and puts a new Ethernet
    header on them; mark = tunnel id.

    `src_mac`: Inner source MAC.
    `dst_mac`: Inner destination MAC.
    """

    kind: ClassVar[str] = "gtpu_decap"

    src_mac: str
    dst_mac: str


@dataclass(frozen=True)
class VxlanEncap(NF):
    """`vxlan_encap`: tunnels Ethernet frames in VXLAN from `src_ip` to
    `dst_ip`, network id = the packet's mark.

    `src_ip`: Outer source address, IPv4 or IPv6.
    `dst_ip`: Outer destination address, of the source's family.
    `src_mac`: Outer source MAC.
    `dst_mac`: Outer destination MAC.
    """

    kind: ClassVar[str] = "vxlan_encap"

    src_ip: str
    dst_ip: str
    src_mac: str
    dst_mac: str


@dataclass(frozen=True)
class VxlanDecap(NF):
    """`vxlan_decap`: takes Ethernet frames out of VXLAN; mark = network id.
    """

    kind: ClassVar[str] = "vxlan_decap"


@dataclass(frozen=True)
class IpSrcRewrite(NF):
    """`ip_src_rewrite`: sets the IPv4 source address (checksums updated); IPv6 passes unchanged.

    `addr`: The new source address.
    """

    kind: ClassVar[str] = "ip_src_rewrite"

    addr: str


@dataclass(frozen=True)
class DscpMark(NF):
    """`dscp_mark`: sets the DSCP of IPv4 and IPv6 packets (ECN kept); non-IP dropped.

    `dscp`: The DSCP (0..=63; 46 = EF, 0 = best effort).
    """

    kind: ClassVar[str] = "dscp_mark"

    dscp: int


@dataclass(frozen=True)
class TokenBucket(NF):
    """`token_bucket`: a rate limiter, `rate_pps` on average and bursts of
    `burst` packets; non-conforming packets dropped.

    `rate_pps`: Rate (pkt/s, > 0).
    `burst`: Bucket depth (pkt, ≥ 1).
    """

    kind: ClassVar[str] = "token_bucket"

    rate_pps: float
    burst: float = 32.0


@dataclass(frozen=True)
class Napt(NF):
    """`napt`: stateful address and port translation of `inside` behind
    `public`, on ports `first_port..=last_port`, a binding reused after
    `timeout_s` idle.

    `inside`: Inside prefix ("a.b.c.d/len").
    `public`: Public address.
    `first_port`: First port to allocate.
    `last_port`: Last port to allocate.
    `timeout_s`: Idle time after which a binding may be reused (s, > 0).
    """

    kind: ClassVar[str] = "napt"

    inside: str
    public: str
    first_port: int = 1024
    last_port: int = 65535
    timeout_s: float = 30.0


@dataclass(frozen=True)
class FlowStats(NF):
    """`flow_stats`: packets, bytes, first and last seen per 5-tuple flow, in
    a table of `max_flows` sized up front (beyond, new flows pass
    uncounted); a run of one flow's packets costs one lookup. Its counters:
    flows, lookups, untracked, unparsed.

    `max_flows`: Flows the table holds (1..=2^24).
    """

    kind: ClassVar[str] = "flow_stats"

    max_flows: int = 1048576


@dataclass(frozen=True)
class Reframer(NF):
    """`reframer`: flow-aware batching (Reframer, NSDI'22). Holds each 5-tuple
    flow's packets up to `t_buff_us` and sends them flow by flow, so the
    batches behind it carry runs of one flow. A flow also leaves once it
    holds `max_burst` packets; the table tracks `max_flows` flows and the
    NF holds at most `max_held` packets (beyond, the flow waiting longest
    leaves early). Flows released together leave `priority` first. With
    `slo_control`, the run sets the hold time each period from the delay
    slack of the flows through it, up to `t_buff_us`, growing it only while
    a µs more saves ≥ 0.1% of the measured work per packet (a period's
    `modules[name]["hold_us"]` says what it was). With `coalesce_acks`, a
    flow's pure ACKs that the next one sent with them makes redundant are
    dropped (not duplicates, SACKs, window changes or the last; counted as
    the NF's drops and as `coalesced`). Its counters: packets and runs of
    one flow in and out, releases by cause, bypassed packets, flows entered
    and evicted.

    `t_buff_us`: The longest a packet is held (µs, > 0, at most 1 s).
    `max_burst`: A flow leaves once it holds this many packets (pkt, 1..=256).
    `max_flows`: Flows tracked (the table never grows).
    `max_held`: Packets held at most (pkt); beyond, the longest-waiting flow
        leaves early.
    `priority`: The order of flows released together (one of "oldest_in_queue",
        "oldest_flow", "shortest_flow").
    `bypass`: Packets never held.
    `coalesce_acks`: Drop pure ACKs that the next one of their flow, sent with
        them, makes redundant.
    `slo_control`: Let the run's hold controller choose the hold time from the
        delay slack of the flows through it, up to `t_buff_us`.
    """

    kind: ClassVar[str] = "reframer"

    t_buff_us: float
    max_burst: int = 32
    max_flows: int = 65536
    max_held: int = 4096
    priority: str = "oldest_in_queue"
    bypass: ReframerBypass = ReframerBypass()
    coalesce_acks: bool = False
    slo_control: bool = False


@dataclass(frozen=True)
class InterfaceInput(NF):
    """`interface_input`: a router's input on one interface (see the module
    documentation): gate 0 the packets to forward, gate 1 its answers, to
    go back out the interface.

    `interface`: The interface, by its name in the description's `interfaces`.
    """

    kind: ClassVar[str] = "interface_input"

    interface: str


@dataclass(frozen=True)
class NextHop(NF):
    """`next_hop`: sends each packet to its next hop on an interface (see the
    module documentation): gate 0 out of the interface, gate 1 its ICMP
    errors, to go back out the interface the packet came in on.

    `interface`: The interface, by its name in the description's `interfaces`.
    `via`: The next hop's address, a gateway on the interface's network (absent:
        each packet's destination, on a network the interface is on).
    `hold_pkts`: Packets held for one address while it is asked (pkt, 1..=4096;
        Linux's unres_qlen).
    """

    kind: ClassVar[str] = "next_hop"

    interface: str
    via: Optional[str] = None
    hold_pkts: int = 64


@dataclass(frozen=True)
class InterfaceSplit(NF):
    """`interface_split`: gate i for the packets that arrived on the i-th
    interface named (an ICMP error back out the way its packet came); the
    rest to the drop gate.

    `interfaces`: The interfaces, by their names in the description's
        `interfaces`, in gate order.
    """

    kind: ClassVar[str] = "interface_split"

    interfaces: Sequence[str]
