//! Sluice ports: an rx port is a source that receives from a network
//! interface, a tx port an egress that transmits on one. Each backend is
//! its own file: AF_PACKET (TPACKET_V3 rings, copying), AF_XDP (the packet
//! pool as UMEM, copying nothing) and DPDK ethdev (copying mbufs); the
//! last two are built where their libraries are (see `build.rs`).
#![warn(missing_docs)]

pub mod af_packet;
#[cfg(af_xdp)]
mod af_xdp;
#[cfg(dpdk)]
mod dpdk;
pub mod error;
pub mod forward;
mod interface;
pub mod send;
mod shared;
#[cfg(af_xdp)]
mod xsk;

pub use af_packet::RingConfig;
pub use error::{Error, Result};
pub use forward::{forward_bare, forward_raw, Forwarded};
pub use send::{send, Sent};

use sluice_core::telemetry::NfCounters;
use sluice_core::{Batch, PacketId, PacketMeta, PacketPool, PacketSink, PacketSource};
use sluice_traffic::{classify, PrefixRule};

use crate::af_packet::{AfPacketRx, AfPacketTx};
#[cfg(af_xdp)]
use crate::af_xdp::{XdpRx, XdpTx};
#[cfg(dpdk)]
use crate::dpdk::{DpdkRx, DpdkTx};

/// The backends this build has, as port names spell them.
pub const BUILT: &[&str] = match (cfg!(af_xdp), cfg!(dpdk)) {
    (true, true) => &["af_packet", "af_xdp", "dpdk"],
    (true, false) => &["af_packet", "af_xdp"],
    (false, true) => &["af_packet", "dpdk"],
    (false, false) => &["af_packet"],
};

/// How a port reaches its interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A packet socket with memory-mapped rings.
    AfPacket,
    /// An XDP socket on one queue, over the packet pool.
    AfXdp,
    /// A DPDK ethdev port (the "interface" is its device, with arguments).
    Dpdk,
}

/// A port as named on the command line and in descriptions:
/// `BACKEND:INTERFACE`; for AF_XDP `af_xdp:INTERFACE@QUEUE` for a queue
/// other than 0; for DPDK `dpdk:DEVICE[,ARGS]` (`dpdk:net_ring0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortName {
    /// The name as given.
    pub name: String,
    /// The backend.
    pub backend: Backend,
    /// The interface.
    pub interface: String,
    /// The interface's queue (AF_XDP).
    pub queue: u32,
}

impl PortName {
    /// Parses `name`; the backend must be one built here.
    pub fn parse(name: &str) -> Result<Self> {
        let bad = |reason: String| Error::Name { port: name.into(), reason };
        let (backend, interface) = name.split_once(':').ok_or_else(|| bad("expected BACKEND:INTERFACE, e.g. af_packet:veth1".into()))?;
        let (backend, interface, queue) = match backend {
            "af_packet" => (Backend::AfPacket, interface, 0),
            "af_xdp" if !cfg!(af_xdp) => {
                return Err(bad("this build has no AF_XDP: libxdp and libbpf were not found when it was built (apt-get install libxdp-dev libbpf-dev, then rebuild)".into()))
            }
            "af_xdp" => match interface.split_once('@') {
                None => (Backend::AfXdp, interface, 0),
                Some((iface, q)) => (Backend::AfXdp, iface, q.parse().map_err(|_| bad(format!("queue '{q}' is not a number")))?),
            },
            "dpdk" if !cfg!(dpdk) => {
                return Err(bad("this build has no DPDK: libdpdk was not found when it was built (apt-get install libdpdk-dev, then rebuild)".into()))
            }
            "dpdk" if interface.is_empty() => return Err(bad("expected dpdk:DEVICE, e.g. dpdk:net_ring0".into())),
            "dpdk" => return Ok(Self { name: name.into(), backend: Backend::Dpdk, interface: interface.into(), queue: 0 }),
            other => return Err(bad(format!("unknown backend '{other}' (af_packet, af_xdp, dpdk)"))),
        };
        if interface.is_empty() || interface.len() >= libc::IFNAMSIZ {
            return Err(bad(format!("interface name '{interface}' must have 1 to {} characters", libc::IFNAMSIZ - 1)));
        }
        Ok(Self { name: name.into(), backend, interface: interface.into(), queue })
    }

    /// Buffers of the pool a port of this name keeps lent to its device
    /// at most (pkt): AF_XDP's fill or completion ring; none for AF_PACKET.
    pub fn lends(&self, ring: &RingConfig) -> usize {
        match self.backend {
            Backend::AfPacket | Backend::Dpdk => 0,
            Backend::AfXdp => ring.descriptors as usize,
        }
    }
}

/// How a receive port gets its frames.
enum Receiver {
    Packet(AfPacketRx),
    #[cfg(af_xdp)]
    Xdp(XdpRx),
    #[cfg(dpdk)]
    Dpdk(DpdkRx),
}

/// A source receiving from a port, each frame stamped with the time it
/// was received and with its flow by the first prefix rule its IPv4
/// destination matches (none: decided downstream, by a splitter).
pub struct RxPort {
    rx: Receiver,
    intake: Intake,
}

/// What a receive port does to each frame it takes in: classifies,
/// numbers, stamps and counts it.
struct Intake {
    rules: Vec<PrefixRule>,
    seq: u32,
    /// Packets received per flow id (pkt).
    per_flow: Vec<u64>,
    /// Frames taken into the pool, and their bytes.
    received: u64,
    bytes: u64,
    /// When a poll last left the receive ring empty (ns since the origin).
    emptied_ns: Option<u64>,
}

impl Intake {
    /// The stamp of frames from a receiver that gives no receive time
    /// (AF_XDP, DPDK): the last poll that left the ring empty, the earliest
    /// any frame in it now can have arrived. Their delays are then upper
    /// bounds, which count a worker's sleep in full, as an SLO needs; after
    /// a wait for the socket, which ends at the first arrival, the poll's
    /// own time (short by the wake-up's latency).
    fn arrived_since(&self, now_ns: u64) -> u64 {
        self.emptied_ns.unwrap_or(now_ns)
    }

    /// Notes a poll at `now_ns` that took `taken` of at most `max` frames:
    /// fewer than asked means the ring is empty now.
    fn polled(&mut self, taken: usize, max: usize, now_ns: u64) {
        if taken < max {
            self.emptied_ns = Some(now_ns);
        }
    }

    /// Takes packet `id` in, received at `ts_ns` (ns since the origin).
    fn take(&mut self, pool: &mut PacketPool, id: PacketId, ts_ns: u64) {
        let flow = classify(&self.rules, pool.data(id));
        let meta = pool.meta_mut(id);
        *meta = PacketMeta { ts_ns, flow, seq: self.seq, ..*meta };
        self.seq = self.seq.wrapping_add(1);
        self.received += 1;
        self.bytes += u64::from(meta.len);
        if let Some(n) = self.per_flow.get_mut(flow as usize) {
            *n += 1;
        }
    }
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
    /// joins a group that spreads flows over several workers' ports
    /// (AF_PACKET; AF_XDP spreads by the interface's queues).
    pub fn open(port: &PortName, ring: RingConfig, rules: Vec<PrefixRule>, fanout: Option<u16>) -> Result<Self> {
        let flows = rules.iter().map(|r| r.flow as usize + 1).max().unwrap_or(0);
        let rx = match port.backend {
            Backend::AfPacket => Receiver::Packet(AfPacketRx::open(&port.name, &port.interface, ring, fanout)?),
            #[cfg(af_xdp)]
            Backend::AfXdp => Receiver::Xdp(XdpRx::open(&port.name, &port.interface, port.queue, ring.descriptors)?),
            #[cfg(dpdk)]
            Backend::Dpdk => Receiver::Dpdk(DpdkRx::open(&port.name, &port.interface)?),
            #[cfg(not(all(af_xdp, dpdk)))]
            _ => unreachable!("PortName::parse refuses the backends this build lacks"),
        };
        Ok(Self { rx, intake: Intake { rules, seq: 0, per_flow: vec![0; flows], received: 0, bytes: 0, emptied_ns: None } })
    }

    /// Opens what needs the pool it receives into (an AF_XDP socket, lent
    /// its fill ring's buffers).
    pub fn bind(&mut self, #[cfg_attr(not(any(af_xdp, dpdk)), allow(unused_variables))] pool: &mut PacketPool) -> Result<()> {
        match &mut self.rx {
            Receiver::Packet(_) => Ok(()),
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => rx.attach(pool),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => rx.attach(pool),
        }
    }
}

impl PacketSource for RxPort {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        let Self { rx, intake } = self;
        match rx {
            Receiver::Packet(rx) => {
                // The kernel's clock now, read once a poll that finds frames.
                let mut realtime_ns = None;
                rx.poll(max, |frame, arrived_ns| {
                    let Some(id) = pool.alloc_copy(frame, PacketMeta::default()) else {
                        return false;
                    };
                    // Stamped with the kernel's receive time on the engine's clock: the time a
                    // frame waited in the ring (while the worker slept, say) counts in its delay.
                    let waited_ns = realtime_ns.get_or_insert_with(realtime_now_ns).saturating_sub(arrived_ns);
                    intake.take(pool, id, now_ns.saturating_sub(waited_ns));
                    out.push(id);
                    true
                });
            }
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => {
                let since = intake.arrived_since(now_ns);
                let taken = rx.poll(pool, max, |pool, id| {
                    intake.take(pool, id, since);
                    out.push(id);
                });
                intake.polled(taken, max, now_ns);
            }
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => {
                let since = intake.arrived_since(now_ns);
                let taken = rx.poll(pool, max, |pool, id| {
                    intake.take(pool, id, since);
                    out.push(id);
                });
                intake.polled(taken, max, now_ns);
            }
        }
    }

    fn attach(&mut self, pool: &mut PacketPool) -> Result<(), String> {
        self.bind(pool).map_err(|e| e.to_string())
    }

    fn woke(&mut self) {
        self.intake.emptied_ns = None;
    }

    fn wait_fd(&self) -> Option<std::os::fd::RawFd> {
        match &self.rx {
            Receiver::Packet(rx) => Some(rx.fd()),
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => rx.fd(),
            // Virtual devices have no receive interrupts: a worker waiting for one sleeps instead.
            #[cfg(dpdk)]
            Receiver::Dpdk(_) => None,
        }
    }

    fn missed(&self) -> u64 {
        match &self.rx {
            Receiver::Packet(rx) => rx.missed(),
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => rx.ring_dropped(),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => rx.ring_dropped() + rx.oversize(),
        }
    }

    fn read_counters(&self, into: &mut NfCounters) {
        let (ring_dropped, oversize) = match &self.rx {
            Receiver::Packet(rx) => (rx.ring_dropped(), rx.oversize()),
            // The kernel drops frames too long for a buffer itself, counted with the rest.
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => (rx.ring_dropped(), 0),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => (rx.ring_dropped(), rx.oversize()),
        };
        into[..RX_COUNTERS.len()].copy_from_slice(&[self.intake.received, self.intake.bytes, ring_dropped, oversize]);
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.intake.per_flow.iter().enumerate() {
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
            Backend::AfXdp => Transmitter::Xdp(XdpTx::open(&port.name, &port.interface, port.queue, ring.descriptors)?),
            #[cfg(dpdk)]
            Backend::Dpdk => Transmitter::Dpdk(DpdkTx::open(&port.name, &port.interface)?),
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
        for &id in ids {
            if self.zero_copy() {
                pool.hand_over(id);
            } else {
                pool.free(id);
            }
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
