//! Sluice traffic: real Ethernet/IPv4/UDP templates, a synthetic source that
//! interleaves flows, captures (pcap, pcapng) replayed from memory, and a
//! pcap tap for egresses.
#![warn(missing_docs)]

pub mod capture;
pub mod error;
pub mod flow_table;
mod link_layer;
pub mod pacer;
pub mod pcap_replay;
pub mod pcap_tap;
pub mod flow_rules;
pub mod prefix_rules;
pub mod synthetic;
pub mod template;
pub mod trace_analysis;
pub mod trace_synth;

pub use capture::Capture;
pub use error::{Error, Result};
pub use pcap_replay::PcapReplay;
pub use flow_rules::{FlowMatch, FlowRule, FlowRules};
pub use prefix_rules::{PrefixRule, PrefixRules};
pub use pcap_tap::PcapTap;
pub use synthetic::{Stream, SyntheticSource};
pub use template::{GtpuSpec, TemplateSpec};

use sluice_core::{PacketId, PacketMeta, PacketPool};

/// Copies `frame` into a fresh buffer stamped with arrival time, flow and
/// sequence number; `None` when the pool is empty.
#[inline]
pub(crate) fn stamp(pool: &mut PacketPool, frame: &[u8], ts_ns: u64, flow: u16, seq: u32) -> Option<PacketId> {
    pool.alloc_copy(frame, PacketMeta { ts_ns, flow, seq, ..PacketMeta::default() })
}
