//! Telemetry hand-over: a worker copies its cumulative counters into a
//! reading the control side merges (see [`PeriodMeter`](crate::meter::PeriodMeter)).

use super::{Kind, Output, WorkerGraph};
use crate::telemetry::{Counters, FlowRecorder};

impl WorkerGraph {
    /// Writes this worker's cumulative counters into `into` at its own slots
    /// (its modules, the flows that end on it, its entry in `workers`) and moves
    /// the delays recorded since the last call there. `into`'s histograms
    /// must be empty; they come back to this worker at the next call.
    pub fn read_counters(&mut self, into: &mut Counters) {
        into.at_ns = self.now_ns();
        // A reading made before flows were added has no room for them (once a reading).
        if into.flows.len() < self.flows.len() {
            into.flows.resize_with(self.flows.len(), FlowRecorder::default);
        }
        for (theirs, mine) in into.flows.iter_mut().zip(&self.flows) {
            theirs.generated = 0;
            theirs.dropped = mine.dropped;
            theirs.claimed = mine.claimed;
        }
        for node in &self.nodes {
            into.modules[node.module] = node.counters;
            if let Kind::Function(nf) = &node.kind {
                nf.read_counters(&mut into.modules[node.module].nf);
            }
            if let Kind::Egress(_, Output::Port(port) | Output::Scheduled(_, Some(port))) = &node.kind {
                port.read_counters(&mut into.modules[node.module].nf);
            }
            if let Kind::Source(source) = &node.kind {
                source.read_counters(&mut into.modules[node.module].nf);
                into.modules[node.module].missed = source.missed();
                source.count_generated(&mut |flow, n| {
                    if let Some(f) = into.flows.get_mut(flow) {
                        f.generated += n;
                    }
                });
            }
        }
        // The flows that end here: what their egresses delivered.
        for (f, egress) in self.links.egress_node.iter().enumerate() {
            if egress.is_some() {
                let (mine, theirs) = (&mut self.flows[f], &mut into.flows[f]);
                theirs.delivered = mine.delivered;
                theirs.misdelivered = mine.misdelivered;
                theirs.swap_delays(mine);
                // The period's sampling goes with its delays; the next period's follows its rounds.
                theirs.sample.one_in = mine.one_in;
                mine.one_in = self.clocking.delay_sampling.one_in_after(theirs.sample.rounds);
            }
        }
        into.workers[self.index] = self.worker;
        into.in_flight = self.pool.in_use();
    }
}
