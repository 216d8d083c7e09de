//! The worker's links to the rest of the pipeline: the rings to and from
//! other workers and its way onto the scheduled link.

use crate::batch::MAX_BURST;
use crate::buffer::FractionalBuffer;
use crate::codel::{CoDel, CoDelConfig};
use crate::nf::EgressLink;
use crate::packet::PacketId;
use crate::ring::{Consumer, Producer};

/// The rings a worker sends on and receives from, and the scheduled link.
pub(super) struct Links {
    /// Rings to other workers, one per crossing edge leaving this worker.
    pub(super) rings_out: Vec<OutRing>,
    /// Rings from other workers, one per crossing edge arriving here.
    pub(super) rings_in: Vec<InRing>,
    /// Outbound rings with a backlog (see [`OutRing`]).
    pub(super) backlogged: usize,
    /// The worker's way onto the scheduled link (see [`EgressLink`]).
    pub(super) egress: Option<Box<dyn EgressLink>>,
    /// Per flow, the local egress node it ends at (for drops the scheduled link decides).
    pub(super) egress_node: Vec<Option<usize>>,
    /// Per packet handle, the egress node a packet of no flow (an ARP
    /// answer, an ICMP error) was offered to the scheduled link at: its
    /// decision comes back without it. Empty without a scheduled link.
    pub(super) offered_at: Box<[u32]>,
    /// CoDel's settings for every inbound ring (`None`: rings push back and drop nothing).
    pub(super) ring_codel: Option<CoDelConfig>,
}

impl Links {
    /// Links over the ring ends `outbound` and `inbound` (crossing edge,
    /// ring) and the scheduled link `egress`; what they lead to is set when
    /// the worker links its nodes.
    pub(super) fn new(outbound: Vec<(usize, Producer<PacketId>)>, inbound: Vec<(usize, Consumer<PacketId>)>, egress: Option<Box<dyn EgressLink>>, ring_codel: Option<CoDelConfig>) -> Self {
        Self {
            rings_out: outbound.into_iter().map(|(edge, ring)| OutRing::new(edge, ring)).collect(),
            rings_in: inbound.into_iter().map(|(edge, ring)| InRing::new(edge, ring, ring_codel)).collect(),
            backlogged: 0,
            egress,
            egress_node: Vec::new(),
            offered_at: Box::default(),
            ring_codel,
        }
    }

    /// Counts the outbound rings with a backlog again (after rings moved).
    pub(super) fn recount_backlogged(&mut self) {
        self.backlogged = self.rings_out.iter().filter(|r| !r.backlog.is_empty()).count();
    }
}

/// A ring this worker receives from.
pub(super) struct InRing {
    /// The crossing edge it carries (index into `Model::edges`).
    pub(super) edge: usize,
    pub(super) ring: Consumer<PacketId>,
    /// The local node it feeds.
    pub(super) target: usize,
    /// CoDel on the packets waiting in it (see `ring_aqm`), where the pipeline asks for it.
    pub(super) codel: Option<CoDel>,
}

impl InRing {
    /// The receiving end `ring` of crossing edge `edge`, under CoDel's `codel` settings if given.
    pub(super) fn new(edge: usize, ring: Consumer<PacketId>, codel: Option<CoDelConfig>) -> Self {
        Self { edge, ring, target: usize::MAX, codel: codel.map(|c| CoDel::new(&c)) }
    }
}

/// A ring this worker sends on. What the ring cannot take waits in the
/// backlog, in order, until it can: nothing is dropped between workers.
/// Entries that reach the ring stop taking packets in while it is
/// backlogged or short of room, so backpressure crosses workers, and the
/// backlog only ever holds what the worker held: it is sized for every
/// packet the worker's buffers and queues can hold and a batch per entry
/// (see `WorkerGraph::link`), so it cannot overflow.
pub(super) struct OutRing {
    /// The crossing edge it carries (index into `Model::edges`).
    pub(super) edge: usize,
    /// The local node that sends on it.
    pub(super) sender: usize,
    pub(super) ring: Producer<PacketId>,
    pub(super) backlog: FractionalBuffer,
}

impl OutRing {
    pub(super) fn new(edge: usize, ring: Producer<PacketId>) -> Self {
        Self { edge, sender: usize::MAX, ring, backlog: FractionalBuffer::default() }
    }

    /// Makes the backlog hold at least `capacity` packets, keeping what it holds.
    pub(super) fn reserve_backlog(&mut self, capacity: usize) {
        if self.backlog.capacity() < capacity {
            let mut bigger = FractionalBuffer::with_capacity(capacity);
            while let Some(id) = self.backlog.pop() {
                bigger.push(id);
            }
            self.backlog = bigger;
        }
    }

    /// Whether what one round can send on fits without a backlog.
    pub(super) fn has_room(&self) -> bool {
        self.backlog.is_empty() && self.ring.room() >= RING_RESERVE
    }
}

/// Entries pause while an outbound ring they reach has fewer free slots
/// than this (pkt): room for what a batch can release downstream.
pub(super) const RING_RESERVE: usize = 2 * MAX_BURST;


#[cfg(test)]
mod tests {
    use crate::graph::tests::{ByFlow, Listed, Log, TestWorkers};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::ModuleCode;
    use crate::wiring::RING_SLOTS;
    use crate::WalkerConfig;

    /// src on worker 0 → a → out on worker 1: one ring between them.
    fn across_a_ring(packets: usize) -> TestWorkers {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1)).module(ModuleDecl::new("a", Role::Function, 1, 1)).module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "a", 0).connect("a", 0, "out", 0).flow("f", &["src", "a", "out"], None);
        b.place("src", 0).place("a", 1).place("out", 1);
        let a = ModuleCode::Function(Box::new(ByFlow { name: "a", gates: 1, log: Log::default() }));
        TestWorkers::new(&b, 32, vec![ModuleCode::Source(Box::new(Listed::new(&vec![0; packets]))), a, ModuleCode::Egress], WalkerConfig { timing: false, ..WalkerConfig::default() })
    }

    #[test]
    fn a_full_ring_stops_its_entries_and_drops_nothing() {
        let sent = 3 * RING_SLOTS;
        let mut w = across_a_ring(sent);
        assert_eq!(w.model.crossings.len(), 1);
        // The receiving worker stands still: the ring fills, then the source stops taking packets in.
        for _ in 0..sent {
            w.graphs[0].round();
        }
        let [[generated, delivered, dropped]] = w.tally().0[..] else { panic!("one flow") };
        assert!((RING_SLOTS / 2..=RING_SLOTS + 64).contains(&(generated as usize)), "took in {generated} packets for a ring of {RING_SLOTS}");
        assert_eq!((delivered, dropped), (0, 0));
        // Both run: everything crosses.
        let mut rounds = 0;
        while w.tally().0[0][1] < sent as u64 {
            w.rounds(1);
            rounds += 1;
            assert!(rounds < 10 * sent, "every packet crosses");
        }
        assert_eq!(w.tally(), (vec![[sent as u64, sent as u64, 0]], 0));
    }
}
