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
//! every round (one clock read for all of them). An egress with a port
//! transmits what the link sent first, a run of decisions for it at a time
//! (one ring kick a run); what the port's ring refuses is dropped, counted.

use super::{Kind, Output, WorkerGraph};
use crate::nf::{free_dropped, PacketSink};
use crate::packet::{PacketId, NO_FLOW};
use crate::pool::PacketPool;
use crate::telemetry::FlowRecorder;

/// Packets the scheduled link sent that are put on a port together (pkt).
const SEND_RUN: usize = 64;

/// Delivers `ids` at the egress of `flow` (`None`: a sink no flow ends
/// at: released only): releases them (`release`: [`PacketPool::free`], or
/// [`PacketPool::hand_over`] where a port sends from their buffers),
/// counts packets of other flows as misdelivered and, given `timed` (the
/// time now, ns, and the weight of each packet: see
/// [`DelaySampling`](crate::telemetry::DelaySampling)), records the delays
/// of all (one histogram update per run of equal ingress times); else it
/// counts them delivered.
#[inline]
pub(super) fn deliver(pool: &mut PacketPool, flows: &mut [FlowRecorder], flow: Option<usize>, ids: &[PacketId], timed: Option<(u64, u32)>, release: impl Fn(&mut PacketPool, PacketId)) {
    let Some(flow) = flow else {
        for &id in ids {
            release(pool, id);
        }
        return;
    };
    let recorder = &mut flows[flow];
    let mut run: Option<(u64, u64)> = None;
    for &id in ids {
        let meta = *pool.meta(id);
        release(pool, id);
        recorder.misdelivered += u64::from(meta.flow != NO_FLOW && meta.flow as usize != flow);
        if let Some((now, weight)) = timed {
            run = match run {
                Some((ts, n)) if ts == meta.ts_ns => Some((ts, n + 1)),
                Some((ts, n)) => {
                    recorder.record_weighted(now.saturating_sub(ts), n, weight);
                    Some((meta.ts_ns, 1))
                }
                None => Some((meta.ts_ns, 1)),
            };
        }
    }
    match (run, timed) {
        (Some((ts, n)), Some((now, weight))) => recorder.record_weighted(now.saturating_sub(ts), n, weight),
        _ => recorder.delivered += ids.len() as u64,
    }
}

/// Puts `ids` on `port`, if there is one, drops (counted) what its ring
/// had no room for, and delivers what it took (see [`deliver`]), timed by
/// what `timed` reads after the transmit: freed, or handed over where
/// the port sends from their buffers. Returns how many it took (pkt).
#[inline]
pub(super) fn transmit_and_deliver(
    pool: &mut PacketPool,
    flows: &mut [FlowRecorder],
    port: Option<&mut Box<dyn PacketSink>>,
    flow: Option<usize>,
    ids: &[PacketId],
    timed: impl FnOnce() -> Option<(u64, u32)>,
) -> usize {
    let (taken, zero_copy) = match port {
        Some(port) => (port.transmit(pool, ids), port.zero_copy()),
        None => (ids.len(), false),
    };
    for &id in &ids[taken..] {
        free_dropped(pool, flows, id);
    }
    let now = timed();
    if zero_copy {
        deliver(pool, flows, flow, &ids[..taken], now, PacketPool::hand_over);
    } else {
        deliver(pool, flows, flow, &ids[..taken], now, PacketPool::free);
    }
    taken
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
        if self.egress.is_none() {
            return 0;
        }
        let mut decided = 0;
        let mut now_ns = None;
        // A run of packets the link sent for one flow, sent on together.
        let mut run = [PacketId(0); SEND_RUN];
        let (mut run_len, mut run_flow) = (0, None);
        while let Some((id, sent)) = self.egress.as_mut().and_then(|link| link.decision()) {
            let tag = self.pool.meta(id).flow;
            let flow = (tag != NO_FLOW).then_some(tag as usize);
            if run_len > 0 && (!sent || flow != run_flow || run_len == SEND_RUN) {
                self.send_on(run_flow, &run[..run_len], &mut now_ns);
                run_len = 0;
            }
            if sent {
                run[run_len] = id;
                run_len += 1;
                run_flow = flow;
            } else {
                free_dropped(&mut self.pool, &mut self.flows, id);
                // Counted at the flow's egress (for the flow alone where its egress moved away).
                if let Some(v) = flow.and_then(|f| self.egress_node[f]) {
                    self.nodes[v].counters.egress_dropped += 1;
                }
            }
            decided += 1;
        }
        if run_len > 0 {
            self.send_on(run_flow, &run[..run_len], &mut now_ns);
        }
        decided
    }

    /// Puts packets of `flow` the scheduled link sent onto their egress's
    /// port, if it has one, and delivers what the port took; drops, counted,
    /// what its ring refused. `now_ns` is the reading shared by the round's decisions.
    fn send_on(&mut self, flow: Option<usize>, ids: &[PacketId], now_ns: &mut Option<u64>) {
        let node = flow.and_then(|f| self.egress_node[f]);
        let port = match node.map(|v| &mut self.nodes[v].kind) {
            Some(Kind::Egress(_, Output::Scheduled(_, Some(port)))) => Some(port),
            _ => None,
        };
        let (timing, clock, origin) = (self.timing, &self.clock, self.origin);
        // The link's decisions come back once a round: every packet is timed.
        let now = || timing.then(|| (*now_ns.get_or_insert_with(|| clock.delta_as_nanos(origin, clock.raw())), 1));
        let taken = transmit_and_deliver(&mut self.pool, &mut self.flows, port, flow, ids, now);
        if let Some(v) = node {
            let c = &mut self.nodes[v].counters;
            c.delivered += taken as u64;
            c.egress_dropped += (ids.len() - taken) as u64;
        }
    }
}
