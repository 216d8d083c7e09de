//! Zero-copy views over packet headers: field offsets as constants, a
//! checked constructor for untrusted bytes, accessors and setters that keep
//! checksums right. NFs parse with these and never panic on bad input.

pub mod arp;
pub mod checksum;
pub mod ethernet;
pub mod five_tuple;
pub mod gtpu;
pub mod icmp;
pub mod icmpv6;
pub mod ip_protocol;
pub mod ipv4;
pub mod ipv6;
pub mod l4;
pub mod tcp_reset;
pub mod udp_tunnel;
pub mod vxlan;

use std::net::IpAddr;

/// Why a packet could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than its headers say.
    Truncated,
    /// Not the protocol expected (wrong EtherType, IP version or header length).
    Unexpected,
}

/// EtherType and offset of an Ethernet frame's payload (behind one optional VLAN tag).
///
/// This and the lookups below are inlined into every NF that parses: a
/// header returned from a call comes back through memory, and the NF,
/// no longer knowing its length, checks the bounds of every field it reads.
#[inline(always)]
fn l3_of(frame: &[u8]) -> Result<(u16, usize), Malformed> {
    let eth = ethernet::Frame::new_checked(frame)?;
    Ok((eth.payload_type(), eth.payload_offset()))
}

/// The IPv4 header of an Ethernet frame (one optional VLAN tag), checked.
#[inline(always)]
pub fn ipv4_of(frame: &[u8]) -> Result<ipv4::Header<&[u8]>, Malformed> {
    match l3_of(frame)? {
        (ethernet::ETHERTYPE_IPV4, at) => ipv4::Header::new_checked(&frame[at..]),
        _ => Err(Malformed::Unexpected),
    }
}

/// [`ipv4_of`], mutable.
#[inline(always)]
pub fn ipv4_of_mut(frame: &mut [u8]) -> Result<ipv4::Header<&mut [u8]>, Malformed> {
    match l3_of(frame)? {
        (ethernet::ETHERTYPE_IPV4, at) => ipv4::Header::new_checked(&mut frame[at..]),
        _ => Err(Malformed::Unexpected),
    }
}

/// A prefix of either family: its network (masked) and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpPrefix {
    /// "20.0.1.0/24".
    V4(u32, u8),
    /// "2001:db8::/32".
    V6(u128, u8),
}

impl IpPrefix {
    /// Parses a prefix of either family (one with a ':' is IPv6); the error names it.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.contains(':') {
            ipv6::parse_prefix(s).map(|(net, len)| Self::V6(net, len))
        } else {
            ipv4::parse_prefix(s).map(|(net, len)| Self::V4(net, len))
        }
    }
}

/// A packet's (or a tunnel's) two ends, of one family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoints {
    /// IPv4 source and destination.
    V4(u32, u32),
    /// IPv6 source and destination.
    V6(u128, u128),
}

impl Endpoints {
    /// Parses the source and destination addresses, which must be of one family.
    pub fn parse(src: &str, dst: &str) -> Result<Self, String> {
        let parse = |s: &str| s.parse::<IpAddr>().map_err(|_| format!("'{s}' is not an IPv4 or IPv6 address"));
        match (parse(src)?, parse(dst)?) {
            (IpAddr::V4(s), IpAddr::V4(d)) => Ok(Self::V4(s.into(), d.into())),
            (IpAddr::V6(s), IpAddr::V6(d)) => Ok(Self::V6(s.into(), d.into())),
            _ => Err(format!("source '{src}' and destination '{dst}' are of different IP families")),
        }
    }

    /// The way back: source and destination swapped.
    pub fn reversed(self) -> Self {
        match self {
            Self::V4(s, d) => Self::V4(d, s),
            Self::V6(s, d) => Self::V6(d, s),
        }
    }

    /// Bytes of an IP header (without options or extensions) of their family.
    pub fn ip_header_len(self) -> usize {
        match self {
            Self::V4(..) => ipv4::MIN_HEADER_LEN,
            Self::V6(..) => ipv6::HEADER_LEN,
        }
    }
}

/// An IP header of either family.
pub enum Ip<T: AsRef<[u8]>> {
    /// IPv4.
    V4(ipv4::Header<T>),
    /// IPv6.
    V6(ipv6::Header<T>),
}

/// The IP header of an Ethernet frame (one optional VLAN tag), either family, checked.
#[inline(always)]
pub fn ip_of(frame: &[u8]) -> Result<Ip<&[u8]>, Malformed> {
    match l3_of(frame)? {
        (ethernet::ETHERTYPE_IPV4, at) => ipv4::Header::new_checked(&frame[at..]).map(Ip::V4),
        (ethernet::ETHERTYPE_IPV6, at) => ipv6::Header::new_checked(&frame[at..]).map(Ip::V6),
        _ => Err(Malformed::Unexpected),
    }
}

/// [`ip_of`], mutable.
#[inline(always)]
pub fn ip_of_mut(frame: &mut [u8]) -> Result<Ip<&mut [u8]>, Malformed> {
    match l3_of(frame)? {
        (ethernet::ETHERTYPE_IPV4, at) => ipv4::Header::new_checked(&mut frame[at..]).map(Ip::V4),
        (ethernet::ETHERTYPE_IPV6, at) => ipv6::Header::new_checked(&mut frame[at..]).map(Ip::V6),
        _ => Err(Malformed::Unexpected),
    }
}

impl<T: AsRef<[u8]>> Ip<T> {
    /// IPv4's TTL or IPv6's hop limit.
    pub fn hop_limit(&self) -> u8 {
        match self {
            Ip::V4(h) => h.ttl(),
            Ip::V6(h) => h.hop_limit(),
        }
    }

    /// Differentiated services code point.
    pub fn dscp(&self) -> u8 {
        match self {
            Ip::V4(h) => h.dscp(),
            Ip::V6(h) => h.dscp(),
        }
    }

    /// The ECN field (RFC 3168: 0 not ECN-capable, 1 and 2 ECN-capable, 3 congestion experienced).
    pub fn ecn(&self) -> u8 {
        match self {
            Ip::V4(h) => h.ecn(),
            Ip::V6(h) => h.ecn(),
        }
    }

    /// The upper-layer protocol and its bytes (past IPv6's extension
    /// headers; see [`ipv6::Header::upper`] for fragments).
    pub fn upper(&self) -> Result<(u8, &[u8]), Malformed> {
        match self {
            Ip::V4(h) => Ok((h.protocol(), h.payload())),
            Ip::V6(h) => h.upper_payload(),
        }
    }

    /// Whether the UDP or TCP (IPv6: ICMPv6 too) checksum verifies over the
    /// pseudo-header (see the families' `upper_checksum_ok`).
    pub fn upper_checksum_ok(&self) -> Option<bool> {
        match self {
            Ip::V4(h) => h.upper_checksum_ok(),
            Ip::V6(h) => h.upper_checksum_ok(),
        }
    }

    /// The upper-layer protocol and the offset of its header from the IP header's start.
    pub fn upper_offset(&self) -> Result<(u8, usize), Malformed> {
        match self {
            Ip::V4(h) => Ok((h.protocol(), h.header_len())),
            Ip::V6(h) => h.upper(),
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ip<T> {
    /// Sets IPv4's TTL (checksum updated) or IPv6's hop limit.
    pub fn set_hop_limit(&mut self, hop_limit: u8) {
        match self {
            Ip::V4(h) => h.set_ttl(hop_limit),
            Ip::V6(h) => h.set_hop_limit(hop_limit),
        }
    }

    /// Computes and writes the UDP/TCP (IPv6: ICMPv6 too) checksum a
    /// sender left to the NIC (see the families' `fill_upper_checksum`).
    pub fn fill_upper_checksum(&mut self) {
        match self {
            Ip::V4(h) => h.fill_upper_checksum(),
            Ip::V6(h) => h.fill_upper_checksum(),
        }
    }

    /// Completes a partial UDP/TCP (IPv6: ICMPv6 too) checksum no one said
    /// was partial (see the families' `complete_partial_checksum`).
    pub fn complete_partial_checksum(&mut self) -> bool {
        match self {
            Ip::V4(h) => h.complete_partial_checksum(),
            Ip::V6(h) => h.complete_partial_checksum(),
        }
    }

    /// Sets the DSCP (0..=63; ECN kept; IPv4's checksum updated).
    pub fn set_dscp(&mut self, dscp: u8) {
        match self {
            Ip::V4(h) => h.set_dscp(dscp),
            Ip::V6(h) => h.set_dscp(dscp),
        }
    }

    /// Marks it congestion experienced (IPv4's checksum updated).
    pub fn set_ce(&mut self) {
        match self {
            Ip::V4(h) => h.set_ce(),
            Ip::V6(h) => h.set_ce(),
        }
    }
}
