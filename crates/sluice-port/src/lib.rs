//! Sluice ports: an rx port is a source that receives from a network
//! interface, a tx port an egress that transmits on one. Each backend is
//! its own file behind [`RxPort`] and [`TxPort`]; AF_PACKET (TPACKET_V3
//! rings) is built, AF_XDP and DPDK are not yet.
#![warn(missing_docs)]

pub mod af_packet;
pub mod error;
pub mod forward;
pub mod send;

pub use af_packet::RingConfig;
pub use error::{Error, Result};
pub use forward::{forward_raw, Forwarded};
pub use send::{send, Sent};

use sluice_core::telemetry::NfCounters;
use sluice_core::{Batch, PacketId, PacketMeta, PacketPool, PacketSink, PacketSource};
use sluice_traffic::{classify, PrefixRule};

use crate::af_packet::{AfPacketRx, AfPacketTx};

/// A port as named on the command line and in descriptions: `BACKEND:INTERFACE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortName {
    /// The name as given.
    pub name: String,
    /// The interface.
    pub interface: String,
}

impl PortName {
    /// Parses `name`; the backend must be one built here.
    pub fn parse(name: &str) -> Result<Self> {
        let bad = |reason: String| Error::Name { port: name.into(), reason };
        let (backend, interface) = name.split_once(':').ok_or_else(|| bad("expected BACKEND:INTERFACE, e.g. af_packet:veth1".into()))?;
        match backend {
            "af_packet" => {}
            "af_xdp" | "dpdk" => return Err(bad(format!("the {backend} backend is not built yet; af_packet is"))),
            other => return Err(bad(format!("unknown backend '{other}' (af_packet)"))),
        }
        if interface.is_empty() || interface.len() >= libc::IFNAMSIZ {
            return Err(bad(format!("interface name '{interface}' must have 1 to {} characters", libc::IFNAMSIZ - 1)));
        }
        Ok(Self { name: name.into(), interface: interface.into() })
    }
}

/// A source receiving from a port: each frame copied into the pool,
/// stamped with the time the kernel received it and with its flow
/// by the first prefix rule its IPv4 destination matches (none: decided
/// downstream, by a splitter).
pub struct RxPort {
    rx: AfPacketRx,
    rules: Vec<PrefixRule>,
    seq: u32,
    /// Packets received per flow id (pkt).
    per_flow: Vec<u64>,
    /// Frames taken into the pool, and their bytes.
    received: u64,
    bytes: u64,
}

/// What a receive port counts, in its module's own counters (cumulative;
/// per period in a period's report): frames taken into the pipeline and
/// their bytes, frames the kernel dropped at a full ring, frames too long
/// for a pool buffer.
pub const RX_COUNTERS: &[&str] = &["rx_pkts", "rx_bytes", "ring_dropped", "oversize"];
/// What a transmit port counts: frames put on its ring and their bytes,
/// times the ring was full and the kernel was asked to send before a
/// second try, frames it still had no room for (the walker drops those,
/// counted at the egress), frames the kernel refused as malformed.
pub const TX_COUNTERS: &[&str] = &["tx_pkts", "tx_bytes", "tx_retries", "tx_full", "tx_refused"];

impl RxPort {
    /// Opens `port` for receiving, its ring shaped by `ring`; `fanout`
    /// joins a group that spreads flows over several workers' ports.
    pub fn open(port: &PortName, ring: RingConfig, rules: Vec<PrefixRule>, fanout: Option<u16>) -> Result<Self> {
        let flows = rules.iter().map(|r| r.flow as usize + 1).max().unwrap_or(0);
        Ok(Self { rx: AfPacketRx::open(&port.name, &port.interface, ring, fanout)?, rules, seq: 0, per_flow: vec![0; flows], received: 0, bytes: 0 })
    }
}

impl PacketSource for RxPort {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        let Self { rx, rules, seq, per_flow, received, bytes } = self;
        // The kernel's clock now, read once a poll that finds frames.
        let mut realtime_ns = None;
        rx.poll(max, |frame, arrived_ns| {
            // Stamped with the kernel's receive time on the engine's clock: the time a
            // frame waited in the ring (while the worker slept, say) counts in its delay.
            let waited_ns = realtime_ns.get_or_insert_with(realtime_now_ns).saturating_sub(arrived_ns);
            let flow = classify(rules, frame);
            let meta = PacketMeta { ts_ns: now_ns.saturating_sub(waited_ns), flow, seq: *seq, ..PacketMeta::default() };
            let Some(id) = pool.alloc_copy(frame, meta) else {
                return false;
            };
            out.push(id);
            *seq = seq.wrapping_add(1);
            *received += 1;
            *bytes += frame.len() as u64;
            if let Some(n) = per_flow.get_mut(flow as usize) {
                *n += 1;
            }
            true
        });
    }

    fn wait_fd(&self) -> Option<std::os::fd::RawFd> {
        Some(self.rx.fd())
    }

    fn missed(&self) -> u64 {
        self.rx.missed()
    }

    fn read_counters(&self, into: &mut NfCounters) {
        into[..RX_COUNTERS.len()].copy_from_slice(&[self.received, self.bytes, self.rx.ring_dropped(), self.rx.oversize()]);
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.per_flow.iter().enumerate() {
            generated(flow, n);
        }
    }
}

/// CLOCK_REALTIME now (ns), the clock of the ring's receive times.
fn realtime_now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// An egress transmitting on a port.
pub struct TxPort {
    tx: AfPacketTx,
    /// Frames put on the ring and their bytes; full-ring retries; frames refused for want of room.
    sent: u64,
    bytes: u64,
    retries: u64,
    full: u64,
}

impl TxPort {
    /// Opens `port` for transmitting, its ring shaped by `ring`.
    pub fn open(port: &PortName, ring: RingConfig) -> Result<Self> {
        Ok(Self { tx: AfPacketTx::open(&port.name, &port.interface, ring)?, sent: 0, bytes: 0, retries: 0, full: 0 })
    }
}

impl PacketSink for TxPort {
    fn transmit(&mut self, pool: &PacketPool, ids: &[PacketId]) -> usize {
        let mut sent = 0;
        for &id in ids {
            let frame = pool.data(id);
            if !self.tx.push(frame) {
                // Full: have the kernel send what is queued, then try once more.
                self.retries += 1;
                self.tx.flush();
                if !self.tx.push(frame) {
                    break;
                }
            }
            sent += 1;
            self.bytes += frame.len() as u64;
        }
        self.sent += sent as u64;
        self.full += (ids.len() - sent) as u64;
        self.tx.flush();
        sent
    }

    fn read_counters(&self, into: &mut NfCounters) {
        into[..TX_COUNTERS.len()].copy_from_slice(&[self.sent, self.bytes, self.retries, self.full, self.tx.refused]);
    }
}
