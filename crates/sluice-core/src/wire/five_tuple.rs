//! The 5-tuple that names a flow: the key of ACL rules, flow tables and
//! the Reframer, for IPv4 and IPv6 alike.

use super::{ip_of, l4, Ip, Malformed};

/// Source and destination address, protocol, source and destination port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    /// Source address (an IPv4 one in the low 32 bits).
    pub src: u128,
    /// Destination address (an IPv4 one in the low 32 bits).
    pub dst: u128,
    /// Protocol (IPv6: the upper-layer one, past the extension headers).
    pub proto: u8,
    /// Source port (0 when the protocol has none).
    pub sport: u16,
    /// Destination port (0 when the protocol has none).
    pub dport: u16,
    /// Whether the addresses are IPv6 ones.
    pub v6: bool,
}

impl FiveTuple {
    /// An IPv4 5-tuple.
    pub const fn v4(src: u32, dst: u32, proto: u8, sport: u16, dport: u16) -> Self {
        Self { src: src as u128, dst: dst as u128, proto, sport, dport, v6: false }
    }

    /// The 5-tuple of an Ethernet frame, if it is IP with readable ports.
    #[inline]
    pub fn of(frame: &[u8]) -> Option<Self> {
        Self::of_ip(&ip_of(frame).ok()?)
    }

    /// The 5-tuple of an IP packet, if its ports (UDP, TCP) are readable
    /// and, for IPv6, its extension headers parse.
    #[inline]
    pub fn of_ip<T: AsRef<[u8]>>(ip: &Ip<T>) -> Option<Self> {
        let (proto, upper) = ip.upper().ok()?;
        Self::of_upper(ip, proto, upper)
    }

    /// The 5-tuple of `ip` whose upper layer, as [`Ip::upper`] gave it, is
    /// `proto` with bytes `upper` (for a caller that reads more of them).
    #[inline]
    pub fn of_upper<T: AsRef<[u8]>>(ip: &Ip<T>, proto: u8, upper: &[u8]) -> Option<Self> {
        let (sport, dport) = match l4::ports(proto, upper) {
            Ok(p) => p,
            Err(Malformed::Unexpected) => (0, 0),
            Err(_) => return None,
        };
        Some(match ip {
            Ip::V4(h) => Self::v4(h.src(), h.dst(), proto, sport, dport),
            Ip::V6(h) => Self { src: h.src(), dst: h.dst(), proto, sport, dport, v6: true },
        })
    }

    /// The hash of the tuple under `seed` (routers in a row given
    /// different seeds split a flow set differently, not all alike): each
    /// word multiplied in, one full mix at the end.
    #[inline]
    pub fn hash(&self, seed: u64) -> u64 {
        let ports = u64::from(self.proto) << 32 | u64::from(self.sport) << 16 | u64::from(self.dport);
        let words = [self.src as u64, (self.src >> 64) as u64, self.dst as u64, (self.dst >> 64) as u64, ports];
        mix(words.iter().fold(seed, |h, &word| (h ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(31)))
    }

    /// The IPv4 source and destination, if the tuple is IPv4's.
    #[inline]
    pub fn v4_addresses(&self) -> Option<(u32, u32)> {
        (!self.v6).then_some((self.src as u32, self.dst as u32))
    }
}

/// SplitMix64's finaliser: every bit of `x` moves every bit of the result.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
