//! ICMP errors as a router sends them (RFC 1812 §4.3, RFC 4443 §2.4): the
//! packet reported is rewritten in place into the error that quotes it,
//! addressed back to its sender from the interface it arrived on, to the
//! neighbour that handed it over (the frame's source MAC: the way back is
//! the way it came). What the RFCs forbid is never sent: an error about an
//! ICMP error, about a fragment other than the first, about a packet to a
//! group address or from an address no one can be answered at; and every
//! error passes the router's rate limit ([`crate::icmp_limit`]).

use sluice_core::DropReason;
use sluice_core::packet::{Offload, PacketId};
use sluice_core::wire::ethernet::{self, Frame};
use sluice_core::wire::{icmp, icmpv6, ip_protocol, ipv4, ipv6};
use sluice_core::{NfContext, PacketPool};

use crate::interfaces::Interface;
use crate::neighbor_table::v4_key;

/// Bytes of an IPv4 error at most (RFC 1812 §4.3.2.3: 576, as much of the original as fits).
const V4_ERROR_LEN: usize = 576;
/// Bytes of an IPv6 error at most (RFC 4443 §2.4 c: the minimum MTU).
const V6_ERROR_LEN: usize = 1280;
/// TTL or hop limit an error is sent with.
const HOP_LIMIT: u8 = 64;
/// Type of service of an IPv4 error (RFC 1812 §4.3.2.5: internetwork control).
const TOS: u8 = 0xc0;

/// What went wrong with a packet, as each family says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpError {
    /// Its TTL or hop limit ran out (ICMP 11/0, ICMPv6 3/0).
    TimeExceeded,
    /// It is the first fragment of a datagram to the router whose other
    /// fragments did not all come in time (ICMP 11/1, ICMPv6 3/1).
    ReassemblyTimeout,
    /// No route to its destination (ICMP 3/0, ICMPv6 1/0).
    NoRoute,
    /// Its next hop did not answer neighbour discovery (ICMP 3/1, ICMPv6 1/3).
    HostUnreachable,
    /// Sent to the router itself, on a port nobody listens on (ICMP 3/3, ICMPv6 1/4).
    PortUnreachable,
    /// Sent to the router itself in a protocol it does not speak: ICMP
    /// 3/2; ICMPv6 4/1, pointing at the next-header field (bytes from
    /// the IPv6 header's start) that names it.
    UnknownProtocol(u32),
    /// Longer than the MTU of its way on (bytes): ICMP 3/4 with the MTU
    /// (IPv4 with DF), ICMPv6 2/0 (packet too big).
    TooBig(u32),
    /// An IPv4 option it carries is malformed: ICMP 12/0, pointing at the
    /// byte at fault (bytes from the IP header's start).
    BadOption(u8),
}

impl IcmpError {
    /// Why the packet it is sent for was dropped.
    pub fn drop_reason(self) -> DropReason {
        match self {
            IcmpError::TimeExceeded => DropReason::TtlExpired,
            IcmpError::ReassemblyTimeout => DropReason::Malformed,
            IcmpError::NoRoute => DropReason::NoRoute,
            IcmpError::HostUnreachable => DropReason::NoNeighbor,
            IcmpError::PortUnreachable | IcmpError::UnknownProtocol(_) => DropReason::NotOurs,
            IcmpError::TooBig(_) => DropReason::TooBig,
            IcmpError::BadOption(_) => DropReason::Malformed,
        }
    }

    fn v4(self) -> (u8, u8, u32) {
        match self {
            Self::TimeExceeded => (icmp::TIME_EXCEEDED, 0, 0),
            Self::ReassemblyTimeout => (icmp::TIME_EXCEEDED, icmp::REASSEMBLY_TIME_EXCEEDED, 0),
            Self::NoRoute => (icmp::DEST_UNREACHABLE, icmp::NET_UNREACHABLE, 0),
            Self::HostUnreachable => (icmp::DEST_UNREACHABLE, icmp::HOST_UNREACHABLE, 0),
            Self::PortUnreachable => (icmp::DEST_UNREACHABLE, icmp::PORT_UNREACHABLE, 0),
            Self::UnknownProtocol(_) => (icmp::DEST_UNREACHABLE, icmp::PROTOCOL_UNREACHABLE, 0),
            Self::TooBig(mtu) => (icmp::DEST_UNREACHABLE, icmp::FRAGMENTATION_NEEDED, mtu.min(0xffff)),
            Self::BadOption(at) => (icmp::PARAMETER_PROBLEM, 0, u32::from(at) << 24),
        }
    }

    fn v6(self) -> (u8, u8, u32) {
        match self {
            Self::TimeExceeded => (icmpv6::TIME_EXCEEDED, 0, 0),
            Self::ReassemblyTimeout => (icmpv6::TIME_EXCEEDED, icmpv6::REASSEMBLY_TIME_EXCEEDED, 0),
            Self::NoRoute => (icmpv6::DEST_UNREACHABLE, icmpv6::NO_ROUTE, 0),
            Self::HostUnreachable => (icmpv6::DEST_UNREACHABLE, icmpv6::ADDRESS_UNREACHABLE, 0),
            Self::PortUnreachable => (icmpv6::DEST_UNREACHABLE, icmpv6::PORT_UNREACHABLE, 0),
            Self::UnknownProtocol(names_at) => (icmpv6::PARAMETER_PROBLEM, icmpv6::UNKNOWN_NEXT_HEADER, names_at),
            Self::TooBig(mtu) => (icmpv6::PACKET_TOO_BIG, 0, mtu),
            // IPv6 has no such options; an erroneous header field, should one be reported.
            Self::BadOption(at) => (icmpv6::PARAMETER_PROBLEM, 0, u32::from(at)),
        }
    }
}

/// Where an error comes from and how it is numbered.
pub struct ErrorSource<'a> {
    /// The interface the packet arrived on: its MAC and address are the error's source.
    pub interface: &'a Interface,
    /// The error's source address instead of the interface's (the
    /// router's own address a packet was sent to, for a port or protocol unreachable).
    pub address: Option<u128>,
    /// The IPv4 identification of the next error, counted up.
    pub ident: &'a mut u16,
}

/// Why no error was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silent {
    /// The RFCs forbid one (see the module documentation), or the packet does not parse.
    Forbidden,
    /// The rate limit held it back.
    Limited,
}

/// Rewrites packet `id` into `error` about it, to be sent back out the
/// interface of `from` (see the module documentation). The caller counts
/// it: an error over a packet dropped ([`NfContext::drop_reused`]), or
/// over one the router took in ([`NfContext::answer`]). On `Err` nothing
/// was changed, and the caller drops the packet.
pub fn make(ctx: &mut NfContext<'_>, id: PacketId, error: IcmpError, from: ErrorSource<'_>, limit: &crate::icmp_limit::IcmpLimit) -> Result<(), Silent> {
    let report = Report::read(ctx.pool.data(id), error)?;
    let source = match (report.v6, from.address) {
        (_, Some(a)) => a,
        (false, None) => u128::from(from.interface.v4_toward(report.src as u32).ok_or(Silent::Forbidden)?),
        (true, None) => from.interface.v6_toward(report.src).ok_or(Silent::Forbidden)?,
    };
    let now = ctx.now();
    if !limit.allow(if report.v6 { report.src } else { v4_key(report.src as u32) }, now) {
        return Err(Silent::Limited);
    }
    report.write(ctx.pool, id, error, from.interface.mac, source, from.ident);
    Ok(())
}

/// [`make`] for a packet dropped here (its TTL ran out, no route, too big):
/// the error is written over it and counted ([`NfContext::drop_reused`]).
pub fn report(ctx: &mut NfContext<'_>, id: PacketId, error: IcmpError, from: ErrorSource<'_>, limit: &crate::icmp_limit::IcmpLimit) -> Result<(), Silent> {
    make(ctx, id, error, from, limit)?;
    ctx.drop_reused(id, error.drop_reason());
    Ok(())
}

/// What an error needs of the packet it reports.
struct Report {
    v6: bool,
    /// Its sender (IPv4 in the low 32 bits).
    src: u128,
    /// The neighbour that handed it over, and its VLAN tag (the whole TCI), if it had one.
    neighbor: ethernet::Mac,
    vlan: Option<[u8; 2]>,
    /// Where its IP header starts, and the bytes of it an error quotes.
    l3: usize,
    quote: usize,
}

impl Report {
    fn read(frame: &[u8], error: IcmpError) -> Result<Self, Silent> {
        let eth = Frame::new_checked(frame).map_err(|_| Silent::Forbidden)?;
        let (l3, group_frame) = (eth.payload_offset(), ethernet::is_group(eth.dst()));
        let vlan = eth.vlan_id().map(|_| [frame[14], frame[15]]);
        let too_big = matches!(error, IcmpError::TooBig(_));
        let (v6, src, ip_len, headers) = match sluice_core::wire::ip_of(frame).map_err(|_| Silent::Forbidden)? {
            sluice_core::wire::Ip::V4(h) => {
                let about_error = h.protocol() == ip_protocol::ICMP && h.payload().first().is_some_and(|&t| icmp::is_error(t));
                if group_frame || ipv4::is_group(h.dst()) || ipv4::is_unroutable_source(h.src()) || h.fragment_offset() != 0 || about_error {
                    return Err(Silent::Forbidden);
                }
                (false, u128::from(h.src()), usize::from(h.total_len()), ipv4::MIN_HEADER_LEN + icmp::HEADER_LEN)
            }
            sluice_core::wire::Ip::V6(h) => {
                // RFC 4443 §2.4 e.3: a packet too big answers a packet to a group too.
                let to_group = (group_frame || icmpv6::is_multicast(h.dst())) && !too_big;
                let upper = h.upper_payload();
                let about_error = matches!(upper, Ok((ip_protocol::ICMPV6, m)) if m.first().is_some_and(|&t| icmpv6::is_error(t)));
                let later_fragment = matches!(upper, Ok((ipv6::FRAGMENT, _)));
                if to_group || ipv6::is_unroutable_source(h.src()) || about_error || later_fragment {
                    return Err(Silent::Forbidden);
                }
                (true, h.src(), ipv6::HEADER_LEN + usize::from(h.payload_len()), ipv6::HEADER_LEN + icmpv6::HEADER_LEN)
            }
        };
        let most = if v6 { V6_ERROR_LEN } else { V4_ERROR_LEN };
        let quote = ip_len.min(frame.len() - l3).min(most - headers);
        Ok(Self { v6, src, neighbor: eth.src(), vlan, l3, quote })
    }

    /// Writes the error in place of the packet: its headers in front of
    /// the quote, which stays where it is.
    fn write(&self, pool: &mut PacketPool, id: PacketId, error: IcmpError, mac: ethernet::Mac, source: u128, ident: &mut u16) {
        let eth_len = ethernet::HEADER_LEN + if self.vlan.is_some() { ethernet::VLAN_LEN } else { 0 };
        let ip_len = if self.v6 { ipv6::HEADER_LEN } else { ipv4::MIN_HEADER_LEN };
        let front = eth_len + ip_len + icmp::HEADER_LEN;
        // The quote starts `l3` bytes in; the headers take `front`.
        assert!(pool.prepend(id, front - self.l3), "the headroom holds an error's headers");
        assert!(pool.set_len(id, front + self.quote), "an error is shorter than the packet it quotes");
        pool.set_offload(id, Offload::default());
        let frame = pool.data_mut(id);
        let ethertype = if self.v6 { ethernet::ETHERTYPE_IPV6 } else { ethernet::ETHERTYPE_IPV4 };
        match self.vlan {
            Some(tci) => {
                ethernet::write_header(frame, self.neighbor, mac, ethernet::ETHERTYPE_VLAN);
                frame[14..16].copy_from_slice(&tci);
                frame[16..18].copy_from_slice(&ethertype.to_be_bytes());
            }
            None => ethernet::write_header(frame, self.neighbor, mac, ethertype),
        }
        let (ip, message) = frame[eth_len..].split_at_mut(ip_len);
        if self.v6 {
            let (kind, code, rest) = error.v6();
            icmpv6::write_header(message, kind, code, rest);
            let payload_len = (icmpv6::HEADER_LEN + self.quote) as u16;
            ipv6::Repr { src: source, dst: self.src, next_header: ip_protocol::ICMPV6, hop_limit: HOP_LIMIT, payload_len }.emit(ip);
            let mut header = ipv6::Header::new_checked(&mut frame[eth_len..]).expect("just written");
            header.fill_upper_checksum();
        } else {
            let (kind, code, rest) = error.v4();
            icmp::write(message, kind, code, rest);
            *ident = ident.wrapping_add(1);
            let total_len = (ip_len + icmp::HEADER_LEN + self.quote) as u16;
            let repr = ipv4::Repr { src: source as u32, dst: self.src as u32, protocol: ip_protocol::ICMP, ttl: HOP_LIMIT, tos: TOS, ident: *ident, total_len, dont_fragment: false };
            repr.emit(ip);
        }
    }
}
