//! Emptying a worker's graph: draining (every buffer flushed downstream,
//! when a run stops) and discarding (everything dropped and counted, on a
//! worker that is down).

use super::{InRing, WorkerGraph};
use crate::batch::MAX_BURST;
use crate::nf::free_dropped;

impl WorkerGraph {
    /// Flushes every fractional buffer downstream, in topological order, so
    /// that every packet is delivered or dropped (stopping a run).
    pub fn drain(&mut self) {
        self.sampled = false;
        // Nodes are kept in topological order; weighted-fair queues empty too.
        for v in 0..self.nodes.len() {
            self.run_queued(v, MAX_BURST, true);
        }
    }

    /// What a failed core does: nothing runs, its sources are not polled,
    /// and the packets that reach it on inbound rings or sit in its buffers
    /// are dropped and counted at the module they were for (and their flow).
    /// Returns the packets dropped (pkt).
    pub fn discard(&mut self) -> usize {
        let mut dropped = 0;
        for i in 0..self.rings_in.len() {
            let InRing { ring, target, .. } = &mut self.rings_in[i];
            let counters = &mut self.nodes[*target].counters;
            while let Some(id) = ring.pop() {
                counters.arrived_pkts += 1;
                counters.dropped += 1;
                free_dropped(&mut self.pool, &mut self.flows, id);
                dropped += 1;
            }
        }
        let mut batch = self.spares.pop().expect("one spare batch per graph level");
        for v in 0..self.nodes.len() {
            while self.take_queued(v, MAX_BURST, &mut batch) {
                for &id in batch.as_slice() {
                    free_dropped(&mut self.pool, &mut self.flows, id);
                }
                self.nodes[v].counters.dropped += batch.len() as u64;
                dropped += batch.len();
                batch.clear();
            }
        }
        self.spares.push(batch);
        dropped
    }
}
