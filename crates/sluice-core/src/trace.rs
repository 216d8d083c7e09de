//! Packet trace: the next packets to reach a module, followed through the
//! graph hop by hop, as VPP's `trace add` does.
//!
//! A [`Trace`] is shared by every worker. The worker that runs the traced
//! module marks the next packets it meets there (those its filter, if
//! any, matches), up to the count; from then on whichever worker holds a
//! marked packet adds a [`Hop`] at every module it visits: the gate it
//! left by, or how it ended. A packet is found by its handle: one slot a
//! handle says which record follows it. Like the packet's buffer, a
//! record is touched only by the holder of its packet, and read by the
//! control side only while every worker is held (see
//! [`crate::Backend::watch`]); nothing is allocated once the trace is made.
//!
//! Workers look for marked packets only while a trace or a capture is
//! attached (see [`Watch`]): without one, the walk tests one pointer per
//! module run.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::capture::Capture;
use crate::drop_reason::DropReason;
use crate::model::ModuleId;
use crate::packet::{PacketId, PacketMeta};

/// The most packets one trace follows.
pub const MAX_TRACED: usize = 1000;
/// The most hops a traced packet records; its record says when more were left out.
pub const MAX_HOPS: usize = 48;
/// Bytes of a traced packet kept from where it was marked, for showing it.
pub const HEAD_BYTES: usize = 96;

/// Decides which packets a trace or capture takes (a compiled BPF program,
/// say); runs in the worker, on each packet that reaches the module
/// while it looks for more.
pub trait PacketFilter: Send + Sync {
    /// Whether `frame` (from its Ethernet header) is taken.
    fn matches(&self, frame: &[u8]) -> bool;
}

/// What became of a traced packet at a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// It left by this outgate (from a source: gate 0).
    Gate(u16),
    /// The NF dropped it, for this reason (an ICMP error, where one was
    /// sent, answers it).
    Dropped(DropReason),
    /// The NF kept it (held for a later run, reassembled, made into
    /// others): it is followed on if it leaves later.
    Kept,
    /// It was dropped on arrival: the module's queue was full.
    QueueFull,
    /// It reached an egress: handed to the port's wire (or its
    /// scheduled class), or delivered where there is no port.
    Sent,
}

impl Way {
    /// Whether the packet's way ends here.
    pub fn ends(self) -> bool {
        !matches!(self, Way::Gate(_) | Way::Kept)
    }
}

/// One module a traced packet reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The module.
    pub module: ModuleId,
    /// The worker that ran it.
    pub worker: u16,
    /// Time since the packet's arrival (ns).
    pub since_arrival_ns: u64,
    /// What became of it there.
    pub way: Way,
}

/// What a trace recorded of one packet.
#[derive(Clone, Debug, Default)]
pub struct TracedPacket {
    /// Its place in the order the trace marked packets (from 0).
    pub number: usize,
    /// Its arrival time (ns since the engine's clock origin) and sequence
    /// number, which tell it from a later packet in the same buffer.
    pub ts_ns: u64,
    /// Its sequence number in its flow.
    pub seq: u32,
    /// Its length where it was marked (bytes).
    pub len: usize,
    /// Its first bytes where it was marked (up to [`HEAD_BYTES`]).
    pub head: Vec<u8>,
    /// The modules it reached, in order.
    pub hops: Vec<Hop>,
    /// Hops left out past [`MAX_HOPS`].
    pub hops_left_out: usize,
}

impl TracedPacket {
    fn with_room() -> Self {
        Self { head: Vec::with_capacity(HEAD_BYTES), hops: Vec::with_capacity(MAX_HOPS), ..Self::default() }
    }

    /// Whether its way has ended (dropped, sent).
    pub fn ended(&self) -> bool {
        self.hops.last().is_some_and(|h| h.way.ends())
    }

    fn add(&mut self, hop: Hop) {
        if self.hops.len() < MAX_HOPS {
            self.hops.push(hop);
        } else {
            self.hops_left_out += 1;
        }
    }
}

/// A trace: what it follows, and its records.
pub struct Trace {
    /// The module whose arriving packets are marked.
    pub module: ModuleId,
    /// Which of them (`None`: all).
    pub filter: Option<Arc<dyn PacketFilter>>,
    /// Packets to mark.
    count: usize,
    /// Packets marked so far (may pass `count` by the losers of a race for the last ones).
    marked: AtomicUsize,
    /// Per packet handle, 1 + the index of the record following it (0: none).
    following: Box<[AtomicU32]>,
    records: Box<[UnsafeCell<TracedPacket>]>,
}

// SAFETY: `following[id]` and the record it names are touched only by the
// holder of packet `id` (handles, and with them what a handle's slot
// names, cross threads only over release/acquire rings), a new record
// only by the worker whose `fetch_add` took its index, and every record by
// the control side only while no worker runs (see `Watch`).
unsafe impl Sync for Trace {}

impl Trace {
    /// A trace of the next `count` packets (at most [`MAX_TRACED`]) to
    /// reach `module` that `filter` takes, over a pool of `handles` packet
    /// handles (see [`crate::PacketPool::handles`]).
    pub fn new(module: ModuleId, count: usize, filter: Option<Arc<dyn PacketFilter>>, handles: usize) -> Arc<Self> {
        let count = count.min(MAX_TRACED);
        Arc::new(Self {
            module,
            filter,
            count,
            marked: AtomicUsize::new(0),
            following: (0..handles).map(|_| AtomicU32::new(0)).collect(),
            records: (0..count).map(|_| UnsafeCell::new(TracedPacket::with_room())).collect(),
        })
    }

    /// Whether it still marks packets.
    #[inline]
    pub(crate) fn marking(&self) -> bool {
        self.marked.load(Ordering::Relaxed) < self.count
    }

    /// Marks packet `id` if the trace still takes one: its record starts.
    pub(crate) fn mark(&self, id: PacketId, meta: &PacketMeta, data: &[u8]) {
        if let Some(filter) = &self.filter {
            if !filter.matches(data) {
                return;
            }
        }
        let number = self.marked.fetch_add(1, Ordering::Relaxed);
        if number >= self.count {
            return;
        }
        // SAFETY: `number` is this worker's alone (see the `Sync` impl).
        let record = unsafe { &mut *self.records[number].get() };
        record.number = number;
        (record.ts_ns, record.seq, record.len) = (meta.ts_ns, meta.seq, data.len());
        record.head.clear();
        record.head.extend_from_slice(&data[..data.len().min(HEAD_BYTES)]);
        self.following[id.0 as usize].store(number as u32 + 1, Ordering::Relaxed);
    }

    /// The index of the record following packet `id`, held by the
    /// caller, if any (the record of an earlier packet in the same buffer
    /// is let go).
    pub(crate) fn record_of(&self, id: PacketId, meta: &PacketMeta) -> Option<u32> {
        let slot = &self.following[id.0 as usize];
        let r = slot.load(Ordering::Relaxed).checked_sub(1)?;
        // SAFETY: the caller holds packet `id`, which the record follows.
        let record = unsafe { &*self.records[r as usize].get() };
        if (record.ts_ns, record.seq) != (meta.ts_ns, meta.seq) || record.ended() {
            slot.store(0, Ordering::Relaxed);
            return None;
        }
        Some(r)
    }

    /// Adds `hop` to record `r`, which follows packet `id`, held by the
    /// caller (or dropped by it since `record_of`); lets the packet go
    /// once its way ends.
    pub(crate) fn add(&self, r: u32, id: PacketId, hop: Hop) {
        // SAFETY: as in `record_of`.
        let record = unsafe { &mut *self.records[r as usize].get() };
        record.add(hop);
        if hop.way.ends() {
            // Where the buffer has already gone on to a new packet, the slot is the new holder's.
            let _ = self.following[id.0 as usize].compare_exchange(r + 1, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Whether packet `id` has a record following it (unchecked, see `record_of`).
    #[inline]
    pub(crate) fn follows(&self, id: PacketId) -> bool {
        self.following[id.0 as usize].load(Ordering::Relaxed) != 0
    }

    /// Arrival time (ns since the clock's origin) of the packet record `r` follows.
    pub(crate) fn arrival_of(&self, r: u32) -> u64 {
        // SAFETY: as in `add`.
        unsafe { (*self.records[r as usize].get()).ts_ns }
    }

    /// Copies of the records made so far, in marking order.
    ///
    /// Only while no worker runs (see [`Watch::trace`]).
    fn records(&self) -> Vec<TracedPacket> {
        let made = self.marked.load(Ordering::Relaxed).min(self.count);
        // SAFETY: no worker runs (the caller's promise).
        self.records[..made].iter().map(|r| unsafe { (*r.get()).clone() }).collect()
    }
}

/// What an NF dropped during one run, by packet, while a trace looks for
/// its packets (see [`crate::NfContext::drop_packet`]); bounded, so that
/// the drops past its room go unnamed.
pub(crate) struct DropLog {
    drops: Vec<(PacketId, DropReason)>,
}

impl DropLog {
    fn new() -> Self {
        Self { drops: Vec::with_capacity(crate::batch::MAX_BURST) }
    }

    #[inline]
    pub(crate) fn note(&mut self, id: PacketId, reason: DropReason) {
        if self.drops.len() < self.drops.capacity() {
            self.drops.push((id, reason));
        }
    }

    /// Why packet `id` was dropped in this run, if it was.
    pub(crate) fn reason_of(&self, id: PacketId) -> Option<DropReason> {
        self.drops.iter().find(|(d, _)| *d == id).map(|&(_, r)| r)
    }

    pub(crate) fn clear(&mut self) {
        self.drops.clear();
    }
}

/// What a worker looks at besides forwarding: the trace and captures
/// attached to its modules. A worker without any carries none (`None`
/// in its graph), and its walk then does nothing more than test for one.
pub struct Watch {
    pub(crate) trace: Option<Arc<Trace>>,
    pub(crate) captures: Vec<Capture>,
    pub(crate) drops: DropLog,
    /// The traced packets in the input of the run under way, and their
    /// records (see `graph::watch`).
    pub(crate) in_run: Vec<(PacketId, u32)>,
}

impl Default for Watch {
    fn default() -> Self {
        Self { trace: None, captures: Vec::new(), drops: DropLog::new(), in_run: Vec::with_capacity(crate::batch::MAX_BURST) }
    }
}

impl Watch {
    /// Follows `trace` from now on, in place of any other (`None`: none).
    pub fn set_trace(&mut self, trace: Option<Arc<Trace>>) {
        self.trace = trace;
    }

    /// The records of its trace so far, if it has one. Called where the
    /// worker is held (see [`crate::Backend::watch`]), as every other
    /// worker of the trace is.
    pub fn trace(&self) -> Option<Vec<TracedPacket>> {
        self.trace.as_ref().map(|t| t.records())
    }

    /// Copies what reaches `capture`'s module (or gate) from now on.
    pub fn add_capture(&mut self, capture: Capture) {
        self.captures.push(capture);
    }

    /// Ends its captures of `module` (every one: `None`); their readers then see them end.
    pub fn end_captures(&mut self, module: Option<ModuleId>) {
        self.captures.retain(|c| module.is_some_and(|m| c.module != m));
    }

    /// Whether it looks at nothing (the worker may then drop it).
    pub fn is_empty(&self) -> bool {
        self.trace.is_none() && self.captures.is_empty()
    }
}
