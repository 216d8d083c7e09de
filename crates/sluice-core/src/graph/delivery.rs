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
