"""How every worker orders its work, and the scheduler that shares the
output link among classes of flows.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional, Sequence, cast

from sluice.checked import Part
from sluice.description import SCHEDULER_MODE_VALUES, SchedulerJson, EGRESS_ALGORITHM_VALUES, ON_FULL_VALUES, EgressSchedulerJson

__all__ = ["SCHEDULER_MODE_VALUES", "EGRESS_ALGORITHM_VALUES", "ON_FULL_VALUES", "EgressParent", "EgressClass", "CoDelConfig", "FqCoDelConfig", "Scheduler", "EgressScheduler"]


@dataclass(frozen=True)
class EgressParent:
    """A shaped parent of classes of the scheduled egress.

    `name`: Unique name.
    `rate_bits_per_s`: The rate it is given (bit/s).
    `ceil_bits_per_s`: The rate it may reach by borrowing what the others leave
        (bit/s; absent: the link's).
    """

    name: str
    rate_bits_per_s: float
    ceil_bits_per_s: Optional[float] = None


@dataclass(frozen=True)
class EgressClass:
    """One class of the scheduled egress.

    `name`: Unique name.
    `weight`: Its share of the link against the others' (≥ 1).
    `flows`: The flows it carries: names, or a prefix ending in `*` for the
        flows no class names.
    `codel`: Keep its queue short with CoDel (RFC 8289): drop packets that
        waited too long, ever more often while they do (absent: tail drop at
        `queue_pkts` only).
    `fq_codel`: Queue its flows apart, in deficit round robin, each kept short
        with its own CoDel (FQ-CoDel, RFC 8290): a sparse flow waits behind no
        bulk one (absent: one queue; not with `codel`).
    `parent`: The parent it is under (one of `parents`; absent: none).
    """

    name: str
    weight: int
    flows: Sequence[str]
    codel: Optional[CoDelConfig] = None
    fq_codel: Optional[FqCoDelConfig] = None
    parent: Optional[str] = None


@dataclass(frozen=True)
class CoDelConfig:
    """CoDel's settings.

    `target_us`: The sojourn time it keeps the queue to (µs; RFC 8289: 5 ms).
    `interval_us`: How long the sojourn time may stay above the target before it
        acts, and the control law's base (µs; RFC 8289: 100 ms).
    `ecn`: Mark ECN-capable packets congestion experienced instead of dropping
        them (RFC 3168).
    """

    target_us: int = 5000
    interval_us: int = 100000
    ecn: bool = True


@dataclass(frozen=True)
class FqCoDelConfig:
    """FQ-CoDel's settings.

    `flows`: Flow queues; a flow's 5-tuple hash picks one (RFC 8290, Linux:
        1024).
    `quantum_bytes`: Bytes a queue may send per round (RFC 8290, Linux: 1514, an
        Ethernet frame).
    `codel`: Each queue's CoDel.
    """

    flows: int = 1024
    quantum_bytes: int = 1514
    codel: CoDelConfig = CoDelConfig()


@dataclass(frozen=True)
class Scheduler(Part):
    """How every worker orders its work.

    `mode`: The scheduling model (one of "rtc", "wfq").
    `backpressure_pkts`: wfq: sources pause while the queues hold this many
        packets (pkt, ≥ 1); absent: no backpressure.
    """

    part: ClassVar[str] = "scheduler"

    mode: str = "rtc"
    backpressure_pkts: Optional[int] = None

    def spec(self) -> SchedulerJson:
        """The JSON form the core reads."""
        return cast("SchedulerJson", super().spec())


@dataclass(frozen=True)
class EgressScheduler(Part):
    """`egress_scheduler` in a pipeline description.

    `algorithm`: The scheduling algorithm (`priority`: a class's weight is its
        priority, the largest first) (one of "fifo", "priority", "drr", "wf2q+",
        "qfq").
    `link_bits_per_s`: The link's rate (bit/s).
    `overhead_bytes`: Framing bytes charged per packet on the link (Ethernet:
        24).
    `queue_pkts`: Packets each class's queue holds; arrivals beyond are dropped,
        counted.
    `on_full`: What a full class does (one of "drop", "wait").
    `scan_gap_us`: Δ_A: the least time between two of the arbiter's scans (µs;
        0: back to back): the mailboxes' cache lines move between the workers'
        cores and the arbiter's at most that often, and a packet may wait that
        much more.
    `parents`: Shaped parents the classes may be put under (HTB-like: each is
        given its rate and may borrow up to its ceiling); with parents, every
        class names one, and the algorithm shares each parent among its classes
        (empty: the classes share the link directly).
    `classes`: The classes, in order.
    """

    part: ClassVar[str] = "egress_scheduler"

    algorithm: str
    link_bits_per_s: float
    classes: Sequence[EgressClass]
    overhead_bytes: int = 24
    queue_pkts: int = 1024
    on_full: str = "drop"
    scan_gap_us: float = 0.0
    parents: Sequence[EgressParent] = ()

    def spec(self) -> EgressSchedulerJson:
        """The JSON form the core reads."""
        return cast("EgressSchedulerJson", super().spec())
