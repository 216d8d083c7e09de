//! Weighted-fair turns: stride scheduling over the sources and the queues
//! of controlled modules, with optional backpressure on the entries
//! (NFVnice's scheduling model); and the queue modules' own turns.

use std::sync::atomic::Ordering;

use super::round::{may_take_in, Downstream};
use super::{Kind, WorkerGraph};
use crate::schedule::Schedule;
use crate::stride::Stride;

/// Whose turn it is: the schedule, its units and their stride scheduler,
/// and the packets the queues hold.
pub(super) struct FairTurns {
    /// Run-to-completion or weighted-fair.
    pub(super) schedule: Schedule,
    /// Weighted-fair units: sources and queued modules (nodes).
    pub(super) units: Vec<usize>,
    /// Per node, its unit (`None`: not one).
    pub(super) unit_of: Vec<Option<usize>>,
    /// Nodes that keep a queue (in run-to-completion mode, the queue
    /// modules, each served once per round).
    pub(super) queues: Vec<usize>,
    /// The units' stride scheduler.
    pub(super) stride: Stride,
    /// Packets in the queues of queued modules (pkt).
    pub(super) queued_pkts: usize,
}

impl FairTurns {
    /// Turns under `schedule`, no units until the worker links its nodes.
    pub(super) fn new(schedule: Schedule) -> Self {
        Self { schedule, units: Vec::new(), unit_of: Vec::new(), queues: Vec::new(), stride: Stride::new(0), queued_pkts: 0 }
    }

    /// Makes `units` (nodes) the scheduler's units, each with a fresh turn.
    pub(super) fn set_units(&mut self, units: Vec<usize>, nodes: usize) {
        self.unit_of = vec![None; nodes];
        for (u, &v) in units.iter().enumerate() {
            self.unit_of[v] = Some(u);
        }
        self.stride = Stride::new(units.len());
        self.units = units;
    }
}

impl WorkerGraph {
    /// Serves the weighted-fair unit whose turn it is.
    pub(super) fn fair_turn(&mut self, now_ns: u64) -> usize {
        // Whether a source may run hangs on the whole worker: ask every turn.
        for &v in &self.sources {
            if let Some(u) = self.fair.unit_of[v] {
                self.fair.stride.wake(u);
            }
        }
        let pool_has_room = self.pool.available() > 0;
        let downstream = Downstream::of(&self.links.rings_out, self.fair.queued_pkts, self.backpressure(), &self.links.egress, self.batch_size);
        let (nodes, units, weights) = (&self.nodes, &self.fair.units, &self.control.weights);
        let runnable = |u: usize| {
            let node = &nodes[units[u]];
            match node.kind {
                Kind::Source(_) => pool_has_room && may_take_in(node, &downstream),
                _ => node.queue_ready(),
            }
        };
        let weight = |u: usize| weights[nodes[units[u]].module].load(Ordering::Relaxed);
        let Some(u) = self.fair.stride.pick(runnable, weight) else { return 0 };
        let v = self.fair.units[u];
        if matches!(self.nodes[v].kind, Kind::Source(_)) {
            return self.pull(v, now_ns);
        }
        let served = self.serve(v);
        if !self.nodes[v].queue_ready() {
            self.fair.stride.sleep(u);
        }
        served
    }

    /// Runs queued module `v` once on its trigger's worth of packets (B when
    /// its trigger is 0); returns the packets run (pkt).
    pub(super) fn serve(&mut self, v: usize) -> usize {
        let trigger = self.nodes[v].trigger;
        let want = if trigger == 0 { self.batch_size } else { trigger };
        self.run_queued(v, want, false)
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::Actions;
    use crate::graph::tests::{ByFlow, Listed, Log, TestGraph};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::ModuleCode;
    use crate::schedule::Schedule;
    use crate::WalkerConfig;

    #[test]
    fn backlogged_queues_take_turns_in_their_weights_ratio_and_overflow_is_counted() {
        // src0 → a0 → out0 and src1 → a1 → out1; a0 and a1 queue for turns weighted 3 : 1.
        let mut b = ModelBuilder::default();
        for i in 0..2 {
            b.module(ModuleDecl::new(&format!("src{i}"), Role::Source, 0, 1))
                .module(ModuleDecl { controlled: true, ..ModuleDecl::new(&format!("a{i}"), Role::Function, 1, 1) })
                .module(ModuleDecl::new(&format!("out{i}"), Role::Sink, 1, 0));
            b.connect(&format!("src{i}"), 0, &format!("a{i}"), 0).connect(&format!("a{i}"), 0, &format!("out{i}"), 0);
            b.flow(&format!("f{i}"), &[&format!("src{i}"), &format!("a{i}"), &format!("out{i}")], None);
        }
        let listed = |flow| ModuleCode::Source(Box::new(Listed::new(&vec![flow; 50_000])));
        let nf = |name| ModuleCode::Function(Box::new(ByFlow { name, gates: 1, log: Log::default() }));
        let instances = vec![listed(0), nf("a0"), ModuleCode::Egress, listed(1), nf("a1"), ModuleCode::Egress];
        let config = WalkerConfig { timing: false, schedule: Schedule::WeightedFair { backpressure: None, buffered_only: false }, ..WalkerConfig::default() };
        let mut g = TestGraph::with_config(&b, 32, instances, config);
        let weights = [("src0", 10), ("src1", 10), ("a0", 3), ("a1", 1)].map(|(name, w)| (g.module(name), w));
        g.knobs.apply(&g.model, &Actions { weights: weights.to_vec(), ..Actions::default() }).unwrap();
        g.rounds(2_400);
        let c = g.counters();
        let runs = [g.module("a0"), g.module("a1")].map(|m| c.modules[m].run_pkts as f64);
        assert!((2.9..3.1).contains(&(runs[0] / runs[1])), "a0 ran {} packets, a1 {}: 3 : 1 expected", runs[0], runs[1]);
        assert!(c.flows.iter().all(|f| f.dropped > 0), "the sources' turns overfill the queues");
        let held: u64 = c.flows.iter().map(|f| f.generated - f.delivered - f.dropped).sum();
        assert_eq!(held as i64, c.in_flight, "what is neither delivered nor dropped waits in a queue");
    }
}
