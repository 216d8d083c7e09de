//! `flow_stats(max_flows)`: packets, bytes, first and last seen per
//! 5-tuple flow, in a table sized up front for `max_flows` flows (millions
//! fit). A run of one flow's packets in a batch (as a Reframer makes them)
//! costs one table lookup: with many flows the lookup is a cache miss, and
//! it is most of the NF's cost.
//!
//! Once the table is full, packets of flows it has not seen pass
//! uncounted (`untracked`); nothing is evicted, so every count in the table
//! is exact. Every packet goes out of gate 0, in order.

use sluice_core::telemetry::NfCounters;
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

use crate::five_tuple::FiveTuple;
use crate::flow_index::FlowIndex;

/// Most flows a table may hold.
pub const MAX_FLOWS: usize = 1 << 24;

/// What the table knows of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowRecord {
    /// Packets (pkt).
    pub packets: u64,
    /// Bytes of their frames.
    pub bytes: u64,
    /// When the first and the last were seen (ns since the origin).
    pub first_ns: u64,
    /// See `first_ns`.
    pub last_ns: u64,
}

/// The names of the NF counter slots [`FlowStats`] fills, in order.
pub const COUNTER_NAMES: [&str; 4] = ["flows", "lookups", "untracked", "unparsed"];

/// Counts packets and bytes per flow (see the module doc).
pub struct FlowStats {
    index: FlowIndex,
    /// Each flow's key beside its record: the key compared, the record is read next.
    records: Vec<(FiveTuple, FlowRecord)>,
    max_flows: usize,
    /// Table lookups made: one per run of one flow in a batch.
    lookups: u64,
    untracked: u64,
    unparsed: u64,
}

impl FlowStats {
    /// A table for `max_flows` flows (1..=[`MAX_FLOWS`]).
    pub fn new(max_flows: usize) -> Result<Self, String> {
        if !(1..=MAX_FLOWS).contains(&max_flows) {
            return Err(format!("flow_stats max_flows {max_flows} is outside 1..={MAX_FLOWS}"));
        }
        Ok(Self {
            index: FlowIndex::with_capacity(max_flows),
            records: Vec::with_capacity(max_flows),
            max_flows,
            lookups: 0,
            untracked: 0,
            unparsed: 0,
        })
    }

    /// What the table knows of `flow`.
    pub fn get(&self, flow: &FiveTuple) -> Option<FlowRecord> {
        let records = &self.records;
        self.index.find(flow, |i| records[i as usize].0).ok().map(|i| records[i as usize].1)
    }

    /// Flows in the table.
    pub fn flows(&self) -> usize {
        self.records.len()
    }

    /// Adds a run of `packets` packets and `bytes` bytes of `flow` seen at `now`.
    fn count(&mut self, flow: &FiveTuple, packets: u64, bytes: u64, now: u64) {
        self.lookups += 1;
        let records = &self.records;
        let i = match self.index.find(flow, |i| records[i as usize].0) {
            Ok(i) => i as usize,
            Err(slot) if self.records.len() < self.max_flows => {
                self.index.insert_at(slot, self.records.len() as u32);
                self.records.push((*flow, FlowRecord { first_ns: now, ..FlowRecord::default() }));
                self.records.len() - 1
            }
            Err(_) => {
                self.untracked += packets;
                return;
            }
        };
        let r = &mut self.records[i].1;
        r.packets += packets;
        r.bytes += bytes;
        r.last_ns = now;
    }
}

impl NetworkFunction for FlowStats {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let now = ctx.now();
        // The run of one flow being added up: its key, packets and bytes.
        let mut run: Option<(FiveTuple, u64, u64)> = None;
        for &id in input.as_slice() {
            let Some(key) = FiveTuple::of(ctx.pool.data(id)) else {
                self.unparsed += 1;
                continue;
            };
            let len = u64::from(ctx.pool.meta(id).len);
            match &mut run {
                Some((k, packets, bytes)) if *k == key => {
                    *packets += 1;
                    *bytes += len;
                }
                _ => {
                    if let Some((k, packets, bytes)) = run.replace((key, 1, len)) {
                        self.count(&k, packets, bytes, now);
                    }
                }
            }
        }
        if let Some((k, packets, bytes)) = run {
            self.count(&k, packets, bytes, now);
        }
        out.forward(0, input);
    }

    fn read_counters(&self, into: &mut NfCounters) {
        into[..COUNTER_NAMES.len()].copy_from_slice(&[self.records.len() as u64, self.lookups, self.untracked, self.unparsed]);
    }
}

/// `flow_stats`: packets, bytes, first and last seen per 5-tuple flow, in
/// a table of `max_flows` sized up front (beyond, new flows pass
/// uncounted); a run of one flow's packets costs one lookup. Its counters:
/// flows, lookups, untracked, unparsed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowStatsSpec {
    /// Flows the table holds (1..=2^24).
    #[serde(default = "default_max_flows")]
    pub max_flows: usize,
}

fn default_max_flows() -> usize {
    1 << 20
}

impl crate::NfConfig for FlowStatsSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(FlowStats::new(self.max_flows)?))
    }

    fn counter_names(&self) -> &'static [&'static str] {
        &COUNTER_NAMES
    }
}
