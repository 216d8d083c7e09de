//! Telemetry: counters the data path keeps, and the per-period view built from them.
//!
//! The walker (not each NF) counts into plain cumulative integers; once per
//! control period the worker hands a copy to the control side, which turns
//! two consecutive copies into a [`Telemetry`] (see `meter`). The simulator
//! fills the same counters, so controllers see one type from both backends.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::model::Model;

/// Cumulative counters of one module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ModuleCounters {
    /// Batches that arrived at the fractional buffer.
    pub arrivals: u64,
    /// Packets that arrived at the fractional buffer (pkt).
    pub arrived_pkts: u64,
    /// Walker rounds in which at least one batch arrived.
    pub arrival_rounds: u64,
    /// Σ over those rounds of the packets each brought, squared (pkt²).
    pub round_pkts_sq: u64,
    /// NF runs (batches into the NF).
    pub runs: u64,
    /// Packets into the NF (pkt).
    pub run_pkts: u64,
    /// Time spent in the NF (ns).
    pub busy_ns: u64,
    /// Packets the NF sent to its drop gate: malformed, refused by policy,
    /// no pool buffer for a copy (pkt).
    pub dropped: u64,
    /// High-availability copies the NF removed because their twin had
    /// passed (pkt): dropped by design, not lost.
    pub duplicates: u64,
    /// Packets that arrived at a full queue (a queue module's, or a
    /// weighted-fair module's) and were dropped (pkt).
    pub queue_dropped: u64,
    /// Packets dropped because the module's worker was down (pkt).
    pub down_dropped: u64,
    /// Egresses only: packets their port's transmit ring or their class
    /// of the scheduled link had no room for (pkt).
    pub egress_dropped: u64,
    /// Egresses only: packets their class's queue management (CoDel)
    /// dropped to keep the queue short (pkt).
    pub aqm_dropped: u64,
    /// Packets it sent marked congestion experienced by its class's
    /// queue management (an egress; pkt).
    pub ecn_marked: u64,
    /// Sources only: arrivals lost at a full receive queue, never generated (pkt).
    pub missed: u64,
    /// Packets the NF made (copies of its input, see [`NfContext::copy_packet`](crate::NfContext::copy_packet)) (pkt).
    pub created: u64,
    /// Packets delivered (pkt): at an egress, its runs' packets less those
    /// its port or scheduled link refused and those still waiting there;
    /// at an NF, those addressed to the router that it took in (an ARP
    /// request, a ping), answered or not (see [`NfContext::answer`](crate::NfContext::answer)).
    pub delivered: u64,
    /// The NF's own cumulative counters (see
    /// [`NetworkFunction::read_counters`](crate::NetworkFunction::read_counters));
    /// what each slot counts is the NF's to say. Reports name them.
    #[serde(skip)]
    pub nf: NfCounters,
    /// Of `dropped`, the packets dropped for each reason (see [`DropReason`](crate::DropReason)).
    #[serde(skip)]
    pub nf_drops: crate::NfDrops,
}

/// Slots for an NF's own counters.
pub const NF_COUNTERS: usize = 16;

/// An NF's own cumulative counters, by slot.
pub type NfCounters = [u64; NF_COUNTERS];

impl ModuleCounters {
    /// What it dropped beside its NF, by the name reports and metrics
    /// give each reason (pkt).
    pub fn other_drops(&self) -> [(&'static str, u64); 4] {
        [("queue_full", self.queue_dropped), ("worker_down", self.down_dropped), ("egress_full", self.egress_dropped), ("aqm", self.aqm_dropped)]
    }

    /// Its drops so far, by reason (pkt).
    pub fn drops(&self) -> Drops {
        Drops { nf: self.dropped, queue_full: self.queue_dropped, egress_full: self.egress_dropped, aqm: self.aqm_dropped, worker_down: self.down_dropped, duplicates: self.duplicates }
    }
}

/// Packets dropped, by reason (pkt).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Drops {
    /// By an NF, at its drop gate: malformed, refused by policy, no buffer for a copy.
    pub nf: u64,
    /// At a full queue (a queue module's or a weighted-fair module's).
    pub queue_full: u64,
    /// At an egress: its port's transmit ring or its class of the
    /// scheduled link was full.
    pub egress_full: u64,
    /// At an egress, by its class's queue management (CoDel), to keep the queue short.
    pub aqm: u64,
    /// At a worker that was down.
    pub worker_down: u64,
    /// High-availability copies removed because their twin passed: by design, not a loss.
    pub duplicates: u64,
}

impl Drops {
    /// Every drop (pkt).
    pub fn total(&self) -> u64 {
        self.lost() + self.duplicates
    }

    /// Drops that lose a packet: all but removed duplicates (pkt).
    pub fn lost(&self) -> u64 {
        self.nf + self.queue_full + self.egress_full + self.aqm + self.worker_down
    }

    /// The difference `self − earlier`, reason by reason.
    pub fn since(&self, earlier: &Drops) -> Drops {
        Drops {
            nf: self.nf - earlier.nf,
            queue_full: self.queue_full - earlier.queue_full,
            egress_full: self.egress_full - earlier.egress_full,
            aqm: self.aqm - earlier.aqm,
            worker_down: self.worker_down - earlier.worker_down,
            duplicates: self.duplicates - earlier.duplicates,
        }
    }
}

impl std::ops::AddAssign for Drops {
    fn add_assign(&mut self, other: Drops) {
        self.nf += other.nf;
        self.queue_full += other.queue_full;
        self.egress_full += other.egress_full;
        self.aqm += other.aqm;
        self.worker_down += other.worker_down;
        self.duplicates += other.duplicates;
    }
}

/// Cumulative counters of one worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerCounters {
    /// Time spent moving packets (ns).
    pub busy_ns: u64,
    /// Scheduler rounds that moved at least one packet.
    pub busy_rounds: u64,
    /// Time spent in the core probe (ns), over `probes` runs of it.
    pub probe_ns: u64,
    /// Runs of the core probe.
    pub probes: u64,
    /// CPU time the worker's thread used (ns; 0 where there is no thread: the simulator).
    pub cpu_ns: u64,
    /// Rounds, each a poll of every input.
    pub polls: u64,
    /// Of those, rounds that moved no packet.
    pub empty_polls: u64,
    /// Sleeps and waits for an interrupt (see `poll::Wait`).
    pub waits: u64,
    /// Their lengths as asked (ns) ...
    pub wait_asked_ns: u64,
    /// ... and as slept (ns).
    pub wait_slept_ns: u64,
}

/// Lowest discernible and highest delay the histogram holds (ns): ≤ 1%
/// error from 6.4 µs to 1 s, steps of 64 ns below (every SLO we meet is
/// ≥ 10 µs); larger delays saturate at 10 s. Counting from 64 ns rather
/// than 1 ns saves the quantile scan 6 × 128 empty counts a flow, a quarter
/// of RC(64)'s telemetry read.
const DELAY_RANGE_NS: (u64, u64) = (64, 10_000_000_000);

/// Which delivered packets an egress times: every packet until its flow
/// has `floor_pkts` in the period's delays, then those of one round in
/// `one_in` (drawn at random), each counted `one_in` times: an unbiased
/// sample of the period's packets, at a fraction of the clock reads and
/// histogram updates (a read costs ~7 ns here, as much as an NF visit).
/// `one_in` is the most: each flow samples only as sparsely as still
/// draws [`MIN_DRAWN_ROUNDS`] rounds a period at its rate of rounds in the
/// period before (down to every packet, where it has fewer), so that its
/// quantiles keep the error [`DelaySample::error_pct`] states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DelaySampling {
    /// Packets a flow has timed in a period before sampling starts (pkt).
    pub floor_pkts: u64,
    /// Rounds per timed round past the floor, at most (a power of two; 1: every packet).
    pub one_in: u32,
}

/// Rounds a flow must have drawn past the floor in a period for it to be
/// sampled: with 95% confidence every quantile of its sampled packets is
/// then within 2.1 percentile points of the whole period's (the
/// Dvoretzky–Kiefer–Wolfowitz bound over the rounds drawn, each a sample).
pub const MIN_DRAWN_ROUNDS: u64 = 4096;

impl DelaySampling {
    /// Every packet timed (the simulator, whose clock reads cost nothing).
    pub const EVERY_PACKET: Self = Self { floor_pkts: 0, one_in: 1 };

    /// The engine's: every packet up to 1024 a flow a period (p99 from ten
    /// packets over it at the least), then, for a flow whose rounds allow
    /// it, one round in up to 16.
    pub const ENGINE: Self = Self { floor_pkts: 1024, one_in: 16 };

    /// The weight a packet of `flow` delivered now, in round `round`, is
    /// timed with (`None`: not timed); `draw` holds the round's random bits.
    /// Counts the round for the flow's sample, once a round.
    #[inline(always)]
    pub fn weight(&self, flow: &mut FlowRecorder, draw: u64, round: u64) -> Option<u32> {
        if flow.delays.len() < self.floor_pkts {
            return Some(1);
        }
        let one_in = flow.one_in.min(self.one_in);
        let drawn = draw & u64::from(one_in - 1) == 0;
        if flow.round_seen != round {
            flow.round_seen = round;
            flow.sample.rounds += 1;
            flow.sample.drawn += u64::from(drawn);
        }
        drawn.then_some(one_in)
    }

    /// The rounds per timed round for a flow that had `rounds` past the
    /// floor in the period before: the sparsest that still draws
    /// [`MIN_DRAWN_ROUNDS`], at most `one_in`.
    pub fn one_in_after(&self, rounds: u64) -> u32 {
        let most = (rounds / MIN_DRAWN_ROUNDS).clamp(1, u64::from(self.one_in));
        1 << most.ilog2()
    }
}

/// The rounds a flow's delays past the floor were read from in a period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DelaySample {
    /// Rounds the flow delivered in past the floor.
    pub rounds: u64,
    /// Of those, rounds drawn: whose packets were timed.
    pub drawn: u64,
    /// Rounds per drawn one in force (1: every packet timed).
    pub one_in: u32,
}

impl DelaySample {
    /// With 95% confidence, how far (percentile points) any quantile of
    /// the flow's sampled packets may be from the period's: the DKW bound
    /// √(ln(2/0.05) / 2n) over the `drawn` rounds; 0 where every packet was timed.
    pub fn error_pct(&self) -> f64 {
        if self.one_in <= 1 || self.drawn == 0 {
            0.0
        } else {
            100.0 * ((2.0f64 / 0.05).ln() / (2.0 * self.drawn as f64)).sqrt()
        }
    }
}

/// Counters and the delay histogram of one flow: generation at its source,
/// drops on any worker, delivery and delay at its egress.
#[derive(Clone, Debug)]
pub struct FlowRecorder {
    /// Packets of this flow its source made so far (pkt, cumulative).
    pub generated: u64,
    /// Packets of this flow dropped so far on this worker (pkt, cumulative).
    pub dropped: u64,
    /// Packets this worker claimed for the flow (packets that belonged to
    /// no flow until a hop only this flow takes; pkt, cumulative).
    pub claimed: u64,
    /// Packets delivered so far (pkt, cumulative).
    pub delivered: u64,
    /// Packets that reached this flow's egress but belong to another flow (pkt, cumulative).
    pub misdelivered: u64,
    /// Ingress→egress delays since the last period boundary (ns; 2 significant
    /// digits: ≤ 1% error), of the packets timed (see [`DelaySampling`]),
    /// each counted as the packets it stands for.
    /// 32-bit counts, half the memory of 64-bit ones to clear and scan each
    /// period (RC(64)'s telemetry read 30% faster); a count saturates at
    /// 2³² − 1 packets a bucket a period (43 s of 100 Mpps at one delay).
    pub delays: Histogram<u32>,
    /// Sum of those delays, each times its count (ns), for their mean.
    pub delay_sum_ns: u64,
    /// The rounds those delays were read from (moves with them).
    pub sample: DelaySample,
    /// Rounds per timed round past the floor in this period (see [`DelaySampling::one_in_after`]).
    pub one_in: u32,
    /// The last round counted in `sample`.
    pub round_seen: u64,
}

impl Default for FlowRecorder {
    fn default() -> Self {
        let delays = Histogram::new_with_bounds(DELAY_RANGE_NS.0, DELAY_RANGE_NS.1, 2).expect("valid histogram bounds");
        Self { generated: 0, dropped: 0, claimed: 0, delivered: 0, misdelivered: 0, delays, delay_sum_ns: 0, sample: DelaySample::default(), one_in: 1, round_seen: 0 }
    }
}

impl FlowRecorder {
    /// Records one delivered packet that spent `delay_ns` in the pipeline.
    #[inline]
    pub fn record(&mut self, delay_ns: u64) {
        self.record_n(delay_ns, 1);
    }

    /// Records `n` delivered packets that each spent `delay_ns` in the pipeline.
    #[inline]
    pub fn record_n(&mut self, delay_ns: u64, n: u64) {
        self.record_weighted(delay_ns, n, 1);
    }

    /// Records `n` delivered packets that each spent `delay_ns` in the
    /// pipeline and each stand for `weight` packets in the delays (see
    /// [`DelaySampling`]).
    #[inline]
    pub fn record_weighted(&mut self, delay_ns: u64, n: u64, weight: u32) {
        self.delivered += n;
        let counted = n * u64::from(weight);
        let _ = self.delays.record_n(delay_ns.clamp(DELAY_RANGE_NS.0, DELAY_RANGE_NS.1), u32::try_from(counted).unwrap_or(u32::MAX));
        self.delay_sum_ns = self.delay_sum_ns.saturating_add(delay_ns.saturating_mul(counted));
    }

    /// Swaps this recorder's delays (histogram, sum and sample) with `other`'s.
    pub fn swap_delays(&mut self, other: &mut FlowRecorder) {
        std::mem::swap(&mut self.delays, &mut other.delays);
        std::mem::swap(&mut self.delay_sum_ns, &mut other.delay_sum_ns);
        std::mem::swap(&mut self.sample, &mut other.sample);
    }

    /// Hands the egress side (delivered, misdelivered, delays) over to `to`,
    /// whose own must be empty: the flow's egress moves to another worker.
    pub fn hand_delivery_to(&mut self, to: &mut FlowRecorder) {
        to.delivered = std::mem::take(&mut self.delivered);
        to.misdelivered = std::mem::take(&mut self.misdelivered);
        self.swap_delays(to);
    }

    /// Forgets the recorded delays.
    pub fn reset_delays(&mut self) {
        self.delays.reset();
        self.delay_sum_ns = 0;
        self.sample = DelaySample::default();
    }
}

/// Everything a backend counted up to one instant: cumulative counters and
/// the delays of the period that ends there.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Time of the reading (ns since the run started).
    pub at_ns: u64,
    /// Per module, indexed by module id.
    pub modules: Vec<ModuleCounters>,
    /// Per flow, indexed by flow id.
    pub flows: Vec<FlowRecorder>,
    /// Per worker.
    pub workers: Vec<WorkerCounters>,
    /// Packets allocated minus packets freed (pkt); per worker it may be
    /// negative (it freed packets another worker allocated), the sum over
    /// workers is what the pipeline holds.
    pub in_flight: i64,
    /// Per worker, the features its poller logged since its last reading,
    /// rows of [`crate::poll::features::FEATURES`] (empty unless logging, see
    /// [`EngineConfig::log_poll_features`](crate::EngineConfig::log_poll_features)).
    pub poll_features: Vec<Vec<f32>>,
}

impl Counters {
    /// Zeroed counters for `model` run by `workers` workers.
    pub fn for_model(model: &Model, workers: usize) -> Self {
        Self {
            at_ns: 0,
            modules: vec![ModuleCounters::default(); model.modules.len()],
            flows: vec![FlowRecorder::default(); model.flows.len()],
            workers: vec![WorkerCounters::default(); workers],
            in_flight: 0,
            poll_features: vec![Vec::new(); workers],
        }
    }

    /// Forgets every flow's recorded delays (a reading handed back to its worker).
    pub fn clear_delays(&mut self) {
        for f in self.flows.iter_mut().filter(|f| !f.delays.is_empty() || f.sample != DelaySample::default()) {
            f.reset_delays();
        }
    }
}

/// One module over one control period.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ModuleTelemetry {
    /// Fractional-buffer trigger in force at the end of the period (pkt, 0 = none).
    pub trigger: u32,
    /// NF runs per second (batch/s).
    pub x: f64,
    /// Packets into the NF per second (pkt/s).
    pub r: f64,
    /// Mean batch size arriving at the buffer (pkt).
    pub b_in: f64,
    /// Mean packets arriving at the buffer per walker round that brings
    /// any (pkt; ≥ `b_in`). A round's arrivals come back to back: after a
    /// split and a merge, many batches of one packet may make one round's
    /// worth, and a trigger that does not divide it leaves the rest
    /// waiting a whole round gap for the next.
    /// `None` for a module no controller sizes: the walker counts rounds
    /// only for controlled modules.
    pub b_round: Option<f64>,
    /// Standard deviation of the packets a round that brings any brings
    /// (pkt): 0 where every such round brings `b_round`, as behind
    /// splits that deal a source's batches out the same way each time.
    /// `None` where `b_round` is.
    pub b_round_sd: Option<f64>,
    /// Mean batch size at the NF (pkt).
    pub b: f64,
    /// Time spent in the NF during the period (ns; timed on sampled rounds).
    pub busy_ns: u64,
    /// Packets dropped during the period, every reason (pkt).
    pub dropped: u64,
    /// The same by reason (pkt).
    pub drops: Drops,
    /// Packets waiting in the module's buffer or queue at the end of the period (pkt).
    pub held: u64,
    /// The NF's own counters over the period (see [`ModuleCounters::nf`]).
    #[serde(skip)]
    pub nf: NfCounters,
    /// Its NF's drops over the period by reason (see [`ModuleCounters::nf_drops`]).
    #[serde(skip)]
    pub nf_drops: crate::NfDrops,
}

/// One flow over one control period.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowTelemetry {
    /// Packets of the flow its source made during the period (pkt).
    pub generated: u64,
    /// Packets of the flow dropped during the period, on any worker (pkt).
    pub dropped: u64,
    /// Packets delivered during the period (pkt).
    pub delivered: u64,
    /// Delivery rate (pkt/s).
    pub rate_pps: f64,
    /// Mean delay (ns).
    pub mean_ns: u64,
    /// Median delay (ns).
    pub p50_ns: u64,
    /// 95th-percentile delay (ns).
    pub p95_ns: u64,
    /// 99th-percentile delay (ns).
    pub p99_ns: u64,
    /// Largest delay (ns).
    pub max_ns: u64,
    /// Packets of other flows that reached this flow's egress during the period (pkt).
    pub misdelivered: u64,
    /// The rounds its delays past the floor were read from (see [`DelaySampling`]).
    pub sample: DelaySample,
}

/// One worker over one control period.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct WorkerTelemetry {
    /// Share of the period spent moving packets (0..1).
    pub busy_fraction: f64,
    /// Mean time of a scheduler round that moved packets (ns).
    pub turnaround_ns: f64,
    /// Mean time of the fixed [`crate::core_probe`] work this period (ns; 0
    /// when it did not run): how much of its core the worker had.
    pub probe_ns: f64,
    /// Share of the period the worker's thread was on a CPU, polling
    /// included (0..1; the simulator, which does not poll, reports its busy share).
    pub cpu_fraction: f64,
    /// Rounds (polls of every input) during the period.
    pub polls: u64,
    /// Of those, rounds that moved no packet.
    pub empty_polls: u64,
    /// Sleeps and waits for an interrupt during the period.
    pub waits: u64,
    /// Their mean length as asked (µs) ...
    pub wait_asked_us: f64,
    /// ... and how much longer they took on average (µs).
    pub wait_late_us: f64,
    /// The features the worker's poller logged this period (see
    /// [`Counters::poll_features`]), a row per round short of a full batch.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub poll_features: Vec<Vec<f32>>,
}

/// Whole-pipeline packet accounting since the start (pkt).
/// Every packet is accounted for: `generated = delivered + dropped + in_flight`;
/// the run is lossless when `drops.lost() == 0`.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Totals {
    /// Packets made by sources, and copies made inside (`copied`).
    pub generated: u64,
    /// Of `generated`, the copies NFs made (replicated high-availability packets).
    pub copied: u64,
    /// Packets that reached an egress.
    pub delivered: u64,
    /// Packets dropped, every reason.
    pub dropped: u64,
    /// The same by reason.
    pub drops: Drops,
    /// Packets still inside the pipeline.
    pub in_flight: u64,
    /// Arrivals the sources' receive queues could not hold (not part of `generated`).
    pub missed: u64,
}

/// One flow's accounting since the start (pkt).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct FlowTotals {
    /// Packets of the flow its source made, or that became the flow's
    /// downstream (at the first hop only it takes).
    pub generated: u64,
    /// Packets delivered at its egress.
    pub delivered: u64,
    /// Packets of the flow dropped anywhere.
    pub dropped: u64,
    /// Packets of other flows that reached this flow's egress.
    pub misdelivered: u64,
}

impl From<&FlowRecorder> for FlowTotals {
    fn from(f: &FlowRecorder) -> Self {
        Self { generated: f.generated, delivered: f.delivered, dropped: f.dropped, misdelivered: f.misdelivered }
    }
}

/// What a controller sees after each control period.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Telemetry {
    /// Period index, from 0.
    pub period: u64,
    /// End of the period (s since the run started).
    pub t_s: f64,
    /// Length of the period (ns).
    pub period_ns: u64,
    /// Per module, by module id.
    pub modules: Vec<ModuleTelemetry>,
    /// Per flow, by flow id.
    pub flows: Vec<FlowTelemetry>,
    /// Per worker.
    pub workers: Vec<WorkerTelemetry>,
    /// Accounting since the start.
    pub totals: Totals,
    /// Per flow, accounting since the start.
    pub flow_totals: Vec<FlowTotals>,
    /// Per module, by module id, its counters since the start: what
    /// arrived, ran, was made and dropped (by reason).
    pub module_totals: Vec<ModuleCounters>,
    /// Time the control side took to obtain this telemetry from the data plane (ns).
    pub read_ns: u64,
}

/// Mean, p50, p95, p99 and max of a flow's delays (ns; zeros when none):
/// the mean exact, the others as the histogram reports them, its quantiles
/// found in one scan of its counts.
pub(crate) fn delay_stats(f: &FlowRecorder) -> [u64; 5] {
    let h = &f.delays;
    if h.is_empty() {
        return [0; 5];
    }
    let mut q = h.value_at_quantiles([0.50, 0.95, 0.99]);
    let mut next = || q.next().expect("one value per quantile");
    let (p50, p95, p99) = (next(), next(), next());
    [(f.delay_sum_ns as f64 / h.len() as f64).round() as u64, p50, p95, p99, h.max()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_error_is_within_one_percent_from_6_4_us_to_1s_and_64ns_below() {
        let mut f = FlowRecorder::default();
        for v in [100u64, 1_234, 6_400, 56_789, 1_000_000, 999_999_999] {
            f.delays.reset();
            f.record(v);
            let got = f.delays.value_at_quantile(0.5) as f64;
            let error = (got - v as f64).abs();
            assert!(error <= (0.01 * v as f64).max(64.0), "{v} read back as {got}");
        }
    }
}

#[cfg(test)]
mod stats_tests {
    use super::*;

    #[test]
    fn quantiles_are_the_histogram_s_own_and_the_mean_is_exact() {
        let values: Vec<u64> = (1..=1000u64).map(|i| i * i * 37 % 1_000_003 + 100).collect();
        let mut f = FlowRecorder::default();
        for &v in &values {
            f.record(v);
        }
        let h = &f.delays;
        let [mean, p50, p95, p99, max] = delay_stats(&f);
        assert_eq!([p50, p95, p99], [h.value_at_quantile(0.5), h.value_at_quantile(0.95), h.value_at_quantile(0.99)]);
        assert_eq!(max, h.max());
        assert_eq!(mean, (values.iter().sum::<u64>() as f64 / 1000.0).round() as u64);
        let mut g = FlowRecorder::default();
        g.record(7_000);
        let q = g.delays.highest_equivalent(7_000);
        assert_eq!(delay_stats(&g), [7_000, q, q, q, q]);
        g.swap_delays(&mut f);
        assert_eq!(delay_stats(&g)[0], mean, "the sum travels with its histogram");
        g.reset_delays();
        assert_eq!(delay_stats(&g), [0; 5]);
    }
}

#[cfg(test)]
mod sampling_tests {
    use super::*;

    /// The next of a xorshift64 sequence.
    fn step(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// A round's packets (1..=32) and their delay (ns: 5–500 µs, skewed:
    /// most rounds fast, a tail 100× slower; one delay a round, as a
    /// batch's packets share most of theirs), drawn from `state`.
    fn next_round(state: &mut u64) -> (u64, u64) {
        let (size, spread) = (step(state) % 32 + 1, step(state) % 1000);
        (size, 5_000 + spread * spread / 2)
    }

    #[test]
    fn sampled_quantiles_are_within_their_stated_bound_of_every_packets() {
        let sampling = DelaySampling::ENGINE;
        for (seed, rounds) in [(1u64, 120_000u64), (7, 70_000), (42, 400_000)] {
            // The same packets timed every one and as the engine samples them.
            let (mut every, mut sampled) = (FlowRecorder::default(), FlowRecorder { one_in: sampling.one_in, ..FlowRecorder::default() });
            // The traffic and the walker's draws, each its own sequence (as on the engine).
            let (mut state, mut draws) = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, seed ^ 0xBF58_476D_1CE4_E5B9);
            for round in 1..=rounds {
                let (n, delay_ns) = next_round(&mut state);
                let draw = step(&mut draws) >> 32;
                every.record_n(delay_ns, n);
                match sampling.weight(&mut sampled, draw, round) {
                    Some(w) => sampled.record_weighted(delay_ns, n, w),
                    None => sampled.delivered += n,
                }
            }
            assert_eq!(sampled.delivered, every.delivered);
            sampled.sample.one_in = sampled.one_in; // as the period's reading says
            let bound = sampled.sample.error_pct() / 100.0;
            assert!(sampled.sample.drawn >= MIN_DRAWN_ROUNDS && bound > 0.0 && bound < 0.022, "{:?}", sampled.sample);
            for q in [0.5, 0.95, 0.99] {
                let got = sampled.delays.value_at_quantile(q);
                let (low, high) = (every.delays.value_at_quantile(q - bound), every.delays.value_at_quantile((q + bound).min(1.0)));
                assert!((low..=high).contains(&got), "seed {seed}: p{} sampled {got} ns, every packet's p{}..p{} {low}..{high} ns", q * 100.0, (q - bound) * 100.0, (q + bound) * 100.0);
            }
        }
    }
}
