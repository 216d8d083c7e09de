"""The JSON the core returns: a run's report (`RunResult.data`) and the
periods it holds, which `Pipeline.run`'s `on_period` receives as they
end; the model `Pipeline.validate` returns; what `Pipeline.send` sent.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from typing import Optional, Required, TypedDict

__all__ = ["BACKEND_KIND_VALUES", "SLO_STATISTIC_VALUES", "ROLE_VALUES", "RunOutputJson", "SummaryJson", "DropsJson", "DelaySamplingJson", "FlowTotalsJson", "ModuleTotalsJson", "PeriodOutputJson", "FlowPeriodJson", "ModulePeriodJson", "WorkerTelemetryJson", "TotalsJson", "ResponseJson", "ClassPeriodJson", "ClassMembersJson", "ModelJson", "ModuleDeclJson", "ProfileJson", "EdgeJson", "FlowJson", "SentJson"]


#: The names of `BackendKind`.
BACKEND_KIND_VALUES: tuple[str, ...] = ("engine", "sim")


#: The names of `SloStatistic`.
SLO_STATISTIC_VALUES: tuple[str, ...] = ("p50", "p95", "p99", "max", "mean")


#: The names of `Role`.
ROLE_VALUES: tuple[str, ...] = ("source", "function", "sink")


class RunOutputJson(TypedDict, total=False):
    """A whole run.

    `pipeline`: The pipeline's name.
    `controller`: The controller's name.
    `backend`: Where it ran (one of "engine", "sim").
    `batch_size`: Batch size B (pkt).
    `period_ms`: Control period (ms).
    `warmup_periods`: Periods of warm-up, not measured, before the others.
    `slo_statistic`: The delay statistic held to each SLO (one of "p50", "p95",
        "p99", "max", "mean").
    `delta`: The controllers' margin δ (share of an SLO).
    `summary`: The run in brief, over its measured periods.
    `delays_timed`: Which delivered packets the delays were measured on (none:
        timing off).
    `interrupted`: Why the run ended before its last period (none: it ran to the
        end).
    `periods_dropped`: Earlier periods not kept in `periods` (the summary counts
        them).
    `flow_totals`: Per flow, over the whole run (pkt).
    `removed_flows`: Flows removed while it ran.
    `module_totals`: Per module, its counters over the whole run.
    `periods`: The periods kept, warm-up included.
    `egress_classes`: The scheduled egress's classes (none: no scheduled
        egress).
    `rate_bound`: On the simulator, why its rate is the model's bound rather
        than a rate, where it is (see `Pipeline::uncosted`).
    """

    pipeline: Required[str]
    controller: Required[str]
    backend: Required[str]
    batch_size: Required[int]
    period_ms: Required[float]
    warmup_periods: Required[int]
    slo_statistic: Required[str]
    delta: Required[float]
    summary: Required[SummaryJson]
    delays_timed: Required[Optional[DelaySamplingJson]]
    interrupted: Required[Optional[str]]
    periods_dropped: Required[int]
    flow_totals: Required[dict[str, FlowTotalsJson]]
    removed_flows: Required[list[str]]
    module_totals: Required[dict[str, ModuleTotalsJson]]
    periods: Required[list[PeriodOutputJson]]
    egress_classes: Required[Optional[list[ClassMembersJson]]]
    rate_bound: Required[Optional[str]]


class SummaryJson(TypedDict, total=False):
    """The whole run in brief.

    `rate_pps`: Delivered packets per second over the measured periods (pkt/s).
    `mean_batch`: Mean over measured periods of the mean batch size at
        controlled NFs (pkt).
    `violation_pct`: Share of measured periods with an SLO violation (%).
    `generated`: Packets made by the sources (pkt).
    `delivered`: Packets that reached an egress (pkt).
    `dropped`: Packets dropped, every reason (pkt).
    `drops`: The same by reason (pkt).
    `in_flight`: Packets still inside at the end (pkt; 0 after a drained stop).
    `missed`: Arrivals lost at the sources' full receive queues, never generated
        (pkt).
    `accounted`: Whether every packet is accounted for: generated = delivered +
        dropped + in flight.
    `lossless`: Whether nothing was lost: accounted for, no drop but of removed
        duplicates, no arrival missed at a full receive queue, and nothing left
        inside when the run ended (what a drain could not deliver in time is
        lost with the pipeline).
    """

    rate_pps: Required[float]
    mean_batch: Required[float]
    violation_pct: Required[float]
    generated: Required[int]
    delivered: Required[int]
    dropped: Required[int]
    drops: Required[DropsJson]
    in_flight: Required[int]
    missed: Required[int]
    accounted: Required[bool]
    lossless: Required[bool]


class DropsJson(TypedDict, total=False):
    """Packets dropped, by reason (pkt).

    `nf`: By an NF, at its drop gate: malformed, refused by policy, no buffer
        for a copy.
    `queue_full`: At a full queue (a queue module's or a weighted-fair
        module's).
    `egress_full`: At an egress: its port's transmit ring or its class of the
        scheduled link was full.
    `aqm`: At an egress, by its class's queue management (CoDel), to keep the
        queue short.
    `worker_down`: At a worker that was down.
    `duplicates`: High-availability copies removed because their twin passed: by
        design, not a loss.
    """

    nf: Required[int]
    queue_full: Required[int]
    egress_full: Required[int]
    aqm: Required[int]
    worker_down: Required[int]
    duplicates: Required[int]


class DelaySamplingJson(TypedDict, total=False):
    """Which delivered packets an egress times: every packet until its flow
    has `floor_pkts` in the period's delays, then those of one round in
    `one_in` (drawn at random), each counted `one_in` times: an unbiased
    sample of the period's packets, at a fraction of the clock reads and
    histogram updates (a read costs ~7 ns here, as much as an NF visit).
    `one_in` is the most: each flow samples only as sparsely as still
    draws `MIN_DRAWN_ROUNDS` rounds a period at its rate of rounds in the
    period before (down to every packet, where it has fewer), so that its
    quantiles keep the error `DelaySample::error_pct` states.

    `floor_pkts`: Packets a flow has timed in a period before sampling starts
        (pkt).
    `one_in`: Rounds per timed round past the floor, at most (a power of two; 1:
        every packet).
    """

    floor_pkts: Required[int]
    one_in: Required[int]


class FlowTotalsJson(TypedDict, total=False):
    """One flow's accounting since the start (pkt).

    `generated`: Packets of the flow its source made, or that became the flow's
        downstream (at the first hop only it takes).
    `delivered`: Packets delivered at its egress.
    `dropped`: Packets of the flow dropped anywhere.
    `misdelivered`: Packets of other flows that reached this flow's egress.
    """

    generated: Required[int]
    delivered: Required[int]
    dropped: Required[int]
    misdelivered: Required[int]


class ModuleTotalsJson(TypedDict, total=False):
    """A module's counters over the whole run.

    `arrivals`: Batches that arrived at the fractional buffer.
    `arrived_pkts`: Packets that arrived at the fractional buffer (pkt).
    `arrival_rounds`: Walker rounds in which at least one batch arrived.
    `round_pkts_sq`: Σ over those rounds of the packets each brought, squared
        (pkt²).
    `runs`: NF runs (batches into the NF).
    `run_pkts`: Packets into the NF (pkt).
    `busy_ns`: Time spent in the NF (ns).
    `dropped`: Packets the NF sent to its drop gate: malformed, refused by
        policy, no pool buffer for a copy (pkt).
    `duplicates`: High-availability copies the NF removed because their twin had
        passed (pkt): dropped by design, not lost.
    `queue_dropped`: Packets that arrived at a full queue (a queue module's, or
        a weighted-fair module's) and were dropped (pkt).
    `down_dropped`: Packets dropped because the module's worker was down (pkt).
    `egress_dropped`: Egresses only: packets their port's transmit ring or their
        class of the scheduled link had no room for (pkt).
    `aqm_dropped`: Egresses only: packets their class's queue management (CoDel)
        dropped to keep the queue short (pkt).
    `ecn_marked`: Packets it sent marked congestion experienced by its class's
        queue management (an egress; pkt).
    `missed`: Sources only: arrivals lost at a full receive queue, never
        generated (pkt).
    `created`: Packets the NF made (copies of its input, see
        `NfContext::copy_packet`) (pkt).
    `delivered`: Packets delivered (pkt): at an egress, its runs' packets less
        those its port or scheduled link refused and those still waiting there;
        at an NF, those addressed to the router that it took in (an ARP request,
        a ping), answered or not (see `NfContext::answer`).
    `nf`: An NF's (what each counts is its kind's to say).
    `port`: A port's, at a source or sink on one.
    `nf_drops`: Its NF's drops by reason (pkt; reasons it dropped none for left
        out).
    """

    arrivals: Required[int]
    arrived_pkts: Required[int]
    arrival_rounds: Required[int]
    round_pkts_sq: Required[int]
    runs: Required[int]
    run_pkts: Required[int]
    busy_ns: Required[int]
    dropped: Required[int]
    duplicates: Required[int]
    queue_dropped: Required[int]
    down_dropped: Required[int]
    egress_dropped: Required[int]
    aqm_dropped: Required[int]
    ecn_marked: Required[int]
    missed: Required[int]
    created: Required[int]
    delivered: Required[int]
    nf: dict[str, int]
    port: dict[str, int]
    nf_drops: dict[str, int]


class PeriodOutputJson(TypedDict, total=False):
    """One control period.

    `t_s`: End of the period (s since the run started).
    `period`: Period index, from 0.
    `warmup`: Whether it is warm-up.
    `rate_pps`: Delivered over all flows (pkt/s).
    `mean_batch`: Mean over controlled modules of the mean batch at the NF
        (pkt).
    `violated`: Whether some flow's SLO statistic exceeded its SLO.
    `flows`: Per flow.
    `modules`: Per module.
    `workers`: Per worker.
    `totals`: Accounting since the start (pkt).
    `response`: How long the control side took to respond.
    `moves`: Modules moved after this period, to the worker given.
    `fallback`: Why the controller's next settings are a fallback, if they are.
    `changes`: Changes made from outside before this period, one line each.
    `classes`: The scheduled egress's classes (none: no scheduled egress).
    """

    t_s: Required[float]
    period: Required[int]
    warmup: Required[bool]
    rate_pps: Required[float]
    mean_batch: Required[float]
    violated: Required[bool]
    flows: Required[dict[str, FlowPeriodJson]]
    modules: Required[dict[str, ModulePeriodJson]]
    workers: Required[list[WorkerTelemetryJson]]
    totals: Required[TotalsJson]
    response: Required[ResponseJson]
    moves: Required[dict[str, int]]
    fallback: Required[Optional[str]]
    changes: Required[list[str]]
    classes: Required[Optional[dict[str, ClassPeriodJson]]]


class FlowPeriodJson(TypedDict, total=False):
    """One flow over one period.

    `generated`: Packets its source made (pkt).
    `dropped`: Packets of it dropped, on any worker (pkt).
    `delivered`: Packets delivered (pkt).
    `rate_pps`: Delivery rate (pkt/s).
    `mean_us`: Mean delay (µs).
    `p50_us`: Median delay (µs).
    `p95_us`: 95th-percentile delay (µs).
    `p99_us`: 99th-percentile delay (µs).
    `max_us`: Largest delay (µs).
    `slo_us`: The SLO in force (µs; none: best effort).
    `misdelivered`: Packets of other flows that reached its egress (pkt).
    `timed_one_in`: Past the floor, the delays of one round in this many were
        timed (1: every packet) .
    `drawn_rounds`: ... drawn this many times .
    `quantile_error_pct`: ... so that with 95% confidence every quantile is
        within this many percentile points of the period's.
    """

    generated: Required[int]
    dropped: Required[int]
    delivered: Required[int]
    rate_pps: Required[float]
    mean_us: Required[float]
    p50_us: Required[float]
    p95_us: Required[float]
    p99_us: Required[float]
    max_us: Required[float]
    slo_us: Required[Optional[float]]
    misdelivered: Required[int]
    timed_one_in: Required[int]
    drawn_rounds: Required[int]
    quantile_error_pct: Required[float]


class ModulePeriodJson(TypedDict, total=False):
    """One module over one period.

    `trigger`: Fractional-buffer trigger in force at the end of the period (pkt,
        0 = none).
    `x`: NF runs per second (batch/s).
    `r`: Packets into the NF per second (pkt/s).
    `b_in`: Mean batch size arriving at the buffer (pkt).
    `b_round`: Mean packets arriving at the buffer per walker round that brings
        any (pkt; ≥ `b_in`). A round's arrivals come back to back: after a split
        and a merge, many batches of one packet may make one round's worth, and
        a trigger that does not divide it leaves the rest waiting a whole round
        gap for the next. `None` for a module no controller sizes: the walker
        counts rounds only for controlled modules.
    `b_round_sd`: Standard deviation of the packets a round that brings any
        brings (pkt): 0 where every such round brings `b_round`, as behind
        splits that deal a source's batches out the same way each time. `None`
        where `b_round` is.
    `b`: Mean batch size at the NF (pkt).
    `busy_ns`: Time spent in the NF during the period (ns; timed on sampled
        rounds).
    `dropped`: Packets dropped during the period, every reason (pkt).
    `drops`: The same by reason (pkt).
    `held`: Packets waiting in the module's buffer or queue at the end of the
        period (pkt).
    `controlled`: Whether a controller sizes its buffer.
    `nf`: An NF's (what each counts is its kind's to say).
    `port`: A port's, at a source or sink on one.
    `nf_drops`: Its NF's drops over the period by reason (pkt; reasons it
        dropped none for left out).
    `hold_us`: The hold time in force, for an NF whose hold is controlled (µs).
    """

    trigger: Required[int]
    x: Required[float]
    r: Required[float]
    b_in: Required[float]
    b_round: Required[Optional[float]]
    b_round_sd: Required[Optional[float]]
    b: Required[float]
    busy_ns: Required[int]
    dropped: Required[int]
    drops: Required[DropsJson]
    held: Required[int]
    controlled: Required[bool]
    nf: dict[str, int]
    port: dict[str, int]
    nf_drops: dict[str, int]
    hold_us: Optional[float]


class WorkerTelemetryJson(TypedDict, total=False):
    """One worker over one control period.

    `busy_fraction`: Share of the period spent moving packets (0..1).
    `turnaround_ns`: Mean time of a scheduler round that moved packets (ns).
    `probe_ns`: Mean time of the fixed `crate::core_probe` work this period (ns;
        0 when it did not run): how much of its core the worker had.
    `cpu_fraction`: Share of the period the worker's thread was on a CPU,
        polling included (0..1; the simulator, which does not poll, reports its
        busy share).
    `polls`: Rounds (polls of every input) during the period.
    `empty_polls`: Of those, rounds that moved no packet.
    `waits`: Sleeps and waits for an interrupt during the period.
    `wait_asked_us`: Their mean length as asked (µs) .
    `wait_late_us`: ... and how much longer they took on average (µs).
    `poll_features`: The features the worker's poller logged this period (see
        `Counters::poll_features`), a row per round short of a full batch.
    """

    busy_fraction: Required[float]
    turnaround_ns: Required[float]
    probe_ns: Required[float]
    cpu_fraction: Required[float]
    polls: Required[int]
    empty_polls: Required[int]
    waits: Required[int]
    wait_asked_us: Required[float]
    wait_late_us: Required[float]
    poll_features: list[list[float]]


class TotalsJson(TypedDict, total=False):
    """Whole-pipeline packet accounting since the start (pkt).
    Every packet is accounted for: `generated = delivered + dropped + in_flight`;
    the run is lossless when `drops.lost() == 0`.

    `generated`: Packets made by sources, and copies made inside (`copied`).
    `copied`: Of `generated`, the copies NFs made (replicated high-availability
        packets).
    `delivered`: Packets that reached an egress.
    `dropped`: Packets dropped, every reason.
    `drops`: The same by reason.
    `in_flight`: Packets still inside the pipeline.
    `missed`: Arrivals the sources' receive queues could not hold (not part of
        `generated`).
    """

    generated: Required[int]
    copied: Required[int]
    delivered: Required[int]
    dropped: Required[int]
    drops: Required[DropsJson]
    in_flight: Required[int]
    missed: Required[int]


class ResponseJson(TypedDict, total=False):
    """The control side's response time to one period (Batchy Table 1).

    `read_ns`: Reading the telemetry from the data plane (ns).
    `compute_ns`: The controller's computation (ns).
    `apply_ns`: Applying its actions to the data plane (ns).
    """

    read_ns: Required[int]
    compute_ns: Required[int]
    apply_ns: Required[int]


class ClassPeriodJson(TypedDict, total=False):
    """A scheduled egress's class over one period.

    `generated`: Packets its flows' sources made (pkt).
    `delivered`: Packets of its flows delivered (pkt).
    `dropped`: Packets of its flows dropped (pkt).
    `rate_pps`: Delivered (pkt/s).
    `p99_us`: The largest p99 delay among its flows that delivered (µs).
    """

    generated: Required[int]
    delivered: Required[int]
    dropped: Required[int]
    rate_pps: Required[float]
    p99_us: Required[float]


class ClassMembersJson(TypedDict, total=False):
    """A scheduled egress's class as the description resolved it.

    `name`: Its name.
    `weight`: Its weight.
    `flows`: The flows it carries.
    """

    name: Required[str]
    weight: Required[int]
    flows: Required[list[str]]


class ModelJson(TypedDict, total=False):
    """A validated pipeline.

    `batch_size`: Runtime batch size B (pkt).
    `modules`: Modules, indexed by `ModuleId`.
    `edges`: Edges; `outgate_edge` indexes them by module and gate.
    `flows`: Flows, indexed by `FlowId`.
    `worker_of`: Worker of every module: where it is placed, else its upstream's
        worker.
    `n_workers`: Workers the pipeline runs on: every worker a module is placed
        on, and spare ones that idle until modules are moved there at run time.
    `crossings`: Edges (indices into `edges`) between modules on different
        workers: each runs through a lock-free ring.
    `next`: For every module, the module behind each outgate.
    `topo_order`: Modules in an order where every edge goes forward.
    `sink_flows`: For every sink, the flows that end there (removed ones too,
        whose packets in flight still arrive).
    """

    batch_size: Required[int]
    modules: Required[list[ModuleDeclJson]]
    edges: Required[list[EdgeJson]]
    flows: Required[list[FlowJson]]
    worker_of: Required[list[int]]
    n_workers: Required[int]
    crossings: Required[list[int]]
    next: Required[list[list[int]]]
    topo_order: Required[list[int]]
    sink_flows: Required[list[list[int]]]


class ModuleDeclJson(TypedDict, total=False):
    """One module as the builder declares it.

    `name`: Unique name.
    `role`: Source, function or sink (one of "source", "function", "sink").
    `ingates`: Number of ingates.
    `outgates`: Number of outgates (the drop gate is extra and always there).
    `profile`: Cost model, when known.
    `controlled`: Whether the controller may set this module's fractional-buffer
        trigger.
    `max_age_ns`: Age bound of the fractional buffer (ns): it flushes when its
        oldest packet entered the pipeline longer ago. `None` (default): no
        bound.
    `queue_pkts`: A queue of this many packets in front of the module (pkt): a
        task boundary, as BESS's Queue. Arrivals fill it (beyond it they are
        dropped and counted) and the worker serves it a batch at a time as a
        task of its own. `None` (default): packets run to completion.
    `held_pkts`: The most packets its NF keeps between runs (pkt; see
        `crate::NetworkFunction::most_held`): the worker's pool makes room for
        them.
    `max_hold_ns`: For an NF that holds packets: the run's hold controller sets
        its hold time, up to this bound (ns; see `crate::Actions::holds`).
        `None` (default): the NF keeps the hold time it was built with.
    """

    name: Required[str]
    role: Required[str]
    ingates: Required[int]
    outgates: Required[int]
    profile: Required[Optional[ProfileJson]]
    controlled: Required[bool]
    max_age_ns: Required[Optional[int]]
    queue_pkts: Required[Optional[int]]
    held_pkts: Required[int]
    max_hold_ns: Required[Optional[int]]


class ProfileJson(TypedDict, total=False):
    """Linear cost model of one NF run on a batch of b packets: T0 + T1·b (ns).

    `t0_ns`: Cost per batch (ns).
    `t1_ns`: Cost per packet (ns).
    """

    t0_ns: Required[float]
    t1_ns: Required[float]


# A connection from an outgate to an ingate.
#
# `from`: Upstream module.
# `outgate`: Its outgate.
# `to`: Downstream module.
# `ingate`: Its ingate.
EdgeJson = TypedDict("EdgeJson", {"from": Required[int], "outgate": Required[int], "to": Required[int], "ingate": Required[int]}, total=False)


class FlowJson(TypedDict, total=False):
    """A flow: a source-to-sink path with an optional delay SLO.

    `name`: Unique name (over a whole run: a removed flow keeps it).
    `path`: Modules from the source to the sink, following edges.
    `slo_ns`: Delay SLO (ns), `None` for best effort.
    `removed`: Removed while the pipeline runs (see `Model::with_flow_removed`):
        no packet becomes its any more, those it has are counted where they end.
        Its id stays, as packets carry it.
    """

    name: Required[str]
    path: Required[list[int]]
    slo_ns: Required[Optional[int]]
    removed: Required[bool]


class SentJson(TypedDict, total=False):
    """What a sender put on the wire.

    `packets`: Frames the transmit ring took (pkt).
    `bytes`: Their bytes (bytes).
    `seconds`: How long it sent (s).
    `ring_full`: Times the ring was full and the sender waited for the kernel.
    """

    packets: Required[int]
    bytes: Required[int]
    seconds: Required[float]
    ring_full: Required[int]
