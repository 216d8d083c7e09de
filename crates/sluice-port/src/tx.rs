//! The transmit side of a port: packets from the pool onto the backend's ring.

use sluice_core::telemetry::NfCounters;
use sluice_core::{PacketId, PacketPool, PacketSink};

use crate::af_packet::AfPacketTx;
#[cfg(af_xdp)]
use crate::af_xdp::XdpTx;
#[cfg(dpdk)]
use crate::dpdk::DpdkTx;
use crate::{Backend, PortName, Result, RingConfig};

/// What a transmit port counts: packets put on its ring and their bytes,
/// times the ring was full and the kernel was asked to send before a
/// second try, packets it still had no room for (the walker drops those,
/// counted at the egress), frames the kernel refused as malformed (and,
/// AF_XDP and DPDK, long frames that are no GSO packet: more than they
/// carry), GSO packets sent whole (AF_PACKET), GSO packets cut in software
/// and the segments cut (AF_XDP, DPDK).
pub const TX_COUNTERS: &[&str] = &["tx_pkts", "tx_bytes", "tx_retries", "tx_full", "tx_refused", "tx_gso", "tx_segmented", "tx_segments"];

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
    /// Long frames refused where the backend carries none (no GSO packet); GSO packets cut, and their segments.
    too_long: u64,
    segmented: u64,
    segments: u64,
    /// A GSO packet's segments, as they are cut.
    cut: Vec<PacketId>,
    /// Large packets sent as segments from a port that sends from the
    /// pool's buffers: the walker hands them over as sent, and they come
    /// back here, at the next transmit (no device holds them).
    sent_as_segments: Vec<PacketId>,
}

/// Segments a port cuts a GSO packet into at most without growing its scratch.
const SEGMENTS: usize = 128;

/// What became of a large packet (see [`TxPort::push_large`]).
enum Long {
    Taken,
    Full,
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
        Ok(Self { tx, sent: 0, bytes: 0, retries: 0, full: 0, too_long: 0, segmented: 0, segments: 0, cut: Vec::with_capacity(SEGMENTS), sent_as_segments: Vec::with_capacity(SEGMENTS) })
    }

    /// Puts as many of `ids` on the ring as it has room for, in order;
    /// returns how many. Small packets go in runs; a large one (a GSO or
    /// jumbo frame) alone, by [`Self::push_large`].
    fn push(&mut self, pool: &mut PacketPool, ids: &[PacketId]) -> usize {
        let mut taken = 0;
        while taken < ids.len() {
            let run = ids[taken..].iter().take_while(|&&id| !pool.is_large(id)).count();
            if run > 0 {
                let n = self.push_small(pool, &ids[taken..taken + run]);
                taken += n;
                if n < run {
                    break;
                }
            } else {
                match self.push_large(pool, ids[taken]) {
                    Long::Taken => taken += 1,
                    Long::Full => break,
                }
            }
        }
        taken
    }

    /// A large packet: sent whole with its header on AF_PACKET; elsewhere a
    /// GSO packet is cut into segments that are sent, and another refused
    /// (counted: the backend carries no frame that long).
    fn push_large(&mut self, pool: &mut PacketPool, id: PacketId) -> Long {
        if let Transmitter::Packet(tx) = &mut self.tx {
            return match tx.send_long(pool.data(id), &pool.offload(id)) {
                crate::af_packet::Sent::Full => Long::Full,
                crate::af_packet::Sent::Sent | crate::af_packet::Sent::Refused => Long::Taken,
            };
        }
        let mut cut = std::mem::take(&mut self.cut);
        cut.clear();
        match crate::segment::segment(pool, id, |_, seg| cut.push(seg)) {
            Ok(n) => {
                self.segmented += 1;
                self.segments += n as u64;
                let sent = self.push_small(pool, &cut);
                // What the ring had no room for is lost with the packet; what went, the device has.
                self.full += (cut.len() - sent) as u64;
                let zero_copy = self.zero_copy();
                for (i, &seg) in cut.iter().enumerate() {
                    match (i < sent, zero_copy) {
                        (true, true) => pool.hand_over(seg),
                        _ => pool.free(seg),
                    }
                }
                if zero_copy {
                    self.sent_as_segments.push(id);
                }
            }
            Err(crate::segment::Uncut::NoBuffers) => {
                self.cut = cut;
                return Long::Full;
            }
            Err(crate::segment::Uncut::Malformed) => {
                self.too_long += 1;
                if self.zero_copy() {
                    self.sent_as_segments.push(id);
                }
            }
        }
        self.cut = cut;
        Long::Taken
    }

    /// Puts as many of the small packets `ids` on the ring as it has room for; returns how many.
    fn push_small(&mut self, pool: &mut PacketPool, ids: &[PacketId]) -> usize {
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
        for id in self.sent_as_segments.drain(..) {
            pool.reclaim(id);
        }
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
        let (refused, gso) = match &self.tx {
            Transmitter::Packet(tx) => (tx.refused, tx.gso),
            #[cfg(af_xdp)]
            Transmitter::Xdp(tx) => (tx.invalid(), 0),
            #[cfg(dpdk)]
            Transmitter::Dpdk(tx) => (tx.errors(), 0),
        };
        into[..TX_COUNTERS.len()].copy_from_slice(&[self.sent, self.bytes, self.retries, self.full, refused + self.too_long, gso, self.segmented, self.segments]);
    }
}
