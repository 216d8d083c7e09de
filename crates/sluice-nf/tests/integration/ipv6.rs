//! The NFs on IPv6 packets: routed, hop-limited and marked as IPv4 ones
//! are, passed unchanged by the IPv4-only rewriters, and checked against
//! etherparse.

use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TransportSlice};
use proptest::prelude::*;
use sluice_core::harness::Harness;
use sluice_core::NetworkFunction;
use sluice_nf::*;

use crate::common;
use common::same_as_packet_by_packet;

const SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];

/// 2001:db8:0:`host`::1.
fn dst(host: u8) -> [u8; 16] {
    [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, host, 0, 0, 0, 0, 0, 0, 0, 1]
}

/// An Ethernet/IPv6/UDP frame to `dst`, tagged with VLAN `vlan` if any.
fn udp6(dst: [u8; 16], hop_limit: u8, vlan: Option<u16>) -> Vec<u8> {
    let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let mut v = Vec::new();
    match vlan {
        Some(id) => eth.single_vlan(id.try_into().unwrap()).ipv6(SRC, dst, hop_limit).udp(1000, 53).write(&mut v, &[7; 18]),
        None => eth.ipv6(SRC, dst, hop_limit).udp(1000, 53).write(&mut v, &[7; 18]),
    }
    .unwrap();
    v
}

fn udp4(dst: [u8; 4]) -> Vec<u8> {
    let mut v = Vec::new();
    PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4([10, 0, 0, 7], dst, 64).udp(1000, 53).write(&mut v, &[7; 18]).unwrap();
    v
}

/// Hop limit, traffic class and whether the UDP checksum verifies, as etherparse reads them.
fn read(frame: &[u8]) -> (u8, u8, bool) {
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(NetSlice::Ipv6(ip)) = &p.net else { panic!("not IPv6") };
    let h = ip.header().to_header();
    let Some(TransportSlice::Udp(u)) = &p.transport else { panic!("not UDP") };
    (h.hop_limit, h.traffic_class, u.to_header().calc_checksum_ipv6(&h, u.payload()).unwrap() == u.checksum())
}

#[test]
fn the_hop_limit_counts_down_and_expires_behind_a_vlan_tag_too() {
    let mut h = Harness::default();
    for vlan in [None, Some(5)] {
        let out = h.run(&mut TtlDecrement::new(None), &[udp6(dst(1), 64, vlan), udp6(dst(1), 1, vlan), udp6(dst(1), 0, vlan)]);
        assert_eq!(out.dropped, 2, "hop limits 1 and 0 expire");
        assert_eq!(read(&out.gates[0][0]), (63, 0, true));
    }
}

#[test]
fn dscp_is_marked_in_the_traffic_class_with_ecn_kept() {
    let mut frame = udp6(dst(1), 64, None);
    frame[15] |= 0x30; // ECN 3 (the traffic class straddles bytes 14 and 15)
    let out = Harness::default().run(&mut dscp_mark::DscpMark::new(46).unwrap(), &[frame]);
    assert_eq!(read(&out.gates[0][0]), (64, 46 << 2 | 3, true));
}

#[test]
fn type_check_passes_ipv6_by_its_ethertype_alone_or_beside_ipv4() {
    let frames = [udp6(dst(1), 64, None), udp4([20, 0, 1, 1])];
    let out = Harness::default().run(&mut TypeCheck::new(0x86dd), &frames);
    assert_eq!((out.gates[0].as_slice(), out.dropped), (&frames[..1], 1));
    let out = Harness::default().run(&mut TypeCheck::passing(0x0800, &[0x86dd]), &frames);
    assert_eq!((out.gates[0].as_slice(), out.dropped), (&frames[..], 0));
}

#[test]
fn the_ipv4_rewriters_pass_ipv6_unchanged() {
    let frames = [udp6(dst(1), 64, None), udp6(dst(2), 64, Some(9))];
    let rewriters: Vec<Box<dyn NetworkFunction>> = vec![
        Box::new(IpChecksum),
        Box::new(IpSrcRewrite::new(7)),
        Box::new(StaticNat::new("10.0.0.0/24", "20.0.0.0/24").unwrap()),
        Box::new(Napt::new("10.0.0.0/24", 99, 1000, 1010, 1_000_000).unwrap()),
    ];
    for mut nf in rewriters {
        let out = Harness::default().run(nf.as_mut(), &frames);
        assert_eq!((out.gates[0].as_slice(), out.dropped), (&frames[..], 0));
    }
}

#[test]
fn lpm_routes_each_family_by_its_own_table() {
    let mut lpm = LpmSpec { routes: vec![("20.0.1.0/24".into(), 0), ("2001:db8:0:1::/64".into(), 1), ("2001:db8::/32".into(), 2)], ..LpmSpec::default() }
        .build()
        .unwrap();
    let frames = [udp4([20, 0, 1, 9]), udp6(dst(1), 64, None), udp6(dst(2), 64, Some(3)), udp4([9, 9, 9, 9]), udp6([0xfe; 16], 64, None)];
    let out = Harness::default().run(lpm.as_mut(), &frames);
    assert_eq!(out.gates, vec![vec![frames[0].clone()], vec![frames[1].clone()], vec![frames[2].clone()]]);
    assert_eq!(out.dropped, 2, "the misses of each family");
    for bad in ["2001:db8::/129", "2001:db8:::/32"] {
        let err = LpmSpec { routes: vec![(bad.into(), 0)], ..LpmSpec::default() }.build().err().unwrap();
        assert!(err.contains(bad) && err.contains("IPv6"), "{err}");
    }
}

proptest! {
    /// Runs of one destination, of both families interleaved, are looked
    /// up once and routed as each packet would be.
    #[test]
    fn lpm_decides_mixed_runs_as_it_decides_packets(
        picks in proptest::collection::vec((any::<bool>(), 0u8..4, 1usize..6), 1..40),
        routes in proptest::collection::vec((any::<bool>(), 0u8..4, 0u16..3), 1..8),
    ) {
        let routes: Vec<(String, u16)> = routes.iter().map(|&(v6, host, gate)| {
            (if v6 { format!("2001:db8:0:{host}::/64") } else { format!("20.0.{host}.0/24") }, gate)
        }).collect();
        let mut frames = Vec::new();
        for &(v6, host, run) in &picks {
            frames.extend(std::iter::repeat_n(if v6 { udp6(dst(host), 64, None) } else { udp4([20, 0, host, 1]) }, run));
        }
        frames.truncate(sluice_core::MAX_BURST);
        let spec = LpmSpec { routes, ..LpmSpec::default() };
        same_as_packet_by_packet(spec.build().unwrap().as_mut(), spec.build().unwrap().as_mut(), &frames)?;
    }
}

fn tcp6(dst: [u8; 16], sport: u16, flags: &str) -> Vec<u8> {
    let mut b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv6(SRC, dst, 64).tcp(sport, 80, 1, 1000);
    if flags.contains('S') {
        b = b.syn();
    }
    let mut v = Vec::new();
    b.write(&mut v, &[1, 2, 3]).unwrap();
    v
}

#[test]
fn acl_rules_match_their_own_family_and_any_matches_both() {
    let rule = |src: &str, dst: &str, proto: Option<u8>, permit: bool| RuleSpec { src: src.into(), dst: dst.into(), proto, sport: (0, 65535), dport: (0, 65535), permit };
    let rules = vec![
        rule("0.0.0.0/0", "2001:db8:0:2::/64", None, false),
        rule("2001:db8::/32", "::/0", Some(17), true),
        rule("10.0.0.0/8", "0.0.0.0/0", Some(17), true),
        rule("0.0.0.0/0", "0.0.0.0/0", Some(6), true),
    ];
    let mut acl = AclSpec { rules }.build().unwrap();
    let frames = [udp6(dst(1), 64, None), udp6(dst(2), 64, None), tcp6(dst(1), 1, ""), udp4([20, 0, 1, 1]), udp6([0xfe; 16], 64, Some(4))];
    let out = Harness::default().run(acl.as_mut(), &frames);
    // UDP to :1 permitted by rule 1; to :2 denied by rule 0; TCP by the any/any rule 3; IPv4 UDP from 10/8 by rule 2;
    // UDP from 2001:db8::7 to fe.. by rule 1.
    assert_eq!(out.gates[0], vec![frames[0].clone(), frames[2].clone(), frames[3].clone(), frames[4].clone()]);
    assert_eq!(out.dropped, 1);
    let err = AclSpec { rules: vec![rule("10.0.0.0/8", "2001:db8::/32", None, true)] }.build().err().unwrap();
    assert!(err.contains("rule 0: source '10.0.0.0/8' and destination '2001:db8::/32' are of different IP families"), "{err}");
}

#[test]
fn flow_stats_and_the_reframer_key_ipv6_flows_by_their_five_tuple() {
    let mut h = Harness::default();
    let mut stats = FlowStats::new(16).unwrap();
    let frames = [udp6(dst(1), 64, None), udp6(dst(2), 64, None), udp6(dst(1), 64, Some(7)), udp4([20, 0, 1, 1])];
    let out = h.run(&mut stats, &frames);
    assert_eq!(out.gates[0].len(), 4);
    let flow = |host: u8| FiveTuple { src: u128::from_be_bytes(SRC), dst: u128::from_be_bytes(dst(host)), proto: 17, sport: 1000, dport: 53, v6: true };
    assert_eq!(stats.get(&flow(1)).map(|r| r.packets), Some(2), "tagged or not, one flow");
    assert_eq!(stats.get(&flow(2)).map(|r| r.packets), Some(1));
    assert_eq!(stats.get(&FiveTuple::v4(u32::from_be_bytes([10, 0, 0, 7]), u32::from_be_bytes([20, 0, 1, 1]), 17, 1000, 53)).map(|r| r.packets), Some(1));

    // Two IPv6 flows interleaved come out flow by flow; a SYN is not held.
    let config = ReframerConfig { t_buff_ns: 10_000, max_burst: 32, max_flows: 64, max_held: 512, priority: reframer::Priority::OldestInQueue,
                                  bypass: reframer::BypassRules { tcp_control: true, first_packets: 0, dscp: 0 }, coalesce_acks: false };
    let mut r = reframer::Reframer::new(config).unwrap();
    let (a, b) = (tcp6(dst(1), 1, ""), tcp6(dst(1), 2, ""));
    h.set_now(0);
    let held = h.run(&mut r, &[a.clone(), b.clone(), a.clone(), b.clone(), tcp6(dst(3), 3, "S")]);
    assert_eq!(held.gates[0], vec![tcp6(dst(3), 3, "S")], "the SYN passes, the rest is held");
    h.set_now(10_000);
    assert_eq!(h.run(&mut r, &[]).gates[0], vec![a.clone(), a, b.clone(), b]);
    assert_eq!(r.stats().unparsed, 0);
}

proptest! {
    /// The ACL decides mixed-family tuples as a first-match scan does.
    #[test]
    fn acl_decides_both_families_as_a_scan(
        rules in proptest::collection::vec((0u8..3, 0u8..3, any::<bool>(), any::<bool>()), 1..30),
        probes in proptest::collection::vec((any::<bool>(), 0u8..3, 0u8..3, any::<bool>()), 40),
    ) {
        // Family 0: any; 1: IPv4; 2: IPv6. Sources (net 10) in 10.0.h.0/24 or 2001:db8:1h::/48,
        // destinations (net 20) in 20.0.h.0/24 or 2001:db8:2h::/48.
        let prefix = |family: u8, h: u8, net: u8| match family {
            0 => "0.0.0.0/0".to_string(),
            1 => format!("{net}.0.{h}.0/24"),
            _ => format!("2001:db8:{:x}::/48", net / 10 * 16 + h),
        };
        let rules: Vec<RuleSpec> = rules.iter().enumerate().map(|(i, &(family, h, udp, permit))| {
            let dst_family = if family == 0 { 0 } else { family };
            RuleSpec { src: prefix(family, h, 10), dst: prefix(dst_family, (i % 3) as u8, 20), proto: udp.then_some(17), sport: (0, 65535), dport: (0, 65535), permit }
        }).collect();
        let acl = Acl::new(&rules).unwrap();
        for (v6, s, d, udp) in probes {
            let t = if v6 {
                let addr = |net: u8, h: u8| u128::from_be_bytes([0x20, 0x01, 0x0d, 0xb8, 0, net * 16 + h, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]);
                FiveTuple { src: addr(1, s), dst: addr(2, d), proto: if udp { 17 } else { 6 }, sport: 1, dport: 2, v6: true }
            } else {
                FiveTuple::v4(u32::from_be_bytes([10, 0, s, 9]), u32::from_be_bytes([20, 0, d, 9]), if udp { 17 } else { 6 }, 1, 2)
            };
            prop_assert_eq!(acl.permits(&t), common::naive_acl(&rules, &t), "{:?}", t);
        }
    }
}

#[test]
fn exact_match_keys_ip_fields_of_both_families_and_ports_past_extension_headers() {
    let table = vec![("2001:db8:0:1::1".to_string(), 0), ("20.0.1.1".to_string(), 1), ("::ffff:20.0.2.1".to_string(), 2)];
    let mut by_dst = ExactMatchSpec { field: Field::DstIp, table, default_gate: None }.build().unwrap();
    let frames = [udp6(dst(1), 64, None), udp4([20, 0, 1, 1]), udp4([20, 0, 2, 1]), udp6(dst(2), 64, Some(3))];
    let out = Harness::default().run(by_dst.as_mut(), &frames);
    assert_eq!(out.gates, vec![vec![frames[0].clone()], vec![frames[1].clone()], vec![frames[2].clone()]], "an IPv4-mapped key is its IPv4 address");
    assert_eq!(out.dropped, 1);
    let mut by_port = ExactMatchSpec { field: Field::DstPort, table: vec![("53".into(), 0)], default_gate: None }.build().unwrap();
    assert_eq!(Harness::default().run(by_port.as_mut(), &frames).gates[0].len(), 4);
    let err = ExactMatchSpec { field: Field::SrcIp, table: vec![("2001:db8::zz".into(), 0)], default_gate: None }.build().err().unwrap();
    assert!(err.contains("'2001:db8::zz' is not an IPv4 or IPv6 address"), "{err}");
}

/// Whether an outer IPv6/UDP header's checksum verifies, as etherparse computes it.
fn outer_udp6_checksum_ok(frame: &[u8]) -> bool {
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(NetSlice::Ipv6(ip)) = &p.net else { panic!("outer IPv6") };
    let Some(TransportSlice::Udp(u)) = &p.transport else { panic!("outer UDP") };
    u.to_header().calc_checksum_ipv6(&ip.header().to_header(), u.payload()).unwrap() == u.checksum() && u.checksum() != 0
}

#[test]
fn gtpu_carries_either_family_over_either_family_and_decap_restores_the_frame() {
    use sluice_core::wire::Endpoints;
    let mut h = Harness::default();
    let v4_ends = Endpoints::parse("172.16.0.1", "172.16.0.2").unwrap();
    let v6_ends = Endpoints::parse("2001:db8:ff::1", "2001:db8:ff::2").unwrap();
    for (ends, added) in [(v4_ends, 36), (v6_ends, 56)] {
        for frame in [udp6(dst(1), 64, None), udp4([8, 8, 8, 8])] {
            let mut encap = GtpuEncap::new(ends, [2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
            let tunnelled = h.run(&mut encap, std::slice::from_ref(&frame)).gates.remove(0).remove(0);
            assert_eq!(tunnelled.len(), frame.len() + added);
            if added == 56 {
                assert!(outer_udp6_checksum_ok(&tunnelled), "IPv6 needs the outer UDP checksum");
            }
            let back = h.run(&mut GtpuDecap::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]), &[tunnelled]);
            assert_eq!(back.gates[0], vec![frame.clone()], "{ends:?}");
        }
    }
    let err = GtpuEncapSpec { src_ip: "10.0.0.1".into(), dst_ip: "2001:db8::2".into(), src_mac: "02:00:00:00:00:01".into(), dst_mac: "02:00:00:00:00:02".into() }.build().err().unwrap();
    assert!(err.contains("source '10.0.0.1' and destination '2001:db8::2' are of different IP families"), "{err}");
}

#[test]
fn vxlan_over_ipv6_round_trips_with_a_valid_outer_checksum() {
    use sluice_core::wire::Endpoints;
    let mut h = Harness::default();
    let frame = udp6(dst(1), 64, Some(5));
    let mut encap = VxlanEncap::new(Endpoints::parse("2001:db8:ff::1", "2001:db8:ff::2").unwrap(), [2; 6], [3; 6]);
    let tunnelled = h.run(&mut encap, std::slice::from_ref(&frame)).gates.remove(0).remove(0);
    assert_eq!(tunnelled.len(), frame.len() + 70);
    assert!(outer_udp6_checksum_ok(&tunnelled));
    assert_eq!(h.run(&mut VxlanDecap, &[tunnelled]).gates[0], vec![frame]);
}
