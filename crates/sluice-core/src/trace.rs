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
//! attached (see [`crate::watch::Watch`]): without one, a walk tests one pointer. The
//! NFs are not told: a followed packet that a run left in no gate, or
//! made an answer of (an ICMP error: of a flow before, of none after),
//! in a run that dropped packets was dropped for one of that run's
//! reasons (see [`Way::Dropped`]).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::drop_reason::DropReason;
use crate::model::ModuleId;
use crate::packet::{PacketId, PacketMeta};
use crate::packet_filter::PacketFilter;

/// The most packets one trace follows.
pub const MAX_TRACED: usize = 1000;
/// The most hops a traced packet records; its record says when more were left out.
pub const MAX_HOPS: usize = 48;
/// Bytes of a traced packet kept from where it was marked, for showing it.
pub const HEAD_BYTES: usize = 96;

/// What became of a traced packet at a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// It left by this outgate (from a source: gate 0).
    Gate(u16),
    /// The NF dropped it (or made an answer of it, an ICMP error), for
    /// one of these reasons: those the NF's run dropped packets for.
    Dropped(Reasons),
    /// The NF kept it (held for a later run, reassembled, made into
    /// others): it is followed on if it leaves later.
    Kept,
    /// It was dropped on arrival: the module's queue was full.
    QueueFull,
    /// It reached an egress: handed to the port's wire (or its
    /// scheduled class), or delivered where there is no port.
    Sent,
}

/// A set of drop reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reasons(u16);

impl Reasons {
    /// Those `drops` counts any packet under.
    pub fn of(drops: &crate::drop_reason::NfDrops) -> Self {
        Self(drops.iter().enumerate().filter(|(_, &n)| n > 0).fold(0, |set, (i, _)| set | 1 << i))
    }

    /// Just `reason`.
    pub fn just(reason: DropReason) -> Self {
        Self(1 << reason as u16)
    }

    /// Whether there is none.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The reasons, in index order.
    pub fn iter(self) -> impl Iterator<Item = DropReason> {
        DropReason::ALL.into_iter().filter(move |&r| self.0 & 1 << r as u16 != 0)
    }
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
    /// Only while no worker runs (see [`crate::watch::Watch::trace`]).
    pub(crate) fn records(&self) -> Vec<TracedPacket> {
        let made = self.marked.load(Ordering::Relaxed).min(self.count);
        // SAFETY: no worker runs (the caller's promise).
        self.records[..made].iter().map(|r| unsafe { (*r.get()).clone() }).collect()
    }
}
