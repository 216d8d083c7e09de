//! The architecture PSPAT replaces, for measuring it against: Linux TC's,
//! one scheduling algorithm and link behind one lock that every client
//! takes for every packet, to enqueue it and then, while it holds the
//! lock, release what the link has room for (as `qdisc_run` does).

use std::sync::Mutex;

use crate::entry::Entry;
use crate::link::{Link, LinkClock};
use crate::sched::Scheduler;

/// An algorithm and a link behind one lock.
pub struct Locked<S> {
    inner: Mutex<(S, LinkClock)>,
}

impl<S: Scheduler<u32>> Locked<S> {
    /// `scheduler` sending on `link`.
    pub fn new(scheduler: S, link: Link) -> Self {
        Self { inner: Mutex::new((scheduler, LinkClock::new(link))) }
    }

    /// Under the lock: queues `entry` (false when its flow's queue is full:
    /// dropped, counted by the algorithm), then releases packets onto the
    /// link while it has room up to the time `now` tells (ns, read once the
    /// lock is held), each to `transmit`.
    pub fn send(&self, entry: Entry, now: impl FnOnce() -> u64, transmit: &mut impl FnMut(Entry)) -> bool {
        let mut guard = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (scheduler, link) = &mut *guard;
        let queued = scheduler.enqueue(usize::from(entry.flow), u32::from(entry.len), entry.id).is_ok();
        link.release(scheduler, now(), transmit);
        queued
    }

    /// Packets of `flow` refused at a full queue so far.
    pub fn drops(&self, flow: usize) -> u64 {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).0.drops(flow)
    }
}
