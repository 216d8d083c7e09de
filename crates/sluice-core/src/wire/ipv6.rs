//! IPv6 headers and their extension-header chain (RFC 8200).

use std::net::Ipv6Addr;

use super::checksum;
use super::Malformed;

/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 40;
/// Next-header value of "nothing follows".
pub const NO_NEXT_HEADER: u8 = 59;
/// Next-header value of the fragment header (also what [`Header::upper`]
/// reports for a fragment that does not hold the upper-layer header).
pub const FRAGMENT: u8 = 44;
/// Bytes of the fragment header.
pub const FRAGMENT_HEADER_LEN: usize = 8;
/// Most extension headers [`Header::upper`] walks before it calls the chain
/// malformed (RFC 8200 §4.1 allows each kind once, destination options twice).
pub const MAX_EXTENSIONS: usize = 8;

const HOP_BY_HOP: u8 = 0;
const ROUTING: u8 = 43;
const DESTINATION_OPTIONS: u8 = 60;
const AUTHENTICATION: u8 = 51;

const VER_TC_FLOW: usize = 0;
const PAYLOAD_LEN: usize = 4;
const NEXT_HEADER: usize = 6;
const HOP_LIMIT: usize = 7;
const SRC: usize = 8;
const DST: usize = 24;

/// A view of an IPv6 header (and what follows it).
pub struct Header<T: AsRef<[u8]>>(T);

/// A fragment header, and where it sits (offsets from the IPv6 header's start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// Where it starts: the headers before it are the unfragmentable part.
    pub at: usize,
    /// The next-header field that names it (6, the fixed header's, or an extension header's first byte).
    pub names_at: usize,
    /// The header its fragmentable part starts with.
    pub next_header: u8,
    /// Where its data lies in the original packet's fragmentable part (bytes, a multiple of 8).
    pub offset: usize,
    /// Whether more fragments follow (M).
    pub more: bool,
    /// The original packet's identification.
    pub ident: u32,
}

impl Fragment {
    /// Writes a fragment header into the first [`FRAGMENT_HEADER_LEN`] bytes of `out`.
    pub fn emit(next_header: u8, offset: usize, more: bool, ident: u32, out: &mut [u8]) {
        out[0] = next_header;
        out[1] = 0;
        out[2..4].copy_from_slice(&((offset as u16 & !7) | u16::from(more)).to_be_bytes());
        out[4..8].copy_from_slice(&ident.to_be_bytes());
    }
}

impl<T: AsRef<[u8]>> Header<T> {
    /// Checks version 6 and that the bytes hold the fixed header and the
    /// payload length it states (bytes beyond, Ethernet padding, are not
    /// the packet's).
    #[inline(always)]
    pub fn new_checked(bytes: T) -> Result<Self, Malformed> {
        let b = bytes.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Malformed::Truncated);
        }
        if b[VER_TC_FLOW] >> 4 != 6 {
            return Err(Malformed::Unexpected);
        }
        let h = Self(bytes);
        if HEADER_LEN + h.payload_len() as usize > h.b().len() {
            return Err(Malformed::Truncated);
        }
        Ok(h)
    }

    fn b(&self) -> &[u8] {
        self.0.as_ref()
    }

    fn word(&self, at: usize) -> u32 {
        u32::from_be_bytes(self.b()[at..at + 4].try_into().expect("checked length"))
    }

    /// Traffic class (DSCP and ECN).
    pub fn traffic_class(&self) -> u8 {
        (self.word(VER_TC_FLOW) >> 20) as u8
    }

    /// The ECN field (the traffic class's lower two bits, as IPv4's).
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 0b11
    }

    /// Differentiated services code point (the traffic class's upper six bits).
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.word(VER_TC_FLOW) & 0xf_ffff
    }

    /// Payload length field: bytes after the fixed header.
    pub fn payload_len(&self) -> u16 {
        u16::from_be_bytes([self.b()[PAYLOAD_LEN], self.b()[PAYLOAD_LEN + 1]])
    }

    /// Next header right after the fixed one.
    pub fn next_header(&self) -> u8 {
        self.b()[NEXT_HEADER]
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.b()[HOP_LIMIT]
    }

    /// Source address, as a big-endian integer.
    pub fn src(&self) -> u128 {
        u128::from_be_bytes(self.b()[SRC..SRC + 16].try_into().expect("checked length"))
    }

    /// Destination address, as a big-endian integer.
    pub fn dst(&self) -> u128 {
        u128::from_be_bytes(self.b()[DST..DST + 16].try_into().expect("checked length"))
    }

    /// The packet: fixed header and payload, without link-layer padding.
    fn packet(&self) -> &[u8] {
        &self.b()[..HEADER_LEN + self.payload_len() as usize]
    }

    /// The upper-layer protocol and the offset of its header from the
    /// start of this one, past the extension headers (hop-by-hop, routing,
    /// fragment, destination options, authentication). A fragment other
    /// than the first holds no upper-layer header: it reports
    /// ([`FRAGMENT`], offset of its data). ESP and unknown next headers
    /// end the walk and are reported as the protocol. A chain longer than
    /// [`MAX_EXTENSIONS`], or one that runs past the packet, is malformed.
    pub fn upper(&self) -> Result<(u8, usize), Malformed> {
        self.upper_named().map(|(protocol, at, _)| (protocol, at))
    }

    /// [`Self::upper`], and where the next-header field that names it
    /// lies (from this header's start: 6, the fixed header's, or an
    /// extension header's first byte), which an ICMPv6 parameter problem
    /// about it points at (RFC 4443 §3.4).
    pub fn upper_named(&self) -> Result<(u8, usize, usize), Malformed> {
        let packet = self.packet();
        let later_fragment = |next: u8, at: usize| next == FRAGMENT && u16::from_be_bytes([packet[at + 2], packet[at + 3]]) >> 3 != 0;
        self.walk_chain(|next, at, names_at, len| later_fragment(next, at).then_some((FRAGMENT, at + len, names_at)), |next, at, names_at| (next, at, names_at))
    }

    /// The fragment header, where the packet is a fragment (RFC 8200 §4.5).
    pub fn fragment(&self) -> Result<Option<Fragment>, Malformed> {
        let packet = self.packet();
        let fragment = |at: usize, names_at: usize| {
            let word = u16::from_be_bytes([packet[at + 2], packet[at + 3]]);
            let ident = u32::from_be_bytes(packet[at + 4..at + 8].try_into().expect("8 bytes checked"));
            Fragment { at, names_at, next_header: packet[at], offset: usize::from(word & !7), more: word & 1 != 0, ident }
        };
        self.walk_chain(|next, at, names_at, _| (next == FRAGMENT).then(|| Some(fragment(at, names_at))), |_, _, _| None)
    }

    /// Walks the extension headers (see [`Self::upper`]): for each,
    /// `extension(next, at, names_at, len)` (its type, where it starts,
    /// the next-header field that named it, its bytes) until that gives
    /// an answer; at the first header that is none, `past(next, at,
    /// names_at)`.
    #[inline(always)]
    fn walk_chain<R>(&self, mut extension: impl FnMut(u8, usize, usize, usize) -> Option<R>, past: impl FnOnce(u8, usize, usize) -> R) -> Result<R, Malformed> {
        let packet = self.packet();
        let (mut next, mut at, mut names_at) = (self.next_header(), HEADER_LEN, NEXT_HEADER);
        for _ in 0..=MAX_EXTENSIONS {
            let Some(len) = self.extension_len(next, at)? else { return Ok(past(next, at, names_at)) };
            if let Some(answer) = extension(next, at, names_at, len) {
                return Ok(answer);
            }
            (next, names_at, at) = (packet[at], at, at + len);
        }
        Err(Malformed::Unexpected)
    }

    /// Bytes of the extension header `next` at `at`, checked to lie in the
    /// packet; `None` where `next` is no extension header.
    fn extension_len(&self, next: u8, at: usize) -> Result<Option<usize>, Malformed> {
        let packet = self.packet();
        let len = match next {
            HOP_BY_HOP | ROUTING | DESTINATION_OPTIONS => 8 + 8 * *packet.get(at + 1).ok_or(Malformed::Truncated)? as usize,
            AUTHENTICATION => 8 + 4 * *packet.get(at + 1).ok_or(Malformed::Truncated)? as usize,
            FRAGMENT => FRAGMENT_HEADER_LEN,
            _ => return Ok(None),
        };
        if at + len > packet.len() {
            return Err(Malformed::Truncated);
        }
        Ok(Some(len))
    }

    /// The upper-layer protocol and its bytes (header and data), see [`Header::upper`].
    pub fn upper_payload(&self) -> Result<(u8, &[u8]), Malformed> {
        let (protocol, at) = self.upper()?;
        Ok((protocol, &self.packet()[at..]))
    }

    /// One's-complement sum of the pseudo-header (RFC 8200 §8.1) of an
    /// upper-layer packet of `len` bytes and `protocol`.
    fn pseudo_header_sum(&self, protocol: u8, len: usize) -> u16 {
        let addresses = checksum::sum(&self.b()[SRC..DST + 16]);
        let mut tail = [0u8; 8];
        tail[..4].copy_from_slice(&(len as u32).to_be_bytes());
        tail[7] = protocol;
        checksum::add(addresses, checksum::sum(&tail))
    }

    /// Whether the upper layer's checksum (UDP, TCP, ICMPv6) verifies over
    /// the pseudo-header. `None` for other protocols; a UDP checksum of zero
    /// is invalid over IPv6 (RFC 8200 §8.1).
    pub fn upper_checksum_ok(&self) -> Option<bool> {
        let (protocol, data) = self.upper_payload().ok()?;
        let off = checksum_offset(protocol)?;
        if data.len() < off + 2 {
            return Some(false);
        }
        let sum = checksum::add(self.pseudo_header_sum(protocol, data.len()), checksum::sum(data));
        Some(sum == 0xffff && !(protocol == super::ip_protocol::UDP && data[off..off + 2] == [0, 0]))
    }
}

/// Offset of the checksum within an upper-layer header carried over IPv6
/// (ICMPv6's covers a pseudo-header too, unlike ICMP's).
fn checksum_offset(protocol: u8) -> Option<usize> {
    match protocol {
        super::ip_protocol::ICMPV6 => Some(2),
        p => super::l4::checksum_offset(p),
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    fn m(&mut self) -> &mut [u8] {
        self.0.as_mut()
    }

    /// Sets the hop limit (IPv6 has no header checksum to update).
    pub fn set_hop_limit(&mut self, hop_limit: u8) {
        self.m()[HOP_LIMIT] = hop_limit;
    }

    /// Sets both addresses; an upper layer's checksum over them is the
    /// caller's (swapping them, as an answer does, leaves it right).
    pub fn set_addresses(&mut self, src: u128, dst: u128) {
        self.m()[SRC..SRC + 16].copy_from_slice(&src.to_be_bytes());
        self.m()[DST..DST + 16].copy_from_slice(&dst.to_be_bytes());
    }

    /// The upper-layer protocol and its bytes, mutable (see [`Header::upper`]).
    pub fn upper_payload_mut(&mut self) -> Result<(u8, &mut [u8]), Malformed> {
        let (protocol, at) = self.upper()?;
        let end = HEADER_LEN + self.payload_len() as usize;
        Ok((protocol, &mut self.m()[at..end]))
    }

    /// Sets the DSCP (0..=63; the ECN bits kept).
    pub fn set_dscp(&mut self, dscp: u8) {
        debug_assert!(dscp < 64, "DSCP {dscp} has more than six bits");
        let word = self.word(VER_TC_FLOW) & !(0x3f << 22) | (dscp as u32) << 22;
        self.m()[VER_TC_FLOW..VER_TC_FLOW + 4].copy_from_slice(&word.to_be_bytes());
    }

    /// Marks it congestion experienced (ECN field 3).
    pub fn set_ce(&mut self) {
        let word = self.word(VER_TC_FLOW) | 0b11 << 20;
        self.m()[VER_TC_FLOW..VER_TC_FLOW + 4].copy_from_slice(&word.to_be_bytes());
    }

    /// Computes and writes the upper layer's checksum (UDP, TCP, ICMPv6)
    /// over the pseudo-header; a computed zero is sent as 0xffff for UDP.
    /// Does nothing for other protocols or a chain that does not parse.
    pub fn fill_upper_checksum(&mut self) {
        if let Some(u) = self.upper_checksum() {
            u.fill(self.m());
        }
    }

    /// Completes the upper layer's checksum if it is partial (see
    /// [`super::ipv4::Header::complete_partial_checksum`]); returns whether it did.
    pub fn complete_partial_checksum(&mut self) -> bool {
        self.upper_checksum().is_some_and(|u| u.complete_if_partial(self.m()))
    }

    /// Where the upper layer's checksum is and its pseudo-header's sum.
    fn upper_checksum(&self) -> Option<super::l4::UpperChecksum> {
        let (protocol, start) = self.upper().ok()?;
        let offset = checksum_offset(protocol)?;
        let end = HEADER_LEN + self.payload_len() as usize;
        Some(super::l4::UpperChecksum { protocol, start, end, offset, pseudo: self.pseudo_header_sum(protocol, end - start) })
    }
}

/// An IPv6 header without extension headers, to be written (smoltcp's `Repr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// Source address.
    pub src: u128,
    /// Destination address.
    pub dst: u128,
    /// The payload's protocol (see [`super::ip_protocol`]).
    pub next_header: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Bytes after the fixed header.
    pub payload_len: u16,
}

impl Repr {
    /// Writes the fixed header into the first [`HEADER_LEN`] bytes of `out`
    /// (traffic class and flow label 0).
    pub fn emit(&self, out: &mut [u8]) {
        let h = &mut out[..HEADER_LEN];
        h[VER_TC_FLOW..VER_TC_FLOW + 4].copy_from_slice(&(6u32 << 28).to_be_bytes());
        h[PAYLOAD_LEN..PAYLOAD_LEN + 2].copy_from_slice(&self.payload_len.to_be_bytes());
        h[NEXT_HEADER] = self.next_header;
        h[HOP_LIMIT] = self.hop_limit;
        h[SRC..SRC + 16].copy_from_slice(&self.src.to_be_bytes());
        h[DST..DST + 16].copy_from_slice(&self.dst.to_be_bytes());
    }
}

/// Sets the fixed header's payload length in `ip`, the start of an IPv6
/// packet being cut or put together (whose old payload length its bytes
/// may no longer hold, so no [`Header`] views it).
pub fn set_payload_len(ip: &mut [u8], payload_len: u16) {
    ip[PAYLOAD_LEN..PAYLOAD_LEN + 2].copy_from_slice(&payload_len.to_be_bytes());
}

/// Sets the fixed header's next header in `ip` (see [`set_payload_len`]).
pub fn set_next_header(ip: &mut [u8], next_header: u8) {
    ip[NEXT_HEADER] = next_header;
}

/// Whether `address` is one a router sends no ICMPv6 error to (RFC 4443
/// §2.4 e): unspecified, loopback or multicast.
pub fn is_unroutable_source(address: u128) -> bool {
    address == 0 || address == 1 || address >> 120 == 0xff
}

/// Parses "2001:db8::/32" into (network as integer, length).
pub fn parse_prefix(s: &str) -> Result<(u128, u8), String> {
    let bad = || format!("'{s}' is not an IPv6 prefix like 2001:db8::/32");
    let (addr, len) = s.split_once('/').ok_or_else(bad)?;
    let addr: Ipv6Addr = addr.parse().map_err(|_| bad())?;
    let len: u8 = len.parse().ok().filter(|l| *l <= 128).ok_or_else(bad)?;
    Ok((u128::from(addr) & mask(len), len))
}

/// The netmask of a prefix length (0..=128).
pub fn mask(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{IpNumber, Ipv6Extensions, Ipv6Header, PacketBuilder, UdpHeader};

    const SRC_ADDR: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const DST_ADDR: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    /// An IPv6/UDP packet (no link layer) with `payload` bytes, checksum by etherparse.
    fn udp(payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        PacketBuilder::ipv6(SRC_ADDR, DST_ADDR, 64).udp(4000, 5000).write(&mut out, payload).expect("a packet");
        out
    }

    #[test]
    fn reads_what_etherparse_wrote_and_agrees_on_the_udp_checksum() {
        let bytes = udp(b"hello, ipv6");
        let h = Header::new_checked(&bytes[..]).expect("a header");
        let (reference, _) = Ipv6Header::from_slice(&bytes).expect("etherparse reads it");
        assert_eq!((h.src(), h.dst()), (u128::from_be_bytes(SRC_ADDR), u128::from_be_bytes(DST_ADDR)));
        assert_eq!((h.hop_limit(), h.next_header(), h.payload_len()), (64, 17, reference.payload_length));
        assert_eq!(h.upper(), Ok((17, HEADER_LEN)));
        assert_eq!(h.upper_checksum_ok(), Some(true));
        let mut copy = bytes.clone();
        copy[HEADER_LEN + 6..HEADER_LEN + 8].copy_from_slice(&[0x12, 0x34]);
        let mut h = Header::new_checked(&mut copy[..]).expect("a header");
        assert_eq!(h.upper_checksum_ok(), Some(false));
        h.fill_upper_checksum();
        assert_eq!(copy, bytes);
    }

    #[test]
    fn a_zero_udp_checksum_is_invalid_over_ipv6() {
        let mut bytes = udp(b"x");
        bytes[HEADER_LEN + 6..HEADER_LEN + 8].fill(0);
        assert_eq!(Header::new_checked(&bytes[..]).expect("a header").upper_checksum_ok(), Some(false));
    }

    #[test]
    fn version_and_lengths_are_checked() {
        let bytes = udp(b"abc");
        assert_eq!(Header::new_checked(&bytes[..39]).err(), Some(Malformed::Truncated));
        assert_eq!(Header::new_checked(&bytes[..bytes.len() - 1]).err(), Some(Malformed::Truncated));
        let mut v4 = bytes.clone();
        v4[0] = 0x45;
        assert_eq!(Header::new_checked(&v4[..]).err(), Some(Malformed::Unexpected));
        let mut padded = bytes.clone();
        padded.extend([0xee; 10]);
        let h = Header::new_checked(&padded[..]).expect("padding is allowed");
        assert_eq!(h.upper_payload().expect("a chain").1.len(), bytes.len() - HEADER_LEN, "padding is not payload");
    }

    #[test]
    fn hop_limit_and_dscp_are_set_in_place() {
        let mut bytes = udp(b"abc");
        bytes[1] |= 0x30; // ECN bits and part of the flow label stay
        let (tc, flow) = {
            let h = Header::new_checked(&bytes[..]).expect("a header");
            (h.traffic_class(), h.flow_label())
        };
        let mut h = Header::new_checked(&mut bytes[..]).expect("a header");
        h.set_hop_limit(7);
        h.set_dscp(46);
        assert_eq!((h.hop_limit(), h.dscp(), h.traffic_class() & 3, h.flow_label()), (7, 46, tc & 3, flow));
    }

    #[test]
    fn prefixes_parse_masked_and_bad_ones_are_named() {
        assert_eq!(parse_prefix("2001:db8:ff::1/32"), Ok((0x2001_0db8u128 << 96, 32)));
        assert_eq!(parse_prefix("::/0"), Ok((0, 0)));
        for bad in ["2001:db8::/129", "2001:db8::", "10.0.0.0/8", "2001:zz::/32"] {
            assert!(parse_prefix(bad).unwrap_err().contains(bad), "{bad}");
        }
    }

    /// Extension headers as etherparse writes them, each kind in turn and
    /// all together: the walk lands where etherparse says the payload is.
    #[test]
    fn the_extension_walk_agrees_with_etherparse() {
        let chains: [&[u8]; 6] = [&[0], &[43], &[44], &[60], &[0, 43, 60, 44], &[0, 60, 43, 51, 44, 60]];
        for chain in chains {
            let bytes = with_extensions(chain, 0);
            let (_, rest) = Ipv6Header::from_slice(&bytes).expect("etherparse reads the header");
            let (ext, protocol, payload) = Ipv6Extensions::from_slice(IpNumber(chain[0]), rest).expect("etherparse reads the chain");
            let h = Header::new_checked(&bytes[..]).expect("a header");
            let (ours, at) = h.upper().expect("a chain");
            assert_eq!((ours, bytes.len() - at), (protocol.0, payload.len()), "{chain:?} {ext:?}");
            let (udp, data) = UdpHeader::from_slice(payload).expect("etherparse reads the UDP header");
            assert_eq!(udp.calc_checksum_ipv6_raw(SRC_ADDR, DST_ADDR, data).ok(), Some(udp.checksum), "{chain:?}");
            assert_eq!(h.upper_checksum_ok(), Some(true), "{chain:?}");
        }
    }

    #[test]
    fn a_later_fragment_has_no_upper_header_and_bad_chains_are_malformed() {
        let later = with_extensions(&[44], 185);
        assert_eq!(Header::new_checked(&later[..]).expect("a header").upper(), Ok((FRAGMENT, HEADER_LEN + 8)));
        let long = with_extensions(&[60; MAX_EXTENSIONS + 1], 0);
        assert_eq!(Header::new_checked(&long[..]).expect("a header").upper(), Err(Malformed::Unexpected));
        let mut overlong = with_extensions(&[0], 0);
        overlong[HEADER_LEN + 1] = 200; // hop-by-hop says 1608 bytes
        assert_eq!(Header::new_checked(&overlong[..]).expect("a header").upper(), Err(Malformed::Truncated));
    }

    #[test]
    fn the_fragment_header_is_found_behind_the_headers_before_it_and_reads_back_as_written() {
        let first = with_extensions(&[0, 43, 44], 0);
        let h = Header::new_checked(&first[..]).expect("a header");
        let f = h.fragment().expect("a chain").expect("a fragment");
        // Hop-by-hop and routing, 16 bytes each, before it; the routing header names it.
        assert_eq!((f.at, f.names_at, f.next_header, f.offset, f.more, f.ident), (HEADER_LEN + 32, HEADER_LEN + 16, 17, 0, false, 1));
        let later = with_extensions(&[44], 185);
        let f = Header::new_checked(&later[..]).expect("a header").fragment().expect("a chain").expect("a fragment");
        assert_eq!((f.at, f.names_at, f.offset), (HEADER_LEN, NEXT_HEADER, 185 * 8));
        assert_eq!(Header::new_checked(&with_extensions(&[0, 60], 0)[..]).expect("a header").fragment(), Ok(None));
        let mut written = [0u8; FRAGMENT_HEADER_LEN];
        Fragment::emit(58, 1480, true, 0xdead_beef, &mut written);
        let mut bytes = later.clone();
        bytes[HEADER_LEN..HEADER_LEN + FRAGMENT_HEADER_LEN].copy_from_slice(&written);
        let f = Header::new_checked(&bytes[..]).expect("a header").fragment().expect("a chain").expect("a fragment");
        assert_eq!((f.next_header, f.offset, f.more, f.ident), (58, 1480, true, 0xdead_beef));
    }

    /// An IPv6/UDP packet behind extension headers of the kinds in `chain`
    /// (options as padding), the fragment header with `fragment_offset`
    /// (8-byte units), UDP checksum filled.
    fn with_extensions(chain: &[u8], fragment_offset: u16) -> Vec<u8> {
        let mut bytes = udp(b"payload!");
        let upper = bytes.split_off(HEADER_LEN);
        let mut kinds = chain.to_vec();
        kinds.push(17);
        for pair in kinds.windows(2) {
            let (kind, next) = (pair[0], pair[1]);
            match kind {
                FRAGMENT => bytes.extend([next, 0, (fragment_offset >> 5) as u8, (fragment_offset << 3) as u8, 0, 0, 0, 1]),
                AUTHENTICATION => bytes.extend([next, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0]),
                _ => bytes.extend([next, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            }
        }
        bytes[NEXT_HEADER] = chain[0];
        bytes.extend(upper);
        let len = (bytes.len() - HEADER_LEN) as u16;
        bytes[PAYLOAD_LEN..PAYLOAD_LEN + 2].copy_from_slice(&len.to_be_bytes());
        Header::new_checked(&mut bytes[..]).expect("a header").fill_upper_checksum();
        bytes
    }
}
