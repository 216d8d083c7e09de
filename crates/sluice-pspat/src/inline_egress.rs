//! The scheduled egress of a pipeline with one worker: the worker is the
//! arbiter. Its scheduled sinks queue packets into the algorithm directly,
//! and when the worker takes decisions (at the start of each round) the
//! emulated link releases what it has room for by then, with one clock
//! read. No thread, no mailbox, nothing shared: with one client there is
//! no one to keep out, and on a machine without a spare core an arbiter
//! thread spinning beside the worker takes turns with it (p99 delays of
//! ms on two cores, against µs inline).

use std::collections::VecDeque;

use sluice_core::{EgressLink, PacketId};

use crate::egress::EgressConfig;
use crate::link::LinkClock;
use crate::sched::{AnyScheduler, Scheduler};

/// The algorithm and the link, run by the one worker.
pub struct InlineEgress {
    scheduler: AnyScheduler,
    link: LinkClock,
    clock: quanta::Clock,
    origin: u64,
    /// Packets the last release put on the link, not yet handed to the worker.
    released: VecDeque<PacketId>,
    /// Whether the worker has taken this release's last packet but not yet been told it was the last.
    releasing: bool,
    /// Per class, packets queued in the algorithm (pkt).
    queued: Box<[usize]>,
    /// A class's queue, when sources wait while it is full (pkt; `None`: they do not).
    wait_at: Option<usize>,
}

impl InlineEgress {
    /// The egress of `config`, timed by `clock`.
    pub fn new(config: &EgressConfig, clock: quanta::Clock) -> Self {
        let origin = clock.raw();
        Self {
            scheduler: config.algorithm.build(&config.weights, config.queue_pkts),
            link: LinkClock::new(config.link),
            clock,
            origin,
            // A release takes at most what the algorithm holds.
            released: VecDeque::with_capacity(config.weights.len() * config.queue_pkts),
            releasing: false,
            queued: vec![0; config.weights.len()].into(),
            wait_at: config.wait.then_some(config.queue_pkts),
        }
    }
}

impl EgressLink for InlineEgress {
    /// Queues the packet in its class; false (the walker drops it, counted) when the class's queue is full.
    #[inline]
    fn offer(&mut self, class: u16, len: u16, id: PacketId) -> bool {
        let queued = self.scheduler.enqueue(usize::from(class), u32::from(len), id.0).is_ok();
        self.queued[usize::from(class)] += usize::from(queued);
        queued
    }

    #[inline]
    fn room(&self, class: u16) -> usize {
        self.wait_at.map_or(usize::MAX, |limit| limit.saturating_sub(self.queued[usize::from(class)]))
    }

    /// The packets of one release, then `None`; the next call releases again.
    fn decision(&mut self) -> Option<(PacketId, bool)> {
        if let Some(id) = self.released.pop_front() {
            return Some((id, true));
        }
        if std::mem::take(&mut self.releasing) {
            return None;
        }
        let now_ns = self.clock.delta_as_nanos(self.origin, self.clock.raw());
        let (released, queued) = (&mut self.released, &mut self.queued);
        self.link.release(&mut self.scheduler, now_ns, &mut |e| {
            queued[usize::from(e.flow)] -= 1;
            released.push_back(PacketId(e.id));
        });
        self.releasing = !self.released.is_empty();
        self.released.pop_front().map(|id| (id, true))
    }
}
