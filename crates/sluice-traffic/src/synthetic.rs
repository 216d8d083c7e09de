//! A source of template packets, one template per stream, interleaved.

use sluice_core::{Batch, PacketPool, PacketSource, RateKnobs, NO_FLOW};

use crate::error::{Error, Result};
use crate::pacer::{Backlog, Pacer, RX_QUEUE};
use crate::stamp;

/// One stream of identical frames.
pub struct Stream {
    /// The frame every packet of the stream copies.
    pub frame: Vec<u8>,
    /// Flow id stamped on the packets (`None`: decided downstream).
    pub flow: Option<u16>,
    /// Offered rate (pkt/s; infinite = as fast as the worker takes them).
    pub rate_pps: f64,
    /// Packets that arrive together (1..=[`RX_QUEUE`]), in bursts at `rate_pps` on average.
    pub burst_pkts: usize,
}

struct StreamState {
    frame: Vec<u8>,
    flow: u16,
    /// Packets made so far (pkt); the next one's sequence number is its low 32 bits.
    sent: u64,
    pacer: Pacer,
    /// Packets arrived and not yet taken in the current fill.
    allowance: usize,
    /// Rate in force for the current fill (pkt/s).
    rate: f64,
    /// The fill in which the stream was last polled.
    polled: u64,
}

/// Emits the streams' packets interleaved packet by packet, or in runs of
/// `burstiness` packets per stream; each stream paced to its rate and
/// stamped with its arrival time (see [`Pacer`]).
pub struct SyntheticSource {
    streams: Vec<StreamState>,
    rates: RateKnobs,
    burstiness: usize,
    cursor: usize,
    run_left: usize,
    /// Fills so far; a stream is polled once per fill, when first visited.
    fills: u64,
    backlog: Backlog,
}

impl SyntheticSource {
    /// A source over `streams`, each stream's packets in runs of `burstiness`.
    pub fn new(streams: Vec<Stream>, burstiness: usize) -> Result<Self> {
        if streams.is_empty() {
            return Err(Error::Source("a synthetic source needs at least one stream".into()));
        }
        if burstiness == 0 {
            return Err(Error::Source("burstiness must be ≥ 1 packet".into()));
        }
        if let Some(s) = streams.iter().find(|s| !(s.rate_pps > 0.0)) {
            return Err(Error::Source(format!("rate {} pkt/s must be > 0", s.rate_pps)));
        }
        if let Some(s) = streams.iter().find(|s| !(1..=RX_QUEUE).contains(&s.burst_pkts)) {
            return Err(Error::Source(format!("burst_pkts {}: needs 1..={RX_QUEUE} (the receive queue)", s.burst_pkts)));
        }
        let rates = RateKnobs::new(&streams.iter().map(|s| s.rate_pps).collect::<Vec<_>>());
        let n = streams.len();
        let streams = streams
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let pacer = Pacer::phased(i as f64 / n as f64, s.burst_pkts);
                StreamState { frame: s.frame, flow: s.flow.unwrap_or(NO_FLOW), sent: 0, pacer, allowance: 0, rate: f64::INFINITY, polled: 0 }
            })
            .collect();
        Ok(Self { streams, rates, burstiness, cursor: 0, run_left: burstiness, fills: 0, backlog: Backlog::default() })
    }
}

impl PacketSource for SyntheticSource {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        self.fills += 1;
        let entered_ns = self.backlog.poll(now_ns);
        let n = self.streams.len();
        let mut produced = 0;
        let mut starved = 0;
        while produced < max && starved < n {
            let s = &mut self.streams[self.cursor];
            if s.polled != self.fills {
                s.polled = self.fills;
                s.rate = self.rates.get(self.cursor);
                s.allowance = s.pacer.poll(s.rate, now_ns);
            }
            if s.allowance > 0 {
                let ts = s.pacer.take().unwrap_or(entered_ns);
                let Some(id) = stamp(pool, &s.frame, ts, s.flow, s.sent as u32) else { break };
                out.push(id);
                s.sent += 1;
                s.allowance -= 1;
                produced += 1;
                starved = 0;
                self.run_left -= 1;
                if self.run_left > 0 {
                    continue;
                }
            } else {
                starved += 1;
            }
            self.cursor += 1;
            if self.cursor == n {
                self.cursor = 0;
            }
            self.run_left = self.burstiness;
        }
    }

    fn rates(&self) -> Option<RateKnobs> {
        Some(self.rates.clone())
    }

    fn next_arrival_ns(&self) -> Option<u64> {
        self.streams.iter().filter(|s| s.rate.is_finite()).filter_map(|s| s.pacer.next_ns()).min()
    }

    fn missed(&self) -> u64 {
        self.streams.iter().map(|s| s.pacer.missed).sum()
    }

    /// Each paced stream has a queue of [`RX_QUEUE`], which a burst may
    /// find holding all but a burst's room: the first to fill is the one
    /// whose room lasts the shortest at its rate. Said in packets of all
    /// the streams at their rates.
    fn queue_pkts(&self) -> Option<u64> {
        let paced = || self.streams.iter().filter(|s| s.rate.is_finite() && s.rate > 0.0);
        let total: f64 = paced().map(|s| s.rate).sum();
        let shortest_s = paced().map(|s| (RX_QUEUE - s.pacer.burst()) as f64 / s.rate).reduce(f64::min)?;
        Some((total * shortest_s) as u64)
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for s in self.streams.iter().filter(|s| s.flow != NO_FLOW) {
            generated(s.flow as usize, s.sent);
        }
    }

    fn stamps_every_packet(&self) -> bool {
        self.streams.iter().all(|s| s.flow != NO_FLOW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(streams: usize, burstiness: usize, rate: f64) -> SyntheticSource {
        let streams = (0..streams).map(|i| Stream { frame: vec![i as u8; 60], flow: Some(i as u16), rate_pps: rate, burst_pkts: 1 }).collect();
        SyntheticSource::new(streams, burstiness).unwrap()
    }

    fn flows(pool: &PacketPool, b: &Batch) -> Vec<u16> {
        b.as_slice().iter().map(|&id| pool.meta(id).flow).collect()
    }

    #[test]
    fn interleaves_packet_by_packet_and_in_runs() {
        let mut pool = PacketPool::new(64);
        let mut b = Batch::default();
        source(3, 1, f64::INFINITY).fill(&mut pool, 0, &mut b, 7);
        assert_eq!(flows(&pool, &b), vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(pool.data(b.as_slice()[1])[0], 1);
        let mut b2 = Batch::default();
        source(2, 3, f64::INFINITY).fill(&mut pool, 0, &mut b2, 8);
        assert_eq!(flows(&pool, &b2), vec![0, 0, 0, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn stops_when_the_pool_is_empty_and_paces_rates() {
        let mut pool = PacketPool::new(5);
        let mut b = Batch::default();
        source(1, 1, f64::INFINITY).fill(&mut pool, 0, &mut b, 32);
        assert_eq!(b.len(), 5);

        let mut pool = PacketPool::new(4096);
        let mut src = source(2, 1, 1_000_000.0);
        let mut total = 0;
        for t in 0..100u64 {
            let mut b = Batch::default();
            src.fill(&mut pool, t * 10_000, &mut b, 256);
            total += b.len();
            for &id in b.as_slice() {
                pool.free(id);
            }
        }
        // Polls at 0, 10, …, 990 µs see the first stream's arrivals at 0, 1, …, 990 µs
        // and the second's, half a gap later, at 0.5, 1.5, …, 989.5 µs.
        assert_eq!(total, 991 + 990);
    }

    #[test]
    fn a_bursty_stream_keeps_its_rate_and_its_queue_room_a_burst_short() {
        let streams = |burst_pkts| vec![Stream { frame: vec![0; 60], flow: Some(0), rate_pps: 1e6, burst_pkts }];
        let mut pool = PacketPool::new(4096);
        let mut bursty = SyntheticSource::new(streams(256), 1).unwrap();
        let mut b = Batch::default();
        // The first burst at 0, the next 256 µs later.
        bursty.fill(&mut pool, 0, &mut b, 1024);
        assert_eq!(b.len(), 256);
        let mut b2 = Batch::default();
        bursty.fill(&mut pool, 255_999, &mut b2, 1024);
        assert!(b2.is_empty());
        bursty.fill(&mut pool, 256_000, &mut b2, 1024);
        assert_eq!(b2.len(), 256);
        assert_eq!(bursty.queue_pkts(), Some((RX_QUEUE - 256) as u64));
        assert_eq!(SyntheticSource::new(streams(1), 1).unwrap().queue_pkts(), None, "not yet polled: no rate in force");
        for wrong in [0, RX_QUEUE + 1] {
            let e = SyntheticSource::new(streams(wrong), 1).err().unwrap().to_string();
            assert!(e.contains("burst_pkts") && e.contains(&wrong.to_string()), "{e}");
        }
    }

    #[test]
    fn refuses_empty_or_zero_settings() {
        assert!(SyntheticSource::new(vec![], 1).is_err());
        let s = || vec![Stream { frame: vec![0; 60], flow: None, rate_pps: 1.0, burst_pkts: 1 }];
        assert!(SyntheticSource::new(s(), 0).is_err());
        let zero = vec![Stream { frame: vec![0; 60], flow: None, rate_pps: 0.0, burst_pkts: 1 }];
        assert_eq!(SyntheticSource::new(zero, 1).err().unwrap().to_string(), "source: rate 0 pkt/s must be > 0");
    }
}
