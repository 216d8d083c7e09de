//! Delivery at an egress: the packets are counted for their flow, their
//! delays recorded and their buffers freed.
//!
//! Reading the clock costs ~9 ns here (a TSC read in a VM), as much as
//! the rest of a round through an empty graph, so the walker reads it at
//! an egress only when timing, and hands the reading on: when nothing ran
//! after the egress, it ends the round, and the next round starts at it
//! where the caller runs rounds back to back (see
//! [`super::WorkerGraph::next_round`]). A chain then costs one clock read
//! a round.
//!
//! An egress into a scheduled link hands its packets over by handle and
//! keeps them in the pool, each tagged with its flow; the worker delivers
//! or drops each one as the link's decisions come back, at the start of
//! every round (one clock read for all of them).

use super::WorkerGraph;
use crate::nf::free_dropped;
use crate::packet::{PacketId, NO_FLOW};
use crate::pool::PacketPool;
use crate::telemetry::FlowRecorder;

/// Delivers `ids` at the egress of `flow` (`None`: a sink no flow ends
/// at: freed only): frees them, counts packets of other flows as
/// misdelivered and records the delays of all at `now_ns` (one histogram
/// update per run of equal ingress times), or, without timing (`None`),
/// counts them delivered.
#[inline]
pub(super) fn deliver(pool: &mut PacketPool, flows: &mut [FlowRecorder], flow: Option<usize>, ids: &[PacketId], now_ns: Option<u64>) {
    let Some(flow) = flow else {
        for &id in ids {
            pool.free(id);
        }
        return;
    };
    let recorder = &mut flows[flow];
    let mut run: Option<(u64, u64)> = None;
    for &id in ids {
        let meta = *pool.meta(id);
        pool.free(id);
        recorder.misdelivered += u64::from(meta.flow != NO_FLOW && meta.flow as usize != flow);
        if let Some(now) = now_ns {
            run = match run {
                Some((ts, n)) if ts == meta.ts_ns => Some((ts, n + 1)),
                Some((ts, n)) => {
                    recorder.record_n(now.saturating_sub(ts), n);
                    Some((meta.ts_ns, 1))
                }
                None => Some((meta.ts_ns, 1)),
            };
        }
    }
    match (run, now_ns) {
        (Some((ts, n)), Some(now)) => recorder.record_n(now.saturating_sub(ts), n),
        _ => recorder.delivered += ids.len() as u64,
    }
}

/// Tags packet `id`, about to wait for a scheduled link, with the flow of
/// the egress it reached (`None`: none), counting it misdelivered there if
/// it carries another flow: its decision comes back without the egress.
#[inline]
pub(super) fn claim_for_egress(pool: &mut PacketPool, flows: &mut [FlowRecorder], flow: Option<usize>, id: PacketId) {
    let meta = pool.meta_mut(id);
    match flow {
        Some(f) => {
            if meta.flow != NO_FLOW && meta.flow as usize != f {
                flows[f].misdelivered += 1;
            }
            meta.flow = f as u16;
        }
        None => meta.flow = NO_FLOW,
    }
}

impl WorkerGraph {
    /// Delivers what the scheduled link sent and drops (counted at the
    /// flow's egress) what it refused, since the last call; returns how
    /// many packets (pkt).
    pub(super) fn take_decisions(&mut self) -> usize {
        let Some(link) = self.egress.as_mut() else { return 0 };
        let mut decided = 0;
        let mut now_ns = None;
        while let Some((id, sent)) = link.decision() {
            let tag = self.pool.meta(id).flow;
            let flow = (tag != NO_FLOW).then_some(tag as usize);
            // Counted at the flow's egress (for the flow alone where its egress moved away).
            let counters = flow.and_then(|f| self.egress_node[f]).map(|v| &mut self.nodes[v].counters);
            if sent {
                let now = self.timing.then(|| *now_ns.get_or_insert_with(|| self.clock.delta_as_nanos(self.origin, self.clock.raw())));
                deliver(&mut self.pool, &mut self.flows, flow, &[id], now);
                if let Some(c) = counters {
                    c.delivered += 1;
                }
            } else {
                free_dropped(&mut self.pool, &mut self.flows, id);
                if let Some(c) = counters {
                    c.dropped += 1;
                }
            }
            decided += 1;
        }
        decided
    }
}
