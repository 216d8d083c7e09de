//! The transmit side of a port: packets from the pool onto the backend's ring.

use sluice_core::telemetry::NfCounters;
use sluice_core::{PacketId, PacketPool, PacketSink};

use crate::af_packet::AfPacketTx;
#[cfg(af_xdp)]
use crate::af_xdp::XdpTx;
#[cfg(dpdk)]
use crate::dpdk::DpdkTx;
use crate::{Backend, PortName, Result, RingConfig};

/// What a transmit port counts: frames put on its ring and their bytes,
/// times the ring was full and the kernel was asked to send before a
/// second try, frames it still had no room for (the walker drops those,
/// counted at the egress), frames the kernel refused as malformed.
pub const TX_COUNTERS: &[&str] = &["tx_pkts", "tx_bytes", "tx_retries", "tx_full", "tx_refused"];

/// How a transmit port puts frames on the wire.
enum Transmitter {
    Packet(AfPacketTx),
    #[cfg(af_xdp)]
    Xdp(XdpTx),
    #[cfg(dpdk)]
    Dpdk(DpdkTx),
}

/// An egress transmitting on a port.
pub struct TxPort {
    tx: Transmitter,
    /// Frames put on the ring and their bytes; full-ring retries; frames refused for want of room.
    sent: u64,
    bytes: u64,
    retries: u64,
    full: u64,
}

impl TxPort {
    /// Opens `port` for transmitting, its ring shaped by `ring`.
    pub fn open(port: &PortName, ring: RingConfig) -> Result<Self> {
        let tx = match port.backend {
            Backend::AfPacket => Transmitter::Packet(AfPacketTx::open(&port.name, &port.interface, ring)?),
            #[cfg(af_xdp)]
            Backend::AfXdp => Transmitter::Xdp(XdpTx::open(&port.name, &port.interface, port.bound_queue(), ring.descriptors)?),
            #[cfg(dpdk)]
            Backend::Dpdk => Transmitter::Dpdk(DpdkTx::open(&port.name, &port.interface, port.bound_queue())?),
            #[cfg(not(all(af_xdp, dpdk)))]
            _ => unreachable!("PortName::parse refuses the backends this build lacks"),
        };
        Ok(Self { tx, sent: 0, bytes: 0, retries: 0, full: 0 })
    }

    /// Puts as many of `ids` on the ring as it has room for; returns how many.
    fn push(&mut self, pool: &mut PacketPool, ids: &[PacketId]) -> usize {
        match &mut self.tx {
            Transmitter::Packet(tx) => ids.iter().take_while(|&&id| tx.push(pool.data(id))).count(),
            #[cfg(af_xdp)]
            Transmitter::Xdp(tx) => tx.push(pool, ids),
            #[cfg(dpdk)]
            Transmitter::Dpdk(tx) => tx.push(pool, ids),
        }
    }

    /// Has the kernel send what is queued (and, AF_XDP, takes back the buffers it sent).
    fn flush(&mut self, #[cfg_attr(not(af_xdp), allow(unused_variables))] pool: &mut PacketPool) {
        match &mut self.tx {
            Transmitter::Packet(tx) => tx.flush(),
            #[cfg(af_xdp)]
            Transmitter::Xdp(tx) => tx.flush(pool),
            // The device sends as it takes: nothing waits.
            #[cfg(dpdk)]
            Transmitter::Dpdk(_) => {}
        }
    }

    /// Opens what needs the pool it sends from (an AF_XDP socket).
    pub fn bind(&mut self, #[cfg_attr(not(any(af_xdp, dpdk)), allow(unused_variables))] pool: &mut PacketPool) -> Result<()> {
        match &mut self.tx {
            Transmitter::Packet(_) => Ok(()),
            #[cfg(af_xdp)]
            Transmitter::Xdp(tx) => tx.attach(pool),
            #[cfg(dpdk)]
            Transmitter::Dpdk(tx) => tx.attach(pool),
        }
    }

    /// Lets go of packets [`PacketSink::transmit`] took: frees the copied
    /// ones, hands over those sent from their own buffers.
    pub fn let_go(&self, pool: &mut PacketPool, ids: &[PacketId]) {
        let release = if self.zero_copy() { PacketPool::hand_over } else { PacketPool::free };
        for &id in ids {
            release(pool, id);
        }
    }
}

impl PacketSink for TxPort {
    fn transmit(&mut self, pool: &mut PacketPool, ids: &[PacketId]) -> usize {
        let mut sent = self.push(pool, ids);
        if sent < ids.len() {
            // Full: have the kernel send what is queued, then try once more.
            self.retries += 1;
            self.flush(pool);
            sent += self.push(pool, &ids[sent..]);
        }
        self.sent += sent as u64;
        self.bytes += ids[..sent].iter().map(|&id| u64::from(pool.meta(id).len)).sum::<u64>();
        self.full += (ids.len() - sent) as u64;
        // AF_PACKET sends on a kick; AF_XDP was woken as it pushed; DPDK sends as it takes.
        #[allow(irrefutable_let_patterns)] // AF_PACKET is a build's only transmitter without AF_XDP and DPDK
        if let Transmitter::Packet(tx) = &mut self.tx {
            tx.flush();
        }
        sent
    }

    fn zero_copy(&self) -> bool {
        #[cfg(af_xdp)]
        if let Transmitter::Xdp(_) = self.tx {
            return true;
        }
        false
    }

    fn attach(&mut self, pool: &mut PacketPool) -> Result<(), String> {
        self.bind(pool).map_err(|e| e.to_string())
    }

    fn read_counters(&self, into: &mut NfCounters) {
        let refused = match &self.tx {
            Transmitter::Packet(tx) => tx.refused,
            #[cfg(af_xdp)]
            Transmitter::Xdp(tx) => tx.invalid(),
            #[cfg(dpdk)]
            Transmitter::Dpdk(tx) => tx.errors(),
        };
        into[..TX_COUNTERS.len()].copy_from_slice(&[self.sent, self.bytes, self.retries, self.full, refused]);
    }
}
