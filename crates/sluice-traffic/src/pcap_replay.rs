//! Replay of classic pcap files from memory, looping, with packets mapped to flows.

use std::io::Read;
use std::net::Ipv4Addr;

use etherparse::{NetSlice, SlicedPacket};
use pcap_file::pcap::PcapReader;
use pcap_file::DataLink;
use sluice_core::packet::MAX_PACKET_LEN;
use sluice_core::{Batch, PacketPool, PacketSource, RateKnobs, NO_FLOW};

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
    fn matches(&self, dst: Ipv4Addr) -> bool {
        let mask = if self.len == 0 { 0 } else { u32::MAX << (32 - self.len as u32) };
        u32::from(dst) & mask == u32::from(self.prefix) & mask
    }
}

struct Record {
    offset: usize,
    len: usize,
    flow: u16,
}

/// A capture held in memory and replayed in a loop at a set rate or as fast as taken.
pub struct PcapReplay {
    bytes: Vec<u8>,
    records: Vec<Record>,
    next: usize,
    seq: u32,
    /// Packets made so far per flow id (pkt).
    per_flow: Vec<u64>,
    pacer: Pacer,
    backlog: Backlog,
    rates: RateKnobs,
}

impl PcapReplay {
    /// Loads the capture at `path`; see [`from_reader`](Self::from_reader).
    pub fn from_file(path: &str, rules: &[PrefixRule], rate_pps: f64) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::Pcap { path: path.into(), reason: e.to_string() })?;
        Self::from_reader(std::io::BufReader::new(file), path, rules, rate_pps)
    }

    /// Loads a classic pcap (µs or ns timestamps, either byte order) of
    /// Ethernet frames; each packet's flow is the first rule its IPv4
    /// destination matches (no match: no flow). `name` labels errors.
    pub fn from_reader(reader: impl Read, name: &str, rules: &[PrefixRule], rate_pps: f64) -> Result<Self> {
        let err = |reason: String| Error::Pcap { path: name.into(), reason };
        if !(rate_pps > 0.0) {
            return Err(err(format!("replay rate {rate_pps} pkt/s must be > 0")));
        }
        if let Some(r) = rules.iter().find(|r| r.len > 32) {
            return Err(err(format!("prefix length {} of {} exceeds 32", r.len, r.prefix)));
        }
        let mut pcap = PcapReader::new(reader).map_err(|e| err(format!("not a classic pcap file: {e}")))?;
        let link = pcap.header().datalink;
        if link != DataLink::ETHERNET {
            return Err(err(format!("link type {link:?} is not Ethernet")));
        }
        let (mut bytes, mut records) = (Vec::new(), Vec::new());
        while let Some(packet) = pcap.next_packet() {
            let packet = packet.map_err(|e| err(format!("packet {}: {e}", records.len() + 1)))?;
            let data = &packet.data[..];
            if data.len() > MAX_PACKET_LEN {
                return Err(err(format!("packet {} has {} bytes, more than the {MAX_PACKET_LEN} a buffer holds", records.len() + 1, data.len())));
            }
            let flow = destination(data).and_then(|dst| rules.iter().find(|r| r.matches(dst))).map_or(NO_FLOW, |r| r.flow);
            records.push(Record { offset: bytes.len(), len: data.len(), flow });
            bytes.extend_from_slice(data);
        }
        if records.is_empty() {
            return Err(err("holds no packet".into()));
        }
        let flows = records.iter().filter(|r| r.flow != NO_FLOW).map(|r| r.flow as usize + 1).max().unwrap_or(0);
        Ok(Self { bytes, records, next: 0, seq: 0, per_flow: vec![0; flows], pacer: Pacer::default(), backlog: Backlog::default(), rates: RateKnobs::new(&[rate_pps]) })
    }

    /// Number of packets in one pass of the capture.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the capture is empty (never: loading refuses it).
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Packets per IPv4 destination /24 in the capture (network, count),
    /// most packets first; packets without an IPv4 destination are not counted.
    pub fn destinations_by_24(&self) -> Vec<(Ipv4Addr, u64)> {
        let mut counts = std::collections::HashMap::new();
        for r in &self.records {
            if let Some(dst) = destination(&self.bytes[r.offset..r.offset + r.len]) {
                *counts.entry(u32::from(dst) & 0xffff_ff00).or_insert(0u64) += 1;
            }
        }
        let mut v: Vec<(Ipv4Addr, u64)> = counts.into_iter().map(|(net, n)| (Ipv4Addr::from(net), n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// Flow of each packet in capture order.
    pub fn flows(&self) -> impl Iterator<Item = u16> + '_ {
        self.records.iter().map(|r| r.flow)
    }
}

fn destination(frame: &[u8]) -> Option<Ipv4Addr> {
    match SlicedPacket::from_ethernet(frame).ok()?.net? {
        NetSlice::Ipv4(ip) => Some(ip.header().destination_addr()),
        _ => None,
    }
}

impl PacketSource for PcapReplay {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        let rate = self.rates.get(0);
        let entered_ns = self.backlog.poll(now_ns);
        let n = max.min(self.pacer.poll(rate, now_ns));
        for _ in 0..n {
            let r = &self.records[self.next];
            let ts = self.pacer.take(rate).unwrap_or(entered_ns);
            let Some(id) = stamp(pool, &self.bytes[r.offset..r.offset + r.len], ts, r.flow, self.seq) else { break };
            out.push(id);
            self.seq = self.seq.wrapping_add(1);
            if let Some(n) = self.per_flow.get_mut(r.flow as usize) {
                *n += 1;
            }
            self.next = (self.next + 1) % self.records.len();
        }
    }

    fn rates(&self) -> Option<RateKnobs> {
        Some(self.rates.clone())
    }

    fn missed(&self) -> u64 {
        self.pacer.missed
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.per_flow.iter().enumerate() {
            generated(flow, n);
        }
    }
}
