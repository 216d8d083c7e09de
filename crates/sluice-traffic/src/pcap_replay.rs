//! Replay of a capture from memory, looping, with packets mapped to flows.

use std::net::Ipv4Addr;
use std::sync::Arc;

use sluice_core::{Batch, PacketPool, PacketSource, RateKnobs, NO_FLOW};

use crate::capture::Capture;
use crate::error::{Error, Result};
use crate::pacer::{Backlog, Pacer};
use crate::stamp;

/// Packets whose IPv4 destination falls in `prefix/len` belong to `flow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixRule {
    /// Network address.
    pub prefix: Ipv4Addr,
    /// Prefix length (bits, 0..=32).
    pub len: u8,
    /// Flow id of matching packets.
    pub flow: u16,
}

impl PrefixRule {
    /// Whether `dst` lies in the prefix.
    pub fn matches(&self, dst: Ipv4Addr) -> bool {
        let mask = if self.len == 0 { 0 } else { u32::MAX << (32 - self.len as u32) };
        u32::from(dst) & mask == u32::from(self.prefix) & mask
    }
}

/// A capture replayed in a loop, each packet stamped with its flow.
pub struct PcapReplay {
    capture: Arc<Capture>,
    /// Flow of each record, by record index.
    flows: Vec<u16>,
    next: usize,
    seq: u32,
    /// Packets made so far per flow id (pkt).
    per_flow: Vec<u64>,
    /// Bytes the packets made so far had on the wire (bytes).
    wire_bytes: u64,
    pacer: Pacer,
    backlog: Backlog,
    rates: RateKnobs,
}

impl PcapReplay {
    /// Loads the capture at `path` (see [`Capture::open`]) and replays it.
    pub fn from_file(path: &str, rules: &[PrefixRule], rate_pps: f64) -> Result<Self> {
        Self::new(Arc::new(Capture::open(path)?), path, rules, rate_pps)
    }

    /// Replays `capture` (named `name` in errors) at `rate_pps` (infinite:
    /// as fast as taken); each packet's flow is the first rule its IPv4
    /// destination matches (no match: no flow).
    pub fn new(capture: Arc<Capture>, name: &str, rules: &[PrefixRule], rate_pps: f64) -> Result<Self> {
        let err = |reason: String| Error::Pcap { path: name.into(), reason };
        if !(rate_pps > 0.0) {
            return Err(err(format!("replay rate {rate_pps} pkt/s must be > 0")));
        }
        if let Some(r) = rules.iter().find(|r| r.len > 32) {
            return Err(err(format!("prefix length {} of {} exceeds 32", r.len, r.prefix)));
        }
        let flows: Vec<u16> = capture
            .records
            .iter()
            .map(|r| classify(rules, capture.data(r)))
            .collect();
        let per_flow = flows.iter().filter(|&&f| f != NO_FLOW).map(|&f| f as usize + 1).max().unwrap_or(0);
        Ok(Self {
            capture,
            flows,
            next: 0,
            seq: 0,
            per_flow: vec![0; per_flow],
            wire_bytes: 0,
            pacer: Pacer::default(),
            backlog: Backlog::default(),
            rates: RateKnobs::new(&[rate_pps]),
        })
    }

    /// Bytes the packets made so far had on the wire (bytes): a record
    /// captured with a snap length counts its original length.
    pub fn wire_bytes(&self) -> u64 {
        self.wire_bytes
    }

    /// Number of packets in one pass of the capture.
    pub fn len(&self) -> usize {
        self.capture.records.len()
    }

    /// Whether the capture is empty (never: loading refuses it).
    pub fn is_empty(&self) -> bool {
        self.capture.records.is_empty()
    }

    /// Packets per IPv4 destination /24 in the capture (network, count),
    /// most packets first; packets without an IPv4 destination are not counted.
    pub fn destinations_by_24(&self) -> Vec<(Ipv4Addr, u64)> {
        let mut counts = std::collections::HashMap::new();
        for r in &self.capture.records {
            if let Some(dst) = destination(self.capture.data(r)) {
                *counts.entry(u32::from(dst) & 0xffff_ff00).or_insert(0u64) += 1;
            }
        }
        let mut v: Vec<(Ipv4Addr, u64)> = counts.into_iter().map(|(net, n)| (Ipv4Addr::from(net), n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// Flow of each packet in capture order.
    pub fn flows(&self) -> impl Iterator<Item = u16> + '_ {
        self.flows.iter().copied()
    }
}

/// The flow of the first rule in `rules` that `frame`'s IPv4 destination
/// matches ([`NO_FLOW`] when none does, or it has none).
pub fn classify(rules: &[PrefixRule], frame: &[u8]) -> u16 {
    destination(frame).and_then(|dst| rules.iter().find(|rule| rule.matches(dst))).map_or(NO_FLOW, |rule| rule.flow)
}

/// The IPv4 destination of an Ethernet frame: the header alone is read, so
/// a record cut by a snap length still has one.
fn destination(frame: &[u8]) -> Option<Ipv4Addr> {
    sluice_core::wire::ipv4_of(frame).ok().map(|ip| Ipv4Addr::from(ip.dst()))
}

impl PacketSource for PcapReplay {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        let rate = self.rates.get(0);
        let entered_ns = self.backlog.poll(now_ns);
        let n = max.min(self.pacer.poll(rate, now_ns));
        for _ in 0..n {
            let (r, flow) = (&self.capture.records[self.next], self.flows[self.next]);
            let ts = self.pacer.take(rate).unwrap_or(entered_ns);
            let Some(id) = stamp(pool, self.capture.data(r), ts, flow, self.seq) else { break };
            out.push(id);
            self.seq = self.seq.wrapping_add(1);
            self.wire_bytes += r.wire_len as u64;
            if let Some(n) = self.per_flow.get_mut(flow as usize) {
                *n += 1;
            }
            self.next += 1;
            if self.next == self.capture.records.len() {
                self.next = 0;
            }
        }
    }

    fn rates(&self) -> Option<RateKnobs> {
        Some(self.rates.clone())
    }

    fn missed(&self) -> u64 {
        self.pacer.missed
    }

    fn next_arrival_ns(&self) -> Option<u64> {
        self.pacer.next_ns().filter(|_| self.rates.get(0).is_finite())
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.per_flow.iter().enumerate() {
            generated(flow, n);
        }
    }
}
