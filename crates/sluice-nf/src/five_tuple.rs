//! The 5-tuple that names a flow: the key of ACL rules, flow tables and
//! the Reframer.

use sluice_core::wire::ipv4::Header;
use sluice_core::wire::{ipv4_of, l4, Malformed};

/// Source and destination address, protocol, source and destination port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Protocol.
    pub proto: u8,
    /// Source port (0 when the protocol has none).
    pub sport: u16,
    /// Destination port (0 when the protocol has none).
    pub dport: u16,
}

impl FiveTuple {
    /// The 5-tuple of an Ethernet frame, if it is IPv4 with readable ports.
    #[inline]
    pub fn of(frame: &[u8]) -> Option<Self> {
        Self::of_header(&ipv4_of(frame).ok()?)
    }

    /// The 5-tuple of an IPv4 packet, if its ports (UDP, TCP) are readable.
    #[inline]
    pub fn of_header<T: AsRef<[u8]>>(ip: &Header<T>) -> Option<Self> {
        let (sport, dport) = match l4::ports(ip.protocol(), ip.payload()) {
            Ok(p) => p,
            Err(Malformed::Unexpected) => (0, 0),
            Err(_) => return None,
        };
        Some(Self { src: ip.src(), dst: ip.dst(), proto: ip.protocol(), sport, dport })
    }
}
