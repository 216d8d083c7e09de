"""The JSON form of a pipeline description, as the core reads it and
`Pipeline.spec()` writes it: a TypedDict per object (the keys a field
may leave out are not `Required`), the names each string field takes and
the defaults of the scalar fields.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from typing import Final, Optional, Required, TypedDict, Union

__all__ = ["SCHEDULER_MODE_VALUES", "POLL_KIND_VALUES", "EGRESS_ALGORITHM_VALUES", "ON_FULL_VALUES", "NfJson", "PipelineJson", "ModuleJson", "SourceJson", "SyntheticJson", "StreamJson", "TemplateJson", "GtpuJson", "PcapJson", "FlowRuleJson", "FiveTupleJson", "PortJson", "RingJson", "PcapTapJson", "SinkJson", "EdgeJson", "FlowJson", "SchedulerJson", "PollSettingsJson", "OutageJson", "EgressSchedulerJson", "EgressParentJson", "EgressClassJson", "CoDelConfigJson", "FqCoDelConfigJson", "InterfaceJson", "NeighborJson", "NeighborTableJson", "IcmpSettingsJson", "TemplateDefaults", "StreamDefaults", "SyntheticDefaults", "FiveTupleDefaults", "RingDefaults", "EdgeDefaults", "SchedulerDefaults", "PollSettingsDefaults", "CoDelConfigDefaults", "FqCoDelConfigDefaults", "EgressSchedulerDefaults", "NeighborTableDefaults", "IcmpSettingsDefaults", "PipelineDefaults"]


#: The names of `SchedulerMode`.
SCHEDULER_MODE_VALUES: tuple[str, ...] = ("rtc", "wfq")


#: The names of `PollKind`.
POLL_KIND_VALUES: tuple[str, ...] = ("busy", "empty-poll", "slo-aware", "slo-batching", "vpp-adaptive", "metronome", "learned")


#: The names of `EgressAlgorithm`.
EGRESS_ALGORITHM_VALUES: tuple[str, ...] = ("fifo", "priority", "drr", "wf2q+", "qfq")


#: The names of `OnFull`.
ON_FULL_VALUES: tuple[str, ...] = ("drop", "wait")


#: A network function: `type`, the NF's name, and the fields of its configuration.
NfJson = dict[str, object]


class PipelineJson(TypedDict, total=False):
    """A whole pipeline.

    `name`: Human-readable name, e.g. "rc(16)".
    `batch_size`: Batch size B (pkt, 1..=256).
    `modules`: Modules, in any order.
    `edges`: Connections.
    `flows`: Flows.
    `scheduler`: How every worker orders its work.
    `poll`: What the workers do after a round that drains their input.
    `worker_poll`: What one worker does instead, by worker number (`{"1":
        {"policy": "learned"}}`).
    `outages`: Workers taken down during the run (a core failure), checked when
        the run starts.
    `spare_workers`: Idle workers kept beside the placed ones: when a worker is
        in inherent violation, pipeline decomposition moves flows to one.
    `egress_scheduler`: A scheduler sharing the output link among classes of
        flows (absent: none).
    `interfaces`: The router's interfaces (addresses, MAC, MTU, neighbours),
        which the router's NFs name (`interface_input`, `next_hop`…) and whose
        ports stamp their packets with them.
    `icmp`: How many ICMP errors the router sends (Linux's limits by default).
    `ring_codel`: Keep the queues on the rings between workers short with CoDel
        (RFC 8289): a packet leaving a ring is judged by how long it has been in
        the pipeline, and dropped (counted, reason `aqm`) or, where it is
        ECN-capable and `ecn` is on, marked. Absent: a full ring pushes back on
        what feeds it and drops nothing. On the engine.
    """

    name: str
    batch_size: int
    modules: Required[list[ModuleJson]]
    edges: list[EdgeJson]
    flows: list[FlowJson]
    scheduler: SchedulerJson
    poll: PollSettingsJson
    worker_poll: dict[str, PollSettingsJson]
    outages: list[OutageJson]
    spare_workers: int
    egress_scheduler: Optional[EgressSchedulerJson]
    interfaces: list[InterfaceJson]
    icmp: IcmpSettingsJson
    ring_codel: Optional[CoDelConfigJson]


class ModuleJson(TypedDict, total=False):
    """One module.

    `name`: Unique name.
    `t0_ns`: Cost per batch (ns), overriding the NF's own or profiled value.
    `t1_ns`: Cost per packet (ns).
    `controlled`: Whether it gets a controlled fractional buffer (default: when
        its profile is known and its batchiness is ≤ 0.5).
    `max_age_us`: Age bound of the module's fractional buffer (µs): it flushes
        when its oldest packet entered the pipeline longer ago. Absent: no
        bound.
    `worker`: Worker that runs the module (default: a source's is 0, any other's
        its upstream's); an edge between workers runs through a ring.
    `gates`: Names of its outgates, gate 0's first (as VPP names a node's next
        nodes): an edge may give a gate by its name, and an error about a named
        gate says its name beside its number.
    `source`: A task ingress.
    `nf`: A network function.
    `pcap_tap`: A pass-through that writes every packet to a pcap file.
    `sink`: An egress.
    """

    name: Required[str]
    t0_ns: Optional[float]
    t1_ns: Optional[float]
    controlled: Optional[bool]
    max_age_us: Optional[float]
    worker: Optional[int]
    gates: list[str]
    source: SourceJson
    nf: NfJson
    pcap_tap: PcapTapJson
    sink: SinkJson


class SourceJson(TypedDict, total=False):
    """Where a source's packets come from.

    `synthetic`: Template packets, one stream per template, interleaved.
    `pcap`: A classic pcap file replayed from memory in a loop.
    `port`: Frames received on a network interface (the engine only).
    """

    synthetic: SyntheticJson
    pcap: PcapJson
    port: PortJson


class SyntheticJson(TypedDict, total=False):
    """Template packets, one stream per template, interleaved.

    `streams`: Streams.
    `burstiness`: Packets of one stream in a row (≥ 1).
    """

    streams: Required[list[StreamJson]]
    burstiness: int


class StreamJson(TypedDict, total=False):
    """One synthetic stream.

    `flow`: Flow whose packets these are (absent: decided downstream, e.g. by a
        random split).
    `rate_pps`: Offered rate (pkt/s; absent: as fast as the worker takes them).
    `rate_schedule`: Rate steps over periods (period, pkt/s).
    `burst_pkts`: Packets that arrive together, in bursts at the same mean rate
        (1: evenly spaced; at most a receive queue, 4096).
    `template`: The frame.
    """

    flow: Optional[str]
    rate_pps: Optional[float]
    rate_schedule: list[list[float]]
    burst_pkts: int
    template: TemplateJson


class TemplateJson(TypedDict, total=False):
    """The JSON form of `sluice.template.Template`, which says what each field means."""

    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    src_port: int
    dst_port: int
    ttl: int
    size: int
    vlan: Optional[int]
    gtpu: Optional[GtpuJson]


class GtpuJson(TypedDict, total=False):
    """The JSON form of `sluice.template.Gtpu`, which says what each field means."""

    teid: Required[int]
    src_ip: Required[str]
    dst_ip: Required[str]


class PcapJson(TypedDict, total=False):
    """A classic pcap file replayed from memory in a loop.

    `path`: The file.
    `flows`: Flows by IPv4 or IPv6 destination prefix, first match wins.
    `rate_pps`: Replay rate (pkt/s; absent: as fast as taken).
    `rate_schedule`: Rate steps over periods.
    """

    path: Required[str]
    flows: list[FlowRuleJson]
    rate_pps: Optional[float]
    rate_schedule: list[list[float]]


class FlowRuleJson(TypedDict, total=False):
    """A rule that marks a received or replayed packet as a flow's: by its
    destination's prefix, or by its exact 5-tuple (which goes first).

    `flow`: Flow name.
    `prefix`: "20.0.1.0/24" or "2001:db8:1::/48".
    `five_tuple`: Or the 5-tuple.
    """

    flow: Required[str]
    prefix: Optional[str]
    five_tuple: Optional[FiveTupleJson]


class FiveTupleJson(TypedDict, total=False):
    """An exact 5-tuple: addresses of one family, protocol, ports.

    `src`: Source address ("10.0.0.1", "2001:db8::1").
    `dst`: Destination address, of the source's family.
    `proto`: Protocol: "udp", "tcp", "icmp", "icmpv6" or its number.
    `sport`: Source port (0 for a protocol without ports).
    `dport`: Destination port.
    """

    src: Required[str]
    dst: Required[str]
    proto: Required[Union[int, str]]
    sport: int
    dport: int


class PortJson(TypedDict, total=False):
    """Frames received on a network interface (the engine only).

    `port`: `BACKEND:INTERFACE`, e.g. `af_packet:veth1`.
    `flows`: Flows by IPv4 or IPv6 destination prefix, first match wins (no
        match: decided downstream, by a splitter).
    `ring`: The receive ring.
    `fanout`: A fanout group to join: the kernel spreads flows (by hash) over
        the ports in it, one per worker.
    """

    port: Required[str]
    flows: list[FlowRuleJson]
    ring: RingJson
    fanout: Optional[int]


class RingJson(TypedDict, total=False):
    """The shape of a port's ring (see `sluice_port::RingConfig`).

    `block_size`: Bytes per block (a multiple of the page size).
    `blocks`: Blocks in the ring.
    `frame_size`: Bytes per frame slot (a multiple of 16).
    `descriptors`: AF_XDP: descriptors per ring (a power of two).
    """

    block_size: int
    blocks: int
    frame_size: int
    descriptors: int


class PcapTapJson(TypedDict, total=False):
    """A pass-through that writes every packet to a pcap file.

    `path`: Output file.
    """

    path: Required[str]


class SinkJson(TypedDict, total=False):
    """An egress.

    `port`: A port it transmits on first, `BACKEND:INTERFACE` (absent: none).
    `ring`: The port's transmit ring.
    """

    port: Optional[str]
    ring: RingJson


# A connection `from:outgate -> to:ingate`.
#
# `from`: Upstream module.
# `outgate`: Its outgate: a number, or a name of its `gates`.
# `to`: Downstream module.
# `ingate`: Its ingate.
EdgeJson = TypedDict("EdgeJson", {"from": Required[str], "outgate": Union[int, str], "to": Required[str], "ingate": int}, total=False)


class FlowJson(TypedDict, total=False):
    """A flow.

    `name`: Unique name.
    `path`: Module names from source to sink.
    `slo_us`: Delay SLO (µs; absent: best effort).
    `slo_schedule`: SLO steps over periods (period, µs).
    """

    name: Required[str]
    path: Required[list[str]]
    slo_us: Optional[float]
    slo_schedule: list[list[float]]


class SchedulerJson(TypedDict, total=False):
    """The JSON form of `sluice.schedulers.Scheduler`, which says what each field means."""

    mode: str
    backpressure_pkts: Optional[int]


class PollSettingsJson(TypedDict, total=False):
    """The JSON form of `sluice.poll.PollSettings`, which says what each field means."""

    policy: str
    empty_polls: int
    min_sleep_us: float
    max_sleep_us: float
    threshold_pkts: int
    vacation_us: float
    model: Optional[str]
    log_features: bool


# A worker down from the start of period `from` until the start of period `until`.
#
# `worker`: The worker.
# `from`: First period down (over all periods, warm-up included).
# `until`: First period back up.
OutageJson = TypedDict("OutageJson", {"worker": Required[int], "from": Required[int], "until": Required[int]}, total=False)


class EgressSchedulerJson(TypedDict, total=False):
    """The JSON form of `sluice.schedulers.EgressScheduler`, which says what each field means."""

    algorithm: Required[str]
    link_bits_per_s: Required[float]
    overhead_bytes: int
    queue_pkts: int
    on_full: str
    scan_gap_us: float
    parents: list[EgressParentJson]
    classes: Required[list[EgressClassJson]]


class EgressParentJson(TypedDict, total=False):
    """The JSON form of `sluice.schedulers.EgressParent`, which says what each field means."""

    name: Required[str]
    rate_bits_per_s: Required[float]
    ceil_bits_per_s: Optional[float]


class EgressClassJson(TypedDict, total=False):
    """The JSON form of `sluice.schedulers.EgressClass`, which says what each field means."""

    name: Required[str]
    weight: Required[int]
    flows: Required[list[str]]
    codel: Optional[CoDelConfigJson]
    fq_codel: Optional[FqCoDelConfigJson]
    parent: Optional[str]


class CoDelConfigJson(TypedDict, total=False):
    """The JSON form of `sluice.schedulers.CoDelConfig`, which says what each field means."""

    target_us: int
    interval_us: int
    ecn: bool


class FqCoDelConfigJson(TypedDict, total=False):
    """The JSON form of `sluice.schedulers.FqCoDelConfig`, which says what each field means."""

    flows: int
    quantum_bytes: int
    codel: CoDelConfigJson


class InterfaceJson(TypedDict, total=False):
    """The JSON form of `sluice.interface.Interface`, which says what each field means."""

    name: Required[str]
    addresses: list[str]
    mac: Optional[str]
    mtu: Optional[int]
    neighbors: list[NeighborJson]
    neighbor_table: NeighborTableJson


class NeighborJson(TypedDict, total=False):
    """The JSON form of `sluice.interface.Neighbor`, which says what each field means."""

    address: Required[str]
    mac: Required[str]


class NeighborTableJson(TypedDict, total=False):
    """The JSON form of `sluice.interface.NeighborTable`, which says what each field means."""

    capacity: int
    reachable_ms: float
    retrans_ms: float
    probes: int


class IcmpSettingsJson(TypedDict, total=False):
    """The JSON form of `sluice.interface.IcmpSettings`, which says what each field means."""

    ratelimit_ms: float
    burst: int
    msgs_per_sec: float
    msgs_burst: int


class TemplateDefaults:
    """The defaults of `TemplateJson`'s fields that are numbers, flags or names."""

    src_mac: Final[str] = "02:00:00:00:00:01"
    dst_mac: Final[str] = "02:00:00:00:00:02"
    src_ip: Final[str] = "10.0.0.1"
    dst_ip: Final[str] = "20.0.1.1"
    src_port: Final[int] = 5000
    dst_port: Final[int] = 5000
    ttl: Final[int] = 64
    size: Final[int] = 60


class StreamDefaults:
    """The defaults of `StreamJson`'s fields that are numbers, flags or names."""

    burst_pkts: Final[int] = 1


class SyntheticDefaults:
    """The defaults of `SyntheticJson`'s fields that are numbers, flags or names."""

    burstiness: Final[int] = 1


class FiveTupleDefaults:
    """The defaults of `FiveTupleJson`'s fields that are numbers, flags or names."""

    sport: Final[int] = 0
    dport: Final[int] = 0


class RingDefaults:
    """The defaults of `RingJson`'s fields that are numbers, flags or names."""

    block_size: Final[int] = 4096
    blocks: Final[int] = 1024
    frame_size: Final[int] = 2048
    descriptors: Final[int] = 2048


class EdgeDefaults:
    """The defaults of `EdgeJson`'s fields that are numbers, flags or names."""

    outgate: Final[Union[int, str]] = 0
    ingate: Final[int] = 0


class SchedulerDefaults:
    """The defaults of `SchedulerJson`'s fields that are numbers, flags or names."""

    mode: Final[str] = "rtc"


class PollSettingsDefaults:
    """The defaults of `PollSettingsJson`'s fields that are numbers, flags or names."""

    policy: Final[str] = "busy"
    empty_polls: Final[int] = 64
    min_sleep_us: Final[float] = 50.0
    max_sleep_us: Final[float] = 500.0
    threshold_pkts: Final[int] = 8
    vacation_us: Final[float] = 50.0
    log_features: Final[bool] = False


class CoDelConfigDefaults:
    """The defaults of `CoDelConfigJson`'s fields that are numbers, flags or names."""

    target_us: Final[int] = 5000
    interval_us: Final[int] = 100000
    ecn: Final[bool] = True


class FqCoDelConfigDefaults:
    """The defaults of `FqCoDelConfigJson`'s fields that are numbers, flags or names."""

    flows: Final[int] = 1024
    quantum_bytes: Final[int] = 1514


class EgressSchedulerDefaults:
    """The defaults of `EgressSchedulerJson`'s fields that are numbers, flags or names."""

    overhead_bytes: Final[int] = 24
    queue_pkts: Final[int] = 1024
    on_full: Final[str] = "drop"
    scan_gap_us: Final[float] = 0.0


class NeighborTableDefaults:
    """The defaults of `NeighborTableJson`'s fields that are numbers, flags or names."""

    capacity: Final[int] = 1024
    reachable_ms: Final[float] = 30000.0
    retrans_ms: Final[float] = 1000.0
    probes: Final[int] = 3


class IcmpSettingsDefaults:
    """The defaults of `IcmpSettingsJson`'s fields that are numbers, flags or names."""

    ratelimit_ms: Final[float] = 1000.0
    burst: Final[int] = 6
    msgs_per_sec: Final[float] = 1000.0
    msgs_burst: Final[int] = 50


class PipelineDefaults:
    """The defaults of `PipelineJson`'s fields that are numbers, flags or names."""

    name: Final[str] = ""
    batch_size: Final[int] = 32
    spare_workers: Final[int] = 0
