//! Arrival times of a paced packet stream, as a NIC's receive queue would see them.
//!
//! A packet's ingress timestamp is when it *arrived*, not when the worker
//! got round to taking it, so measured delays include the wait for the
//! worker (Batchy's T_turnaround term). At a set rate, packets arrive every
//! 1/rate seconds; arrivals that would overflow a receive queue of
//! [`RX_QUEUE`] packets are lost at the queue (counted, never generated).
//! Unlimited streams are backpressured instead: their sources stamp a
//! packet with the time of the previous poll, when it entered the queue.

/// Receive-queue depth of a paced stream (pkt), as a typical NIC ring.
pub const RX_QUEUE: usize = 4096;

/// Arrival clock of one paced stream.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Arrival time of the next packet (ns); `None` until the stream is paced.
    next_ns: Option<f64>,
    /// Where in its first gap the stream's first packet arrives (0..1 of a gap).
    phase: f64,
    /// Arrivals lost to a full receive queue (pkt).
    pub missed: u64,
}

impl Pacer {
    /// A pacer whose first packet arrives `phase` (0..1) of a gap after it
    /// is first polled: streams of one source that start together are
    /// spread over the gap rather than all arriving at once, so that n
    /// streams at r pkt/s send n·r·T packets in T, not one each more.
    pub fn phased(phase: f64) -> Self {
        debug_assert!((0.0..1.0).contains(&phase), "a phase is a share of a gap");
        Self { phase, ..Self::default() }
    }

    /// How many packets have arrived by `now_ns` at `rate` pkt/s and wait to
    /// be taken; `usize::MAX` for an unlimited (infinite) rate.
    #[inline]
    pub fn poll(&mut self, rate: f64, now_ns: u64) -> usize {
        if rate.is_infinite() {
            self.next_ns = None;
            return usize::MAX;
        }
        let gap = 1e9 / rate;
        let now = now_ns as f64;
        let next = *self.next_ns.get_or_insert(now + self.phase * gap);
        let mut due = ((now - next) / gap).floor() as i64 + 1;
        if due > RX_QUEUE as i64 {
            let lost = due - RX_QUEUE as i64;
            self.missed += lost as u64;
            self.next_ns = Some(next + lost as f64 * gap);
            due = RX_QUEUE as i64;
        }
        due.max(0) as usize
    }

    /// When the next packet not yet taken arrives (ns; `None` while the
    /// stream is unlimited or not yet polled).
    #[inline]
    pub fn next_ns(&self) -> Option<u64> {
        self.next_ns.map(|t| t as u64)
    }

    /// Takes one packet [`poll`](Self::poll) counted: its arrival time (ns),
    /// or `None` for an unlimited stream.
    #[inline]
    pub fn take(&mut self, rate: f64) -> Option<u64> {
        let next = self.next_ns.as_mut().filter(|_| rate.is_finite())?;
        let t = *next;
        *next += 1e9 / rate;
        Some(t as u64)
    }
}

/// When backpressured packets entered the receive queue: at the previous poll.
#[derive(Clone, Copy, Debug, Default)]
pub struct Backlog {
    previous_poll_ns: Option<u64>,
}

impl Backlog {
    /// Records a poll at `now_ns`; returns the time of the one before (or now, at the first).
    #[inline]
    pub fn poll(&mut self, now_ns: u64) -> u64 {
        self.previous_poll_ns.replace(now_ns).unwrap_or(now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_packets_carry_their_arrival_times() {
        let mut p = Pacer::default();
        assert_eq!(p.poll(1e6, 10_000), 1);
        assert_eq!(p.take(1e6), Some(10_000));
        assert_eq!(p.poll(1e6, 13_500), 3);
        assert_eq!((0..3).map(|_| p.take(1e6).unwrap()).collect::<Vec<_>>(), vec![11_000, 12_000, 13_000]);
        assert_eq!(p.poll(1e6, 13_900), 0);
    }

    #[test]
    fn phased_streams_spread_their_first_packets_over_the_gap() {
        // Four streams at 1 pkt/s polled for 2.5 s send 10 packets, not 12.
        let mut streams: Vec<Pacer> = (0..4).map(|i| Pacer::phased(i as f64 / 4.0)).collect();
        let firsts: Vec<usize> = streams.iter_mut().map(|p| p.poll(1.0, 0)).collect();
        assert_eq!(firsts, [1, 0, 0, 0]);
        let sent: usize = streams.iter_mut().map(|p| p.poll(1.0, 2_499_999_999)).sum();
        assert_eq!(sent, 10);
        assert_eq!(streams[1].take(1.0), Some(250_000_000));
    }

    #[test]
    fn paces_to_the_rate_over_many_polls() {
        let mut p = Pacer::default();
        let mut sent = 0;
        for t in 0..1000u64 {
            let n = p.poll(100_000.0, t * 10_000);
            for _ in 0..n {
                p.take(100_000.0);
            }
            sent += n;
        }
        assert_eq!(sent, 1000);
    }

    #[test]
    fn overflow_of_the_receive_queue_is_counted() {
        let mut p = Pacer::default();
        assert_eq!(p.poll(1e9, 0), 1);
        p.take(1e9);
        assert_eq!(p.poll(1e9, 10_000), RX_QUEUE);
        assert_eq!(p.missed, 10_000 - RX_QUEUE as u64);
    }

    #[test]
    fn unlimited_streams_are_not_paced_and_backlog_dates_to_the_previous_poll() {
        let mut p = Pacer::default();
        assert_eq!(p.poll(f64::INFINITY, 500), usize::MAX);
        assert_eq!(p.take(f64::INFINITY), None);
        let mut b = Backlog::default();
        assert_eq!(b.poll(500), 500);
        assert_eq!(b.poll(900), 500);
        assert_eq!(b.poll(1300), 900);
    }
}
