//! The link layers a capture may be taken on, read as Ethernet: a capture
//! of Linux's "any" device (cooked headers, v1 and v2), of raw IP or of a
//! BSD loopback has its link header replaced by an Ethernet header with
//! the same payload type, so that the NFs and the analyzer see Ethernet
//! frames whatever the capture's link type.

use pcap_parser::Linktype;

/// Bytes of an Ethernet header.
const ETHERNET_HEADER: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;

/// A capture's link layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Link {
    Ethernet,
    /// Linux cooked capture (`LINUX_SLL`, 16-byte header).
    Cooked,
    /// Linux cooked capture v2 (`LINUX_SLL2`, 20-byte header).
    Cooked2,
    /// IP with no link header (`RAW`, `IPV4`, `IPV6`).
    RawIp,
    /// A BSD loopback's 4-byte address family (`NULL` in the capturing
    /// host's byte order, `LOOP` in network order).
    Loopback,
}

impl Link {
    /// The link layer of link type `t`, or why it cannot be read.
    pub(crate) fn of(t: Linktype) -> Result<Self, String> {
        Ok(match t {
            Linktype::ETHERNET => Self::Ethernet,
            Linktype::LINUX_SLL => Self::Cooked,
            Linktype::LINUX_SLL2 => Self::Cooked2,
            Linktype::RAW | Linktype::IPV4 | Linktype::IPV6 => Self::RawIp,
            Linktype::NULL | Linktype::LOOP => Self::Loopback,
            other => {
                return Err(format!(
                    "link type {} ({other}) is not one Sluice reads (Ethernet, Linux cooked v1 and v2, raw IP, BSD loopback)",
                    other.0
                ))
            }
        })
    }

    /// Bytes of its own header, which Ethernet's replaces.
    fn header_len(self) -> usize {
        match self {
            Self::Ethernet => ETHERNET_HEADER,
            Self::Cooked => 16,
            Self::Cooked2 => 20,
            Self::RawIp => 0,
            Self::Loopback => 4,
        }
    }

    /// The frame's wire length as an Ethernet frame (bytes).
    pub(crate) fn wire_len(self, wire_len: usize) -> usize {
        wire_len.saturating_sub(self.header_len()) + ETHERNET_HEADER
    }

    /// `data` as an Ethernet frame: itself, or built in `scratch` with the
    /// payload's type (and, from a cooked header, its 6-byte source
    /// address); an error names a header too short or a payload of no type.
    pub(crate) fn to_ethernet<'a>(self, data: &'a [u8], scratch: &'a mut Vec<u8>) -> Result<&'a [u8], String> {
        let header = self.header_len();
        if self != Self::Ethernet && data.len() < header {
            return Err(format!("{} bytes captured, fewer than the {header} of its {self:?} link header", data.len()));
        }
        let be16 = |at: usize| u16::from_be_bytes([data[at], data[at + 1]]);
        let (ethertype, source) = match self {
            Self::Ethernet => return Ok(data),
            Self::Cooked => (be16(14), (be16(4) == 6).then(|| &data[6..12])),
            Self::Cooked2 => (be16(0), (data[11] == 6).then(|| &data[12..18])),
            Self::RawIp => (ip_ethertype(data.first().map(|b| b >> 4))?, None),
            Self::Loopback => {
                let family = [u32::from_le_bytes(data[..4].try_into().expect("4 bytes")), u32::from_be_bytes(data[..4].try_into().expect("4 bytes"))];
                // AF_INET is 2 everywhere; AF_INET6 is 10 on Linux, 24, 28 or 30 on the BSDs.
                match family.iter().find(|&&f| matches!(f, 2 | 10 | 24 | 28 | 30)) {
                    Some(2) => (ETHERTYPE_IPV4, None),
                    Some(_) => (ETHERTYPE_IPV6, None),
                    None => return Err(format!("loopback address family {:02x?} is neither IPv4 nor IPv6", &data[..4])),
                }
            }
        };
        scratch.clear();
        scratch.extend_from_slice(&[0; 6]);
        scratch.extend_from_slice(source.unwrap_or(&[0; 6]));
        scratch.extend_from_slice(&ethertype.to_be_bytes());
        scratch.extend_from_slice(&data[header..]);
        Ok(scratch)
    }
}

/// The ethertype of an IP packet of version `version`.
fn ip_ethertype(version: Option<u8>) -> Result<u16, String> {
    match version {
        Some(4) => Ok(ETHERTYPE_IPV4),
        Some(6) => Ok(ETHERTYPE_IPV6),
        Some(v) => Err(format!("raw IP of version {v}")),
        None => Err("an empty raw IP packet".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UDP/IPv4 packet's first bytes (version 4, IHL 5).
    const IPV4: [u8; 4] = [0x45, 0, 0, 28];

    fn ethernet(link: Link, data: &[u8]) -> Result<Vec<u8>, String> {
        let mut scratch = Vec::new();
        link.to_ethernet(data, &mut scratch).map(<[u8]>::to_vec)
    }

    #[test]
    fn each_link_header_becomes_ethernet_with_the_payload_kept() {
        let mac = [2, 0, 0, 0, 0, 7];
        // Cooked v1: packet type, ARPHRD, address length 6, address (8), protocol.
        let mut cooked = vec![0, 0, 0, 1, 0, 6];
        cooked.extend_from_slice(&mac);
        cooked.extend_from_slice(&[0, 0, 0x08, 0x00]);
        cooked.extend_from_slice(&IPV4);
        // Cooked v2: protocol, reserved, interface, ARPHRD, packet type, address length 6, address (8).
        let mut cooked2 = vec![0x86, 0xdd, 0, 0, 0, 0, 0, 3, 0, 1, 0, 6];
        cooked2.extend_from_slice(&mac);
        cooked2.extend_from_slice(&[0, 0, 0x60, 0, 0, 0]);
        let frames = [
            (Link::Cooked, cooked.as_slice(), 0x0800, mac, &IPV4[..]),
            (Link::Cooked2, cooked2.as_slice(), 0x86dd, mac, &[0x60, 0, 0, 0][..]),
            (Link::RawIp, &IPV4[..], 0x0800, [0; 6], &IPV4[..]),
            (Link::Loopback, &[2, 0, 0, 0, 0x45, 0, 0, 28][..], 0x0800, [0; 6], &IPV4[..]),
            (Link::Loopback, &[0, 0, 0, 30, 0x60, 0][..], 0x86dd, [0; 6], &[0x60, 0][..]),
        ];
        for (link, data, ethertype, source, payload) in frames {
            let frame = ethernet(link, data).unwrap();
            assert_eq!((&frame[6..12], u16::from_be_bytes([frame[12], frame[13]]), &frame[14..]), (&source[..], ethertype, payload), "{link:?}");
            assert_eq!(link.wire_len(data.len()), frame.len(), "{link:?}");
        }
        assert_eq!(ethernet(Link::Ethernet, &[1, 2, 3]).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn what_cannot_be_read_is_named() {
        assert!(Link::of(Linktype(119)).unwrap_err().starts_with("link type 119 ("), "{}", Link::of(Linktype(119)).unwrap_err());
        assert_eq!(ethernet(Link::Cooked, &[0; 10]).unwrap_err(), "10 bytes captured, fewer than the 16 of its Cooked link header");
        assert_eq!(ethernet(Link::RawIp, &[0x50]).unwrap_err(), "raw IP of version 5");
        assert!(ethernet(Link::Loopback, &[7, 0, 0, 0, 0x45]).unwrap_err().contains("neither IPv4 nor IPv6"));
    }
}
