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

/// Arrival clock of one paced stream: packets arrive in bursts of `burst`
/// at once (1: one at a time), a burst every `burst`/rate seconds, so the
/// mean rate is the stream's whatever its burst.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Packets that arrive together (≥ 1).
    burst: u64,
    /// Where in its first gap the stream's first burst arrives (0..1 of a gap).
    phase: f64,
    /// Time between two bursts at the rate last polled (ns).
    gap: f64,
    /// Arrival time of the next packet not yet taken, that of its burst
    /// (ns); `None` until the stream is paced.
    next_ns: Option<f64>,
    /// Packets of that burst not yet taken (1..=burst).
    left: u64,
    /// Arrivals lost to a full receive queue (pkt).
    pub missed: u64,
}

impl Default for Pacer {
    fn default() -> Self {
        Self::phased(0.0, 1)
    }
}

impl Pacer {
    /// A pacer whose first burst of `burst` packets arrives `phase` (0..1)
    /// of a gap after it is first polled: streams of one source that start
    /// together are spread over the gap rather than all arriving at once,
    /// so that n streams at r pkt/s send n·r·T packets in T, not one each
    /// more.
    pub fn phased(phase: f64, burst: usize) -> Self {
        debug_assert!((0.0..1.0).contains(&phase), "a phase is a share of a gap");
        debug_assert!((1..=RX_QUEUE).contains(&burst), "a burst fits the receive queue");
        Self { burst: burst as u64, phase, gap: 0.0, next_ns: None, left: burst as u64, missed: 0 }
    }

    /// Packets that arrive together (pkt).
    pub fn burst(&self) -> usize {
        self.burst as usize
    }

    /// How many packets have arrived by `now_ns` at `rate` pkt/s and wait to
    /// be taken; `usize::MAX` for an unlimited (infinite) rate. A new rate
    /// spaces the bursts after the next one.
    #[inline]
    pub fn poll(&mut self, rate: f64, now_ns: u64) -> usize {
        if rate.is_infinite() {
            self.next_ns = None;
            return usize::MAX;
        }
        self.gap = self.burst as f64 * 1e9 / rate;
        let now = now_ns as f64;
        let next = *self.next_ns.get_or_insert(now + self.phase * self.gap);
        if now < next {
            return 0;
        }
        let due = self.left + ((now - next) / self.gap).floor() as u64 * self.burst;
        if due > RX_QUEUE as u64 {
            self.lose(due - RX_QUEUE as u64);
            return RX_QUEUE;
        }
        due as usize
    }

    /// Counts the `lost` oldest waiting packets lost and moves past them.
    fn lose(&mut self, lost: u64) {
        self.missed += lost;
        if lost < self.left {
            self.left -= lost;
            return;
        }
        let beyond = lost - self.left;
        self.next_ns = self.next_ns.map(|t| t + (1 + beyond / self.burst) as f64 * self.gap);
        self.left = self.burst - beyond % self.burst;
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
    pub fn take(&mut self) -> Option<u64> {
        let next = self.next_ns.as_mut()?;
        let t = *next;
        self.left -= 1;
        if self.left == 0 {
            self.left = self.burst;
            *next += self.gap;
        }
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
        assert_eq!(p.take(), Some(10_000));
        assert_eq!(p.poll(1e6, 13_500), 3);
        assert_eq!((0..3).map(|_| p.take().unwrap()).collect::<Vec<_>>(), vec![11_000, 12_000, 13_000]);
        assert_eq!(p.poll(1e6, 13_900), 0);
    }

    #[test]
    fn phased_streams_spread_their_first_packets_over_the_gap() {
        // Four streams at 1 pkt/s polled for 2.5 s send 10 packets, not 12.
        let mut streams: Vec<Pacer> = (0..4).map(|i| Pacer::phased(i as f64 / 4.0, 1)).collect();
        let firsts: Vec<usize> = streams.iter_mut().map(|p| p.poll(1.0, 0)).collect();
        assert_eq!(firsts, [1, 0, 0, 0]);
        let sent: usize = streams.iter_mut().map(|p| p.poll(1.0, 2_499_999_999)).sum();
        assert_eq!(sent, 10);
        assert_eq!(streams[1].take(), Some(250_000_000));
    }

    #[test]
    fn a_burst_arrives_at_once_and_bursts_keep_the_mean_rate() {
        // Bursts of 4 at 1 Mpkt/s: one every 4 µs.
        let mut p = Pacer::phased(0.0, 4);
        assert_eq!(p.poll(1e6, 0), 4);
        assert_eq!((0..3).map(|_| p.take().unwrap()).collect::<Vec<_>>(), vec![0, 0, 0]);
        assert_eq!(p.poll(1e6, 3_999), 1);
        assert_eq!(p.poll(1e6, 12_000), 1 + 3 * 4);
        p.take();
        assert_eq!(p.next_ns(), Some(4_000));
        // 10 ms later the queue holds its most; the oldest beyond are lost, mid-burst.
        assert_eq!(p.poll(1e6, 10_012_001), RX_QUEUE);
        assert_eq!(p.missed, 10_012 - RX_QUEUE as u64);
        let first = p.take().unwrap();
        assert_eq!(p.poll(1e6, 10_012_001), RX_QUEUE - 1);
        // Those kept are the last 1024 bursts', the first of them 1023 gaps before the last.
        assert_eq!(first, 10_012_000 - 1023 * 4_000);
    }

    #[test]
    fn paces_to_the_rate_over_many_polls() {
        let mut p = Pacer::default();
        let mut sent = 0;
        for t in 0..1000u64 {
            let n = p.poll(100_000.0, t * 10_000);
            for _ in 0..n {
                p.take();
            }
            sent += n;
        }
        assert_eq!(sent, 1000);
    }

    #[test]
    fn overflow_of_the_receive_queue_is_counted() {
        let mut p = Pacer::default();
        assert_eq!(p.poll(1e9, 0), 1);
        p.take();
        assert_eq!(p.poll(1e9, 10_000), RX_QUEUE);
        assert_eq!(p.missed, 10_000 - RX_QUEUE as u64);
    }

    #[test]
    fn unlimited_streams_are_not_paced_and_backlog_dates_to_the_previous_poll() {
        let mut p = Pacer::default();
        assert_eq!(p.poll(f64::INFINITY, 500), usize::MAX);
        assert_eq!(p.take(), None);
        let mut b = Backlog::default();
        assert_eq!(b.poll(500), 500);
        assert_eq!(b.poll(900), 500);
        assert_eq!(b.poll(1300), 900);
    }
}
