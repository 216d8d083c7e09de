//! Replay of a capture from memory, looping, with packets mapped to flows.

use std::sync::Arc;

use sluice_core::{Batch, PacketPool, PacketSource, RateKnobs, NO_FLOW};

use crate::capture::Capture;
use crate::error::{Error, Result};
use crate::pacer::{Backlog, Pacer};
use crate::flow_rules::FlowRules;
use crate::stamp;

/// A capture replayed in a loop, each packet stamped with its flow.
pub struct PcapReplay {
    capture: Arc<Capture>,
    /// Flow of each record, by record index.
    flows: Vec<u16>,
    next: usize,
    seq: u32,
    /// The rules its packets are sorted into flows by.
    rules: FlowRules,
    /// Packets made so far per flow id (pkt).
    per_flow: Vec<u64>,
    /// Bytes the packets made so far had on the wire (bytes).
    wire_bytes: u64,
    pacer: Pacer,
    backlog: Backlog,
    rates: RateKnobs,
}

impl PcapReplay {
    /// Replays `capture` (named `name` in errors) at `rate_pps` (infinite:
    /// as fast as taken); each packet's flow is as `rules` sort it (no
    /// match: no flow).
    pub fn new(capture: Arc<Capture>, name: &str, rules: FlowRules, rate_pps: f64) -> Result<Self> {
        if !(rate_pps > 0.0) {
            return Err(Error::Pcap { path: name.into(), reason: format!("replay rate {rate_pps} pkt/s must be > 0") });
        }
        let mut replay = Self {
            capture,
            rules: FlowRules::default(),
            flows: Vec::new(),
            next: 0,
            seq: 0,
            per_flow: Vec::new(),
            wire_bytes: 0,
            pacer: Pacer::default(),
            backlog: Backlog::default(),
            rates: RateKnobs::new(&[rate_pps]),
        };
        replay.sort_by(rules);
        Ok(replay)
    }

    /// Sorts the capture's packets into flows by `rules` from the next one on.
    fn sort_by(&mut self, rules: FlowRules) {
        self.flows = self.capture.records.iter().map(|r| rules.classify(self.capture.data(r))).collect();
        let flows = self.flows.iter().filter(|&&f| f != NO_FLOW).map(|&f| f as usize + 1).max().unwrap_or(0);
        if self.per_flow.len() < flows {
            self.per_flow.resize(flows, 0);
        }
        self.rules = rules;
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

    /// Flow of each packet in capture order.
    pub fn flows(&self) -> impl Iterator<Item = u16> + '_ {
        self.flows.iter().copied()
    }
}

impl PacketSource for PcapReplay {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        let rate = self.rates.get(0);
        let entered_ns = self.backlog.poll(now_ns);
        let n = max.min(self.pacer.poll(rate, now_ns));
        for _ in 0..n {
            let (r, flow) = (&self.capture.records[self.next], self.flows[self.next]);
            let ts = self.pacer.take().unwrap_or(entered_ns);
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

    fn queue_pkts(&self) -> Option<u64> {
        self.rates.get(0).is_finite().then_some(crate::pacer::RX_QUEUE as u64)
    }

    fn next_arrival_ns(&self) -> Option<u64> {
        self.pacer.next_ns().filter(|_| self.rates.get(0).is_finite())
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.per_flow.iter().enumerate() {
            generated(flow, n);
        }
    }

    fn stamps_every_packet(&self) -> bool {
        self.flows.iter().all(|&f| f != NO_FLOW)
    }

    fn flow_rules(&self) -> Option<&dyn std::any::Any> {
        Some(&self.rules)
    }

    fn set_flow_rules(&mut self, rules: Box<dyn std::any::Any + Send>) -> std::result::Result<(), String> {
        let rules = rules.downcast::<FlowRules>().map_err(|_| "a capture's packets are sorted by flow rules, not by these".to_owned())?;
        self.sort_by(*rules);
        Ok(())
    }
}
