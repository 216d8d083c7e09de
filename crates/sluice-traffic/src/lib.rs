//! Sluice traffic: real Ethernet/IPv4/UDP templates, a synthetic source that
//! interleaves flows, pcap replay from memory, and a pcap tap for egresses.
#![warn(missing_docs)]

pub mod error;
pub mod pacer;
pub mod pcap_replay;
pub mod pcap_tap;
pub mod synthetic;
pub mod template;

pub use error::{Error, Result};
pub use pcap_replay::{PcapReplay, PrefixRule};
pub use pcap_tap::PcapTap;
pub use synthetic::{Stream, SyntheticSource};
pub use template::TemplateSpec;

use sluice_core::{PacketId, PacketPool};

/// Copies `frame` into a fresh buffer stamped with flow and sequence number
/// (the caller sets the arrival time); `None` when the pool is empty.
#[inline]
pub(crate) fn stamp(pool: &mut PacketPool, frame: &[u8], flow: u16, seq: u32) -> Option<PacketId> {
    let id = pool.alloc(frame.len())?;
    pool.data_mut(id).copy_from_slice(frame);
    let meta = pool.meta_mut(id);
    meta.flow = flow;
    meta.seq = seq;
    Some(id)
}
