//! The interface between the walker and network functions and sources.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::batch::Batch;
use crate::drop_reason::{DropReason, NfDrops};
use crate::packet::{PacketId, PacketMeta, NO_FLOW};
use crate::pool::PacketPool;
use crate::telemetry::{FlowRecorder, ModuleCounters, NfCounters};

/// What an NF may touch while it runs on a batch. The walker builds one
/// for a whole walk and hands it to each NF it runs.
pub struct NfContext<'a> {
    /// The worker's packet pool.
    pub pool: &'a mut PacketPool,
    /// Time at the start of this run, once read (ns since the run started).
    pub(crate) now_ns: Option<u64>,
    pub(crate) clock: &'a quanta::Clock,
    pub(crate) origin: u64,
    /// What the running NF dropped and made, for its module's counters:
    /// the worker's, kept zero between runs (not made anew for each walk).
    pub(crate) tally: &'a mut NfTally,
    pub(crate) flows: &'a mut [FlowRecorder],
    pub(crate) batch_size: usize,
}

/// What an NF dropped, made and took in in one run (pkt), added to its
/// module's counters after the run (see [`NfTally::fold_into`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct NfTally {
    dropped: u64,
    /// `dropped` by reason.
    by_reason: NfDrops,
    duplicates: u64,
    created: u64,
    taken_in: u64,
    /// What it last said it keeps (see [`NfContext::note_held`]).
    held: Option<Held>,
    /// Whether it counted or said anything this run: one test after a run, not five.
    counted: bool,
}

impl NfTally {
    /// What it dropped so far, by reason (pkt).
    pub(crate) fn drops(&self) -> &NfDrops {
        &self.by_reason
    }

    #[inline(always)]
    fn drop(&mut self, reason: DropReason) {
        self.dropped += 1;
        self.by_reason[reason as usize] += 1;
        self.counted = true;
    }

    #[inline(always)]
    fn duplicate(&mut self) {
        self.duplicates += 1;
        self.counted = true;
    }

    #[inline(always)]
    fn create(&mut self) {
        self.created += 1;
        self.counted = true;
    }

    #[inline(always)]
    fn take_in(&mut self) {
        self.taken_in += 1;
        self.counted = true;
    }

    /// Adds what it counted to `counters` and starts again from zero;
    /// returns what the NF said it keeps, if it said.
    #[inline(always)]
    pub(crate) fn fold_into(&mut self, counters: &mut ModuleCounters) -> Option<Held> {
        let mut held = None;
        if self.counted {
            counters.dropped += self.dropped;
            if self.dropped != 0 {
                for (all, run) in counters.nf_drops.iter_mut().zip(&self.by_reason) {
                    *all += run;
                }
            }
            counters.duplicates += self.duplicates;
            counters.created += self.created;
            counters.delivered += self.taken_in;
            held = self.held;
            *self = Self::default();
        }
        held
    }
}

/// What an NF that keeps packets says of them (see [`NfContext::note_held`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Held {
    /// When the next comes due (ns since the origin; `u64::MAX`: none kept).
    pub(crate) due_ns: u64,
    /// Whether it has packets ready for another run (see [`NetworkFunction::ready`]).
    pub(crate) ready: bool,
}

impl Held {
    /// An NF that keeps nothing.
    pub(crate) const NONE: Self = Self { due_ns: u64::MAX, ready: false };

    fn new(due_ns: Option<u64>, ready: bool) -> Self {
        Self { due_ns: due_ns.unwrap_or(u64::MAX), ready }
    }

    /// What `nf` answers now.
    pub(crate) fn of(nf: &dyn NetworkFunction) -> Self {
        Self::new(nf.due_ns(), nf.ready())
    }
}

impl NfContext<'_> {
    /// Time at the start of this run (ns since the run started): the
    /// worker's clock, virtual in the simulator. Read once per run.
    #[inline]
    pub fn now(&mut self) -> u64 {
        *self.now_ns.get_or_insert_with(|| self.clock.delta_as_nanos(self.origin, self.clock.raw()))
    }

    /// The pipeline's batch size B (pkt): the most an NF that releases
    /// packets it held sends in one run.
    #[inline]
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Says what this NF keeps after this run (see
    /// [`NetworkFunction::most_held`]): when the next packet comes due
    /// (`due_ns`, ns since the origin; `None`: it keeps none) and whether it
    /// has packets ready for another run, what [`NetworkFunction::due_ns`]
    /// and [`NetworkFunction::ready`] now answer. An NF that keeps packets
    /// says it in every run that keeps one, sends one it kept or moves its
    /// due time, after the last such change. The walker goes by what it
    /// last said, without asking, and wakes the NF no sooner.
    #[inline]
    pub fn note_held(&mut self, due_ns: Option<u64>, ready: bool) {
        self.tally.held = Some(Held::new(due_ns, ready));
        self.tally.counted = true;
    }

    /// Sends a packet to the drop gate for `reason`: frees it and counts
    /// it for this module (under its reason) and for the packet's flow.
    #[inline]
    pub fn drop_packet(&mut self, id: PacketId, reason: DropReason) {
        free_dropped(self.pool, self.flows, id);
        self.tally.drop(reason);
    }

    /// Drops a packet that is a copy of one already passed on (a
    /// high-availability duplicate): counted for this module, not as a loss
    /// of its flow.
    #[inline]
    pub fn drop_duplicate(&mut self, id: PacketId) {
        self.pool.free(id);
        self.tally.duplicate();
    }

    /// Takes in packet `id`, addressed to the router itself (an ARP reply,
    /// a neighbour advertisement): delivered here, and freed. Its flow, if it
    /// has one, loses it (it will not reach the flow's egress).
    #[inline]
    pub fn take_in(&mut self, id: PacketId) {
        self.delivered_here(id);
        self.pool.free(id);
    }

    /// Answers packet `id`, addressed to the router itself, with a packet
    /// of this module's written over it (an ARP reply over the request, an
    /// echo reply over the ping): `id` is delivered here, and is from now
    /// on the answer, of no flow, made here.
    #[inline]
    pub fn answer(&mut self, id: PacketId) {
        self.delivered_here(id);
        self.pool.meta_mut(id).flow = NO_FLOW;
        self.tally.create();
    }

    /// Drops packet `id` for `reason`, counted as [`Self::drop_packet`]
    /// counts, and keeps its buffer for a packet of this module's making,
    /// of no flow, written over it (an ICMP error that quotes it).
    #[inline]
    pub fn drop_reused(&mut self, id: PacketId, reason: DropReason) {
        let meta = self.pool.meta_mut(id);
        if let Some(recorder) = self.flows.get_mut(meta.flow as usize) {
            recorder.dropped += 1;
        }
        meta.flow = NO_FLOW;
        self.tally.drop(reason);
        self.tally.create();
    }

    fn delivered_here(&mut self, id: PacketId) {
        if let Some(recorder) = self.flows.get_mut(self.pool.meta(id).flow as usize) {
            recorder.dropped += 1;
        }
        self.tally.take_in();
    }

    /// A new packet of `len` bytes (uninitialised contents), made by this
    /// module for flow `flow` ([`NO_FLOW`]: none; a flow's, as a fragment
    /// of its packet is, counts as generated for it), stamped with the
    /// time now; `None` when the pool has no buffer of that size.
    #[inline]
    pub fn make_packet(&mut self, len: usize, flow: u16) -> Option<PacketId> {
        let id = self.pool.alloc(len)?;
        let ts_ns = self.now();
        let meta = self.pool.meta_mut(id);
        meta.ts_ns = ts_ns;
        meta.flow = flow;
        if let Some(recorder) = self.flows.get_mut(flow as usize) {
            // Generated for the flow where it is made, as a claimed packet is.
            recorder.claimed += 1;
        }
        self.tally.create();
        Some(id)
    }

    /// A copy of packet `id` (bytes and metadata: flow, sequence number,
    /// ingress time) in a new buffer, counted as made by this module; `None`
    /// when the pool is empty.
    #[inline]
    pub fn copy_packet(&mut self, id: PacketId) -> Option<PacketId> {
        let meta = *self.pool.meta(id);
        let copy = self.pool.alloc(meta.len as usize)?;
        let data_off = self.pool.meta(copy).data_off;
        *self.pool.meta_mut(copy) = PacketMeta { data_off, ..meta };
        self.pool.copy_data(id, copy);
        self.tally.create();
        Some(copy)
    }
}

/// Frees a dropped packet, counting it for its flow (if it has one) in
/// `flows`; the module that dropped it counts it itself. Out of line: a
/// drop is an NF's exception, and its state is not worth loading on the
/// way of the packets that go on.
#[inline(never)]
pub(crate) fn free_dropped(pool: &mut PacketPool, flows: &mut [FlowRecorder], id: PacketId) {
    if let Some(recorder) = flows.get_mut(pool.meta(id).flow as usize) {
        recorder.dropped += 1;
    }
    pool.free(id);
}

/// Where an NF puts the packets it keeps: one batch per outgate.
///
/// Aligned to 16 bytes: the walker writes it on its stack before each NF
/// run with one 16-byte store, which at 8 bytes past a 16-byte boundary
/// straddles a cache line in one stack placement of four; the NF's first
/// read of it then waits for the store to complete (a chain round took
/// 20% longer in those processes).
#[repr(align(16))]
pub struct Outputs<'a> {
    pub(crate) gates: &'a mut [Box<Batch>],
}

impl Outputs<'_> {
    /// Number of outgates.
    #[inline]
    pub fn len(&self) -> usize {
        self.gates.len()
    }

    /// Whether there is no outgate (a sink).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.gates.is_empty()
    }

    /// Sends one packet out of `gate`.
    #[inline]
    pub fn push(&mut self, gate: usize, id: PacketId) {
        self.gates[gate].push(id);
    }

    /// The batch of `gate`, for a loop that sends many packets out of it.
    #[inline]
    pub fn gate(&mut self, gate: usize) -> &mut Batch {
        &mut self.gates[gate]
    }

    /// Sends the whole batch out of `gate` (the "home run"), leaving `input` empty.
    #[inline]
    pub fn forward(&mut self, gate: usize, input: &mut Batch) {
        self.gates[gate].append(input);
    }
}

/// Sends every packet of `input` for which `keep` returns true out of gate
/// 0 and the others to the drop gate for `reason`, in order, leaving
/// `input` empty: the loop of every NF that transforms packets one by one.
#[inline]
pub fn keep_or_drop(
    ctx: &mut NfContext<'_>,
    input: &mut Batch,
    out: &mut Outputs<'_>,
    reason: DropReason,
    mut keep: impl FnMut(&mut NfContext<'_>, PacketId) -> bool,
) {
    for &id in input.as_slice() {
        if keep(ctx, id) {
            out.push(0, id);
        } else {
            ctx.drop_packet(id, reason);
        }
    }
    input.clear();
}

/// A handle through which the control plane changes an NF's tables while
/// it runs (see [`NetworkFunction::live`]).
pub type LiveHandle = Arc<dyn std::any::Any + Send + Sync>;

/// A network function: runs on a batch and sends every packet to an outgate
/// or the drop gate. Called once per batch; it must leave `input` empty.
pub trait NetworkFunction: Send {
    /// Number of outgates (0 for an egress).
    fn outgates(&self) -> usize;

    /// Number of ingates.
    fn ingates(&self) -> usize {
        1
    }

    /// Processes `input`, moving every packet to `out` or to `ctx.drop_packet`.
    /// An NF that holds packets (see [`Self::most_held`]) may keep some
    /// of `input` and send packets it kept before; it is also run with an
    /// empty `input` when one of those is due.
    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>);

    /// The most packets the NF keeps between runs (pkt; a Reframer's
    /// bound, 0 for the NFs that keep none). Such an NF says after its
    /// runs what it keeps ([`NfContext::note_held`]): the walker runs it
    /// with no input when the next packet is [due](Self::due_ns), again
    /// while it is [ready](Self::ready), and
    /// [releases](Self::release_all) what it holds when a run stops. Fixed
    /// for the NF's life.
    fn most_held(&self) -> usize {
        0
    }

    /// Packets it holds now, ready ones included (pkt).
    fn held(&self) -> usize {
        0
    }

    /// When the oldest packet it holds must leave (ns since the origin);
    /// `None` while it holds none.
    fn due_ns(&self) -> Option<u64> {
        None
    }

    /// Whether it has packets released and waiting for a run to send them
    /// (more than one run's worth of B came due at once).
    fn ready(&self) -> bool {
        false
    }

    /// Makes every packet it holds ready, to be sent by the next runs (a
    /// run stopping, a worker going down).
    fn release_all(&mut self) {}

    /// Sets how long it holds a packet at most (ns ≥ 1; a Reframer's
    /// T_buff), as the run's hold controller decides; packets already held
    /// go by the new time.
    fn set_hold_ns(&mut self, _ns: u64) {}

    /// A handle through which the control plane changes the NF's tables
    /// while it runs, without stopping its worker (an LPM's routes: see
    /// `sluice_nf::lpm::LiveLpm`); `None` for most NFs.
    fn live(&self) -> Option<LiveHandle> {
        None
    }

    /// Writes its own cumulative counters (a Reframer's runs of one flow,
    /// releases by cause…) into `into`'s slots; called when telemetry is
    /// read, once a control period. Gauges are differences of two counters
    /// (held = in − out), so that every slot is a counter and a period's
    /// value is a difference.
    fn read_counters(&self, _into: &mut NfCounters) {}
}

/// A task's ingress: makes or receives packets.
pub trait PacketSource: Send {
    /// Appends up to `max` packets to `out`, allocated from `pool` and
    /// stamped with ingress time `now_ns` (ns).
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize);

    /// Meets the worker's pool before the first [`Self::fill`]: a port
    /// that receives into the pool's buffers registers them here (an
    /// AF_XDP UMEM). Says why it cannot.
    fn attach(&mut self, _pool: &mut PacketPool) -> Result<(), String> {
        Ok(())
    }

    /// The knobs through which the control thread sets this source's rates, if it has any.
    fn rates(&self) -> Option<RateKnobs> {
        None
    }

    /// When its next packet arrives (ns since the origin), where it knows:
    /// a paced stream's next arrival, the emulated NIC's interrupt for a
    /// worker that waits for one (see `PollPolicy::VppAdaptive`).
    fn next_arrival_ns(&self) -> Option<u64> {
        None
    }

    /// How many packets may arrive, at its current mix of rates, before
    /// its receive queue loses one (pkt), where it has one: a sleeping
    /// worker lets at most half of it fill (see `PollPolicy::SloBatching`).
    fn queue_pkts(&self) -> Option<u64> {
        None
    }

    /// Writes its own counters into the first slots of `into`
    /// (cumulative; a port's packets, bytes and ring drops), if it keeps any.
    fn read_counters(&self, _into: &mut NfCounters) {}

    /// A file descriptor that turns readable when packets have arrived
    /// (a port's socket), where there is one: a worker waiting for an
    /// interrupt blocks on it (see [`crate::poll::Wait::Interrupt`]).
    fn wait_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }

    /// The worker woke from a wait on the sources' file descriptors (see
    /// [`Self::wait_fd`]): a wait ends as soon as one turns readable, so
    /// what waits in this source now arrived since about now.
    fn woke(&mut self) {}

    /// Arrivals lost before entering the pipeline, at a full receive queue (pkt, cumulative).
    fn missed(&self) -> u64 {
        0
    }
    /// Adds the packets made so far per flow (pkt, cumulative) to
    /// `generated[flow]`; sources that know no flows add nothing.
    fn count_generated(&self, _generated: &mut dyn FnMut(usize, u64)) {}

    /// Whether every packet it makes belongs to a flow: then no hop
    /// downstream needs to claim its packets for one (see the walker's
    /// `claims`). Fixed for the source's life, save by
    /// [`Self::set_flow_rules`].
    fn stamps_every_packet(&self) -> bool {
        false
    }

    /// The rules it sorts packets into flows by, for the control plane to
    /// read (`None`: it has none; a synthetic stream's flow is its own).
    /// What they are is the source's to say: a port's or a capture's are
    /// `sluice_traffic::FlowRules`.
    fn flow_rules(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Sorts packets into flows by `rules` from its next packet on (rules of
    /// the kind [`Self::flow_rules`] gives); refused, with nothing
    /// changed, by a source that has none or where they are of another kind.
    fn set_flow_rules(&mut self, _rules: Box<dyn std::any::Any + Send>) -> Result<(), String> {
        Err("it sorts no packets into flows by rules".into())
    }
}

/// A task's egress onto a wire: a port's transmit side.
pub trait PacketSink: Send {
    /// Queues the frames of `ids` for transmission, in order, and starts
    /// sending them; returns how many it took. A full transmit ring takes
    /// the rest no more: the walker drops those, counted at the egress.
    /// Those it took are copied out (the walker frees them) or, where it
    /// sends from the pool's buffers ([`Self::zero_copy`]), stay there until
    /// sent: the walker hands them over ([`PacketPool::hand_over`]).
    fn transmit(&mut self, pool: &mut PacketPool, ids: &[PacketId]) -> usize;

    /// Whether it sends from the pool's own buffers rather than copies.
    fn zero_copy(&self) -> bool {
        false
    }

    /// Meets the pool of the worker that transmits, before the first
    /// [`Self::transmit`] (see [`PacketSource::attach`]).
    fn attach(&mut self, _pool: &mut PacketPool) -> Result<(), String> {
        Ok(())
    }

    /// Writes its own counters into the first slots of `into` (cumulative), if it keeps any.
    fn read_counters(&self, _into: &mut NfCounters) {}
}

/// What a scheduled link decided for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// It went onto the link.
    Sent,
    /// It went onto the link marked congestion experienced (its ECN field: RFC 3168).
    Marked,
    /// Its class's queue was full.
    Dropped,
    /// Its class's queue management (CoDel) dropped it to keep the queue short.
    Managed,
}

/// What a scheduled link reads of the packets offered to it (see [`EgressLink::reads`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkReads {
    /// Whether each is ECN-capable: a class may mark packets congestion
    /// experienced rather than drop them (RFC 3168).
    pub ecn: bool,
    /// The hash of its 5-tuple: a class queues its flows apart (FQ-CoDel).
    pub flow: bool,
}

/// What the walker read of a packet it offers, as [`EgressLink::reads`] asked (else zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offered {
    /// Its IP header says it is ECN-capable (ECT(0), ECT(1) or CE).
    pub ect: bool,
    /// Its 5-tuple's hash ([`crate::wire::five_tuple::FiveTuple::hash`], seed 0; 0 where it has none).
    pub flow_hash: u32,
}

/// A worker's way onto a scheduled link (see `sluice-pspat`): a scheduler
/// on another thread decides when each packet goes, by class; the packets
/// stay in the worker's pool meanwhile, and the worker delivers or drops
/// each one when its decision comes back.
pub trait EgressLink: Send {
    /// Offers packet `id` of `len` bytes to class `class`, with what the
    /// walker read of it (see [`Self::reads`]); false when the scheduler
    /// cannot take it now (the walker drops it, counted).
    fn offer(&mut self, class: u16, len: u16, id: PacketId, seen: Offered) -> bool;

    /// The next decision: a packet and what became of it.
    fn decision(&mut self) -> Option<(PacketId, Decision)>;

    /// What the link's queue management reads of each packet offered: the
    /// walker reads that much of its headers, and no more.
    fn reads(&self) -> LinkReads {
        LinkReads::default()
    }

    /// Packets class `class` takes from this worker now without refusing
    /// any (pkt): where the link makes sources wait rather than drop, the
    /// walker's entries take nothing in while a class they reach has less
    /// room than a batch. `usize::MAX`: it drops what it cannot take.
    fn room(&self, _class: u16) -> usize {
        usize::MAX
    }

    /// The settings of the scheduled egress this link leads to, which the
    /// control plane may change while it runs (see [`crate::EgressKnobs`]).
    fn knobs(&self) -> Option<crate::EgressKnobs> {
        None
    }
}

/// Per-stream offered rates of a source (pkt/s; infinite = unlimited),
/// written by the control thread and read by the worker without locks.
#[derive(Clone)]
pub struct RateKnobs(Arc<[AtomicU64]>);

impl RateKnobs {
    /// Knobs starting at `rates` (pkt/s; `f64::INFINITY` for unlimited).
    pub fn new(rates: &[f64]) -> Self {
        Self(rates.iter().map(|r| AtomicU64::new(r.to_bits())).collect())
    }

    /// Number of streams.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no stream.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Rate of stream `i` (pkt/s).
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        f64::from_bits(self.0[i].load(Ordering::Relaxed))
    }

    /// Sets the rate of stream `i` (pkt/s).
    pub fn set(&self, i: usize, pps: f64) {
        self.0[i].store(pps.to_bits(), Ordering::Relaxed);
    }
}

/// The code behind one module, as the pipeline layer builds it.
pub enum ModuleCode {
    /// A task ingress.
    Source(Box<dyn PacketSource>),
    /// A network function.
    Function(Box<dyn NetworkFunction>),
    /// An egress: records delivery and delay for the flow that ends there.
    Egress,
    /// An egress that first transmits on a port (see [`PacketSink`]).
    Transmit(Box<dyn PacketSink>),
    /// An egress whose packets wait their turn in class `0` of the
    /// worker's scheduled link (see [`EgressLink`]), then go onto port `1`
    /// if it has one.
    Scheduled(u16, Option<Box<dyn PacketSink>>),
}

impl ModuleCode {
    /// A network function's live handle (see [`NetworkFunction::live`]).
    pub fn live(&self) -> Option<LiveHandle> {
        match self {
            ModuleCode::Function(nf) => nf.live(),
            _ => None,
        }
    }
}
