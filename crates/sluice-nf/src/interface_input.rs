//! `interface_input(interface)`: a router's input on one interface. It
//! answers ARP requests and IPv6 neighbour solicitations for the
//! interface's addresses and learns its neighbours from what it hears
//! (RFC 826, RFC 4861), answers pings to any of the router's addresses
//! (and to the link's all-nodes and all-routers groups), a
//! datagram to one with a port unreachable, a TCP segment to one with a
//! reset (no port of the router's is open) and a packet in another
//! protocol (not ICMP) with a protocol unreachable, and passes every other IP
//! packet on to be forwarded (gate 0). Its answers leave by gate 1, back out
//! the interface. Dropped and counted: frames to another MAC, other
//! EtherTypes, IPv4 headers whose checksum fails (RFC 1812 §5.2.2), packets
//! to a group address or a subnet's broadcast (not forwarded), neighbour
//! discovery that fails RFC 4861's checks (a hop limit other than 255…),
//! an ARP claiming one of the router's addresses, and whatever else is
//! addressed to the router. What comes to the router in fragments is put
//! together first, in `reassembly`'s few datagrams of
//! up to 64 KiB each (256 KiB an interface, allocated when it is built),
//! and an answer longer than the interface's MTU leaves in fragments; a
//! datagram that does not come whole in time is answered with a time
//! exceeded (reassembly), which quotes its first fragment, kept till then.

use sluice_core::DropReason;
use std::sync::Arc;

use sluice_core::wire::ethernet::{self, Frame, Mac};
use sluice_core::wire::icmpv6::{advert_flags, Neighbor};
use sluice_core::packet::{Offload, NO_FLOW};
use sluice_core::wire::tcp_reset::Reset;
use sluice_core::wire::{arp, icmp, icmpv6, ip_protocol, ipv4, ipv6, Ip};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, PacketId};

use crate::fragment;
use crate::icmp_error::{self, ErrorSource, IcmpError};
use crate::reassembly::{Added, Key, Outcome, Piece, Reassembly, DATAGRAMS};
use crate::interfaces::{Interface, Interfaces};
use crate::ip_options;
use crate::neighbor_table::v4_key;

/// Gate of the packets it passes on to be forwarded.
pub const FORWARD: usize = 0;
/// Gate of its answers (ARP replies, neighbour advertisements, echo
/// replies, port and protocol unreachables, resets, reassembly time exceeded).
pub const REPLY: usize = 1;

/// What its counter slots count (cumulative), in order.
pub const COUNTERS: &[&str] = &[
    "forwarded",
    "arp_answered",
    "nd_answered",
    "echo_answered",
    "neighbors_heard",
    "link_local",
    "not_ours",
    "bad_checksum",
    "nd_invalid",
    "address_conflict",
    "local_dropped",
    "group_dropped",
    "tcp_refused",
    "reassembled",
    "reassembly_failed",
    "reassembly_timed_out",
];

#[derive(Clone, Copy)]
#[repr(usize)]
enum Count {
    Forwarded,
    ArpAnswered,
    NdAnswered,
    EchoAnswered,
    NeighborsHeard,
    LinkLocal,
    NotOurs,
    BadChecksum,
    NdInvalid,
    AddressConflict,
    LocalDropped,
    GroupDropped,
    TcpRefused,
    Reassembled,
    ReassemblyFailed,
    /// Datagrams to the router that did not come whole in time, after their first fragment.
    ReassemblyTimedOut,
}

impl Count {
    /// Why a packet counted here as dropped was dropped.
    fn reason(self) -> DropReason {
        match self {
            Count::BadChecksum | Count::NdInvalid | Count::ReassemblyFailed => DropReason::Malformed,
            Count::AddressConflict => DropReason::Denied,
            _ => DropReason::NotOurs,
        }
    }
}

/// What becomes of one packet.
enum Verdict {
    /// On, to be forwarded.
    Forward,
    /// Answered: the packet is the answer now, back out the interface.
    Reply,
    /// Taken in: it was for the router (what it says was heard).
    TakenIn,
    /// Answered, and taken in: the answer is another packet, made here (to a datagram that came in fragments).
    ReplyWith(PacketId),
    /// Taken in, dropped or kept (the first fragment of a datagram that
    /// waits for the rest, see `reassembly`) already, and counted.
    Done,
    /// Taken in, and counted: link-local control traffic to a group (MLD, router solicitations).
    TakenInAs(Count),
    /// Dropped, for this reason.
    Drop(Count),
}

/// See the module documentation.
pub struct InterfaceInput {
    interfaces: Arc<Interfaces>,
    index: u16,
    /// The IPv4 identification of its next ICMP error.
    ident: u16,
    /// The identification of the last IPv6 packet it cut into fragments.
    fragment_ident: u32,
    /// Datagrams to the router that came in fragments, being put together.
    reassembly: Reassembly,
    /// When the next datagram whose first fragment it keeps times out, as it last said (ns).
    due_ns: Option<u64>,
    /// Whether a run that stops asked for every first fragment it keeps (see `release_all`).
    releasing: bool,
    counters: [u64; COUNTERS.len()],
}

impl InterfaceInput {
    /// The input of interface `name` of `interfaces`.
    pub fn new(interfaces: Arc<Interfaces>, name: &str) -> Result<Self, String> {
        let index = interfaces.named(name)?.index;
        Ok(Self {
            interfaces,
            index,
            ident: index << 8,
            fragment_ident: u32::from(index) << 24,
            reassembly: Reassembly::default(),
            due_ns: None,
            releasing: false,
            counters: [0; COUNTERS.len()],
        })
    }

    fn interface(&self) -> &Interface {
        self.interfaces.get(self.index).expect("an index of its own interfaces")
    }

    /// What to do with packet `id`.
    fn judge(&mut self, ctx: &mut NfContext<'_>, id: PacketId) -> Verdict {
        let iface = self.interfaces.get(self.index).expect("an index of its own interfaces");
        let frame = ctx.pool.data(id);
        let Ok(eth) = Frame::new_checked(frame) else { return Verdict::Drop(Count::NotOurs) };
        let (dst_mac, at) = (eth.dst(), eth.payload_offset());
        let to_us = dst_mac == iface.mac;
        if !to_us && !ethernet::is_group(dst_mac) {
            return Verdict::Drop(Count::NotOurs);
        }
        match eth.payload_type() {
            ethernet::ETHERTYPE_ARP => self.arp(ctx, id, at),
            ethernet::ETHERTYPE_IPV4 | ethernet::ETHERTYPE_IPV6 => self.ip(ctx, id, to_us),
            _ => Verdict::Drop(Count::NotOurs),
        }
    }

    fn ip(&mut self, ctx: &mut NfContext<'_>, id: PacketId, to_us: bool) -> Verdict {
        let interfaces = &*self.interfaces;
        let iface = interfaces.get(self.index).expect("its own interface");
        match sluice_core::wire::ip_of(ctx.pool.data(id)) {
            Ok(Ip::V4(h)) => {
                if !h.checksum_ok() {
                    return Verdict::Drop(Count::BadChecksum);
                }
                let dst = h.dst();
                if interfaces.owns_v4(dst) {
                    if h.more_fragments() || h.fragment_offset() != 0 {
                        return self.fragment(ctx, id, u128::from(dst));
                    }
                    return self.local(ctx, id, u128::from(dst));
                }
                // The link's own groups (224.0.0.0/24) and broadcasts are the link's: heard, not routed.
                if dst >> 8 == 0x00e0_0000 || dst == u32::MAX || iface.is_broadcast_v4(dst) {
                    return Verdict::TakenInAs(Count::LinkLocal);
                }
                if !to_us || ipv4::is_group(dst) {
                    return Verdict::Drop(Count::GroupDropped);
                }
                Verdict::Forward
            }
            Ok(Ip::V6(h)) => {
                let dst = h.dst();
                if let Ok((ip_protocol::ICMPV6, message)) = h.upper_payload() {
                    if message.first().is_some_and(|t| (icmpv6::ROUTER_SOLICIT..=icmpv6::REDIRECT).contains(t)) {
                        return self.neighbor_discovery(ctx, id);
                    }
                }
                if interfaces.owns_v6(dst) {
                    if h.fragment().is_ok_and(|f| f.is_some()) {
                        return self.fragment(ctx, id, dst);
                    }
                    return self.local(ctx, id, dst);
                }
                // A ping to all nodes or all routers on the link: answered from the interface (RFC 4443 §4.2).
                if (dst == icmpv6::ALL_NODES || dst == icmpv6::ALL_ROUTERS) && is_echo_request6(&h) {
                    if let Some(from) = iface.v6_toward(h.src()) {
                        return self.local(ctx, id, from);
                    }
                }
                // Link-scope groups (ff02::/16: MLD reports, router solicitations…): heard, not routed.
                if dst >> 112 == 0xff02 {
                    return Verdict::TakenInAs(Count::LinkLocal);
                }
                if !to_us || icmpv6::is_multicast(dst) || dst >> 64 == 0xfe80 << 48 {
                    return Verdict::Drop(Count::GroupDropped);
                }
                Verdict::Forward
            }
            Err(_) => Verdict::Drop(Count::NotOurs),
        }
    }

    /// An ARP packet at `at`: learned from, answered when it asks for one of the interface's addresses.
    fn arp(&mut self, ctx: &mut NfContext<'_>, id: PacketId, at: usize) -> Verdict {
        let iface = self.interfaces.get(self.index).expect("its own interface");
        let frame = ctx.pool.data(id);
        let Ok(packet) = arp::Packet::new_checked(&frame[at..]) else { return Verdict::Drop(Count::NdInvalid) };
        let (op, sender_mac, sender, target) = (packet.operation(), packet.sender_mac(), packet.sender_ip(), packet.target_ip());
        if iface.owns_v4(sender) || ethernet::is_group(sender_mac) {
            return Verdict::Drop(Count::AddressConflict);
        }
        let for_us = iface.owns_v4(target);
        if sender != 0 && iface.on_link_v4(sender) {
            // A reply to us confirms; a request to us, a gratuitous ARP
            // (announcing its sender) teach; another's request only updates.
            let confirmed = op == arp::REPLY && for_us;
            let create = for_us || packet.is_gratuitous();
            let now = ctx.now();
            if iface.neighbors.heard(v4_key(sender), sender_mac, confirmed, create, now) {
                self.counters[Count::NeighborsHeard as usize] += 1;
            }
        }
        if op != arp::REQUEST || !for_us {
            return Verdict::TakenIn;
        }
        let mac = iface.mac;
        let frame = ctx.pool.data_mut(id);
        let eth_src = Frame::new_checked(&*frame).expect("checked").src();
        arp::Packet::new_checked(&mut frame[at..]).expect("checked").make_reply(mac);
        let mut eth = Frame::new_checked(&mut *frame).expect("checked");
        eth.set_dst(eth_src);
        eth.set_src(mac);
        ctx.answer(id);
        self.counters[Count::ArpAnswered as usize] += 1;
        Verdict::Reply
    }

    /// An ICMPv6 neighbour-discovery message: solicitations for the
    /// interface's addresses answered, both kinds learned from; router
    /// solicitations, advertisements and redirects dropped (the router
    /// sends no advertisements).
    fn neighbor_discovery(&mut self, ctx: &mut NfContext<'_>, id: PacketId) -> Verdict {
        let iface = self.interfaces.get(self.index).expect("its own interface");
        let frame = ctx.pool.data(id);
        let eth_src = Frame::new_checked(frame).expect("parsed").src();
        let Ok(Ip::V6(h)) = sluice_core::wire::ip_of(frame) else { return Verdict::Drop(Count::NdInvalid) };
        let (src, dst, hop_limit) = (h.src(), h.dst(), h.hop_limit());
        let Ok((_, message)) = h.upper_payload() else { return Verdict::Drop(Count::NdInvalid) };
        if h.upper_checksum_ok() != Some(true) {
            return Verdict::Drop(Count::NdInvalid);
        }
        if !matches!(message[0], icmpv6::NEIGHBOR_SOLICIT | icmpv6::NEIGHBOR_ADVERT) {
            // Router solicitations and advertisements, redirects: the router sends none and takes none.
            return Verdict::TakenIn;
        }
        let Ok(nd) = Neighbor::parse(message, hop_limit, src, dst) else { return Verdict::Drop(Count::NdInvalid) };
        let now = ctx.now();
        if nd.kind == icmpv6::NEIGHBOR_ADVERT {
            if iface.owns_v6(nd.target) {
                return Verdict::Drop(Count::AddressConflict);
            }
            let mac = nd.mac.unwrap_or(eth_src);
            let solicited = nd.flags & advert_flags::SOLICITED != 0;
            if iface.on_link_v6(nd.target) && iface.neighbors.heard(nd.target, mac, solicited, true, now) {
                self.counters[Count::NeighborsHeard as usize] += 1;
            }
            return Verdict::TakenIn;
        }
        if let Some(mac) = nd.mac.filter(|_| src != 0 && iface.on_link_v6(src)) {
            if iface.neighbors.heard(src, mac, false, iface.owns_v6(nd.target), now) {
                self.counters[Count::NeighborsHeard as usize] += 1;
            }
        }
        if !iface.owns_v6(nd.target) {
            return Verdict::TakenIn;
        }
        // Answered to the asker, or to all nodes for a duplicate-address check (RFC 4861 §7.2.4).
        let (to, to_mac, flags) = if src == 0 {
            (ALL_NODES, icmpv6::multicast_mac(ALL_NODES), advert_flags::ROUTER | advert_flags::OVERRIDE)
        } else {
            (src, nd.mac.unwrap_or(eth_src), advert_flags::ROUTER | advert_flags::SOLICITED | advert_flags::OVERRIDE)
        };
        write_advert(ctx, id, iface.mac, nd.target, to, to_mac, flags);
        self.counters[Count::NdAnswered as usize] += 1;
        Verdict::Reply
    }

    /// A fragment of a datagram to one of the router's addresses, `dst`:
    /// its bytes kept until the datagram is whole, which is then made here
    /// and answered as [`Self::local`] answers (see `reassembly`); taken
    /// in, but for the first fragment, kept with its datagram till then.
    fn fragment(&mut self, ctx: &mut NfContext<'_>, id: PacketId, dst: u128) -> Verdict {
        let now = ctx.now();
        let Some(Outcome { added, kept, released }) = piece_of(ctx.pool.data(id)).map(|piece| self.reassembly.add(now, &piece, id)) else {
            return Verdict::Drop(Count::ReassemblyFailed);
        };
        self.note_kept(ctx);
        if let Some(first) = released {
            self.counters[Count::ReassemblyFailed as usize] += 1;
            ctx.drop_packet(first, Count::ReassemblyFailed.reason());
        }
        let at = match added {
            Added::Waiting | Added::Duplicate if kept => return Verdict::Done,
            Added::Waiting | Added::Duplicate => return Verdict::TakenIn,
            Added::Whole(at) => at,
            Added::Discarded => return Verdict::Drop(Count::ReassemblyFailed),
        };
        let (head, data, first) = self.reassembly.whole(at);
        let (head_len, data_len) = (head.len(), data.len());
        let whole = ctx.make_packet(head_len + data_len, NO_FLOW);
        if let Some(whole) = whole {
            let frame = ctx.pool.data_mut(whole);
            frame[..head_len].copy_from_slice(head);
            frame[head_len..].copy_from_slice(data);
        }
        self.note_kept(ctx);
        if first != id {
            ctx.take_in(first);
        }
        let Some(whole) = whole else { return Verdict::Drop(Count::ReassemblyFailed) };
        ctx.take_in(id);
        let frame = ctx.pool.data_mut(whole);
        let eth = Frame::new_checked(&*frame).expect("its first fragment's");
        let (l3, v6) = (eth.payload_offset(), eth.payload_type() == ethernet::ETHERTYPE_IPV6);
        // The headers of its first fragment, now of all of it.
        if v6 {
            ipv6::set_payload_len(&mut frame[l3..], (head_len - l3 - ipv6::HEADER_LEN + data_len) as u16);
        } else {
            let mut h = ipv4::Header::new_checked(&mut frame[l3..]).expect("its first fragment's");
            let len = h.header_len() + data_len;
            h.set_fragment(len as u16, false, 0);
        }
        self.counters[Count::Reassembled as usize] += 1;
        match self.local(ctx, whole, dst) {
            Verdict::Reply => Verdict::ReplyWith(whole),
            Verdict::Drop(why) => {
                self.counters[why as usize] += 1;
                ctx.drop_packet(whole, why.reason());
                Verdict::Done
            }
            _ => unreachable!("a datagram to the router is answered or dropped"),
        }
    }

    /// Answers each datagram to the router that has not come whole by now
    /// with a time exceeded (reassembly) quoting its first fragment, sent
    /// from the address the datagram was for; while a run stops, takes the
    /// first fragments it keeps in, unanswered.
    fn expire(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>) {
        let now = if self.releasing { u64::MAX } else { ctx.now() };
        while let Some((first, key)) = self.reassembly.timed_out(now) {
            if self.releasing {
                ctx.take_in(first);
                continue;
            }
            self.counters[Count::ReassemblyTimedOut as usize] += 1;
            let Self { interfaces, index, ident, .. } = self;
            let from = ErrorSource { interface: interfaces.get(*index).expect("its own interface"), address: Some(key.dst), ident };
            match icmp_error::make(ctx, first, IcmpError::ReassemblyTimeout, from, &interfaces.icmp) {
                Ok(()) => {
                    ctx.answer(first);
                    self.reply(ctx, out, first);
                }
                Err(_) => ctx.take_in(first),
            }
        }
        self.releasing = false;
        self.note_kept(ctx);
    }

    /// Tells the walker when the next datagram whose first fragment it
    /// keeps times out, where that moved (see `NfContext::note_held`).
    fn note_kept(&mut self, ctx: &mut NfContext<'_>) {
        let due = self.reassembly.due_ns();
        if due != self.due_ns {
            self.due_ns = due;
            ctx.note_held(due, false);
        }
    }

    /// Sends answer `id` back out the interface, in fragments where it is
    /// longer than the interface's MTU (the echo reply to a datagram that
    /// came in fragments); dropped where it cannot be cut.
    fn reply(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId) {
        let mtu = self.interface().mtu as usize;
        let (len, v6) = match sluice_core::wire::ip_of(ctx.pool.data(id)) {
            Ok(Ip::V4(h)) => (usize::from(h.total_len()), false),
            Ok(Ip::V6(h)) => (ipv6::HEADER_LEN + usize::from(h.payload_len()), true),
            Err(_) => (0, false),
        };
        if len <= mtu {
            return out.push(REPLY, id);
        }
        let cut = if v6 {
            self.fragment_ident = self.fragment_ident.wrapping_add(1);
            fragment::fragment_v6(ctx, id, mtu, self.fragment_ident, |_, f| out.push(REPLY, f))
        } else {
            fragment::fragment(ctx, id, mtu, |_, f| out.push(REPLY, f))
        };
        if cut.is_err() {
            ctx.drop_packet(id, DropReason::NoBuffer);
        }
    }

    /// A packet to one of the router's addresses, `dst` (a ping to a
    /// group: the address it is answered from): a ping answered (its IPv4
    /// options written, see [`Self::echo_options`]), a TCP segment with a
    /// reset, a datagram with a port unreachable, a packet in a protocol
    /// the router does not speak with a protocol unreachable (a parameter
    /// problem in IPv6), the rest (other ICMP) dropped.
    fn local(&mut self, ctx: &mut NfContext<'_>, id: PacketId, dst: u128) -> Verdict {
        let frame = ctx.pool.data(id);
        // `unknown`: where the protocol the router does not speak is named (see `IcmpError::UnknownProtocol`).
        let (protocol, kind, src_ok, unknown, options) = match sluice_core::wire::ip_of(frame) {
            Ok(Ip::V4(h)) => {
                let kind = (h.protocol() == ip_protocol::ICMP && icmp::Message::new_checked(h.payload()).is_ok_and(|m| m.checksum_ok())).then(|| h.payload()[0]);
                let unknown = (!matches!(h.protocol(), ip_protocol::ICMP | ip_protocol::UDP | ip_protocol::TCP)).then_some(0);
                (h.protocol(), kind, !ipv4::is_unroutable_source(h.src()), unknown, h.header_len() > ipv4::MIN_HEADER_LEN)
            }
            Ok(Ip::V6(h)) => {
                let Ok((protocol, _, names_at)) = h.upper_named() else { return Verdict::Drop(Count::LocalDropped) };
                let icmp = protocol == ip_protocol::ICMPV6 && h.upper_checksum_ok() == Some(true);
                let kind = if icmp { h.upper_payload().ok().and_then(|(_, m)| m.first().copied()) } else { None };
                let unknown = (!matches!(protocol, ip_protocol::ICMPV6 | ip_protocol::UDP | ip_protocol::TCP | ipv6::NO_NEXT_HEADER | ipv6::FRAGMENT)).then_some(names_at as u32);
                (protocol, kind, !ipv6::is_unroutable_source(h.src()), unknown, false)
            }
            Err(_) => return Verdict::Drop(Count::NotOurs),
        };
        if !src_ok {
            return Verdict::Drop(Count::LocalDropped);
        }
        if kind == Some(icmp::ECHO_REQUEST) || kind == Some(icmpv6::ECHO_REQUEST) {
            if options {
                match self.echo_options(ctx, id, dst as u32) {
                    Ok(()) => {}
                    Err(ip_options::Refused::Malformed(pointer)) => return self.error(ctx, id, IcmpError::BadOption(pointer), dst),
                    Err(ip_options::Refused::SourceRouted) => return Verdict::Drop(Count::LocalDropped),
                }
            }
            let mac = self.interface().mac;
            echo_reply(ctx, id, mac, dst);
            self.counters[Count::EchoAnswered as usize] += 1;
            return Verdict::Reply;
        }
        if protocol == ip_protocol::TCP {
            let mac = self.interface().mac;
            if refuse(ctx, id, mac, &mut self.ident) {
                self.counters[Count::TcpRefused as usize] += 1;
                return Verdict::Reply;
            }
        }
        let error = if protocol == ip_protocol::UDP { Some(IcmpError::PortUnreachable) } else { unknown.map(IcmpError::UnknownProtocol) };
        match error {
            Some(error) => self.error(ctx, id, error, dst),
            None => Verdict::Drop(Count::LocalDropped),
        }
    }

    /// Answers packet `id`, sent to the router's address `dst`, with
    /// `error` from that address; or drops it where none may be sent.
    fn error(&mut self, ctx: &mut NfContext<'_>, id: PacketId, error: IcmpError, dst: u128) -> Verdict {
        let Self { interfaces, index, ident, .. } = self;
        let iface = interfaces.get(*index).expect("its own interface");
        let from = ErrorSource { interface: iface, address: Some(dst), ident };
        if icmp_error::make(ctx, id, error, from, &interfaces.icmp).is_ok() {
            ctx.answer(id);
            return Verdict::Reply;
        }
        Verdict::Drop(Count::LocalDropped)
    }

    /// Writes the router into the options of IPv4 echo request `id`, sent
    /// to its address `to`, twice, as Linux does: as the host that takes
    /// the request in and as the one that sends the reply (RFC 1122
    /// §3.2.2.6: the options updated to include the current host); or
    /// why they stop it (see [`ip_options::write`]).
    fn echo_options(&self, ctx: &mut NfContext<'_>, id: PacketId, to: u32) -> Result<(), ip_options::Refused> {
        let Ok(Ip::V4(mut header)) = sluice_core::wire::ip_of_mut(ctx.pool.data_mut(id)) else { return Ok(()) };
        let interfaces = &self.interfaces;
        let hop = ip_options::Hop { out: to, came_in: to, ms_of_day: ip_options::ms_of_day(), ours: &|a| interfaces.owns_v4(a) };
        ip_options::write(&mut header, &[&hop, &hop])
    }
}

/// What fragment `frame` is of its datagram (see `reassembly`); `None` where it does not parse.
fn piece_of(frame: &[u8]) -> Option<Piece<'_>> {
    let l3 = Frame::new_checked(frame).ok()?.payload_offset();
    match sluice_core::wire::ip_of(frame).ok()? {
        Ip::V4(h) => {
            let (ihl, total) = (h.header_len(), usize::from(h.total_len()));
            let key = Key { v6: false, src: u128::from(h.src()), dst: u128::from(h.dst()), ident: u32::from(h.ident()), protocol: h.protocol() };
            let data = frame.get(l3 + ihl..l3 + total)?;
            Some(Piece { key, offset: usize::from(h.fragment_offset()) * 8, more: h.more_fragments(), data, head: &frame[..l3 + ihl], patch: None })
        }
        Ip::V6(h) => {
            let f = h.fragment().ok()??;
            let key = Key { v6: true, src: h.src(), dst: h.dst(), ident: f.ident, protocol: 0 };
            let data = &frame[l3 + f.at + ipv6::FRAGMENT_HEADER_LEN..l3 + ipv6::HEADER_LEN + usize::from(h.payload_len())];
            Some(Piece { key, offset: f.offset, more: f.more, data, head: &frame[..l3 + f.at], patch: Some((l3 + f.names_at, f.next_header)) })
        }
    }
}

/// Rewrites a TCP segment to one of the router's addresses into the reset
/// a closed port answers it with ([`Reset`]), from that address, sent
/// from `mac` back to the neighbour that handed it over. False, nothing
/// changed, for a segment that is itself a reset, whose checksum fails
/// (unless its sender left it to be completed) or that does not parse.
fn refuse(ctx: &mut NfContext<'_>, id: PacketId, mac: Mac, ident: &mut u16) -> bool {
    let partial = ctx.pool.offload(id).csum_partial;
    let frame = ctx.pool.data(id);
    let Ok(eth) = Frame::new_checked(frame) else { return false };
    let l3 = eth.payload_offset();
    let Ok(ip) = sluice_core::wire::ip_of(frame) else { return false };
    let (v6, src, dst, segment) = match &ip {
        // IPv4's payload runs to the frame's end, Ethernet padding with it: the segment ends at the total length.
        Ip::V4(h) => (false, u128::from(h.src()), u128::from(h.dst()), h.payload().get(..usize::from(h.total_len()).saturating_sub(h.header_len()))),
        Ip::V6(h) => (true, h.src(), h.dst(), h.upper_payload().ok().map(|(_, segment)| segment)),
    };
    let reset = match segment.map(Reset::answering) {
        Some(Ok(Some(r))) if partial || ip.upper_checksum_ok() == Some(true) => r,
        _ => return false,
    };
    let ip_len = if v6 { ipv6::HEADER_LEN } else { ipv4::MIN_HEADER_LEN };
    // A reset is no longer than the shortest segment it answers.
    if !ctx.pool.set_len(id, l3 + ip_len + sluice_core::wire::l4::TCP_MIN_LEN) {
        unreachable!("a reset fits where its segment was");
    }
    ctx.pool.set_offload(id, Offload::default());
    let frame = ctx.pool.data_mut(id);
    let mut eth = Frame::new_checked(&mut *frame).expect("parsed");
    let asker = eth.src();
    eth.set_dst(asker);
    eth.set_src(mac);
    let (ip, segment) = frame[l3..].split_at_mut(ip_len);
    reset.emit(segment);
    if v6 {
        ipv6::Repr { src: dst, dst: src, next_header: ip_protocol::TCP, hop_limit: 64, payload_len: sluice_core::wire::l4::TCP_MIN_LEN as u16 }.emit(ip);
    } else {
        *ident = ident.wrapping_add(1);
        let total_len = (ip_len + sluice_core::wire::l4::TCP_MIN_LEN) as u16;
        ipv4::Repr { src: dst as u32, dst: src as u32, protocol: ip_protocol::TCP, ttl: 64, tos: 0, ident: *ident, total_len, dont_fragment: true }.emit(ip);
    }
    sluice_core::wire::ip_of_mut(frame).expect("just written").fill_upper_checksum();
    ctx.answer(id);
    true
}

/// ff02::1, all nodes on the link.
const ALL_NODES: u128 = 0xff02_0000_0000_0000_0000_0000_0000_0001;

/// Rewrites packet `id` (a solicitation) into the advertisement of
/// `target` at `mac` with `flags`, to `to` at `to_mac`.
fn write_advert(ctx: &mut NfContext<'_>, id: PacketId, mac: Mac, target: u128, to: u128, to_mac: Mac, flags: u8) {
    let eth_len = Frame::new_checked(ctx.pool.data(id)).expect("parsed").payload_offset();
    let len = icmpv6::ND_LEN + icmpv6::LINK_ADDRESS_OPTION_LEN;
    let total = eth_len + ipv6::HEADER_LEN + len;
    // An advertisement is no longer than the solicitation it answers, which carries its options.
    if !ctx.pool.set_len(id, total) {
        unreachable!("a small buffer holds an advertisement");
    }
    let frame = ctx.pool.data_mut(id);
    let mut eth = Frame::new_checked(&mut *frame).expect("parsed");
    eth.set_dst(to_mac);
    eth.set_src(mac);
    ipv6::Repr { src: target, dst: to, next_header: ip_protocol::ICMPV6, hop_limit: icmpv6::ND_HOP_LIMIT, payload_len: len as u16 }.emit(&mut frame[eth_len..]);
    icmpv6::write_advert(&mut frame[eth_len + ipv6::HEADER_LEN..], flags, target, mac);
    ipv6::Header::new_checked(&mut frame[eth_len..]).expect("just written").fill_upper_checksum();
    ctx.answer(id);
}

/// Whether IPv6 packet `h` is an echo request (its checksum is `local`'s to check).
fn is_echo_request6(h: &ipv6::Header<&[u8]>) -> bool {
    matches!(h.upper_payload(), Ok((ip_protocol::ICMPV6, m)) if m.first() == Some(&icmpv6::ECHO_REQUEST))
}

/// Rewrites an echo request into its reply, from the router's address
/// `from` (the one it was sent to, or for a ping to a group the
/// interface's): MACs swapped, addressed back to its sender, TTL or hop
/// limit reset, type changed.
fn echo_reply(ctx: &mut NfContext<'_>, id: PacketId, mac: Mac, from: u128) {
    let frame = ctx.pool.data_mut(id);
    let mut eth = Frame::new_checked(&mut *frame).expect("parsed");
    let asker = eth.src();
    eth.set_dst(asker);
    eth.set_src(mac);
    match sluice_core::wire::ip_of_mut(frame).expect("parsed") {
        Ip::V4(mut h) => {
            let src = h.src();
            h.set_src(from as u32);
            h.set_dst(src);
            h.set_ttl(64);
            icmp::Message::new_checked(h.payload_mut()).expect("checked").make_echo_reply();
        }
        Ip::V6(mut h) => {
            let src = h.src();
            h.set_addresses(from, src);
            h.set_hop_limit(64);
            h.upper_payload_mut().expect("checked").1[0] = icmpv6::ECHO_REPLY;
            // Made anew: a reply to a group comes from another address than the one asked.
            h.fill_upper_checksum();
        }
    }
    ctx.answer(id);
}

impl NetworkFunction for InterfaceInput {
    fn outgates(&self) -> usize {
        2
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        if self.due_ns.is_some_and(|due| self.releasing || ctx.now() >= due) {
            self.expire(ctx, out);
        }
        for &id in input.as_slice() {
            match self.judge(ctx, id) {
                Verdict::Forward => {
                    self.counters[Count::Forwarded as usize] += 1;
                    out.push(FORWARD, id);
                }
                Verdict::Reply => self.reply(ctx, out, id),
                Verdict::ReplyWith(answer) => self.reply(ctx, out, answer),
                Verdict::Done => {}
                Verdict::TakenIn => ctx.take_in(id),
                Verdict::TakenInAs(what) => {
                    self.counters[what as usize] += 1;
                    ctx.take_in(id);
                }
                Verdict::Drop(why) => {
                    self.counters[why as usize] += 1;
                    ctx.drop_packet(id, why.reason());
                }
            }
        }
        input.clear();
    }

    /// The first fragments of the datagrams being put together (see `reassembly`).
    fn most_held(&self) -> usize {
        DATAGRAMS
    }

    fn held(&self) -> usize {
        self.reassembly.kept()
    }

    fn due_ns(&self) -> Option<u64> {
        self.due_ns
    }

    fn ready(&self) -> bool {
        self.releasing
    }

    fn release_all(&mut self) {
        self.releasing = self.reassembly.kept() > 0;
    }

    fn read_counters(&self, into: &mut sluice_core::telemetry::NfCounters) {
        into[..COUNTERS.len()].copy_from_slice(&self.counters);
    }
}

/// `interface_input`: a router's input on one interface (see the module
/// documentation): gate 0 the packets to forward, gate 1 its answers, to
/// go back out the interface.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterfaceInputSpec {
    /// The interface, by its name in the description's `interfaces`.
    pub interface: String,
}

impl crate::NfConfig for InterfaceInputSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(&Interfaces::none())
    }

    fn build_on(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(InterfaceInput::new(interfaces.clone(), &self.interface)?))
    }

    fn outgates(&self) -> usize {
        2
    }

    fn most_held(&self) -> usize {
        DATAGRAMS
    }

    fn counter_names(&self) -> &'static [&'static str] {
        COUNTERS
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { interface: crate::interfaces::FUZZ_INTERFACE.into() }]
    }
}
