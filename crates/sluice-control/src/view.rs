//! What a controller reads off one period's telemetry, in SI units: the
//! Batchy model's rates, delays, budgets and gradients.

use sluice_core::{FlowId, Model, ModuleId, Telemetry};

use crate::run::SloStatistic;

/// Settings shared by the SLO-aware controllers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControlParams {
    /// A flow is active (its SLO binds) once its delay is ≥ (1 − δ)·SLO.
    pub delta: f64,
    /// The delay statistic the SLOs bound.
    pub statistic: SloStatistic,
}

impl Default for ControlParams {
    fn default() -> Self {
        Self { delta: 0.05, statistic: SloStatistic::P95 }
    }
}

/// Batches fuller than this share of B need no buffer (Batchy's rule).
pub(crate) const FULL_SHARE: f64 = 0.7;

/// One period seen through the model.
pub(crate) struct View<'a> {
    pub model: &'a Model,
    /// B (pkt).
    pub batch: f64,
    /// Trigger in force per module (pkt).
    pub trigger: Vec<u32>,
    /// Mean batch arriving at each module's buffer (pkt).
    pub b_in: Vec<f64>,
    /// Packets per second into each module's NF (pkt/s).
    pub r: Vec<f64>,
    /// NF runs per second (1/s).
    pub x: Vec<f64>,
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
    /// Share of a buffer's fill time the SLO statistic sees (see [`SloStatistic::wait_share`]).
    pub wait_share: f64,
    /// The module whose every run each module receives whole: its only
    /// upstream, when that has a single outgate.
    pub feeder: Vec<Option<ModuleId>>,
}

impl<'a> View<'a> {
    pub fn new(model: &'a Model, t: &Telemetry, params: &ControlParams) -> Self {
        let mut flows_through = vec![Vec::new(); model.modules.len()];
        for (f, flow) in model.flows.iter().enumerate() {
            for &v in &flow.path {
                flows_through[v].push(f);
            }
        }
        let mut upstreams = vec![0usize; model.modules.len()];
        for e in &model.edges {
            upstreams[e.to] += 1;
        }
        let mut on_worker = vec![vec![false; model.n_workers]; model.flows.len()];
        for (f, flow) in model.flows.iter().enumerate() {
            for &v in &flow.path {
                on_worker[f][model.worker_of[v]] = true;
            }
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
            r: t.modules.iter().map(|m| m.r).collect(),
            x: t.modules.iter().map(|m| m.x).collect(),
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
            wait_share: params.statistic.wait_share(),
        }
    }

    /// Controlled modules that saw traffic this period.
    pub fn live(&self) -> impl Iterator<Item = ModuleId> + '_ {
        (0..self.model.modules.len()).filter(|&v| self.model.modules[v].controlled && self.r[v] > 0.0)
    }

    /// ∂t_f/∂b_v for a flow through v: 1/r_v + T1_v (s per packet of
    /// trigger), the wait scaled by the share the SLO statistic sees.
    pub fn dt_db(&self, v: ModuleId) -> f64 {
        self.wait_share / self.r[v] + self.t1(v)
    }

    /// T1_v (s per packet); 0 for a module without a cost model.
    fn t1(&self, v: ModuleId) -> f64 {
        self.model.modules[v].profile.map_or(0.0, |p| p.t1_ns * 1e-9)
    }

    /// ∂l/∂b_v = −x_v·T0_v/b_v: CPU share saved per packet of trigger (1/pkt).
    pub fn dl_db(&self, v: ModuleId, b: f64) -> f64 {
        let t0 = self.model.modules[v].profile.map_or(0.0, |p| p.t0_ns * 1e-9);
        -self.x[v] * t0 / b
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
    /// off it, on a worker f's packets pass through, the per-packet cost of
    /// the chain v feeds — a run one packet longer there holds up every
    /// packet waiting behind it in the round (with interleaved sources the
    /// same packets each time); 0 elsewhere.
    pub fn dt_f_db(&self, f: FlowId, v: ModuleId) -> f64 {
        if self.flows_through[v].contains(&f) {
            self.dt_db(v)
        } else if self.on_worker[f][self.model.worker_of[v]] {
            self.chain(v).map(|w| self.t1(w)).sum()
        } else {
            0.0
        }
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

    /// How far flow `f` is over its SLO (s), if it is.
    pub fn excess(&self, f: FlowId) -> Option<f64> {
        self.budget(f).filter(|b| *b < 0.0).map(|b| -b)
    }

    /// Extra delay a trigger of `b` adds at module v over its current input
    /// batches (s): packets arrive b_in at a time, so the first of a run
    /// waits for ⌈b/b_in⌉ − 1 more arrivals, b_in/r apart (the statistic
    /// sees `wait_share` of that), and each packet more costs T1. (The
    /// linear b/r of the gradient step would price a trigger just above
    /// b_in at one packet's interval where it costs a whole arrival's.)
    pub fn added_delay(&self, v: ModuleId, b: f64) -> f64 {
        let b_in = self.b_in[v].max(1.0);
        if b <= b_in || self.r[v] <= 0.0 {
            return 0.0;
        }
        self.wait_share * ((b / b_in).ceil() - 1.0) * b_in / self.r[v] + (b - b_in) * self.t1(v)
    }
}
