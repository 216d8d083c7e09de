//! `next_hop(interface, via)`: sends each packet to its next hop on an
//! interface: the address `via` (a gateway) or, without one, the packet's
//! own destination (a connected network). The next hop's MAC comes from
//! the interface's neighbour table ([`crate::neighbor_table`]), which the
//! workers read without locks; where it is not known, the packet is held
//! and the address asked for (an ARP request, an IPv6 neighbour
//! solicitation), again every retransmit time, and the packets held go as
//! soon as the answer is in; those of an address that never answers are
//! dropped, each answered with a host unreachable. At most the interface's
//! `hold_pkts` wait for one address (the oldest dropped first, as Linux
//! does) and [`PENDING`] addresses at a time. A stale neighbour is used and
//! probed.
//!
//! Before that, an IPv4 packet with options has the router's hop written
//! into them ([`crate::ip_options`]: a record route, a timestamp), one
//! with a malformed option is answered with a parameter problem, a
//! source-routed one dropped; and a
//! packet is held to the interface's MTU: an IPv4 one
//! without DF is fragmented, one with DF answered with "fragmentation
//! needed", an IPv6 one with "packet too big" (a GSO packet fits when its
//! segments do). Its answers leave by gate 1, to go back out the interface
//! the packet came in on; the rest, by gate 0, out of this interface, with
//! the interface's MAC as their source.

use sluice_core::DropReason;
use std::collections::VecDeque;
use std::sync::Arc;

use sluice_core::packet::{Gso, PacketId, NO_FLOW};
use sluice_core::wire::ethernet::{self, Frame, Mac};
use sluice_core::wire::{arp, icmpv6, ip_protocol, ipv4, ipv6, Ip};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

use crate::fragment::fragment;
use crate::icmp_error::{self, ErrorSource, IcmpError};
use crate::interfaces::{Interface, Interfaces};
use crate::ip_options;
use crate::neighbor_table::{v4_key, Resolution};

/// Gate of the packets sent on.
pub const OUT: usize = 0;
/// Gate of its ICMP errors (fragmentation needed, packet too big, host unreachable, parameter problem).
pub const ICMP: usize = 1;
/// Addresses it holds packets for at once.
pub const PENDING: usize = 16;
/// How often it looks at the table again while it holds packets (ns).
const CHECK_NS: u64 = 50_000;

/// What its counter slots count (cumulative), in order.
pub const COUNTERS: &[&str] = &["sent", "held", "released", "hold_dropped", "unreachable", "requests", "too_big", "fragmented", "fragments", "malformed"];

#[derive(Clone, Copy)]
#[repr(usize)]
enum Count {
    Sent,
    Held,
    Released,
    HoldDropped,
    Unreachable,
    Requests,
    TooBig,
    Fragmented,
    Fragments,
    Malformed,
}

/// The table's answer for one address, kept for the packets after.
#[derive(Clone, Copy)]
struct Cached {
    key: u128,
    /// Its MAC and the interface's, as a frame's header holds them (see [`addresses`]).
    addresses: Addresses,
    /// The table's version it was read at: it holds while the table is there.
    version: u64,
    /// When it stops being reachable (ns).
    until_ns: u64,
}

/// An address asked for, and the packets that wait for it.
struct Pending {
    key: u128,
    held: VecDeque<PacketId>,
}

/// See the module documentation.
pub struct NextHop {
    interfaces: Arc<Interfaces>,
    index: u16,
    via: Option<u128>,
    hold_pkts: usize,
    ident: u16,
    cached: Option<Cached>,
    pending: Vec<Pending>,
    /// When it looks at the table again for the packets it holds (ns).
    check_ns: Option<u64>,
    /// Whether a run stops: what it holds is dropped at its next run.
    releasing: bool,
    counters: [u64; COUNTERS.len()],
}

impl NextHop {
    /// The next hop `via` (an address; `None`: each packet's destination)
    /// on interface `name`, holding up to `hold_pkts` packets an address.
    pub fn new(interfaces: Arc<Interfaces>, name: &str, via: Option<&str>, hold_pkts: usize) -> Result<Self, String> {
        let iface = interfaces.named(name)?;
        let via = via.map(crate::interfaces::neighbor_key).transpose()?;
        let pending = (0..PENDING).map(|_| Pending { key: 0, held: VecDeque::with_capacity(hold_pkts) }).collect();
        Ok(Self { index: iface.index, via, hold_pkts, ident: iface.index << 8 | 0x80, interfaces, cached: None, pending, check_ns: None, releasing: false, counters: [0; COUNTERS.len()] })
    }

    fn interface(&self) -> &Interface {
        self.interfaces.get(self.index).expect("an index of its own interfaces")
    }

    /// The next hop of a packet to `dst` (IPv4 as its mapped form).
    #[inline]
    fn key(&self, dst: u128) -> u128 {
        self.via.unwrap_or(dst)
    }

    /// Its Ethernet addresses set for neighbour `mac`, it goes out.
    #[inline]
    fn send(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, mac: Mac) {
        let own = self.interface().mac;
        self.send_as(ctx, out, id, addresses(mac, own));
    }

    /// Its Ethernet header's addresses set to `(head, tail)` (see [`addresses`]), it goes out.
    #[inline]
    fn send_as(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, (head, tail): Addresses) {
        if let Some(frame) = ctx.pool.data_mut(id).get_mut(..12) {
            frame[..8].copy_from_slice(&head);
            frame[8..].copy_from_slice(&tail);
        }
        self.counters[Count::Sent as usize] += 1;
        out.push(OUT, id);
    }

    /// Packet `id`, to next hop `key`: sent to the neighbour found last
    /// where it is `key`'s and still holds, else resolved.
    #[inline]
    fn forward(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, key: u128) {
        let ts_ns = ctx.pool.meta(id).ts_ns;
        let version = self.interface().neighbors.version();
        match self.cached.filter(|c| c.key == key && ts_ns < c.until_ns && c.version == version) {
            Some(c) => self.send_as(ctx, out, id, c.addresses),
            None => self.resolve(ctx, out, id, key),
        }
    }

    /// Packet `id`, to next hop `key`, as the table says: sent, held, or dropped.
    #[inline(never)]
    fn resolve(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, key: u128) {
        let table = &self.interface().neighbors;
        let (version, now) = (table.version(), ctx.now());
        match table.resolve(key, now) {
            Resolution::Send(mac) => {
                let until_ns = table.lookup(key, now).map_or(0, |e| match e.state {
                    crate::neighbor_table::State::Static => u64::MAX,
                    _ => e.confirmed_ns.saturating_add(table.timers().reachable_ns),
                });
                let found = Cached { key, addresses: addresses(mac, self.interface().mac), version, until_ns };
                self.cached = Some(found);
                self.send_as(ctx, out, id, found.addresses);
            }
            Resolution::SendAndProbe(mac) => {
                self.send(ctx, out, id, mac);
                self.ask(ctx, out, key, Some(mac));
            }
            Resolution::HoldAndAsk => {
                self.hold(ctx, out, id, key);
                self.ask(ctx, out, key, None);
            }
            Resolution::Hold | Resolution::Busy => self.hold(ctx, out, id, key),
            Resolution::Unreachable => self.unreachable(ctx, out, id),
        }
    }

    /// Keeps packet `id` for `key` until its answer comes, within the bounds.
    fn hold(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, key: u128) {
        let slot = self.pending.iter().position(|p| !p.held.is_empty() && p.key == key).or_else(|| self.pending.iter().position(|p| p.held.is_empty()));
        let Some(slot) = slot else {
            // No room for another address: dropped.
            self.hold_dropped(ctx, out, id);
            return;
        };
        let p = &mut self.pending[slot];
        p.key = key;
        if p.held.len() == self.hold_pkts {
            let oldest = p.held.pop_front().expect("full");
            self.hold_dropped(ctx, out, oldest);
        }
        self.pending[slot].held.push_back(id);
        self.counters[Count::Held as usize] += 1;
        if self.check_ns.is_none() {
            self.check_ns = Some(ctx.now() + CHECK_NS);
        }
        ctx.note_held(self.check_ns, self.ready());
    }

    fn hold_dropped(&mut self, ctx: &mut NfContext<'_>, _out: &mut Outputs<'_>, id: PacketId) {
        self.counters[Count::HoldDropped as usize] += 1;
        self.interface().neighbors.counters.hold_dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ctx.drop_packet(id, DropReason::NoNeighbor);
    }

    /// A packet whose next hop did not answer: a host unreachable back to its sender, or dropped.
    fn unreachable(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId) {
        self.counters[Count::Unreachable as usize] += 1;
        self.interface().neighbors.counters.hold_dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if !self.icmp(ctx, out, id, IcmpError::HostUnreachable) {
            ctx.drop_packet(id, DropReason::NoNeighbor);
        }
    }

    /// Sends `error` about `id` back toward its sender, from the interface it came in on; false when none may be.
    fn icmp(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, error: IcmpError) -> bool {
        let Self { interfaces, ident, .. } = self;
        let Some(came_in) = interfaces.get(ctx.pool.meta(id).port) else { return false };
        let from = ErrorSource { interface: came_in, address: None, ident };
        if icmp_error::report(ctx, id, error, from, &interfaces.icmp).is_err() {
            return false;
        }
        out.push(ICMP, id);
        true
    }

    /// Sends a request for `key`: broadcast (IPv6: to its solicited-node
    /// group), or to `unicast` (a stale neighbour's probe).
    fn ask(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, key: u128, unicast: Option<Mac>) {
        let iface = self.interfaces.get(self.index).expect("its own interface");
        let mac = iface.mac;
        let made = if key >> 32 == 0xffff {
            let target = key as u32;
            let Some(source) = iface.v4_toward(target) else { return };
            let Some(id) = ctx.make_packet(60, NO_FLOW) else { return };
            let frame = ctx.pool.data_mut(id);
            frame.fill(0);
            ethernet::write_header(frame, unicast.unwrap_or(ethernet::BROADCAST), mac, ethernet::ETHERTYPE_ARP);
            arp::write(&mut frame[ethernet::HEADER_LEN..], arp::REQUEST, mac, source, [0; 6], target);
            id
        } else {
            let Some(source) = iface.v6_toward(key) else { return };
            let dst = if unicast.is_some() { key } else { icmpv6::solicited_node(key) };
            let len = icmpv6::ND_LEN + icmpv6::LINK_ADDRESS_OPTION_LEN;
            let Some(id) = ctx.make_packet(ethernet::HEADER_LEN + ipv6::HEADER_LEN + len, NO_FLOW) else { return };
            let frame = ctx.pool.data_mut(id);
            ethernet::write_header(frame, unicast.unwrap_or_else(|| icmpv6::multicast_mac(dst)), mac, ethernet::ETHERTYPE_IPV6);
            let ip = &mut frame[ethernet::HEADER_LEN..];
            ipv6::Repr { src: source, dst, next_header: ip_protocol::ICMPV6, hop_limit: icmpv6::ND_HOP_LIMIT, payload_len: len as u16 }.emit(ip);
            icmpv6::write_solicit(&mut ip[ipv6::HEADER_LEN..], key, mac);
            ipv6::Header::new_checked(ip).expect("just written").fill_upper_checksum();
            id
        };
        self.counters[Count::Requests as usize] += 1;
        out.push(OUT, made);
    }

    /// Looks at the table for every address it holds packets for: sends
    /// what was answered, drops what will not be, asks again where due.
    #[cold]
    #[inline(never)]
    fn check_held(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>) {
        let now = ctx.now();
        for slot in 0..PENDING {
            if self.pending[slot].held.is_empty() {
                continue;
            }
            let key = self.pending[slot].key;
            let answer = if self.releasing { Resolution::Unreachable } else { self.interface().neighbors.resolve(key, now) };
            match answer {
                Resolution::Send(mac) | Resolution::SendAndProbe(mac) => {
                    while let Some(id) = self.pending[slot].held.pop_front() {
                        self.counters[Count::Released as usize] += 1;
                        self.send(ctx, out, id, mac);
                    }
                }
                Resolution::Unreachable => {
                    while let Some(id) = self.pending[slot].held.pop_front() {
                        if self.releasing {
                            self.hold_dropped(ctx, out, id);
                        } else {
                            self.unreachable(ctx, out, id);
                        }
                    }
                }
                Resolution::HoldAndAsk => self.ask(ctx, out, key, None),
                Resolution::Hold | Resolution::Busy => {}
            }
        }
        self.check_ns = (self.held() > 0).then_some(now + CHECK_NS);
        ctx.note_held(self.check_ns, self.ready());
    }

    /// Holds packet `id` to the MTU of its way on; returns it if it goes
    /// on whole, else sends its fragments (or its ICMP error) itself.
    fn fit(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, key: u128) -> Option<PacketId> {
        let mtu = self.interface().mtu as usize;
        let offload = ctx.pool.offload(id);
        let frame = ctx.pool.data(id);
        let l3 = Frame::new_checked(frame).map(|f| f.payload_offset()).unwrap_or(ethernet::HEADER_LEN);
        let (len, dont_fragment) = match sluice_core::wire::ip_of(frame) {
            Ok(Ip::V4(h)) => (usize::from(h.total_len()), h.dont_fragment()),
            Ok(Ip::V6(h)) => (ipv6::HEADER_LEN + usize::from(h.payload_len()), true),
            Err(_) => (frame.len() - l3, true),
        };
        // A GSO packet is as long as its segments.
        let len = if offload.gso == Gso::None { len } else { usize::from(offload.hdr_len).saturating_sub(l3) + usize::from(offload.gso_size) };
        if len <= mtu {
            return Some(id);
        }
        if dont_fragment || offload.gso != Gso::None {
            self.counters[Count::TooBig as usize] += 1;
            if !self.icmp(ctx, out, id, IcmpError::TooBig(mtu as u32)) {
                ctx.drop_packet(id, DropReason::TooBig);
            }
            return None;
        }
        match fragment(ctx, id, mtu, |ctx, f| self.forward_whole(ctx, out, f, key)) {
            Ok(n) => {
                self.counters[Count::Fragmented as usize] += 1;
                self.counters[Count::Fragments as usize] += n as u64;
            }
            Err(_) => {
                self.counters[Count::Malformed as usize] += 1;
                ctx.drop_packet(id, DropReason::Malformed);
            }
        }
        None
    }

    /// [`Self::forward`], for a packet that fits.
    fn forward_whole(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, key: u128) {
        self.forward(ctx, out, id, key);
    }

    /// Writes this hop into the options of IPv4 packet `id`, which goes to
    /// next hop `key` (see [`ip_options`]); false when they stop it: one
    /// malformed, answered with a parameter problem (or dropped where none
    /// may be sent); a source route, dropped.
    #[cold]
    #[inline(never)]
    fn write_options(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, key: u128) -> bool {
        let port = ctx.pool.meta(id).port;
        let Ok(Ip::V4(mut header)) = sluice_core::wire::ip_of_mut(ctx.pool.data_mut(id)) else { return true };
        let interfaces = &self.interfaces;
        let leaves_by = self.interface().v4_toward(key as u32);
        let came_in = interfaces.get(port).and_then(|i| i.v4_toward(header.src()));
        let hop = ip_options::Hop {
            out: leaves_by.or(came_in).unwrap_or(0),
            came_in: came_in.or(leaves_by).unwrap_or(0),
            ms_of_day: ip_options::ms_of_day(),
            ours: &|a| interfaces.owns_v4(a),
        };
        match ip_options::write(&mut header, &[&hop]) {
            Ok(()) => return true,
            Err(ip_options::Refused::SourceRouted) => ctx.drop_packet(id, DropReason::Denied),
            Err(ip_options::Refused::Malformed(pointer)) => {
                self.counters[Count::Malformed as usize] += 1;
                if !self.icmp(ctx, out, id, IcmpError::BadOption(pointer)) {
                    ctx.drop_packet(id, DropReason::Malformed);
                }
            }
        }
        false
    }

    /// Packet `id` the way every packet may take: parsed for its
    /// destination, its options written (IPv4), held to the MTU (`mtu`,
    /// bytes), forwarded.
    #[inline]
    fn route(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, id: PacketId, mtu: usize) {
        let Some((dst, len, options)) = destination(ctx.pool.data(id)) else {
            self.counters[Count::Malformed as usize] += 1;
            ctx.drop_packet(id, DropReason::Malformed);
            return;
        };
        let key = self.key(dst);
        if options && !self.write_options(ctx, out, id, key) {
            return;
        }
        // `fit` reads the packet again; one that plainly fits needs it not.
        let whole = if len <= mtu && ctx.pool.offload(id).gso == Gso::None { Some(id) } else { self.fit(ctx, out, id, key) };
        if let Some(id) = whole {
            self.forward(ctx, out, id, key);
        }
    }
}

/// What the way on reads of an IP frame, in one parse: its destination
/// (IPv4 as its mapped form), its IP length (bytes), and whether it is
/// IPv4 with options.
#[inline]
fn destination(frame: &[u8]) -> Option<(u128, usize, bool)> {
    match sluice_core::wire::ip_of(frame).ok()? {
        Ip::V4(h) => Some((v4_key(h.dst()), usize::from(h.total_len()), h.header_len() > ipv4::MIN_HEADER_LEN)),
        Ip::V6(h) => Some((h.dst(), ipv6::HEADER_LEN + usize::from(h.payload_len()), false)),
    }
}

/// Sends the packets at the head of `ids` that go to a gateway known
/// until `until_ns` as they are (see [`whole_frame`]) out of `gate`,
/// `(head, tail)` their Ethernet header's addresses (see [`addresses`]);
/// returns how many it sent, up to the first that needs more.
#[inline(always)]
fn send_whole(pool: &mut sluice_core::PacketPool, ids: &[PacketId], gate: &mut Batch, until_ns: u64, mtu: usize, (head, tail): Addresses) -> usize {
    for (i, &id) in ids.iter().enumerate() {
        let Some(frame) = whole_frame(pool, id, until_ns, mtu) else { return i };
        frame[..8].copy_from_slice(&head);
        frame[8..12].copy_from_slice(&tail);
        gate.push(id);
    }
    ids.len()
}

/// The frame of packet `id` where it goes to a gateway known until
/// `until_ns` as it is: it arrived before then, in a small buffer (no
/// GSO), and surely fits `mtu` (see [`surely_fits`]).
#[inline(always)]
fn whole_frame(pool: &mut sluice_core::PacketPool, id: PacketId, until_ns: u64, mtu: usize) -> Option<&mut [u8]> {
    if pool.is_large(id) || pool.meta(id).ts_ns >= until_ns {
        return None;
    }
    let frame = pool.data_mut(id);
    surely_fits(frame, mtu).then_some(frame)
}

/// An Ethernet header's addresses as two words (bytes 0–7 and 8–11): two stores a frame.
type Addresses = ([u8; 8], [u8; 4]);

/// The [`Addresses`] of destination `dst` and source `src`.
fn addresses(dst: Mac, src: Mac) -> Addresses {
    let mut head = [0; 8];
    head[..6].copy_from_slice(&dst);
    head[6..].copy_from_slice(&src[..2]);
    (head, [src[2], src[3], src[4], src[5]])
}

/// Whether `frame` is an untagged IP frame that [`destination`] reads
/// and whose IP length fits `mtu`, read without the rest of the parse: a
/// packet to a gateway needs no destination. An IPv4 header with options
/// is left to the parse.
#[inline]
fn surely_fits(frame: &[u8], mtu: usize) -> bool {
    // The ether type, then the IP header's first 6 bytes.
    let Some(&[t_hi, t_lo, first, _, b2, b3, b4, b5]) = frame.get(12..20) else { return false };
    let room = frame.len() - ethernet::HEADER_LEN;
    match [t_hi, t_lo, first] {
        // Version 4, a 20-byte header the frame holds, and its total length (bytes 2–3).
        [0x08, 0x00, 0x45] => room >= ipv4::MIN_HEADER_LEN && usize::from(u16::from_be_bytes([b2, b3])) <= mtu,
        // Version 6, a fixed header and the payload length (bytes 4–5) the frame holds.
        [0x86, 0xdd, v] if v >> 4 == 6 => {
            let len = ipv6::HEADER_LEN + usize::from(u16::from_be_bytes([b4, b5]));
            len <= room && len <= mtu
        }
        _ => false,
    }
}

impl NetworkFunction for NextHop {
    fn outgates(&self) -> usize {
        2
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        if self.check_ns.is_some_and(|due| self.releasing || ctx.now() >= due) {
            self.check_held(ctx, out);
        }
        // Read once a batch: what a packet that fits and whose next hop was the last one's needs.
        let (mtu, version) = {
            let iface = self.interface();
            (iface.mtu as usize, iface.neighbors.version())
        };
        // Every packet goes to one gateway whose MAC the last lookup found:
        // a packet that surely fits needs no parse (see `surely_fits`).
        let gateway = self.via.and_then(|via| self.cached.filter(|c| c.key == via && c.version == version));
        let sent = gateway.map_or(0, |c| send_whole(ctx.pool, input.as_slice(), out.gate(OUT), c.until_ns, mtu, c.addresses));
        self.counters[Count::Sent as usize] += sent as u64;
        // The rest, in order, from the first that needs more.
        for &id in &input.as_slice()[sent..] {
            self.route(ctx, out, id, mtu);
        }
        input.clear();
    }

    fn most_held(&self) -> usize {
        PENDING * self.hold_pkts
    }

    fn held(&self) -> usize {
        self.pending.iter().map(|p| p.held.len()).sum()
    }

    fn due_ns(&self) -> Option<u64> {
        self.check_ns
    }

    fn ready(&self) -> bool {
        self.releasing && self.held() > 0
    }

    fn release_all(&mut self) {
        self.releasing = self.held() > 0;
        if self.releasing {
            self.check_ns = Some(0);
        }
    }

    fn read_counters(&self, into: &mut sluice_core::telemetry::NfCounters) {
        into[..COUNTERS.len()].copy_from_slice(&self.counters);
    }
}

/// `next_hop`: sends each packet to its next hop on an interface (see the
/// module documentation): gate 0 out of the interface, gate 1 its ICMP
/// errors, to go back out the interface the packet came in on.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextHopSpec {
    /// The interface, by its name in the description's `interfaces`.
    pub interface: String,
    /// The next hop's address, a gateway on the interface's network
    /// (absent: each packet's destination, on a network the interface is on).
    #[serde(default)]
    pub via: Option<String>,
    /// Packets held for one address while it is asked (pkt, 1..=4096; Linux's unres_qlen).
    #[serde(default = "default_hold_pkts")]
    pub hold_pkts: usize,
}

fn default_hold_pkts() -> usize {
    64
}

impl crate::NfConfig for NextHopSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(&Interfaces::none())
    }

    fn build_on(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        if !(1..=4096).contains(&self.hold_pkts) {
            return Err(format!("hold_pkts {} must be 1..=4096", self.hold_pkts));
        }
        Ok(Box::new(NextHop::new(interfaces.clone(), &self.interface, self.via.as_deref(), self.hold_pkts)?))
    }

    fn outgates(&self) -> usize {
        2
    }

    fn most_held(&self) -> usize {
        PENDING * self.hold_pkts.min(4096)
    }

    fn counter_names(&self) -> &'static [&'static str] {
        COUNTERS
    }

    fn fuzz_samples() -> Vec<Self> {
        let on = |via: Option<&str>| Self { interface: crate::interfaces::FUZZ_INTERFACE.into(), via: via.map(Into::into), hold_pkts: 4 };
        vec![on(None), on(Some("10.0.1.1")), on(Some("2001:db8:1::1"))]
    }
}
