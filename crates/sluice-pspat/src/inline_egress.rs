//! The scheduled egress of a pipeline with one worker: the worker is the
//! arbiter. Its scheduled sinks queue packets into the algorithm directly,
//! and when the worker takes decisions (at the start of each round) the
//! emulated link releases what it has room for by then, with one clock
//! read. No thread, no mailbox, nothing shared: with one client there is
//! no one to keep out, and on a machine without a spare core an arbiter
//! thread spinning beside the worker takes turns with it (p99 delays of
//! ms on two cores, against µs inline).

use std::collections::VecDeque;

use sluice_core::{Decision, EgressKnobs, EgressLink, LinkReads, Offered, PacketId};

use crate::aqm::Aqm;
use sluice_core::codel::Verdict;
use crate::egress::EgressConfig;
use crate::entry::Entry;
use crate::link::LinkClock;
use crate::retune::Retune;
use crate::sched::{AnyScheduler, Scheduler};

/// The algorithm and the link, run by the one worker.
pub struct InlineEgress {
    scheduler: AnyScheduler,
    link: LinkClock,
    clock: quanta::Clock,
    origin: u64,
    /// Packets the last release decided on (sent, marked, or dropped by
    /// CoDel), not yet handed to the worker.
    released: VecDeque<(PacketId, Decision)>,
    /// Whether the worker has taken this release's last packet but not yet been told it was the last.
    releasing: bool,
    /// Per class, packets queued in the algorithm (pkt).
    queued: Box<[usize]>,
    /// A class's queue, when sources wait while it is full (pkt; `None`: they do not).
    wait_at: Option<usize>,
    /// Where the control plane's changes of the settings come in.
    retune: Retune,
    /// The classes' queue management.
    aqm: Aqm,
}

impl InlineEgress {
    /// The egress of `config`, timed by `clock`.
    pub fn new(config: &EgressConfig, clock: quanta::Clock) -> Self {
        let origin = clock.raw();
        Self {
            scheduler: config.scheduler(),
            link: LinkClock::new(config.link),
            clock,
            origin,
            // A release takes at most what the algorithm holds.
            released: VecDeque::with_capacity(config.weights.len() * config.queue_pkts),
            releasing: false,
            queued: vec![0; config.weights.len()].into(),
            wait_at: config.wait.then_some(config.queue_pkts),
            retune: Retune::new(config.knobs(), config.algorithm, config.queue_pkts),
            aqm: Aqm::new(&config.aqm, config.queue_pkts),
        }
    }
}

impl EgressLink for InlineEgress {
    /// Queues the packet in its class; false (the walker drops it,
    /// counted) when the class's queue is full, unless its FQ-CoDel takes
    /// it and drops another (decided at the next release).
    #[inline]
    fn offer(&mut self, class: u16, len: u16, id: PacketId, seen: Offered) -> bool {
        let queued = self.scheduler.enqueue(usize::from(class), u32::from(len), id.0).is_ok();
        if !self.aqm.runs_on(usize::from(class)) {
            self.queued[usize::from(class)] += usize::from(queued);
            return queued;
        }
        let (e, now_ns) = (Entry { flow: class, len, id: id.0 }, self.clock.delta_as_nanos(self.origin, self.clock.raw()));
        if queued {
            self.queued[usize::from(class)] += 1;
            self.aqm.queued(e, now_ns, seen);
            return true;
        }
        let dropped = self.aqm.refused(e, now_ns, seen);
        if dropped == e {
            return false;
        }
        self.released.push_back((PacketId(dropped.id), Decision::Managed));
        true
    }

    #[inline]
    fn room(&self, class: u16) -> usize {
        self.wait_at.map_or(usize::MAX, |limit| limit.saturating_sub(self.queued[usize::from(class)]))
    }

    fn knobs(&self) -> Option<EgressKnobs> {
        Some(self.retune.knobs().clone())
    }

    fn reads(&self) -> LinkReads {
        self.aqm.reads()
    }

    /// The packets of one release, then `None`; the next call releases again.
    fn decision(&mut self) -> Option<(PacketId, Decision)> {
        if let Some(decided) = self.released.pop_front() {
            return Some(decided);
        }
        if std::mem::take(&mut self.releasing) {
            return None;
        }
        self.retune.apply(&mut self.scheduler, &mut self.link, &mut self.aqm);
        let now_ns = self.clock.delta_as_nanos(self.origin, self.clock.raw());
        let (released, queued, aqm) = (&mut self.released, &mut self.queued, &mut self.aqm);
        // Each packet the algorithm gives out is decided here, sent or dropped by CoDel.
        let mut decide = |e: Entry| {
            queued[usize::from(e.flow)] -= 1;
            let (e, verdict) = aqm.verdict(e, now_ns);
            let (decision, sent) = match verdict {
                Verdict::Send => (Decision::Sent, Some(e)),
                Verdict::Mark => (Decision::Marked, Some(e)),
                Verdict::Drop => (Decision::Managed, None),
            };
            released.push_back((PacketId(e.id), decision));
            sent
        };
        self.link.release_through(&mut self.scheduler, now_ns, &mut decide, &mut |_| {});
        self.releasing = !self.released.is_empty();
        self.released.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Link;
    use sluice_core::EgressChange;
    use crate::sched::Algorithm;

    #[test]
    fn new_weights_and_a_new_link_rate_take_effect_at_the_next_release() {
        let (clock, mock) = quanta::Clock::mock();
        // 8 Mbit/s: a 1000-byte packet a millisecond.
        let config = EgressConfig { algorithm: Algorithm::Drr, link: Link { bits_per_s: 8e6, overhead: 0 }, weights: vec![1, 1], queue_pkts: 1000, wait: false, scan_gap: std::time::Duration::ZERO, aqm: Vec::new(), parents: Vec::new(), parent_of: Vec::new() };
        let mut egress = InlineEgress::new(&config, clock);
        for i in 0..1000 {
            assert!(egress.offer(0, 1000, PacketId(i), Offered::default()) && egress.offer(1, 1000, PacketId(10_000 + i), Offered::default()));
        }
        // Packets of each class one release (after `ms` ms) sends.
        let release = |egress: &mut InlineEgress, ms: u64| {
            mock.increment(ms * 1_000_000);
            let mut sent = [0usize; 2];
            while let Some((id, decision)) = egress.decision() {
                assert_eq!(decision, Decision::Sent);
                sent[usize::from(id.0 >= 10_000)] += 1;
            }
            sent
        };
        release(&mut egress, 0);
        let even = release(&mut egress, 100);
        assert!(even[0].abs_diff(even[1]) <= 2 && even[0] + even[1] == 100, "{even:?}");
        let knobs = egress.knobs().expect("an inline egress has knobs");
        knobs.set(&EgressChange { weights: vec![(1, 9)], ..EgressChange::default() }).unwrap();
        let nine = release(&mut egress, 100);
        assert!((86..=94).contains(&nine[1]) && nine[0] + nine[1] == 100, "{nine:?}");
        knobs.set(&EgressChange { link_bits_per_s: Some(16e6), ..EgressChange::default() }).unwrap();
        let faster = release(&mut egress, 100);
        // Twice the packets; the one the link was sending at the change goes at the old rate.
        assert!((199..=200).contains(&(faster[0] + faster[1])), "{faster:?}");
    }
}
