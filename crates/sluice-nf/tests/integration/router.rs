//! The router's NFs on frames built and read back by etherparse: answers
//! to ARP, neighbour discovery and pings, neighbours learned and resolved
//! with packets held meanwhile, ICMP errors as RFC 792 and 4443 quote, the
//! rate limit, and fragments that reassemble into the packet.

use std::sync::Arc;

use etherparse::{Icmpv4Type, Icmpv6Type, NetSlice, PacketBuilder, SlicedPacket, TransportSlice};
use sluice_core::harness::Harness;
use sluice_core::packet::{PacketMeta, NO_PORT};
use sluice_core::wire::arp;
use sluice_core::NetworkFunction;
use sluice_nf::interfaces::{Interfaces, FUZZ_INTERFACE};
use sluice_nf::neighbor_table::{v4_key, State};
use sluice_nf::NfSpec;

const HOST: [u8; 6] = [2, 0, 0, 0, 1, 1];
const HOST2: [u8; 6] = [2, 0, 0, 0, 2, 2];
const ROUTER: [u8; 6] = [0x02, 0x53, 0x4c, 0, 0, 0];
const ROUTER1: [u8; 6] = [0x02, 0x53, 0x4c, 0, 0, 1];

fn build(interfaces: &Arc<Interfaces>, json: &str) -> Box<dyn NetworkFunction> {
    serde_json::from_str::<NfSpec>(json).unwrap().build_on(interfaces).unwrap()
}

/// The sample's first interface's `interface_input`.
fn input_on(interfaces: &Arc<Interfaces>) -> Box<dyn NetworkFunction> {
    build(interfaces, &format!(r#"{{"type": "interface_input", "interface": "{FUZZ_INTERFACE}"}}"#))
}

/// The sample's interfaces, the first one's `interface_input`, and a harness whose NFs see time `now_ns`.
fn input_at(now_ns: u64) -> (Arc<Interfaces>, Box<dyn NetworkFunction>, Harness) {
    let ifs = Interfaces::sample();
    let input = input_on(&ifs);
    let mut h = Harness::default();
    h.set_now(now_ns);
    (ifs, input, h)
}

/// Arrived on the sample's interface `port`, at ingress time `ts_ns`.
fn on(port: u16, ts_ns: u64) -> PacketMeta {
    PacketMeta { port, ts_ns, ..PacketMeta::default() }
}

fn arp_frame(dst: [u8; 6], op: u16, sender_mac: [u8; 6], sender: [u8; 4], target: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    sluice_core::wire::ethernet::write_header(&mut f, dst, sender_mac, 0x0806);
    arp::write(&mut f[14..], op, sender_mac, u32::from_be_bytes(sender), [0; 6], u32::from_be_bytes(target));
    f
}

fn udp4(src: [u8; 4], dst: [u8; 4], ttl: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4(src, dst, ttl).udp(5000, 33434).write(&mut f, payload).unwrap();
    f
}

fn udp6(src: [u8; 16], dst: [u8; 16], hop_limit: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv6(src, dst, hop_limit).udp(5000, 33434).write(&mut f, payload).unwrap();
    f
}

fn v6(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

/// An ICMPv6 neighbour solicitation for `target` from `src` (with its source link-layer option) at `hop_limit`.
fn solicit(src: [u8; 16], target: [u8; 16], hop_limit: u8) -> Vec<u8> {
    let mut body = target.to_vec();
    body.extend([1, 1]);
    body.extend(HOST);
    let group = sluice_core::wire::icmpv6::solicited_node(u128::from_be_bytes(target));
    let mut f = Vec::new();
    PacketBuilder::ethernet2(HOST, sluice_core::wire::icmpv6::multicast_mac(group))
        .ipv6(src, group.to_be_bytes(), hop_limit)
        .icmpv6_raw(135, 0, [0; 4])
        .write(&mut f, &body)
        .unwrap();
    f
}

#[test]
fn an_arp_request_for_the_interface_is_answered_and_its_asker_learned() {
    let (ifs, mut input, mut h) = input_at(5_000);
    let out = h.run_with_meta(input.as_mut(), &[arp_frame([0xff; 6], arp::REQUEST, HOST, [10, 0, 1, 1], [10, 0, 1, 254])], &[on(0, 0)]);
    let [reply] = &out.gates[1][..] else { panic!("one reply: {out:?}") };
    assert_eq!((&reply[..6], &reply[6..12], &reply[12..14]), (&HOST[..], &ROUTER[..], &[8u8, 6][..]));
    let a = arp::Packet::new_checked(&reply[14..]).unwrap();
    assert_eq!((a.operation(), a.sender_mac(), a.sender_ip(), a.target_mac(), a.target_ip()), (arp::REPLY, ROUTER, 0x0a00_01fe, HOST, 0x0a00_0101));
    let learned = ifs.get(0).unwrap().neighbors.lookup(v4_key(0x0a00_0101), 5_000).unwrap();
    assert_eq!((learned.mac, learned.state), (HOST, State::Stale), "a request teaches, unasked (RFC 826's merge)");
    // Another's address is not answered; a claim on the interface's own is refused and counted.
    let other = h.run_with_meta(input.as_mut(), &[arp_frame([0xff; 6], arp::REQUEST, HOST, [10, 0, 1, 1], [10, 0, 1, 7])], &[on(0, 0)]);
    assert_eq!((other.gates[1].len(), other.dropped, other.taken_in), (0, 0, 1), "taken in: heard, not lost");
    let conflict = h.run_with_meta(input.as_mut(), &[arp_frame([0xff; 6], arp::REQUEST, HOST2, [10, 0, 1, 254], [10, 0, 1, 254])], &[on(0, 0)]);
    assert_eq!(conflict.dropped, 1);
    let mut counters = [0u64; 16];
    input.read_counters(&mut counters);
    let names = sluice_nf::interface_input::COUNTERS;
    assert_eq!(counters[names.iter().position(|&n| n == "address_conflict").unwrap()], 1);
    assert_eq!(ifs.get(0).unwrap().neighbors.lookup(v4_key(0x0a00_01fe), 5_000), None, "its own address is never learned");
}

#[test]
fn a_neighbour_solicitation_is_answered_as_rfc_4861_says_and_one_with_a_forwarded_hop_limit_dropped() {
    let (ifs, mut input, mut h) = input_at(1);
    let host = v6("2001:db8:1::1");
    let out = h.run_with_meta(input.as_mut(), &[solicit(host, v6("2001:db8:1::fe"), 255), solicit(host, v6("2001:db8:1::fe"), 64)], &[on(0, 0), on(0, 0)]);
    assert_eq!((out.dropped, out.taken_in), (1, 1), "the hop limit of 64 says it was forwarded; the other is answered");
    let [advert] = &out.gates[1][..] else { panic!("{out:?}") };
    let p = SlicedPacket::from_ethernet(advert).unwrap();
    let Some(NetSlice::Ipv6(ip)) = &p.net else { panic!() };
    assert_eq!((ip.header().source(), ip.header().destination(), ip.header().hop_limit()), (v6("2001:db8:1::fe"), host, 255));
    let Some(TransportSlice::Icmpv6(icmp)) = &p.transport else { panic!() };
    assert_eq!(icmp.icmp_type(), Icmpv6Type::Unknown { type_u8: 136, code_u8: 0, bytes5to8: [0xe0, 0, 0, 0] }, "router, solicited, override");
    let expected = icmp.header().icmp_type.calc_checksum(ip.header().source(), ip.header().destination(), icmp.payload()).unwrap();
    assert_eq!(icmp.checksum(), expected);
    assert_eq!(icmp.payload(), &[&v6("2001:db8:1::fe")[..], &[2, 1], &ROUTER[..]].concat()[..], "target and its link-layer address");
    assert_eq!(&advert[..6], &HOST[..]);
    assert_eq!(ifs.get(0).unwrap().neighbors.lookup(u128::from_be_bytes(host), 1).map(|e| e.mac), Some(HOST));
}

#[test]
fn pings_to_any_of_the_router_s_addresses_are_answered_and_a_datagram_with_a_port_unreachable() {
    let (_ifs, mut input, mut h) = input_at(1);
    let mut ping4 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4([10, 0, 1, 1], [10, 0, 2, 254], 64).icmpv4_echo_request(7, 1).write(&mut ping4, b"hello").unwrap();
    let mut ping6 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv6(v6("2001:db8:1::1"), v6("2001:db8:1::fe"), 64).icmpv6_echo_request(7, 2).write(&mut ping6, b"hello").unwrap();
    let udp = udp4([10, 0, 1, 1], [10, 0, 1, 254], 64, b"to a closed port");
    let forward = udp4([10, 0, 1, 1], [10, 0, 2, 1], 64, b"through");
    let out = h.run_with_meta(input.as_mut(), &[ping4, ping6, udp.clone(), forward.clone()], &[on(0, 0); 4]);
    assert_eq!(out.gates[0], vec![forward], "the packet to another host goes on untouched");
    let [r4, r6, unreachable] = &out.gates[1][..] else { panic!("{out:?}") };
    let p = SlicedPacket::from_ethernet(r4).unwrap();
    let Some(NetSlice::Ipv4(ip)) = &p.net else { panic!() };
    assert_eq!((ip.header().source(), ip.header().destination()), ([10, 0, 2, 254], [10, 0, 1, 1]), "from the address pinged");
    let Some(TransportSlice::Icmpv4(icmp)) = &p.transport else { panic!() };
    assert_eq!(icmp.icmp_type(), Icmpv4Type::EchoReply(etherparse::IcmpEchoHeader { id: 7, seq: 1 }));
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(icmp.payload()));
    assert!(ip.header().to_header().calc_header_checksum() == ip.header().header_checksum());
    let p = SlicedPacket::from_ethernet(r6).unwrap();
    let (Some(NetSlice::Ipv6(ip)), Some(TransportSlice::Icmpv6(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!(icmp.icmp_type(), Icmpv6Type::EchoReply(etherparse::IcmpEchoHeader { id: 7, seq: 2 }));
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(ip.header().source(), ip.header().destination(), icmp.payload()).unwrap());
    let p = SlicedPacket::from_ethernet(unreachable).unwrap();
    let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Icmpv4(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!(ip.header().source(), [10, 0, 1, 254]);
    assert!(matches!(icmp.icmp_type(), Icmpv4Type::DestinationUnreachable(etherparse::icmpv4::DestUnreachableHeader::Port)));
    assert_eq!(icmp.payload(), &udp[14..], "the whole datagram, under 576 bytes, quoted");
}

#[test]
fn a_packet_to_the_router_in_a_protocol_it_does_not_speak_is_answered_protocol_unreachable() {
    let (_ifs, mut input, mut h) = input_at(1);
    let gre = etherparse::IpNumber(47);
    let mut gre4 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4([10, 0, 1, 1], [10, 0, 2, 254], 64).write(&mut gre4, gre, &[0, 0, 8, 0]).unwrap();
    // SCTP behind a destination-options header (PadN): the error points at that header's next-header byte.
    let mut sctp6 = Vec::new();
    let options = [132, 0, 1, 4, 0, 0, 0, 0, 0xaa, 0xbb];
    PacketBuilder::ethernet2(HOST, ROUTER).ipv6(v6("2001:db8:1::1"), v6("2001:db8:1::fe"), 64).write(&mut sctp6, etherparse::IpNumber(60), &options).unwrap();
    let mut nothing6 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv6(v6("2001:db8:1::1"), v6("2001:db8:1::fe"), 64).write(&mut nothing6, etherparse::IpNumber(59), &[]).unwrap();
    let mut timestamp4 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4([10, 0, 1, 1], [10, 0, 1, 254], 64).icmpv4_raw(13, 0, [0; 4]).write(&mut timestamp4, &[0; 12]).unwrap();
    let out = h.run_with_meta(input.as_mut(), &[gre4.clone(), sctp6.clone(), nothing6, timestamp4], &[on(0, 0); 4]);
    assert_eq!((out.gates[0].len(), out.dropped), (0, 2), "no next header, and an ICMP message other than a ping, dropped unanswered");
    let [r4, r6] = &out.gates[1][..] else { panic!("{out:?}") };
    let p = SlicedPacket::from_ethernet(r4).unwrap();
    let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Icmpv4(icmp))) = (&p.net, &p.transport) else { panic!("{p:?}") };
    assert_eq!((ip.header().source(), ip.header().destination()), ([10, 0, 2, 254], [10, 0, 1, 1]), "from the address it was sent to");
    assert!(matches!(icmp.icmp_type(), Icmpv4Type::DestinationUnreachable(etherparse::icmpv4::DestUnreachableHeader::Protocol)));
    assert_eq!((icmp.payload(), icmp.checksum()), (&gre4[14..], icmp.icmp_type().calc_checksum(icmp.payload())));
    let p = SlicedPacket::from_ethernet(r6).unwrap();
    let (Some(NetSlice::Ipv6(ip)), Some(TransportSlice::Icmpv6(icmp))) = (&p.net, &p.transport) else { panic!("{p:?}") };
    assert_eq!((ip.header().source(), ip.header().destination()), (v6("2001:db8:1::fe"), v6("2001:db8:1::1")));
    let problem = etherparse::icmpv6::ParameterProblemHeader { code: etherparse::icmpv6::ParameterProblemCode::UnrecognizedNextHeader, pointer: 40 };
    assert_eq!(icmp.icmp_type(), Icmpv6Type::ParameterProblem(problem));
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(ip.header().source(), ip.header().destination(), icmp.payload()).unwrap());
    assert_eq!(icmp.payload(), &sctp6[14..], "the whole packet quoted");
}

#[test]
fn a_tcp_segment_to_the_router_is_refused_with_a_reset_and_a_reset_or_a_corrupt_one_is_not() {
    let ifs = Interfaces::sample();
    let mut input = input_on(&ifs);
    let mut h = Harness::default();
    let tcp = |dst6: bool, flags: &dyn Fn(etherparse::TcpHeader) -> etherparse::TcpHeader| {
        let eth = PacketBuilder::ethernet2(HOST, ROUTER);
        let ip = if dst6 { eth.ipv6(v6("2001:db8:1::1"), v6("2001:db8:1::fe"), 64) } else { eth.ipv4([10, 0, 1, 1], [10, 0, 2, 254], 64) };
        let mut f = Vec::new();
        ip.tcp_header(flags(etherparse::TcpHeader::new(40000, 22, 1000, 64240))).write(&mut f, &[]).unwrap();
        f
    };
    let syn = |mut t: etherparse::TcpHeader| {
        t.syn = true;
        t
    };
    let rst = |mut t: etherparse::TcpHeader| {
        t.rst = true;
        t
    };
    let mut corrupt = tcp(false, &syn);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    let out = h.run_with_meta(input.as_mut(), &[tcp(false, &syn), tcp(true, &syn), tcp(false, &rst), corrupt], &[on(0, 0); 4]);
    assert_eq!((out.gates[0].len(), out.dropped), (0, 2), "the reset and the corrupt segment dropped");
    let [r4, r6] = &out.gates[1][..] else { panic!("{out:?}") };
    for (reply, v6) in [(r4, false), (r6, true)] {
        assert_eq!((&reply[..6], &reply[6..12]), (&HOST[..], &ROUTER[..]));
        let p = SlicedPacket::from_ethernet(reply).unwrap();
        let Some(TransportSlice::Tcp(t)) = &p.transport else { panic!("{p:?}") };
        assert_eq!((t.source_port(), t.destination_port(), t.sequence_number(), t.acknowledgment_number()), (22, 40000, 0, 1001));
        assert!(t.rst() && t.ack() && !t.syn() && t.payload().is_empty());
        let expected = match &p.net {
            Some(NetSlice::Ipv4(ip)) if !v6 => {
                assert_eq!((ip.header().source(), ip.header().destination()), ([10, 0, 2, 254], [10, 0, 1, 1]), "from the address it was sent to");
                assert!(ip.header().to_header().calc_header_checksum() == ip.header().header_checksum());
                t.to_header().calc_checksum_ipv4(&ip.header().to_header(), &[]).unwrap()
            }
            Some(NetSlice::Ipv6(ip)) if v6 => t.to_header().calc_checksum_ipv6(&ip.header().to_header(), &[]).unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(t.checksum(), expected);
    }
}

/// `packet` (Ethernet, IPv4 without options) cut into fragments of at most `mtu` bytes of IP packet.
fn fragments4(packet: &[u8], mtu: usize) -> Vec<Vec<u8>> {
    let (head, payload) = packet.split_at(14 + 20);
    let chunk = (mtu - 20) & !7;
    let count = payload.len().div_ceil(chunk);
    payload.chunks(chunk).enumerate().map(|(k, data)| {
        let mut f = [head, data].concat();
        f[16..18].copy_from_slice(&((20 + data.len()) as u16).to_be_bytes());
        let flags = if k + 1 < count { 0x2000 } else { 0 } | (k * chunk / 8) as u16;
        f[20..22].copy_from_slice(&flags.to_be_bytes());
        f[24..26].fill(0);
        let c = !sluice_core::wire::checksum::sum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        f
    }).collect()
}

/// IPv4 fragments `frames`, numbered `ident` instead, their checksums made again.
fn numbered4(mut frames: Vec<Vec<u8>>, ident: u16) -> Vec<Vec<u8>> {
    for f in &mut frames {
        f[18..20].copy_from_slice(&ident.to_be_bytes());
        f[24..26].fill(0);
        let c = !sluice_core::wire::checksum::sum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
    }
    frames
}

/// A ping of `data` from host 1 to the router's first interface, over IPv4 and over IPv6.
fn pings_to_router(data: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut ping4 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4([10, 0, 1, 1], [10, 0, 1, 254], 64).icmpv4_echo_request(9, 1).write(&mut ping4, data).unwrap();
    let mut ping6 = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv6(v6("2001:db8:1::1"), v6("2001:db8:1::fe"), 64).icmpv6_echo_request(9, 2).write(&mut ping6, data).unwrap();
    (ping4, ping6)
}

/// `packet` (Ethernet, IPv6 without extension headers) cut into fragments of at most `mtu` bytes of IP packet, numbered `ident`.
fn fragments6(packet: &[u8], mtu: usize, ident: u32) -> Vec<Vec<u8>> {
    let (head, payload) = packet.split_at(14 + 40);
    let chunk = (mtu - 48) & !7;
    let count = payload.len().div_ceil(chunk);
    payload.chunks(chunk).enumerate().map(|(k, data)| {
        let word = (k * chunk) as u16 | u16::from(k + 1 < count);
        let mut f = [head, &[head[20], 0], &word.to_be_bytes()[..], &ident.to_be_bytes()[..], data].concat();
        f[18..20].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
        f[20] = 44;
        f
    }).collect()
}

#[test]
fn a_ping_to_the_router_in_fragments_is_answered_whole_in_fragments_and_overlapping_ones_are_discarded() {
    let (_ifs, mut input, mut h) = input_at(1);
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let (ping4, ping6) = pings_to_router(&data);
    let (f4, f6) = (fragments4(&ping4, 1500), fragments6(&ping6, 1500, 77));
    assert_eq!((f4.len(), f6.len()), (3, 3));
    // Another datagram whose second fragment overlaps its first.
    let mut other = fragments4(&ping4, 1500);
    other[1][20..22].copy_from_slice(&(0x2000u16 | 1).to_be_bytes());
    let other = numbered4(other, 0xbeef);
    let frames = [&f4[2], &f6[1], &other[0], &f4[0], &f6[2], &f6[2], &other[1], &f4[1], &f6[0]].map(|f| f.clone());
    let out = h.run_with_meta(input.as_mut(), &frames, &[on(0, 0); 9]);
    assert_eq!((out.gates[0].len(), out.dropped), (0, 2), "the overlapping datagram's two fragments dropped, the rest taken in");
    assert_eq!((input.held(), input.due_ns()), (0, None), "no first fragment is kept past its datagram");
    assert_eq!(out.gates[1].len(), 6, "two replies of three fragments each: {:?}", out.gates[1].iter().map(Vec::len).collect::<Vec<_>>());
    // IPv4 put together by etherparse; IPv6 by hand (etherparse 0.16 reads
    // the fragment header's offset and M flag from the wrong bits).
    let mut pool = etherparse::defrag::IpDefragPool::<(), ()>::new();
    let (mut whole, mut pieces6) = (Vec::new(), Vec::new());
    for reply in &out.gates[1] {
        assert!(reply.len() <= 14 + 1500, "each fragment fits the MTU");
        assert_eq!((&reply[..6], &reply[6..12]), (&HOST[..], &ROUTER[..]));
        if reply[12..14] == [0x86, 0xdd] {
            assert_eq!((reply[14 + 6], reply[14 + 40]), (44, 58), "a fragment header, then ICMPv6");
            let word = u16::from_be_bytes([reply[56], reply[57]]);
            let end = 14 + 40 + usize::from(u16::from_be_bytes([reply[18], reply[19]]));
            pieces6.push((usize::from(word & !7), word & 1 == 1, reply[58..62].to_vec(), reply[62..end].to_vec()));
            continue;
        }
        let p = SlicedPacket::from_ethernet(reply).unwrap();
        let Some(NetSlice::Ipv4(ip)) = &p.net else { panic!("{p:?}") };
        let (src, dst) = (ip.header().source().to_vec(), ip.header().destination().to_vec());
        if let Some(done) = pool.process_sliced_packet(&p, (), ()).unwrap() {
            whole.push((src, dst, done.payload));
        }
    }
    pieces6.sort_by_key(|p| p.0);
    let mut icmp6 = Vec::new();
    for (k, (offset, more, ident, data)) in pieces6.iter().enumerate() {
        assert_eq!((*offset, *more, ident), (icmp6.len(), k + 1 < pieces6.len(), &pieces6[0].2), "fragments in a row, one identification");
        icmp6.extend_from_slice(data);
    }
    assert_eq!(pieces6.len(), 3);
    let [(s4, d4, icmp4)] = &whole[..] else { panic!("one IPv4 datagram made whole: {}", whole.len()) };
    assert_eq!((&s4[..], &d4[..]), (&[10, 0, 1, 254][..], &[10, 0, 1, 1][..]));
    let reply4 = etherparse::Icmpv4Slice::from_slice(icmp4).unwrap();
    assert_eq!(reply4.icmp_type(), Icmpv4Type::EchoReply(etherparse::IcmpEchoHeader { id: 9, seq: 1 }));
    assert_eq!((reply4.payload(), reply4.checksum()), (&data[..], reply4.icmp_type().calc_checksum(reply4.payload())));
    assert_eq!((&out.gates[1][3][14 + 8..14 + 24], &out.gates[1][3][14 + 24..14 + 40]), (&v6("2001:db8:1::fe")[..], &v6("2001:db8:1::1")[..]));
    let reply6 = etherparse::Icmpv6Slice::from_slice(&icmp6).unwrap();
    assert_eq!(reply6.icmp_type(), Icmpv6Type::EchoReply(etherparse::IcmpEchoHeader { id: 9, seq: 2 }));
    assert_eq!(reply6.payload(), &data[..]);
    assert_eq!(reply6.checksum(), reply6.icmp_type().calc_checksum(v6("2001:db8:1::fe"), v6("2001:db8:1::1"), reply6.payload()).unwrap());
}

#[test]
fn a_datagram_to_the_router_that_does_not_come_whole_in_time_is_answered_with_a_time_exceeded_quoting_its_first_fragment() {
    let (_ifs, mut input, mut h) = input_at(1);
    // Linux's ipfrag_time: 30 s.
    let timeout = 30_000_000_000;
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let (ping4, ping6) = pings_to_router(&data);
    let (f4, f6) = (fragments4(&ping4, 1500), fragments6(&ping6, 1500, 77));
    // Two fragments of each ping come, the last never; of a third datagram only its last.
    let lone = numbered4(fragments4(&ping4, 1500), 5).pop().unwrap();
    let frames = [&f4[0], &f4[1], &f6[0], &f6[1], &lone].map(|f| f.clone());
    let out = h.run_with_meta(input.as_mut(), &frames, &[on(0, 0); 5]);
    assert_eq!((out.gates[1].len(), out.dropped, out.taken_in), (0, 0, 3), "the first fragments kept, the rest taken in");
    assert_eq!((input.held(), input.due_ns()), (2, Some(1 + timeout)));
    h.set_now(timeout);
    assert_eq!(h.run(input.as_mut(), &[]).gates[1].len(), 0, "not yet");
    h.set_now(1 + timeout);
    let out = h.run(input.as_mut(), &[]);
    assert_eq!((out.dropped, out.taken_in, out.created), (0, 2, 2), "each first fragment taken in and answered");
    assert_eq!((input.held(), input.due_ns()), (0, None), "none kept: the third datagram, without its first fragment, leaves no error");
    let [e4, e6] = &out.gates[1][..] else { panic!("two errors: {out:?}") };
    assert_eq!((&e4[..6], &e4[6..12]), (&HOST[..], &ROUTER[..]));
    let p = SlicedPacket::from_ethernet(e4).unwrap();
    let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Icmpv4(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!((ip.header().source(), ip.header().destination()), ([10, 0, 1, 254], [10, 0, 1, 1]), "from the address the datagram was for");
    assert!(matches!(icmp.icmp_type(), Icmpv4Type::TimeExceeded(etherparse::icmpv4::TimeExceededCode::FragmentReassemblyTimeExceeded)));
    assert_eq!(icmp.payload(), &f4[0][14..14 + 548], "the first fragment, as much as 576 bytes hold");
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(icmp.payload()));
    let p = SlicedPacket::from_ethernet(e6).unwrap();
    let (Some(NetSlice::Ipv6(ip)), Some(TransportSlice::Icmpv6(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!((ip.header().source(), ip.header().destination()), (v6("2001:db8:1::fe"), v6("2001:db8:1::1")));
    assert_eq!(icmp.icmp_type(), Icmpv6Type::TimeExceeded(etherparse::icmpv6::TimeExceededCode::FragmentReassemblyTimeExceeded));
    assert_eq!(icmp.payload(), &f6[0][14..14 + 1232], "the first fragment, as much as 1280 bytes hold");
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(ip.header().source(), ip.header().destination(), icmp.payload()).unwrap());
    let mut counters = [0u64; 16];
    input.read_counters(&mut counters);
    let names = sluice_nf::interface_input::COUNTERS;
    assert_eq!(counters[names.iter().position(|&n| n == "reassembly_timed_out").unwrap()], 2);
    // A run that stops takes the first fragments kept in, unanswered.
    h.run_with_meta(input.as_mut(), &[f4[0].clone()], &[on(0, 0)]);
    input.release_all();
    assert!(input.ready());
    let out = h.run(input.as_mut(), &[]);
    assert_eq!((out.gates[1].len(), out.taken_in, input.held(), input.ready()), (0, 1, 0, false));
}

#[test]
fn an_expired_packet_is_answered_with_a_time_exceeded_quoting_it_and_an_error_about_an_error_is_not() {
    let ifs = Interfaces::sample();
    let mut ttl = build(&ifs, r#"{"type": "ttl_decrement", "icmp": true}"#);
    let mut h = Harness::default();
    h.set_now(1);
    let long = vec![7u8; 1000];
    let expired4 = udp4([10, 0, 1, 1], [10, 0, 2, 1], 1, &long);
    let expired6 = udp6(v6("2001:db8:1::1"), v6("2001:db8:2::1"), 1, &long);
    let alive = udp4([10, 0, 1, 1], [10, 0, 2, 1], 64, b"x");
    let mut about_error = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4([10, 0, 1, 1], [10, 0, 2, 1], 1).icmpv4_raw(3, 1, [0; 4]).write(&mut about_error, &[0; 28]).unwrap();
    let out = h.run_with_meta(ttl.as_mut(), &[expired4.clone(), expired6.clone(), alive, about_error], &[on(0, 0), on(0, 0), on(0, 0), on(0, 0)]);
    // Dropped: the error about an error, and the two the errors are written over.
    assert_eq!((out.gates[0].len(), out.dropped), (1, 3));
    let [e4, e6] = &out.gates[1][..] else { panic!("{out:?}") };
    assert_eq!((&e4[..6], &e4[6..12]), (&HOST[..], &ROUTER[..]), "back to the neighbour that sent it");
    let p = SlicedPacket::from_ethernet(e4).unwrap();
    let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Icmpv4(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!((ip.header().source(), ip.header().destination(), ip.header().ttl()), ([10, 0, 1, 254], [10, 0, 1, 1], 64));
    assert!(matches!(icmp.icmp_type(), Icmpv4Type::TimeExceeded(etherparse::icmpv4::TimeExceededCode::TtlExceededInTransit)));
    assert_eq!(e4.len(), 14 + 576, "576 bytes in all (RFC 1812)");
    assert_eq!(icmp.payload(), &expired4[14..14 + 548]);
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(icmp.payload()));
    let p = SlicedPacket::from_ethernet(e6).unwrap();
    let (Some(NetSlice::Ipv6(ip)), Some(TransportSlice::Icmpv6(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!((ip.header().source(), ip.header().destination()), (v6("2001:db8:1::fe"), v6("2001:db8:1::1")));
    assert_eq!(icmp.icmp_type(), Icmpv6Type::TimeExceeded(etherparse::icmpv6::TimeExceededCode::HopLimitExceeded));
    assert_eq!(icmp.payload(), &expired6[14..], "all of it, under 1280 bytes");
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(ip.header().source(), ip.header().destination(), icmp.payload()).unwrap());
    // A packet from no interface (a synthetic source's) cannot be answered: dropped.
    let unknown = h.run_with_meta(ttl.as_mut(), &[expired4], &[on(NO_PORT, 0)]);
    assert_eq!((unknown.gates[1].len(), unknown.dropped), (0, 1));
}

#[test]
fn errors_to_one_sender_stop_at_the_burst_of_its_rate_limit() {
    let ifs = Interfaces::sample();
    let mut ttl = build(&ifs, r#"{"type": "ttl_decrement", "icmp": true}"#);
    let mut h = Harness::default();
    h.set_now(1_000_000);
    let frames: Vec<Vec<u8>> = (0..20).map(|_| udp4([10, 0, 1, 1], [10, 0, 2, 1], 1, b"x")).collect();
    let out = h.run_with_meta(ttl.as_mut(), &frames, &[on(0, 0); 20]);
    assert_eq!((out.gates[1].len(), out.dropped), (6, 20), "Linux's burst of 6 a destination (every expired packet dropped)");
    let other = h.run_with_meta(ttl.as_mut(), &[udp4([10, 0, 1, 2], [10, 0, 2, 1], 1, b"x")], &[on(0, 0)]);
    assert_eq!(other.gates[1].len(), 1, "another sender has its own");
}

#[test]
fn packets_to_an_unresolved_next_hop_are_held_while_it_is_asked_and_leave_once_it_answers() {
    let ifs = Interfaces::sample();
    let mut hop = build(&ifs, r#"{"type": "next_hop", "interface": "sample1"}"#);
    let mut input = build(&ifs, r#"{"type": "interface_input", "interface": "sample1"}"#);
    let mut h = Harness::default();
    h.set_now(1_000);
    let packets: Vec<Vec<u8>> = (0..3u8).map(|i| udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &[i])).collect();
    let out = h.run_with_meta(hop.as_mut(), &packets, &[on(0, 1_000); 3]);
    let [request] = &out.gates[0][..] else { panic!("only the request goes out: {out:?}") };
    assert_eq!((&request[..6], &request[6..12], &request[12..14]), (&[0xff; 6][..], &ROUTER1[..], &[8u8, 6][..]));
    let a = arp::Packet::new_checked(&request[14..]).unwrap();
    assert_eq!((a.operation(), a.sender_mac(), a.sender_ip(), a.target_ip()), (arp::REQUEST, ROUTER1, 0x0a00_02fe, 0x0a00_0201));
    assert_eq!((hop.held(), hop.due_ns().is_some()), (3, true));
    // The host answers on sample1; the hop sends what it held at its next run.
    let answer = h.run_with_meta(input.as_mut(), &[arp_frame(ROUTER1, arp::REPLY, HOST2, [10, 0, 2, 1], [10, 0, 2, 254])], &[on(1, 0)]);
    assert_eq!((answer.taken_in, answer.dropped), (1, 0), "a reply is taken in, not passed on");
    assert_eq!(ifs.get(1).unwrap().neighbors.lookup(v4_key(0x0a00_0201), 2_000).unwrap().state, State::Reachable);
    h.set_now(100_000);
    let released = h.run(hop.as_mut(), &[]);
    assert_eq!(released.gates[0].len(), 3);
    for (sent, original) in released.gates[0].iter().zip(&packets) {
        assert_eq!((&sent[..6], &sent[6..12]), (&HOST2[..], &ROUTER1[..]));
        assert_eq!(&sent[12..], &original[12..], "in order, untouched past the Ethernet header");
    }
    assert_eq!(hop.held(), 0);
    let next = h.run_with_meta(hop.as_mut(), &packets[..1], &[on(0, 100_000)]);
    assert_eq!(next.gates[0].len(), 1, "resolved: straight out");
}

#[test]
fn an_address_that_never_answers_fails_after_its_probes_and_its_packets_are_answered_unreachable() {
    let ifs = Interfaces::sample();
    let mut hop = build(&ifs, r#"{"type": "next_hop", "interface": "sample1", "via": "10.0.2.9", "hold_pkts": 2}"#);
    let mut h = Harness::default();
    h.set_now(1_000);
    let packets: Vec<Vec<u8>> = (0..3u8).map(|i| udp4([10, 0, 1, 1], [10, 0, 9, 1], 63, &[i])).collect();
    let out = h.run_with_meta(hop.as_mut(), &packets, &[on(0, 1_000); 3]);
    assert_eq!((out.gates[0].len(), out.dropped, hop.held()), (1, 1, 2), "a request; the oldest of three dropped to hold two");
    let mut requests = 1;
    for s in 1..=3u64 {
        h.set_now(1_000 + s * 1_000_000_000);
        let out = h.run(hop.as_mut(), &[]);
        requests += out.gates[0].len();
        if s == 3 {
            assert_eq!(out.gates[1].len(), 2, "each held packet answered with a host unreachable");
            let p = SlicedPacket::from_ethernet(&out.gates[1][0]).unwrap();
            let Some(TransportSlice::Icmpv4(icmp)) = &p.transport else { panic!() };
            assert!(matches!(icmp.icmp_type(), Icmpv4Type::DestinationUnreachable(etherparse::icmpv4::DestUnreachableHeader::Host)));
        }
    }
    assert_eq!((requests, hop.held()), (3, 0), "three requests, one a second (Linux's mcast_solicit)");
    let state = ifs.get(1).unwrap().neighbors.lookup(v4_key(0x0a00_0209), 3_000_001_000).unwrap().state;
    assert_eq!(state, State::Failed);
}

#[test]
fn a_packet_over_the_mtu_is_fragmented_without_df_and_answered_with_df_or_over_ipv6() {
    let specs: Vec<sluice_nf::InterfaceSpec> = serde_json::from_str(
        r#"[{"name": "in", "addresses": ["10.0.1.254/24", "2001:db8:1::fe/64"]},
            {"name": "out", "addresses": ["10.0.2.254/24", "2001:db8:2::fe/64"], "mtu": 1280, "neighbors": [{"address": "10.0.2.1", "mac": "02:00:00:00:02:02"}, {"address": "2001:db8:2::1", "mac": "02:00:00:00:02:02"}]}]"#,
    )
    .unwrap();
    let ifs = Interfaces::build(&specs, &Default::default(), |_| None).unwrap();
    let mut hop = build(&ifs, r#"{"type": "next_hop", "interface": "out"}"#);
    let mut h = Harness::default();
    h.set_now(1);
    let payload: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let mut no_df = udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &payload);
    no_df[20] = 0;
    let ip = &mut no_df[14..34];
    ip[10..12].fill(0);
    let c = !sluice_core::wire::checksum::sum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let df = udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &payload);
    let big6 = udp6(v6("2001:db8:1::1"), v6("2001:db8:2::1"), 63, &payload);
    let out = h.run_with_meta(hop.as_mut(), &[no_df.clone(), df.clone(), big6], &[on(0, 1); 3]);
    let [too_big4, too_big6] = &out.gates[1][..] else { panic!("{out:?}") };
    let p = SlicedPacket::from_ethernet(too_big4).unwrap();
    let Some(TransportSlice::Icmpv4(icmp)) = &p.transport else { panic!() };
    assert!(matches!(icmp.icmp_type(), Icmpv4Type::DestinationUnreachable(etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu: 1280 })));
    let p = SlicedPacket::from_ethernet(too_big6).unwrap();
    let Some(TransportSlice::Icmpv6(icmp)) = &p.transport else { panic!() };
    assert_eq!(icmp.icmp_type(), Icmpv6Type::PacketTooBig { mtu: 1280 });
    // The fragments: each within the MTU, to the neighbour, and together the packet.
    let fragments = &out.gates[0];
    assert_eq!(fragments.len(), 3);
    let mut pool = etherparse::defrag::IpDefragPool::<(), ()>::new();
    let mut whole = None;
    for f in fragments {
        assert!(f.len() - 14 <= 1280 && f[..6] == [2, 0, 0, 0, 2, 2], "{}", f.len());
        let p = SlicedPacket::from_ethernet(f).unwrap();
        let Some(NetSlice::Ipv4(ip)) = &p.net else { panic!() };
        assert!(ip.header().to_header().calc_header_checksum() == ip.header().header_checksum());
        if let Some(done) = pool.process_sliced_packet(&p, (), ()).unwrap() {
            whole = Some(done.payload);
        }
    }
    assert_eq!(whole.expect("reassembled"), no_df[34..].to_vec(), "the UDP datagram whole");
}

#[test]
fn a_gateway_s_packets_once_its_mac_is_known_still_meet_the_mtu_and_the_header_checks() {
    let specs: Vec<sluice_nf::InterfaceSpec> = serde_json::from_str(
        r#"[{"name": "in", "addresses": ["10.0.1.254/24", "2001:db8:1::fe/64"]},
            {"name": "out", "addresses": ["10.0.2.254/24"], "mtu": 1280, "neighbors": [{"address": "10.0.2.1", "mac": "02:00:00:00:02:02"}]}]"#,
    )
    .unwrap();
    let ifs = Interfaces::build(&specs, &Default::default(), |_| None).unwrap();
    let mut hop = build(&ifs, r#"{"type": "next_hop", "interface": "out", "via": "10.0.2.1"}"#);
    let mut h = Harness::default();
    h.set_now(1);
    // The first packet finds the gateway's MAC; the batch after is sent by it.
    let small4 = udp4([10, 0, 1, 1], [20, 0, 0, 1], 63, &[1; 100]);
    let out = h.run_with_meta(hop.as_mut(), std::slice::from_ref(&small4), &[on(0, 1)]);
    assert_eq!(out.gates[0].len(), 1);
    let big4 = udp4([10, 0, 1, 1], [20, 0, 0, 1], 63, &[2; 3000]);
    let small6 = udp6(v6("2001:db8:1::1"), v6("2001:db8:9::1"), 63, &[3; 100]);
    let mut truncated6 = small6.clone();
    truncated6.truncate(small6.len() - 10);
    // An IPv4 header with options (four NOPs), which the gateway's fast path leaves to the parse.
    let mut options4 = udp4([10, 0, 1, 1], [20, 0, 0, 1], 63, &[4; 100]);
    options4.splice(34..34, [1; 4]);
    options4[14] = 0x46;
    let total = u16::from_be_bytes([options4[16], options4[17]]) + 4;
    options4[16..18].copy_from_slice(&total.to_be_bytes());
    let out = h.run_with_meta(hop.as_mut(), &[options4.clone(), small4, big4, small6, truncated6], &[on(0, 2); 5]);
    assert_eq!(out.gates[0].len(), 3, "the three that fit, to the gateway");
    assert_eq!(out.gates[0][0][12..], options4[12..], "the header with options goes as it came, but for its addresses");
    assert!(out.gates[0].iter().all(|f| f[..6] == [2, 0, 0, 0, 2, 2]));
    let [too_big] = &out.gates[1][..] else { panic!("{out:?}") };
    let p = SlicedPacket::from_ethernet(too_big).unwrap();
    let Some(TransportSlice::Icmpv4(icmp)) = &p.transport else { panic!() };
    assert!(matches!(icmp.icmp_type(), Icmpv4Type::DestinationUnreachable(etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu: 1280 })));
    let reasons: Vec<_> = sluice_core::DropReason::counted(&out.drop_reasons).collect();
    assert_eq!(reasons, [("malformed", 1), ("too_big", 1)], "the IPv6 packet shorter than its payload length is malformed; the answered one is too big");
}

/// `frame` (an IPv4 one without options) with `options` (whole words) after its header, and its header checksum made.
fn with_options4(frame: &[u8], options: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    f.splice(34..34, options.iter().copied());
    f[14] = 0x45 + (options.len() / 4) as u8;
    let total = u16::from_be_bytes([f[16], f[17]]) + options.len() as u16;
    f[16..18].copy_from_slice(&total.to_be_bytes());
    let ihl = usize::from(f[14] & 0x0f) * 4;
    f[24..26].fill(0);
    let c = !sluice_core::wire::checksum::sum(&f[14..14 + ihl]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f
}

#[test]
fn a_forwarded_packet_s_record_route_and_timestamp_take_the_router_s_addresses_a_malformed_option_is_a_parameter_problem_and_a_source_route_refused() {
    let specs: Vec<sluice_nf::InterfaceSpec> = serde_json::from_str(
        r#"[{"name": "in", "addresses": ["10.0.1.254/24"]},
            {"name": "out", "addresses": ["10.0.2.254/24"], "mtu": 1280, "neighbors": [{"address": "10.0.2.1", "mac": "02:00:00:00:02:02"}]}]"#,
    )
    .unwrap();
    let ifs = Interfaces::build(&specs, &Default::default(), |_| None).unwrap();
    let mut hop = build(&ifs, r#"{"type": "next_hop", "interface": "out"}"#);
    let mut h = Harness::default();
    h.set_now(1);
    // A record route of two slots, the sender's taken; a timestamp with addresses, room for one pair.
    let options = [7, 11, 8, 10, 0, 1, 1, 0, 0, 0, 0, 1, 68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    let ping = with_options4(&udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &[5; 100]), &options);
    // An option whose length runs past the header, after a no-operation: pointed at, byte 21.
    let bad = with_options4(&udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &[6; 100]), &[1, 148, 9, 0]);
    // Too big for the MTU, without DF: the record route goes in the first fragment only.
    let mut big = with_options4(&udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &[7; 2000]), &options);
    big[20] = 0;
    big[24..26].fill(0);
    let c = !sluice_core::wire::checksum::sum(&big[14..14 + 44]);
    big[24..26].copy_from_slice(&c.to_be_bytes());
    // A loose source route through 10.0.2.1: refused, as Linux refuses it by default.
    let source_routed = with_options4(&udp4([10, 0, 1, 1], [10, 0, 2, 1], 63, &[8; 100]), &[131, 7, 4, 10, 0, 2, 1, 1]);
    let out = h.run_with_meta(hop.as_mut(), &[ping.clone(), bad, big, source_routed], &[on(0, 1); 4]);

    let header_of = |f: &[u8]| {
        let p = SlicedPacket::from_ethernet(f).unwrap();
        let Some(NetSlice::Ipv4(ip)) = &p.net else { panic!("{f:?}") };
        let header = ip.header().to_header();
        assert_eq!(header.calc_header_checksum(), header.header_checksum, "the header checksum made anew");
        header
    };
    let [sent, first, second] = &out.gates[0][..] else { panic!("{out:?}") };
    for forwarded in [sent, first] {
        let header = header_of(forwarded);
        let o = header.options.as_slice();
        assert_eq!(&o[..11], &[7, 11, 12, 10, 0, 1, 1, 10, 0, 2, 254], "the address out recorded after the sender's");
        assert_eq!(&o[12..20], &[68, 12, 13, 1, 10, 0, 1, 254], "the address the packet came in on, then the time");
        let ms = u32::from_be_bytes(o[20..24].try_into().unwrap());
        assert!(ms < 86_400_000, "milliseconds since midnight: {ms}");
    }
    assert!(header_of(second).options.is_empty(), "neither option is copied into later fragments");
    assert_eq!(sent[34 + 24..], ping[34 + 24..], "the rest as it came");
    let [problem] = &out.gates[1][..] else { panic!("{out:?}") };
    let p = SlicedPacket::from_ethernet(problem).unwrap();
    let Some(TransportSlice::Icmpv4(icmp)) = &p.transport else { panic!() };
    assert_eq!(icmp.icmp_type(), Icmpv4Type::ParameterProblem(etherparse::icmpv4::ParameterProblemHeader::PointerIndicatesError(21)));
    let reasons: Vec<_> = sluice_core::DropReason::counted(&out.drop_reasons).collect();
    assert_eq!(reasons, [("malformed", 1), ("denied", 1)], "the malformed one answered, the source-routed one dropped");
}

#[test]
fn a_ping_to_the_router_has_its_options_written_twice_as_linux_writes_them_and_one_to_the_link_s_groups_is_answered() {
    let (_ifs, mut input, mut h) = input_at(1);
    let mut plain = Vec::new();
    PacketBuilder::ethernet2(HOST, ROUTER).ipv4([10, 0, 1, 1], [10, 0, 2, 254], 64).icmpv4_echo_request(7, 1).write(&mut plain, b"hello").unwrap();
    // A record route of three slots, the sender's taken; one whose pointer is short of its first slot.
    let ping = with_options4(&plain, &[7, 15, 8, 10, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    let bad = with_options4(&plain, &[7, 3, 2, 0]);
    let source_routed = with_options4(&plain, &[137, 7, 4, 10, 0, 2, 254, 1]);
    let mut to_all = Vec::new();
    let all_nodes = sluice_core::wire::icmpv6::ALL_NODES.to_be_bytes();
    let host_ll = v6("fe80::1");
    PacketBuilder::ethernet2(HOST, [0x33, 0x33, 0, 0, 0, 1]).ipv6(host_ll, all_nodes, 64).icmpv6_echo_request(7, 2).write(&mut to_all, b"anyone").unwrap();
    let mut udp_to_all = Vec::new();
    PacketBuilder::ethernet2(HOST, [0x33, 0x33, 0, 0, 0, 1]).ipv6(host_ll, all_nodes, 64).udp(5000, 9).write(&mut udp_to_all, b"nobody").unwrap();
    let out = h.run_with_meta(input.as_mut(), &[ping, bad, source_routed, to_all, udp_to_all], &[on(0, 0); 5]);
    assert!(out.gates[0].is_empty(), "{out:?}");
    let [reply, problem, reply6] = &out.gates[1][..] else { panic!("{out:?}") };

    let p = SlicedPacket::from_ethernet(reply).unwrap();
    let Some(NetSlice::Ipv4(ip)) = &p.net else { panic!() };
    let header = ip.header().to_header();
    assert_eq!(header.calc_header_checksum(), header.header_checksum);
    assert_eq!(header.options.as_slice()[..15], [7, 15, 16, 10, 0, 1, 1, 10, 0, 2, 254, 10, 0, 2, 254], "the address pinged, taking the request in and sending the reply");
    let Some(TransportSlice::Icmpv4(icmp)) = &p.transport else { panic!() };
    assert_eq!(icmp.icmp_type(), Icmpv4Type::EchoReply(etherparse::IcmpEchoHeader { id: 7, seq: 1 }));

    let p = SlicedPacket::from_ethernet(problem).unwrap();
    let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Icmpv4(icmp))) = (&p.net, &p.transport) else { panic!() };
    assert_eq!(ip.header().source(), [10, 0, 2, 254], "from the address pinged");
    assert_eq!(icmp.icmp_type(), Icmpv4Type::ParameterProblem(etherparse::icmpv4::ParameterProblemHeader::PointerIndicatesError(22)), "a record route's pointer short of its first slot");

    let p = SlicedPacket::from_ethernet(reply6).unwrap();
    let (Some(NetSlice::Ipv6(ip)), Some(TransportSlice::Icmpv6(icmp))) = (&p.net, &p.transport) else { panic!() };
    let router_ll = sluice_nf::interfaces::link_local(ROUTER).to_be_bytes();
    assert_eq!((ip.header().source(), ip.header().destination()), (router_ll, host_ll), "from the interface's link-local address");
    assert_eq!(icmp.icmp_type(), Icmpv6Type::EchoReply(etherparse::IcmpEchoHeader { id: 7, seq: 2 }));
    assert_eq!(icmp.checksum(), icmp.icmp_type().calc_checksum(router_ll, host_ll, icmp.payload()).unwrap());
    let reasons: Vec<_> = sluice_core::DropReason::counted(&out.drop_reasons).collect();
    assert_eq!(reasons, [("not_ours", 1)], "the strict source route dropped; the datagram to all nodes heard, not answered");
}
