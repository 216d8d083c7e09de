//! Weighted-fair turns: stride scheduling over the sources and the queues
//! of controlled modules, with optional backpressure on the entries
//! (NFVnice's scheduling model); and the queue modules' own turns.

use std::sync::atomic::Ordering;

use super::round::{may_take_in, Downstream};
use super::{Kind, WorkerGraph};

impl WorkerGraph {
    /// Serves the weighted-fair unit whose turn it is.
    pub(super) fn fair_turn(&mut self, now_ns: u64) -> usize {
        // Whether a source may run hangs on the whole worker: ask every turn.
        for &v in &self.sources {
            if let Some(u) = self.unit_of[v] {
                self.stride.wake(u);
            }
        }
        let pool_has_room = self.pool.available() > 0;
        let downstream = Downstream::of(&self.rings_out, self.queued_pkts, self.backpressure(), &self.egress, self.batch_size);
        let (nodes, units, weights) = (&self.nodes, &self.units, &self.weights);
        let runnable = |u: usize| {
            let node = &nodes[units[u]];
            match node.kind {
                Kind::Source(_) => pool_has_room && may_take_in(node, &downstream),
                _ => node.queue_ready(),
            }
        };
        let weight = |u: usize| weights[nodes[units[u]].module].load(Ordering::Relaxed);
        let Some(u) = self.stride.pick(runnable, weight) else { return 0 };
        let v = self.units[u];
        if matches!(self.nodes[v].kind, Kind::Source(_)) {
            return self.pull(v, now_ns);
        }
        let served = self.serve(v);
        if !self.nodes[v].queue_ready() {
            self.stride.sleep(u);
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
