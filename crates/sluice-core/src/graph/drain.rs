//! Emptying a worker's graph: draining (every buffer flushed downstream,
//! when a run stops) and discarding (everything dropped and counted, on a
//! worker that is down).

use super::{InRing, WorkerGraph};
use crate::batch::MAX_BURST;
use crate::nf::free_dropped;
use crate::packet::PacketId;
use crate::telemetry::DelaySampling;

impl WorkerGraph {
    /// Flushes every fractional buffer, and what NFs hold, downstream, in topological order, so
    /// that every packet is delivered, dropped or on its way to another
    /// worker (stopping a run); and as much of the rings' backlogs as the
    /// rings take.
    pub fn drain(&mut self) {
        self.clocking.times_runs = false;
        // Every packet that drains is timed: the last of a run are no sample's.
        let sampling = std::mem::replace(&mut self.clocking.delay_sampling, DelaySampling::EVERY_PACKET);
        self.take_decisions();
        // Nodes are kept in topological order; weighted-fair queues empty too.
        for v in 0..self.nodes.len() {
            self.run_queued(v, MAX_BURST, true);
            self.send_all_held(v);
        }
        if self.links.backlogged > 0 {
            self.flush_backlogs();
        }
        self.clocking.delay_sampling = sampling;
    }

    /// What a failed core does: nothing runs, its sources are not polled,
    /// and the packets that reach it on inbound rings, sit in its buffers,
    /// are held by its NFs or wait in its rings' backlogs are dropped and counted at the module
    /// they were at or for (and their flow). Returns the packets dropped (pkt).
    pub fn discard(&mut self) -> usize {
        // What the scheduled link already sent is delivered; it is not this worker's to lose.
        self.take_decisions();
        let mut dropped = self.drop_held();
        for i in 0..self.links.rings_in.len() {
            let InRing { ring, target, .. } = &mut self.links.rings_in[i];
            let counters = &mut self.nodes[*target].counters;
            while let Some(id) = ring.pop() {
                counters.arrived_pkts += 1;
                counters.down_dropped += 1;
                free_dropped(&mut self.pool, &mut self.flows, id);
                dropped += 1;
            }
        }
        for v in 0..self.nodes.len() {
            let node = &mut self.nodes[v];
            let n = drop_all(&mut node.buffer, |id| free_dropped(&mut self.pool, &mut self.flows, id));
            if node.queued {
                self.fair.queued_pkts -= n;
            }
            node.counters.down_dropped += n as u64;
            dropped += n;
        }
        for r in 0..self.links.rings_out.len() {
            let out = &mut self.links.rings_out[r];
            if out.backlog.is_empty() {
                continue;
            }
            let n = drop_all(&mut out.backlog, |id| free_dropped(&mut self.pool, &mut self.flows, id));
            self.nodes[out.sender].counters.down_dropped += n as u64;
            self.links.backlogged -= 1;
            dropped += n;
        }
        dropped
    }
}

/// Takes every packet out of `queue`, handing each to `drop`; returns how many (pkt).
fn drop_all(queue: &mut crate::buffer::FractionalBuffer, mut drop: impl FnMut(PacketId)) -> usize {
    let mut n = 0;
    while let Some(id) = queue.pop() {
        drop(id);
        n += 1;
    }
    n
}
