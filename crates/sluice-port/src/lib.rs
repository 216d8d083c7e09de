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
mod interface;
mod rx;
pub mod send;
pub mod segment;
#[cfg(any(af_xdp, dpdk))]
mod shared;
mod tx;
pub mod vnet;
#[cfg(af_xdp)]
mod xsk;

pub use af_packet::RingConfig;
pub use error::{Error, Result};
pub use interface::device;
pub use rx::{RxPort, RX_COUNTERS};
pub use send::{send, Sent};
pub use tx::{TxPort, TX_COUNTERS};


/// Bytes AF_XDP keeps in front of each received frame in its buffer (`XDP_PACKET_HEADROOM`).
pub const XDP_HEADROOM: u16 = 256;

/// How a port reaches its interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Backend {
    /// A packet socket with memory-mapped rings.
    AfPacket,
    /// An XDP socket on one queue, over the packet pool.
    AfXdp,
    /// A DPDK ethdev port (the "interface" is its device, with arguments).
    Dpdk,
}

impl Backend {
    /// Every backend, whether this build has it or not.
    pub const ALL: [Self; 3] = [Self::AfPacket, Self::AfXdp, Self::Dpdk];

    /// Its name before the colon of a port name (`af_xdp` of `af_xdp:veth1`).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::AfPacket => "af_packet",
            Self::AfXdp => "af_xdp",
            Self::Dpdk => "dpdk",
        }
    }

    /// Whether this build has it: AF_XDP and DPDK only where their
    /// libraries were found when it was built.
    pub fn built(self) -> bool {
        match self {
            Self::AfPacket => true,
            Self::AfXdp => cfg!(af_xdp),
            Self::Dpdk => cfg!(dpdk),
        }
    }

    /// What a build without it lacks, and how to get it.
    fn missing(self) -> &'static str {
        match self {
            Self::AfPacket => "",
            Self::AfXdp => "this build has no AF_XDP: libxdp and libbpf were not found when it was built (apt-get install libxdp-dev libbpf-dev, then rebuild)",
            Self::Dpdk => "this build has no DPDK: libdpdk was not found when it was built (apt-get install libdpdk-dev, then rebuild)",
        }
    }
}

/// The backends this build has, as port names spell them.
pub fn built() -> Vec<&'static str> {
    Backend::ALL.into_iter().filter(|b| b.built()).map(Backend::prefix).collect()
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
    /// The interface's queue (AF_XDP, DPDK), where the name gives one (AF_XDP);
    /// without one, queue 0, unless several workers name the interface and a
    /// pipeline spreads them over its queues ([`Self::on_queue`]).
    pub queue: Option<u32>,
}

impl PortName {
    /// Parses `name`; the backend must be one built here.
    pub fn parse(name: &str) -> Result<Self> {
        let bad = |reason: String| Error::Name { port: name.into(), reason };
        let (prefix, interface) = name.split_once(':').ok_or_else(|| bad("expected BACKEND:INTERFACE, e.g. af_packet:veth1".into()))?;
        let names = Backend::ALL.map(Backend::prefix).join(", ");
        let backend = Backend::ALL.into_iter().find(|b| b.prefix() == prefix).ok_or_else(|| bad(format!("unknown backend '{prefix}' ({names})")))?;
        if !backend.built() {
            return Err(bad(backend.missing().into()));
        }
        let (interface, queue) = match backend {
            Backend::AfPacket => (interface, None),
            Backend::AfXdp => match interface.split_once('@') {
                None => (interface, None),
                Some((iface, q)) => (iface, Some(q.parse().map_err(|_| bad(format!("queue '{q}' is not a number")))?)),
            },
            Backend::Dpdk if interface.is_empty() => return Err(bad("expected dpdk:DEVICE, e.g. dpdk:net_ring0".into())),
            Backend::Dpdk => return Ok(Self { name: name.into(), backend, interface: interface.into(), queue: None }),
        };
        if interface.is_empty() || interface.len() >= libc::IFNAMSIZ {
            return Err(bad(format!("interface name '{interface}' must have 1 to {} characters", libc::IFNAMSIZ - 1)));
        }
        Ok(Self { name: name.into(), backend, interface: interface.into(), queue })
    }

    /// The queue an AF_XDP or DPDK port uses: the one named (or spread), else 0.
    pub fn bound_queue(&self) -> u32 {
        self.queue.unwrap_or(0)
    }

    /// This AF_XDP or DPDK port on queue `queue` of its interface, named so.
    pub fn on_queue(&self, queue: u32) -> Self {
        Self { name: format!("{}:{}@{queue}", self.backend.prefix(), self.interface), queue: Some(queue), ..self.clone() }
    }

    /// The longest IP packet (bytes, an MTU) this port carries in one
    /// frame: AF_PACKET any a large buffer holds (frames longer than a ring
    /// slot take the socket's queue); AF_XDP what one pool buffer holds
    /// past the XDP headroom (no multi-buffer frames); DPDK one mbuf's data room.
    pub fn largest_mtu(&self) -> usize {
        // An Ethernet header and a VLAN tag.
        const L2: usize = 18;
        match self.backend {
            Backend::AfPacket => sluice_core::packet::MAX_LARGE_LEN - L2,
            Backend::AfXdp => sluice_core::packet::BUF_SIZE - usize::from(XDP_HEADROOM) - L2,
            Backend::Dpdk => 2048 - L2,
        }
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

/// DPDK's own forwarding loop between two DPDK ports, bursts of up to
/// `burst` frames passed on as mbufs with no copies into Sluice's pool,
/// for `seconds`: the ceiling Sluice's DPDK ports are measured against.
/// Frames forwarded, frames the transmit queue refused, and how long the
/// loop ran (s).
#[cfg_attr(not(dpdk), allow(unused_variables))]
pub fn dpdk_forward_bare(rx: &PortName, tx: &PortName, burst: usize, seconds: f64) -> Result<(u64, u64, f64)> {
    if rx.backend != Backend::Dpdk || tx.backend != Backend::Dpdk {
        return Err(Error::Name { port: rx.name.clone(), reason: "a bare loop without Sluice's copies runs between DPDK ports only".into() });
    }
    #[cfg(dpdk)]
    return dpdk::forward_bare((&rx.name, &rx.interface), (&tx.name, &tx.interface), burst, seconds);
    #[cfg(not(dpdk))]
    unreachable!("PortName::parse refuses dpdk in a build without it")
}
