//! The architecture PSPAT replaces, for measuring it against: Linux TC's,
//! one scheduling algorithm and link behind one lock that every client
//! takes for every packet, to enqueue it and then, while it holds the
//! lock, release what the link has room for (as `qdisc_run` does).

use std::sync::Mutex;

use sluice_pspat::sched::Scheduler;
use sluice_pspat::{Entry, Link, LinkClock};

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

#[cfg(test)]
mod tests {
    use sluice_pspat::Drr;

    use super::*;

    #[test]
    fn the_lock_based_scheduler_shares_an_overloaded_link_by_weight() {
        // Virtual time: 1 µs steps, a 100 Mbit/s link, flows of weights 3 and 1 always backlogged.
        let locked = Locked::new(Drr::new(&[3, 1], 1500, 64), Link { bits_per_s: 1e8, overhead: 24 });
        let mut sent = [0u64; 2];
        let mut t = 0u64;
        for step in 0..20_000u32 {
            t += 1000;
            for flow in 0..2u16 {
                locked.send(Entry { flow, len: 1000, id: step }, || t, &mut |e| sent[usize::from(e.flow)] += 1);
            }
        }
        let share = sent[0] as f64 / (sent[0] + sent[1]) as f64;
        assert!((share - 0.75).abs() < 0.01, "share {share:.3} for weight 3 of 4");
        assert!(locked.drops(0) > 0 && locked.drops(1) > 0, "both flows overflow the overloaded link");
        let wire = (sent[0] + sent[1]) * 1024 * 8;
        assert!((wire as f64 - 1e8 * t as f64 * 1e-9).abs() < 2.0 * 1024.0 * 8.0, "the link's rate: {wire} bits in {t} ns");
    }
}
