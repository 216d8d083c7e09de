//! IPv4 headers.

use std::net::Ipv4Addr;

use super::checksum;
use super::Malformed;

/// Bytes of a header without options.
pub const MIN_HEADER_LEN: usize = 20;

/// The don't-fragment flag (in the flags-and-offset word).
const DONT_FRAGMENT: u16 = 0x4000;
/// The more-fragments flag.
const MORE_FRAGMENTS: u16 = 0x2000;

const VER_IHL: usize = 0;
const TOS: usize = 1;
const TOTAL_LEN: usize = 2;
const IDENT: usize = 4;
const FLAGS_FRAGMENT: usize = 6;
const TTL: usize = 8;
const PROTO: usize = 9;
const CHECKSUM: usize = 10;
const SRC: usize = 12;
const DST: usize = 16;

/// A view of an IPv4 header (and what follows it).
pub struct Header<T: AsRef<[u8]>>(T);

impl<T: AsRef<[u8]>> Header<T> {
    /// Checks version 4, a header length of at least 20 bytes, and that the
    /// bytes hold the header.
    #[inline(always)]
    pub fn new_checked(bytes: T) -> Result<Self, Malformed> {
        let b = bytes.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(Malformed::Truncated);
        }
        if b[VER_IHL] >> 4 != 4 || ((b[VER_IHL] & 0x0f) as usize) * 4 < MIN_HEADER_LEN {
            return Err(Malformed::Unexpected);
        }
        if ((b[VER_IHL] & 0x0f) as usize) * 4 > b.len() {
            return Err(Malformed::Truncated);
        }
        Ok(Self(bytes))
    }

    fn b(&self) -> &[u8] {
        self.0.as_ref()
    }

    /// Header length (bytes).
    pub fn header_len(&self) -> usize {
        ((self.b()[VER_IHL] & 0x0f) as usize) * 4
    }

    /// Total length field (bytes).
    pub fn total_len(&self) -> u16 {
        u16::from_be_bytes([self.b()[TOTAL_LEN], self.b()[TOTAL_LEN + 1]])
    }

    /// Differentiated services code point (the TOS byte's upper six bits).
    pub fn dscp(&self) -> u8 {
        self.b()[TOS] >> 2
    }

    /// The ECN field (the TOS byte's lower two bits; RFC 3168: 0 not
    /// ECN-capable, 1 and 2 ECN-capable, 3 congestion experienced).
    pub fn ecn(&self) -> u8 {
        self.b()[TOS] & 0b11
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.b()[TTL]
    }

    /// Fragment offset (8-byte units; 0 for an unfragmented packet or a first fragment).
    pub fn fragment_offset(&self) -> u16 {
        self.flags_fragment() & 0x1fff
    }

    fn flags_fragment(&self) -> u16 {
        u16::from_be_bytes([self.b()[FLAGS_FRAGMENT], self.b()[FLAGS_FRAGMENT + 1]])
    }

    /// Whether the sender forbids fragmenting it (DF).
    pub fn dont_fragment(&self) -> bool {
        self.flags_fragment() & DONT_FRAGMENT != 0
    }

    /// Whether more fragments follow this one (MF).
    pub fn more_fragments(&self) -> bool {
        self.flags_fragment() & MORE_FRAGMENTS != 0
    }

    /// Identification (what the fragments of one packet share).
    pub fn ident(&self) -> u16 {
        u16::from_be_bytes([self.b()[IDENT], self.b()[IDENT + 1]])
    }

    /// Protocol of the payload.
    pub fn protocol(&self) -> u8 {
        self.b()[PROTO]
    }

    /// Header checksum field.
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.b()[CHECKSUM], self.b()[CHECKSUM + 1]])
    }

    /// Source address, as a big-endian integer.
    pub fn src(&self) -> u32 {
        u32::from_be_bytes(self.b()[SRC..SRC + 4].try_into().expect("checked length"))
    }

    /// Destination address, as a big-endian integer.
    pub fn dst(&self) -> u32 {
        u32::from_be_bytes(self.b()[DST..DST + 4].try_into().expect("checked length"))
    }

    /// Whether the header checksum verifies.
    pub fn checksum_ok(&self) -> bool {
        self.header_sum() == 0xffff
    }

    /// One's-complement sum of the whole header, checksum field included.
    /// A header without options, the common case, is summed at a constant
    /// length so that the sum unrolls.
    fn header_sum(&self) -> u16 {
        match self.header_len() {
            MIN_HEADER_LEN => checksum::sum(&self.b()[..MIN_HEADER_LEN]),
            len => checksum::sum(&self.b()[..len]),
        }
    }

    /// Bytes after the header.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }

    /// Whether the UDP or TCP checksum verifies over the pseudo-header.
    /// `None` for other protocols, a fragment other than the first, a total
    /// length the bytes do not hold, and a UDP checksum of zero ("none").
    pub fn upper_checksum_ok(&self) -> Option<bool> {
        let u = self.upper_checksum()?;
        let (upper, udp) = (&self.b()[u.start..u.end], u.protocol == super::ip_protocol::UDP);
        if upper.len() < u.offset + 2 {
            return Some(false);
        }
        if udp && upper[u.offset..u.offset + 2] == [0, 0] {
            return None;
        }
        Some(checksum::add(u.pseudo, checksum::sum(upper)) == 0xffff)
    }

    /// Where the UDP or TCP checksum is and its pseudo-header's sum (see [`Self::fill_upper_checksum`]).
    fn upper_checksum(&self) -> Option<super::l4::UpperChecksum> {
        let (protocol, start, end) = (self.protocol(), self.header_len(), self.total_len() as usize);
        let offset = super::l4::checksum_offset(protocol)?;
        if end > self.b().len() || end < start || self.fragment_offset() != 0 {
            return None;
        }
        let mut tail = [0u8; 4];
        tail[1] = protocol;
        tail[2..].copy_from_slice(&((end - start) as u16).to_be_bytes());
        let pseudo = checksum::add(checksum::sum(&self.b()[SRC..DST + 4]), checksum::sum(&tail));
        Some(super::l4::UpperChecksum { protocol, start, end, offset, pseudo })
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    fn m(&mut self) -> &mut [u8] {
        self.0.as_mut()
    }

    fn set_checksum(&mut self, c: u16) {
        self.m()[CHECKSUM..CHECKSUM + 2].copy_from_slice(&c.to_be_bytes());
    }

    /// Sets the total length, the more-fragments flag and the fragment
    /// offset (8-byte units) of one fragment of the packet, keeping DF and
    /// the identification, and recomputes the checksum.
    pub fn set_fragment(&mut self, total_len: u16, more: bool, offset: u16) {
        let word = (self.flags_fragment() & DONT_FRAGMENT) | if more { MORE_FRAGMENTS } else { 0 } | (offset & 0x1fff);
        self.m()[TOTAL_LEN..TOTAL_LEN + 2].copy_from_slice(&total_len.to_be_bytes());
        self.m()[FLAGS_FRAGMENT..FLAGS_FRAGMENT + 2].copy_from_slice(&word.to_be_bytes());
        self.fill_checksum();
    }

    /// Sets the total length and the identification, updating the checksum incrementally.
    pub fn set_length_and_ident(&mut self, total_len: u16, ident: u16) {
        let c = checksum::update(self.checksum(), self.total_len(), total_len);
        let c = checksum::update(c, self.ident(), ident);
        self.m()[TOTAL_LEN..TOTAL_LEN + 2].copy_from_slice(&total_len.to_be_bytes());
        self.m()[IDENT..IDENT + 2].copy_from_slice(&ident.to_be_bytes());
        self.set_checksum(c);
    }

    /// Sets the TTL, updating the checksum incrementally (RFC 1624).
    pub fn set_ttl(&mut self, ttl: u8) {
        let old = u16::from_be_bytes([self.b()[TTL], self.b()[PROTO]]);
        self.m()[TTL] = ttl;
        let new = u16::from_be_bytes([ttl, self.b()[PROTO]]);
        let c = checksum::update(self.checksum(), old, new);
        self.set_checksum(c);
    }

    /// Sets the DSCP (0..=63; the ECN bits kept), updating the checksum incrementally.
    pub fn set_dscp(&mut self, dscp: u8) {
        debug_assert!(dscp < 64, "DSCP {dscp} has more than six bits");
        let old = u16::from_be_bytes([self.b()[TOS - 1], self.b()[TOS]]);
        self.m()[TOS] = dscp << 2 | (self.b()[TOS] & 0b11);
        let new = u16::from_be_bytes([self.b()[TOS - 1], self.b()[TOS]]);
        let c = checksum::update(self.checksum(), old, new);
        self.set_checksum(c);
    }

    /// Marks it congestion experienced (ECN field 3), updating the checksum incrementally.
    pub fn set_ce(&mut self) {
        let old = u16::from_be_bytes([self.b()[TOS - 1], self.b()[TOS]]);
        self.m()[TOS] |= 0b11;
        let new = u16::from_be_bytes([self.b()[TOS - 1], self.b()[TOS]]);
        let c = checksum::update(self.checksum(), old, new);
        self.set_checksum(c);
    }

    /// Sets the source address, updating the header checksum incrementally.
    pub fn set_src(&mut self, addr: u32) {
        let c = checksum::update32(self.checksum(), self.src(), addr);
        self.m()[SRC..SRC + 4].copy_from_slice(&addr.to_be_bytes());
        self.set_checksum(c);
    }

    /// Sets the destination address, updating the header checksum incrementally.
    pub fn set_dst(&mut self, addr: u32) {
        let c = checksum::update32(self.checksum(), self.dst(), addr);
        self.m()[DST..DST + 4].copy_from_slice(&addr.to_be_bytes());
        self.set_checksum(c);
    }

    /// Recomputes the header checksum from scratch. Sums the header with
    /// the old checksum in place and takes it out after: zeroing the field
    /// first would make the loads wait for that store (no forwarding from a
    /// narrower store), half this function's time.
    pub fn fill_checksum(&mut self) {
        let c = checksum::without(self.header_sum(), self.checksum());
        self.set_checksum(!c);
    }

    /// The header's options area (bytes 20 to its length), mutable.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let len = self.header_len();
        &mut self.m()[MIN_HEADER_LEN..len]
    }

    /// Bytes after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = self.header_len();
        &mut self.m()[len..]
    }

    /// Computes and writes the UDP or TCP checksum over the pseudo-header
    /// (RFC 768, 793), for a packet whose sender left it to the NIC; a
    /// computed zero is sent as 0xffff for UDP. Does nothing for other
    /// protocols, a fragment other than the first, or a total length the
    /// bytes do not hold.
    pub fn fill_upper_checksum(&mut self) {
        if let Some(u) = self.upper_checksum() {
            u.fill(self.m());
        }
    }

    /// Completes the UDP or TCP checksum if it is partial, as a sender that
    /// leaves it to the NIC writes it (the field holds the pseudo-header's
    /// sum), where nothing says so (a frame from a veth peer, taken by
    /// AF_XDP); returns whether it did. Safe on a whole checksum: one equal
    /// to that sum is the one completing writes.
    pub fn complete_partial_checksum(&mut self) -> bool {
        self.upper_checksum().is_some_and(|u| u.complete_if_partial(self.m()))
    }
}

/// An IPv4 header without options, to be written (smoltcp's `Repr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Protocol of the payload (see [`super::ip_protocol`]).
    pub protocol: u8,
    /// Time to live.
    pub ttl: u8,
    /// Type of service (DSCP and ECN).
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Bytes of header and payload.
    pub total_len: u16,
    /// Whether fragmenting it is forbidden (DF).
    pub dont_fragment: bool,
}

impl Repr {
    /// Writes the header into the first [`MIN_HEADER_LEN`] bytes of `out`, its checksum computed.
    pub fn emit(&self, out: &mut [u8]) {
        let h = &mut out[..MIN_HEADER_LEN];
        h[VER_IHL] = 0x45;
        h[TOS] = self.tos;
        h[TOTAL_LEN..TOTAL_LEN + 2].copy_from_slice(&self.total_len.to_be_bytes());
        h[IDENT..IDENT + 2].copy_from_slice(&self.ident.to_be_bytes());
        h[FLAGS_FRAGMENT..FLAGS_FRAGMENT + 2].copy_from_slice(&if self.dont_fragment { DONT_FRAGMENT } else { 0 }.to_be_bytes());
        h[TTL] = self.ttl;
        h[PROTO] = self.protocol;
        h[CHECKSUM..CHECKSUM + 2].fill(0);
        h[SRC..SRC + 4].copy_from_slice(&self.src.to_be_bytes());
        h[DST..DST + 4].copy_from_slice(&self.dst.to_be_bytes());
        let c = !checksum::sum(h);
        h[CHECKSUM..CHECKSUM + 2].copy_from_slice(&c.to_be_bytes());
    }
}

/// Option types (RFC 791 §3.1): the high bit of a type says whether
/// every fragment carries the option.
pub mod option {
    /// The end of the option list.
    pub const END: u8 = 0;
    /// No operation: a byte of padding between options.
    pub const NOP: u8 = 1;
    /// Record route: the routers on the way write their addresses in.
    pub const RECORD_ROUTE: u8 = 7;
    /// Internet timestamp: the routers on the way write their times (and addresses) in.
    pub const TIMESTAMP: u8 = 68;
    /// Loose source and record route: routers the sender names it to pass.
    pub const LOOSE_SOURCE_ROUTE: u8 = 131;
    /// Strict source and record route: the only routers it may pass.
    pub const STRICT_SOURCE_ROUTE: u8 = 137;
    /// The flag of the types every fragment carries.
    pub const COPIED: u8 = 0x80;
}

/// Walks an IPv4 header's options area `bytes` (RFC 791 §3.1): yields
/// each option but end-of-list and no-operation as its start and length
/// (bytes into `bytes`); a malformed one (its length under 2, or past the
/// area) as `Err` with its start, which ends the walk.
pub fn options(bytes: &[u8]) -> impl Iterator<Item = Result<(usize, usize), usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || loop {
        let start = at;
        match *bytes.get(start)? {
            option::END => return None,
            option::NOP => at += 1,
            _ => {
                let len = bytes.get(start + 1).map_or(0, |&l| usize::from(l));
                if len < 2 || start + len > bytes.len() {
                    at = bytes.len();
                    return Some(Err(start));
                }
                at += len;
                return Some(Ok((start, len)));
            }
        }
    })
}

/// Whether `address` is one a router sends no ICMP error to, nor answers
/// from (RFC 1812 §4.3.2.7): unspecified, loopback, multicast, limited broadcast, class E.
pub fn is_unroutable_source(address: u32) -> bool {
    address == 0 || address >> 24 == 127 || address >> 28 >= 0xe
}

/// Whether `address` is a multicast (224.0.0.0/4) or the limited broadcast address.
pub fn is_group(address: u32) -> bool {
    address >> 28 == 0xe || address == u32::MAX
}

/// Parses "a.b.c.d/len" into (network as integer, length).
pub fn parse_prefix(s: &str) -> Result<(u32, u8), String> {
    let bad = || format!("'{s}' is not an IPv4 prefix like 20.0.1.0/24");
    let (addr, len) = s.split_once('/').ok_or_else(bad)?;
    let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
    let len: u8 = len.parse().ok().filter(|l| *l <= 32).ok_or_else(bad)?;
    Ok((u32::from(addr) & mask(len), len))
}

/// The netmask of a prefix length.
pub fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_walk_skips_padding_stops_at_the_end_of_the_list_and_at_a_malformed_one() {
        let walked = |bytes: &[u8]| options(bytes).collect::<Vec<_>>();
        assert_eq!(walked(&[option::NOP, 7, 3, 4, option::NOP, 68, 4, 5, 0]), [Ok((1, 3)), Ok((5, 4))]);
        assert_eq!(walked(&[7, 3, 4, option::END, 7, 3, 4, 0]), [Ok((0, 3))], "nothing after the end of the list");
        assert_eq!(walked(&[option::NOP, 148, 1, 0]), [Err(1)], "a length under two");
        assert_eq!(walked(&[7, 3, 4, 148, 9, 0, 0, 0]), [Ok((0, 3)), Err(3)], "a length past the area");
        assert_eq!(walked(&[option::NOP, 7]), [Err(1)], "no length at all");
    }

    /// What a sender that leaves the checksum to the NIC puts there: the
    /// checksum etherparse computes, overwritten; filling it restores it.
    #[test]
    fn a_udp_or_tcp_checksum_left_to_the_nic_is_filled_as_etherparse_computes_it() {
        let builder = || etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [20, 0, 1, 1], 64);
        let (mut udp, mut tcp) = (Vec::new(), Vec::new());
        builder().udp(5000, 53).write(&mut udp, b"a datagram").unwrap();
        builder().tcp(5000, 80, 7, 1000).write(&mut tcp, b"a segment").unwrap();
        for (packet, offset) in [(udp, 26), (tcp, 36)] {
            let mut left = packet.clone();
            left[offset..offset + 2].copy_from_slice(&[0x12, 0x34]);
            Header::new_checked(&mut left[..]).unwrap().fill_upper_checksum();
            assert_eq!(left, packet);
        }
    }

    /// Congestion experienced is set in the ECN field alone, the checksum
    /// kept valid.
    #[test]
    fn an_ect_packet_marked_ce_keeps_its_dscp_and_a_valid_checksum() {
        let mut udp = Vec::new();
        etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [20, 0, 1, 1], 64).udp(5000, 53).write(&mut udp, b"x").unwrap();
        udp[1] = 46 << 2 | 0b10; // EF, ECT(0)
        Header::new_checked(&mut udp[..]).unwrap().fill_checksum();
        let mut h = Header::new_checked(&mut udp[..]).unwrap();
        assert_eq!((h.dscp(), h.ecn()), (46, 0b10));
        h.set_ce();
        assert_eq!((h.dscp(), h.ecn()), (46, 0b11));
        assert!(h.checksum_ok());
    }

    /// What a stack that leaves its checksum to the NIC writes (the
    /// pseudo-header's sum) is completed; a whole checksum, or another
    /// value, is left as it is.
    #[test]
    fn a_partial_checksum_is_completed_where_it_shows_and_nothing_else_is_touched() {
        let mut tcp = Vec::new();
        etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [20, 0, 1, 1], 64).tcp(5000, 80, 7, 1000).write(&mut tcp, b"a segment").unwrap();
        let whole = tcp.clone();
        assert!(!Header::new_checked(&mut tcp[..]).unwrap().complete_partial_checksum(), "a whole checksum stays");
        let pseudo = {
            let mut tail = [0u8; 4];
            tail[1] = 6;
            tail[2..].copy_from_slice(&((tcp.len() - 20) as u16).to_be_bytes());
            checksum::add(checksum::sum(&tcp[12..20]), checksum::sum(&tail))
        };
        tcp[36..38].copy_from_slice(&pseudo.to_be_bytes());
        assert!(Header::new_checked(&mut tcp[..]).unwrap().complete_partial_checksum());
        assert_eq!(tcp, whole);
        tcp[36..38].copy_from_slice(&[0x12, 0x34]);
        assert!(!Header::new_checked(&mut tcp[..]).unwrap().complete_partial_checksum(), "a corrupt one is not made right");
    }

    #[test]
    fn an_upper_checksum_verifies_where_it_is_right_and_udp_without_one_says_nothing() {
        let mut tcp = Vec::new();
        etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [20, 0, 1, 1], 64).tcp(5000, 80, 7, 1000).write(&mut tcp, b"a segment").unwrap();
        assert_eq!(Header::new_checked(&tcp[..]).unwrap().upper_checksum_ok(), Some(true));
        tcp[40] ^= 1;
        assert_eq!(Header::new_checked(&tcp[..]).unwrap().upper_checksum_ok(), Some(false));
        let mut udp = Vec::new();
        etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [20, 0, 1, 1], 64).udp(5000, 53).write(&mut udp, b"q").unwrap();
        assert_eq!(Header::new_checked(&udp[..]).unwrap().upper_checksum_ok(), Some(true));
        udp[26..28].fill(0);
        assert_eq!(Header::new_checked(&udp[..]).unwrap().upper_checksum_ok(), None);
    }

    proptest::proptest! {
        /// Whatever the old checksum field held, the filled one is the
        /// RFC 1071 checksum of the header with that field zero.
        #[test]
        fn fill_checksum_ignores_the_old_field(mut bytes in proptest::array::uniform20(proptest::num::u8::ANY)) {
            bytes[VER_IHL] = 0x45;
            let mut zeroed = bytes;
            zeroed[CHECKSUM..CHECKSUM + 2].fill(0);
            let mut header = Header::new_checked(&mut bytes[..]).expect("a 20-byte header");
            header.fill_checksum();
            proptest::prop_assert!(header.checksum_ok());
            proptest::prop_assert_eq!(header.checksum(), !checksum::sum(&zeroed));
        }
    }
}
