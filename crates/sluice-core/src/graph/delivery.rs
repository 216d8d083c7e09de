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
use crate::nf::{free_dropped, Decision, PacketSink};
use crate::packet::{PacketId, NO_FLOW};
use crate::pool::PacketPool;
use crate::telemetry::{DelaySampling, FlowRecorder};
use crate::wire::ip_of_mut;

/// Packets the scheduled link sent that are put on a port together (pkt).
const SEND_RUN: usize = 64;

/// Whose deliveries the packets reaching an egress are (see `Ends`).
/// A packet of no flow is nobody's delivery wherever it ends: one an NF
/// made on the way (an ARP request, an ICMP error), since every packet a
/// flow takes is claimed for it upstream.
#[derive(Clone, Copy)]
pub(super) enum Recipient<'a> {
    /// Nobody's: a sink no flow ends at releases them.
    Nobody,
    /// Flow `f`'s, every one of a flow (one of another flow is counted misdelivered there).
    Flow(usize),
    /// Each its own flow's, where that flow ends at egress node `here`
    /// (`egress_node`, per flow, where it ends on this worker); one of a
    /// flow that ends elsewhere is counted misdelivered to its flow, one of
    /// no flow is released.
    Own { here: usize, egress_node: &'a [Option<usize>] },
}

/// Times deliveries: which packets (see [`DelaySampling`]; `draw`: the
/// round's random bits, `round`: its number), and the time, read once,
/// when the first packet timed needs it.
pub(super) struct Timer<'a> {
    sampling: DelaySampling,
    draw: u64,
    round: u64,
    clock: &'a quanta::Clock,
    origin: u64,
    /// The reading taken (raw ticks), once one is.
    pub(super) read: Option<u64>,
}

impl<'a> Timer<'a> {
    pub(super) fn new(sampling: DelaySampling, draw: u64, round: u64, clock: &'a quanta::Clock, origin: u64) -> Self {
        Self { sampling, draw, round, clock, origin, read: None }
    }

    /// The weight a packet of `flow` is timed with now (`None`: not timed).
    #[inline(always)]
    fn weight(&self, flow: &mut FlowRecorder) -> Option<u32> {
        self.sampling.weight(flow, self.draw, self.round)
    }

    /// Time now (ns since the origin), read at the first call.
    #[inline(always)]
    fn now_ns(&mut self) -> u64 {
        let raw = *self.read.get_or_insert_with(|| self.clock.raw());
        self.clock.delta_as_nanos(self.origin, raw)
    }
}

/// The delays of a delivered packets' run (equal flow, ingress time and
/// weight) not yet recorded.
#[derive(Clone, Copy)]
struct Run {
    flow: usize,
    ts_ns: u64,
    weight: u32,
    n: u64,
}

impl Run {
    /// Adds a packet, recording the run it ends when it starts another.
    #[inline(always)]
    fn add(run: &mut Option<Run>, flows: &mut [FlowRecorder], now_ns: u64, next: Run) {
        match run {
            Some(r) if r.flow == next.flow && r.ts_ns == next.ts_ns && r.weight == next.weight => r.n += 1,
            _ => {
                if let Some(done) = run.replace(next) {
                    done.record(flows, now_ns);
                }
            }
        }
    }

    fn record(self, flows: &mut [FlowRecorder], now_ns: u64) {
        flows[self.flow].record_weighted(now_ns.saturating_sub(self.ts_ns), self.n, self.weight);
    }
}

/// Delivers `ids` to `to`: releases them (`release`: [`PacketPool::free`],
/// or [`PacketPool::hand_over`] where a port sends from their buffers),
/// counts them delivered to their flow and, as `timer` says (`None`:
/// timing off), records their delays (one histogram update per run of
/// equal ingress times).
#[inline]
pub(super) fn deliver(pool: &mut PacketPool, flows: &mut [FlowRecorder], to: Recipient<'_>, ids: &[PacketId], timer: Option<&mut Timer<'_>>, release: impl Fn(&mut PacketPool, PacketId)) {
    match to {
        Recipient::Nobody => {
            for &id in ids {
                release(pool, id);
            }
        }
        Recipient::Flow(flow) => {
            let weight = timer.as_ref().and_then(|t| t.weight(&mut flows[flow]));
            let now_ns = match (weight, timer) {
                (Some(_), Some(t)) => t.now_ns(),
                _ => 0,
            };
            let mut run: Option<Run> = None;
            let mut nobodys = 0;
            for &id in ids {
                let meta = *pool.meta(id);
                release(pool, id);
                if meta.flow == NO_FLOW {
                    nobodys += 1;
                    continue;
                }
                flows[flow].misdelivered += u64::from(meta.flow as usize != flow);
                if let Some(weight) = weight {
                    Run::add(&mut run, flows, now_ns, Run { flow, ts_ns: meta.ts_ns, weight, n: 1 });
                }
            }
            // Recording a run counts it delivered.
            match run {
                Some(r) => r.record(flows, now_ns),
                None => flows[flow].delivered += (ids.len() - nobodys) as u64,
            }
        }
        Recipient::Own { here, egress_node } => {
            let mut timer = timer;
            let mut run: Option<Run> = None;
            let mut now_ns = 0;
            for &id in ids {
                let meta = *pool.meta(id);
                release(pool, id);
                let flow = meta.flow as usize;
                if meta.flow == NO_FLOW {
                    continue;
                }
                if egress_node.get(flow).copied().flatten() != Some(here) {
                    if let Some(other) = flows.get_mut(flow) {
                        other.delivered += 1;
                        other.misdelivered += 1;
                    }
                    continue;
                }
                match timer.as_deref_mut().and_then(|t| t.weight(&mut flows[flow]).map(|w| (w, t.now_ns()))) {
                    Some((weight, now)) => {
                        now_ns = now;
                        Run::add(&mut run, flows, now_ns, Run { flow, ts_ns: meta.ts_ns, weight, n: 1 });
                    }
                    None => flows[flow].delivered += 1,
                }
            }
            if let Some(r) = run {
                r.record(flows, now_ns);
            }
        }
    }
}

/// Puts `ids` on `port`, if there is one, drops (counted) what its ring
/// had no room for, and delivers what it took to `to` (see [`deliver`]),
/// timed after the transmit: freed, or handed over where the port sends
/// from their buffers. Returns how many it took (pkt).
#[inline]
pub(super) fn transmit_and_deliver(
    pool: &mut PacketPool,
    flows: &mut [FlowRecorder],
    port: Option<&mut Box<dyn PacketSink>>,
    to: Recipient<'_>,
    ids: &[PacketId],
    timer: Option<&mut Timer<'_>>,
) -> usize {
    let (taken, zero_copy) = match port {
        Some(port) => (port.transmit(pool, ids), port.zero_copy()),
        None => (ids.len(), false),
    };
    for &id in &ids[taken..] {
        free_dropped(pool, flows, id);
    }
    if zero_copy {
        deliver(pool, flows, to, &ids[..taken], timer, PacketPool::hand_over);
    } else {
        deliver(pool, flows, to, &ids[..taken], timer, PacketPool::free);
    }
    taken
}

/// Tags packet `id`, about to wait for a scheduled link, with the flow it
/// is delivered to when its decision comes back, which comes without the
/// egress (see [`Recipient`]): the egress's flow, its own where that ends
/// here, else none (one of another flow is counted misdelivered).
#[inline]
pub(super) fn claim_for_egress(pool: &mut PacketPool, flows: &mut [FlowRecorder], to: Recipient<'_>, id: PacketId) {
    let meta = pool.meta_mut(id);
    let own = meta.flow as usize;
    match to {
        Recipient::Flow(_) if meta.flow == NO_FLOW => {}
        Recipient::Flow(f) => {
            if own != f {
                flows[f].misdelivered += 1;
            }
            meta.flow = f as u16;
        }
        Recipient::Own { here, egress_node } if meta.flow != NO_FLOW && egress_node.get(own).copied().flatten() != Some(here) => {
            if let Some(other) = flows.get_mut(own) {
                other.delivered += 1;
                other.misdelivered += 1;
            }
            meta.flow = NO_FLOW;
        }
        Recipient::Own { .. } => {}
        Recipient::Nobody => meta.flow = NO_FLOW,
    }
}

impl WorkerGraph {
    /// Delivers what the scheduled link sent and drops (counted at the
    /// flow's egress) what it refused, since the last call; returns how
    /// many packets (pkt).
    pub(super) fn take_decisions(&mut self) -> usize {
        if self.links.egress.is_none() {
            return 0;
        }
        let mut decided = 0;
        // One clock reading for all the round's decisions.
        let mut read = None;
        // A run of packets the link sent for one flow, sent on together.
        let mut run = [PacketId(0); SEND_RUN];
        let (mut run_len, mut run_to) = (0, (None, None));
        while let Some((id, decision)) = self.links.egress.as_mut().and_then(|link| link.decision()) {
            let tag = self.pool.meta(id).flow;
            let flow = (tag != NO_FLOW).then_some(tag as usize);
            // The flow's egress (its flow's alone where it moved away), or where a packet of none was offered.
            let node = match flow {
                Some(f) => self.links.egress_node[f],
                None => self.links.offered_at.get(id.0 as usize).map(|&v| v as usize).filter(|&v| v < self.nodes.len()),
            };
            let sent = matches!(decision, Decision::Sent | Decision::Marked);
            if decision == Decision::Marked {
                self.mark_ce(id, node);
            }
            if run_len > 0 && (!sent || (flow, node) != run_to || run_len == SEND_RUN) {
                self.send_on(run_to, &run[..run_len], &mut read);
                run_len = 0;
            }
            if sent {
                run[run_len] = id;
                run_len += 1;
                run_to = (flow, node);
            } else {
                free_dropped(&mut self.pool, &mut self.flows, id);
                if let Some(v) = node {
                    let c = &mut self.nodes[v].counters;
                    *if decision == Decision::Managed { &mut c.aqm_dropped } else { &mut c.egress_dropped } += 1;
                }
            }
            decided += 1;
        }
        if run_len > 0 {
            self.send_on(run_to, &run[..run_len], &mut read);
        }
        decided
    }

    /// Marks packet `id` congestion experienced, as its class's queue
    /// management decided (it was offered as ECN-capable), counted at its
    /// egress `node`.
    #[cold]
    fn mark_ce(&mut self, id: PacketId, node: Option<usize>) {
        if let Ok(mut ip) = ip_of_mut(self.pool.data_mut(id)) {
            ip.set_ce();
        }
        if let Some(v) = node {
            self.nodes[v].counters.ecn_marked += 1;
        }
    }

    /// Puts packets the scheduled link sent, of `flow` at egress `node`,
    /// onto that egress's port, if it has one, and delivers what the port
    /// took; drops, counted, what its ring refused. `read` is the clock
    /// reading (raw ticks) the round's decisions share, once taken.
    fn send_on(&mut self, (flow, node): (Option<usize>, Option<usize>), ids: &[PacketId], read: &mut Option<u64>) {
        let port = match node.map(|v| &mut self.nodes[v].kind) {
            Some(Kind::Egress(_, Output::Scheduled(_, Some(port)))) => Some(port),
            _ => None,
        };
        // The link's decisions come back once a round: every packet is timed.
        let mut timer = self.clocking.measures.then(|| Timer { read: *read, ..Timer::new(DelaySampling::EVERY_PACKET, 0, self.rounds, &self.clocking.clock, self.clocking.origin) });
        let to = flow.map_or(Recipient::Nobody, Recipient::Flow);
        let taken = transmit_and_deliver(&mut self.pool, &mut self.flows, port, to, ids, timer.as_mut());
        if let Some(t) = timer {
            *read = t.read;
        }
        if let Some(v) = node {
            let c = &mut self.nodes[v].counters;
            c.delivered += taken as u64;
            c.egress_dropped += (ids.len() - taken) as u64;
        }
    }
}
