//! An emulated link: a leaky bucket that drains at the link's rate, each
//! packet charged its length plus framing. The arbiter and the lock-based
//! scheduler it is measured against release packets through the same one.

use crate::entry::Entry;
use crate::sched::Scheduler;

/// A link's settings.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// Rate (bit/s; infinite: no limit).
    pub bits_per_s: f64,
    /// Framing bytes charged per packet (Ethernet: 24, preamble, FCS and gap).
    pub overhead: u32,
}

/// Picoseconds a byte takes at `bits_per_s` (0: unlimited).
fn ps_per_byte(bits_per_s: f64) -> u64 {
    if bits_per_s.is_finite() && bits_per_s > 0.0 {
        (8e12 / bits_per_s).round() as u64
    } else {
        0
    }
}

/// The emulated link's state: when it has sent everything released so far.
#[derive(Clone, Copy, Debug)]
pub struct LinkClock {
    overhead: u32,
    /// Picoseconds per byte (0: unlimited).
    ps_per_byte: u64,
    /// When the link has sent everything released so far (ps).
    busy_until_ps: u64,
    /// Whether the algorithm was empty after the last release.
    idle: bool,
}

impl LinkClock {
    /// An idle link of `link`'s settings.
    pub fn new(link: Link) -> Self {
        Self { overhead: link.overhead, ps_per_byte: ps_per_byte(link.bits_per_s), busy_until_ps: 0, idle: true }
    }

    /// Sends at `bits_per_s` from the next packet on (infinite: no limit);
    /// what went out before keeps the time it took.
    pub fn set_rate(&mut self, bits_per_s: f64) {
        self.ps_per_byte = ps_per_byte(bits_per_s);
    }

    /// Takes packets from `scheduler` while the link has room up to
    /// `now_ns`, each to `transmit`; returns how many (pkt).
    #[inline]
    pub fn release<S: Scheduler<u32>>(&mut self, scheduler: &mut S, now_ns: u64, transmit: &mut impl FnMut(Entry)) -> u64 {
        self.release_through(scheduler, now_ns, &mut Some, transmit)
    }

    /// [`Self::release`], each packet the algorithm gives out first put to
    /// `judge` (an active queue management's verdict), which gives back
    /// what goes on the link (marked, maybe, or another of the class's
    /// packets), charged its own length: one it keeps off the link (it
    /// dropped it) takes none of the link's time.
    #[inline]
    pub fn release_through<S: Scheduler<u32>>(&mut self, scheduler: &mut S, now_ns: u64, judge: &mut impl FnMut(Entry) -> Option<Entry>, transmit: &mut impl FnMut(Entry)) -> u64 {
        // A link that went idle starts again now: idle time is no credit.
        // A busy one that fell behind the releases catches up: their
        // spacing is no loss of the link's time either.
        let now_ps = now_ns.saturating_mul(1000);
        scheduler.advance(now_ns);
        if self.idle {
            self.busy_until_ps = self.busy_until_ps.max(now_ps);
        }
        let mut sent = 0;
        // A packet goes out whenever the link has sent the ones before it by now.
        while self.busy_until_ps <= now_ps {
            let Some((flow, len, id)) = scheduler.dequeue() else { break };
            let Some(entry) = judge(Entry { flow: flow as u16, len: len as u16, id }) else { continue };
            self.busy_until_ps += u64::from(u32::from(entry.len) + self.overhead) * self.ps_per_byte;
            sent += 1;
            transmit(entry);
        }
        self.idle = scheduler.is_empty();
        sent
    }
}
