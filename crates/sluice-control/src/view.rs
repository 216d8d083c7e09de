//! What a controller reads off one period's telemetry, in SI units: the
//! Batchy model's rates, delays, budgets and gradients.

use serde::Serialize;
use sluice_core::{FlowId, Model, ModuleId, Telemetry};

use crate::misprice::Misprice;
use crate::slo_statistic::SloStatistic;

/// Settings shared by the SLO-aware controllers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ControlParams {
    /// A flow is active (its SLO binds) once its delay is ≥ (1 − δ)·SLO.
    pub delta: f64,
    /// The delay statistic the SLOs bound.
    pub statistic: SloStatistic,
}

/// δ when none is given.
pub const DEFAULT_DELTA: f64 = 0.05;

impl Default for ControlParams {
    fn default() -> Self {
        Self { delta: DEFAULT_DELTA, statistic: SloStatistic::P95 }
    }
}

impl ControlParams {
    /// Checked settings: δ in [0, 0.5), since growth stops 2δ short of
    /// the SLO (see `View::growth_target`) and at 0.5 nothing could grow.
    pub fn new(delta: f64, statistic: SloStatistic) -> Result<Self, String> {
        if !(0.0..0.5).contains(&delta) {
            return Err(format!("δ = {delta} must be in [0, 0.5): a flow is active from (1 − δ)·SLO and its buffers grow up to (1 − 2δ)·SLO"));
        }
        Ok(Self { delta, statistic })
    }
}

/// Batches fuller than this share of B need no buffer (Batchy's rule).
pub(crate) const FULL_SHARE: f64 = 0.7;

/// Spread of the packets per round (sd, pkt) under which rounds count as
/// even (see [`View::rounds_are_even`]).
const EVEN_ROUNDS_SD: f64 = 0.5;

/// One period seen through the model.
pub(crate) struct View<'a> {
    pub model: &'a Model,
    /// B (pkt).
    pub batch: f64,
    /// Trigger in force per module (pkt).
    pub trigger: Vec<u32>,
    /// Mean batch arriving at each module's buffer (pkt).
    pub b_in: Vec<f64>,
    /// Mean packets arriving at each module's buffer per walker round that
    /// brings any (pkt; ≥ `b_in`, as a round brings one batch or more).
    pub b_round: Vec<f64>,
    /// Standard deviation of those packets per round (pkt).
    pub b_round_sd: Vec<f64>,
    /// Packets per second into each module's NF (pkt/s).
    pub r: Vec<f64>,
    /// NF runs per second (1/s).
    pub x: Vec<f64>,
    /// Mean batch each module's NF ran on (pkt).
    pub b: Vec<f64>,
    /// Measured delay of each flow with an SLO and traffic (s).
    pub delay: Vec<Option<f64>>,
    /// SLO of each flow (s).
    pub slo: Vec<Option<f64>>,
    /// Flows through each module.
    pub flows_through: Vec<Vec<FlowId>>,
    /// Per flow, per worker: whether the flow's path runs on that worker.
    pub on_worker: Vec<Vec<bool>>,
    /// Per flow, how far its measured delay overshoots the model's
    /// prediction, as a share of its SLO (root mean square; 0 unless the
    /// controller tracks it).
    pub noise: Vec<f64>,
    /// What the model learnt it misprices (nothing unless the controller
    /// learns it, see `misprice`).
    pub misprice: Misprice,
    /// Share of a buffer's fill time the SLO statistic sees (see [`SloStatistic::wait_share`]).
    pub wait_share: f64,
    /// Whether the SLO statistic sees the average round (see `dt_f_db`).
    pub averages: bool,
    /// Share of the period each worker spent moving packets (0..1).
    pub busy: Vec<f64>,
    /// The module whose every run each module receives whole: its only
    /// upstream, when that has a single outgate.
    pub feeder: Vec<Option<ModuleId>>,
}

impl<'a> View<'a> {
    pub fn new(model: &'a Model, t: &Telemetry, params: &ControlParams) -> Self {
        let mut flows_through = vec![Vec::new(); model.modules.len()];
        let mut on_worker = vec![vec![false; model.n_workers]; model.flows.len()];
        for (f, flow) in model.flows.iter().enumerate() {
            for &v in &flow.path {
                flows_through[v].push(f);
                on_worker[f][model.worker_of[v]] = true;
            }
        }
        let mut upstreams = vec![0usize; model.modules.len()];
        for e in &model.edges {
            upstreams[e.to] += 1;
        }
        let mut feeder = vec![None; model.modules.len()];
        for e in model.edges.iter().filter(|e| upstreams[e.to] == 1 && model.next[e.from].len() == 1) {
            feeder[e.to] = Some(e.from);
        }
        Self {
            model,
            batch: model.batch_size as f64,
            trigger: t.modules.iter().map(|m| m.trigger).collect(),
            b_in: t.modules.iter().map(|m| m.b_in).collect(),
            // Counted for controlled modules, the only ones these are read for.
            b_round: t.modules.iter().map(|m| m.b_round.unwrap_or(0.0)).collect(),
            b_round_sd: t.modules.iter().map(|m| m.b_round_sd.unwrap_or(0.0)).collect(),
            r: t.modules.iter().map(|m| m.r).collect(),
            x: t.modules.iter().map(|m| m.x).collect(),
            b: t.modules.iter().map(|m| m.b).collect(),
            delay: t
                .flows
                .iter()
                .map(|f| (f.delivered > 0).then(|| params.statistic.of(f) as f64 * 1e-9))
                .collect(),
            slo: model.flows.iter().map(|f| f.slo_ns.map(|ns| ns as f64 * 1e-9)).collect(),
            flows_through,
            feeder,
            on_worker,
            noise: vec![0.0; model.flows.len()],
            misprice: Misprice::default(),
            wait_share: params.statistic.wait_share(),
            averages: params.statistic.averages(),
            busy: t.workers.iter().map(|w| w.busy_fraction).collect(),
        }
    }

    /// Controlled modules that saw traffic this period.
    pub fn live(&self) -> impl Iterator<Item = ModuleId> + '_ {
        (0..self.model.modules.len()).filter(|&v| self.model.modules[v].controlled && self.r[v] > 0.0)
    }

    /// ∂t_f/∂b_v for a flow through v (s per packet of trigger): 1/r_v,
    /// the wait scaled by the share the SLO statistic sees, plus T1 of v
    /// and of the chain it feeds, whose batches are v's (Batchy's b_w = b_v
    /// for an unbuffered module w fed by v).
    pub fn dt_db(&self, v: ModuleId) -> f64 {
        self.wait_share / self.r[v] + self.chain_t1(v)
    }

    /// Per-packet cost of v and of the chain it feeds whole (s per packet):
    /// each packet of a run waits for the whole run at every module of it.
    fn chain_t1(&self, v: ModuleId) -> f64 {
        self.chain(v).map(|w| self.t1(w)).sum()
    }

    /// T1_v (s per packet); 0 for a module without a cost model.
    fn t1(&self, v: ModuleId) -> f64 {
        self.model.modules[v].profile.map_or(0.0, |p| p.t1_ns * 1e-9)
    }

    /// T0_v (s per run); 0 for a module without a cost model.
    fn t0(&self, v: ModuleId) -> f64 {
        self.model.modules[v].profile.map_or(0.0, |p| p.t0_ns * 1e-9)
    }

    /// ∂l/∂b_v = −x_v·T0_v/b_v: CPU share saved per packet of trigger (1/pkt).
    pub fn dl_db(&self, v: ModuleId, b: f64) -> f64 {
        -self.x[v] * self.t0(v) / b
    }

    /// v and the modules down the chain it feeds whole (see `feeder`).
    pub fn chain(&self, v: ModuleId) -> impl Iterator<Item = ModuleId> + '_ {
        std::iter::successors(Some(v), |&w| match self.model.next[w].as_slice() {
            [next] if self.feeder[*next] == Some(w) => Some(*next),
            _ => None,
        })
    }

    /// ∂l/∂b of a buffer at v at the input batch sizes: v's own, plus that
    /// of every module down the chain v feeds, which gets v's batches as
    /// they are (1/pkt, ≤ 0).
    pub fn chain_dl_db(&self, v: ModuleId) -> f64 {
        self.chain(v)
            .filter(|&w| self.model.modules[w].controlled && self.r[w] > 0.0)
            .map(|w| self.dl_db(w, self.b_in[w].max(1.0)))
            .sum()
    }

    /// ∂t_f/∂b_v (s per packet of trigger): [`Self::dt_db`] on f's path;
    /// 0 off the workers f's packets pass through. Off f's path on such a
    /// worker, by default the per-packet cost of the chain v feeds: a run
    /// one packet longer there holds up every packet waiting behind it in
    /// the round (with interleaved sources the same packets each time;
    /// and siblings with SLOs get triggers like f's and flush in f's
    /// rounds). But where the SLO statistic averages (mean, median) and no
    /// flow with an SLO passes v, v batches as far as B allows and its runs
    /// fall in f's rounds only now and then: f sees the load v's chain
    /// stops adding to every round, longer runs coming that much less
    /// often; then ≤ 0.
    pub fn dt_f_db(&self, f: FlowId, v: ModuleId) -> f64 {
        if self.flows_through[v].contains(&f) {
            self.dt_db(v)
        } else if !self.on_worker[f][self.model.worker_of[v]] {
            0.0
        } else if self.saves_load_for(f, v) {
            let b = self.run_batch(v, self.trigger[v]).max(1.0);
            -self.round_bound_delay(f, v) * self.chain_t0_rate(v) / (b * b)
        } else {
            self.chain_t1(v)
        }
    }

    /// Whether module v's buffer at B would cost every flow with an SLO under
    /// δ of it: a flow through v the buffer's fill time at v's measured rate
    /// (the longest a packet could wait there, whatever the model says of
    /// rounds) on top of what the model adds, and that within its growth
    /// target; any other flow the worst hold-up of one full run. A change that
    /// small no error of the model's on the new arrivals can turn into a
    /// violation.
    pub fn full_buffer_is_negligible(&self, v: ModuleId, delta: f64) -> bool {
        let full = self.batch as u32;
        let fill = self.batch / self.r[v];
        // One full run's extra per-packet work down v's chain (s).
        let hold_up = self.chain_t1(v) * (self.run_batch(v, full) - self.run_batch(v, 0));
        (0..self.model.flows.len()).all(|f| {
            let Some(slo) = self.slo[f] else { return true };
            if !self.flows_through[v].contains(&f) {
                let shares_worker = self.on_worker[f][self.model.worker_of[v]];
                return !shares_worker || hold_up <= delta * slo;
            }
            let added = fill + self.delay_change(f, v, 0, full).max(0.0);
            match (self.delay[f], self.growth_target(f, delta)) {
                (Some(delay), Some(target)) => added <= delta * slo && delay + added <= target,
                _ => false,
            }
        })
    }

    /// Whether f sees v's longer runs as the load they save rather than as
    /// hold-up: the SLO statistic averages, v runs on a worker of f's, and
    /// no flow with an SLO passes v (see `dt_f_db`).
    fn saves_load_for(&self, f: FlowId, v: ModuleId) -> bool {
        self.averages
            && self.on_worker[f][self.model.worker_of[v]]
            && !self.flows_through[v].iter().any(|&g| self.slo[g].is_some())
    }

    /// The part of flow f's delay spent in rounds on v's worker, which
    /// scales with their length (s): its delay times the worker's busy
    /// share (a worker that idles between rounds waits for arrivals, not work).
    fn round_bound_delay(&self, f: FlowId, v: ModuleId) -> f64 {
        self.delay[f].unwrap_or(0.0) * self.busy.get(self.model.worker_of[v]).copied().unwrap_or(1.0)
    }

    /// Σ r_w·T0_w over v and the chain it feeds (pkt per run): divided by
    /// v's run batch, the share of the worker their per-run costs take.
    fn chain_t0_rate(&self, v: ModuleId) -> f64 {
        self.chain(v).map(|w| self.r[w] * self.t0(w)).sum()
    }

    /// Whether v receives the runs of a module buffered under `trigger`
    /// whole, directly or down a chain of modules (see `feeder`).
    pub fn fed_by_buffer(&self, v: ModuleId, trigger: &[u32]) -> bool {
        std::iter::successors(self.feeder[v], |&u| self.feeder[u]).any(|u| trigger[u] > 0)
    }

    /// SLO minus measured delay of flow `f` (s); `None` without an SLO.
    pub fn budget(&self, f: FlowId) -> Option<f64> {
        let slo = self.slo[f]?;
        Some(slo - self.delay[f].unwrap_or(0.0))
    }

    /// The delay up to which flow `f`'s buffers may grow (s):
    /// (1 − 2δ − 2·noise)·SLO. The active band starts at (1 − δ)·SLO;
    /// growth stops a further δ short because a measured p95 grows faster
    /// than the linear model near the SLO, and two standard deviations of
    /// the flow's measurement noise shorter still, so that an unlucky
    /// period does not land over the SLO.
    pub fn growth_target(&self, f: FlowId, delta: f64) -> Option<f64> {
        Some((1.0 - 2.0 * delta - 2.0 * self.noise[f]).max(0.0) * self.slo[f]?)
    }

    /// The batch module v's NF runs on under `trigger` (pkt): its input
    /// batches unbuffered, at least its trigger buffered.
    pub fn run_batch(&self, v: ModuleId, trigger: u32) -> f64 {
        self.b_in[v].max(trigger as f64)
    }

    /// Whether every flow with an SLO and traffic is over it: the mark of
    /// a period in which the core stalled (the VM took it away), which no
    /// setting of the buffers explains.
    pub fn stalled(&self) -> bool {
        (0..self.model.flows.len()).filter(|&f| self.slo[f].is_some() && self.delay[f].is_some()).all(|f| self.excess(f).is_some())
    }

    /// How far flow `f` is over its SLO (s), if it is.
    pub fn excess(&self, f: FlowId) -> Option<f64> {
        self.budget(f).filter(|b| *b < 0.0).map(|b| -b)
    }

    /// The wait a trigger of `b` holds module v's packets in its buffer
    /// (s, the share the SLO statistic sees); 0 at or below the input batch.
    ///
    /// Packets come c = `b_round` a round, rounds that bring any c/r
    /// apart; a run's first packet waits [`round_gaps`] of them.
    pub fn wait(&self, v: ModuleId, b: f64) -> f64 {
        if b <= self.b_in[v].max(1.0) || self.r[v] <= 0.0 {
            return 0.0;
        }
        let c = self.b_round[v].max(1.0);
        self.wait_share * round_gaps(b, c) * c / self.r[v]
    }

    /// Whether the rounds that bring module v packets each bring about
    /// `b_round` (standard deviation under half a packet): then a trigger
    /// that divides it waits as the round model says in every round, not
    /// only on average (a random split's rounds scatter by a few packets).
    pub fn rounds_are_even(&self, v: ModuleId) -> bool {
        self.b_round_sd[v] < EVEN_ROUNDS_SD
    }

    /// The largest trigger, up to B, that holds module v's packets no longer
    /// than a trigger of `b` does (pkt): where rounds bring c packets each,
    /// a trigger just above the input batch already waits a round gap, and
    /// so does every trigger up to the next multiple of c.
    pub fn largest_trigger_waiting_as(&self, v: ModuleId, b: f64) -> f64 {
        let wait = self.wait(v, b);
        let mut largest = b;
        let mut next = b.floor() + 1.0;
        while next <= self.batch {
            if self.wait(v, next) <= wait {
                largest = next;
            }
            next += 1.0;
        }
        largest
    }

    /// What moving module v's trigger from `from` to `to` adds to flow f's
    /// delay (s): on f's path the change of v's [`wait`](Self::wait) and of
    /// the per-packet cost of its runs down the chain v feeds; off it, the
    /// hold-up of v's longer runs or the load they save (see `dt_f_db`).
    pub fn delay_change(&self, f: FlowId, v: ModuleId, from: u32, to: u32) -> f64 {
        let (run_from, run_to) = (self.run_batch(v, from), self.run_batch(v, to));
        let change = if self.flows_through[v].contains(&f) {
            self.wait(v, to as f64) - self.wait(v, from as f64) + self.chain_t1(v) * (run_to - run_from)
        } else if self.saves_load_for(f, v) {
            self.round_bound_delay(f, v) * self.chain_t0_rate(v) * (1.0 / run_to.max(1.0) - 1.0 / run_from.max(1.0))
        } else {
            self.dt_f_db(f, v) * (run_to - run_from)
        };
        self.misprice.price(f, v, change, (to as f64 - from as f64) / self.batch)
    }
}

/// Round gaps the first packet of a run of `b` can wait when rounds bring
/// `c` packets each. A run starting at packet k·b waits from round ⌊kb/c⌋
/// to round ⌊(kb + b − 1)/c⌋; kb mod c reaches c − gcd(b, c), so the
/// longest wait is ⌊(b + c − gcd(b, c) − 1)/c⌋: b/c − 1 where runs tile
/// the rounds, a whole gap where b < c leaves a remainder for the next
/// round (a linear b/r would price that at a few packets' interval).
/// Divisibility counts only where c is a whole number, i.e. rounds bring
/// the same number each time; otherwise gcd = 1, the worst case, and a
/// run waits for ⌈(b − 1)/c⌉ rounds after its first packet's.
fn round_gaps(b: f64, c: f64) -> f64 {
    let whole = (c - c.round()).abs() < 0.01 * c;
    if whole && b.fract() == 0.0 && b >= 1.0 {
        let (b, c) = (b as u64, c.round() as u64);
        return ((b + c - gcd(b, c) - 1) / c) as f64;
    }
    // gcd = 1: ⌊(b + c − 2)/c⌋ = ⌈(b − 1)/c⌉, which stays right as c
    // moves off a whole number (the nudge keeps (b − 1)/c = 1 at 1).
    ((b - 1.0) / c - 1e-9).ceil().max(0.0)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::{round_gaps, ControlParams};
    use crate::slo_statistic::SloStatistic;

    #[test]
    fn delta_is_checked() {
        assert_eq!(ControlParams::new(0.05, SloStatistic::Mean), Ok(ControlParams { delta: 0.05, statistic: SloStatistic::Mean }));
        assert!(ControlParams::new(0.0, SloStatistic::P95).is_ok());
        for bad in [-0.01, 0.5, f64::NAN, f64::INFINITY] {
            let e = ControlParams::new(bad, SloStatistic::P95).unwrap_err();
            assert!(e.contains("must be in [0, 0.5)"), "{e}");
        }
    }

    /// The longest wait, counted packet by packet: runs of `b` over packets
    /// that come `c` a round.
    fn counted(b: u64, c: u64) -> f64 {
        (0..c).map(|k| ((k * b + b - 1) / c - k * b / c) as f64).fold(0.0, f64::max)
    }

    #[test]
    fn round_gaps_match_runs_counted_packet_by_packet() {
        for b in 1..=40 {
            for c in 1..=40 {
                assert_eq!(round_gaps(b as f64, c as f64), counted(b, c), "b = {b}, c = {c}");
            }
        }
        // Eight to a round: 2, 4 and 8 tile it, 3 and 5 leave a remainder for the next round.
        assert_eq!([2.0, 3.0, 4.0, 5.0, 8.0, 16.0].map(|b| round_gaps(b, 8.0)), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]);
        // Uneven rounds: no tiling assumed.
        assert_eq!(round_gaps(4.0, 7.6), 1.0);
        // A measured c a rounding error off a whole number counts as whole.
        assert_eq!(round_gaps(2.0, 10_000.0 * 99.999_999e-6), 1.0);
        for c in [1.0845, 1.022, 3.3, 7.6] {
            assert_eq!(round_gaps(2.0, c), 1.0, "c = {c}");
        }
        // Rounds of one packet, now and then two: a run of 3 waits two of them.
        assert_eq!(round_gaps(3.0, 1.02), 2.0);
    }
}
