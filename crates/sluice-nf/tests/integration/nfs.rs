//! Every NF on real packets, checked against reference computations.

use etherparse::{PacketBuilder, SlicedPacket, TransportSlice};
use proptest::prelude::*;
use sluice_core::harness::Harness;
use sluice_core::wire::ipv4::mask;
use sluice_core::wire::Endpoints;
use sluice_core::NetworkFunction;
use sluice_nf::*;

use crate::common;
use common::{naive_acl, same_as_packet_by_packet};

fn udp(src: [u8; 4], dst: [u8; 4], ttl: u8, ports: (u16, u16)) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4(src, dst, ttl).udp(ports.0, ports.1);
    let mut v = Vec::new();
    b.write(&mut v, &[7u8; 18]).unwrap();
    v
}

fn tcp(src: [u8; 4], dst: [u8; 4], ports: (u16, u16)) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4(src, dst, 64).tcp(ports.0, ports.1, 1, 1000);
    let mut v = Vec::new();
    b.write(&mut v, &[1, 2, 3]).unwrap();
    v
}

fn ip_checksum_ok(frame: &[u8]) -> bool {
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = p.net else { panic!("not IPv4") };
    let h = ip.header().to_header();
    h.header_checksum == h.calc_header_checksum()
}

fn l4_checksum_ok(frame: &[u8]) -> bool {
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else { panic!("not IPv4") };
    let h = ip.header().to_header();
    match p.transport {
        Some(TransportSlice::Udp(u)) => {
            u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap() == u.checksum()
        }
        Some(TransportSlice::Tcp(t)) => t.to_header().calc_checksum_ipv4(&h, t.payload()).unwrap() == t.checksum(),
        _ => panic!("no L4"),
    }
}

/// Frames no NF may choke on.
fn garbage() -> Vec<Vec<u8>> {
    let good = udp([10, 0, 0, 1], [20, 0, 1, 1], 64, (1, 2));
    let mut bad_version = good.clone();
    bad_version[14] = 0x65;
    let mut bad_ihl = good.clone();
    bad_ihl[14] = 0x4f;
    let mut arp = good.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    vec![vec![], vec![0; 5], good[..20].to_vec(), good[..36].to_vec(), bad_version, bad_ihl, arp, vec![0x81; 64]]
}

/// Every NF that parses the frame.
fn all_nfs() -> Vec<Box<dyn NetworkFunction>> {
    let rule = RuleSpec { src: "0.0.0.0/0".into(), dst: "0.0.0.0/0".into(), proto: Some(17), sport: (0, 65535), dport: (0, 65535), permit: true };
    vec![
        Box::new(TypeCheck::new(0x0800)),
        Box::new(ExactMatch::new(Field::DstPort, &[(2, 0)], None).unwrap()),
        Box::new(ExactMatch::new(Field::VlanId, &[(5, 0)], None).unwrap()),
        Box::new(Lpm::new(&[(0, 0, 0)], &[(0, 0, 0)]).unwrap()),
        Box::new(TtlDecrement::new(None)),
        Box::new(MacRewrite::new([1; 6], [2; 6])),
        Box::new(IpChecksum),
        Box::new(Acl::new(&[rule]).unwrap()),
        Box::new(StaticNat::new("10.0.0.0/24", "20.0.0.0/24").unwrap()),
        Box::new(VlanPop),
        Box::new(VlanPush::new(9).unwrap()),
        Box::new(GtpuEncap::new(Endpoints::V4(1, 2), [1; 6], [2; 6])),
        Box::new(GtpuDecap::new([1; 6], [2; 6])),
        Box::new(VxlanDecap),
        Box::new(IpSrcRewrite::new(7)),
        Box::new(Napt::new("10.0.0.0/24", 99, 1000, 1010, 1_000_000).unwrap()),
    ]
}

#[test]
fn malformed_frames_go_to_the_drop_gate_and_are_counted() {
    let mut h = Harness::default();
    for mut nf in all_nfs() {
        let out = h.run(nf.as_mut(), &garbage()[..4]);
        assert_eq!(out.dropped as usize + out.gates.iter().map(Vec::len).sum::<usize>(), 4);
        assert!(out.dropped >= 2, "frames without an Ethernet header are dropped ({} dropped)", out.dropped);
        let out = h.run(nf.as_mut(), &garbage()[4..]);
        assert_eq!(out.dropped as usize + out.gates.iter().map(Vec::len).sum::<usize>(), garbage().len() - 4);
    }
}

#[test]
fn checksum_and_ttl_keep_the_header_valid() {
    let mut h = Harness::default();
    let mut frame = udp([10, 0, 0, 1], [20, 0, 1, 1], 64, (1, 2));
    frame[24] ^= 0xff; // corrupt the checksum
    assert!(!ip_checksum_ok(&frame));
    let out = h.run(&mut IpChecksum, &[frame]);
    assert!(ip_checksum_ok(&out.gates[0][0]));

    let out = h.run(&mut TtlDecrement::new(None), &[udp([10, 0, 0, 1], [20, 0, 1, 1], 64, (1, 2)), udp([10, 0, 0, 1], [20, 0, 1, 1], 1, (1, 2))]);
    assert_eq!(out.dropped, 1, "TTL 1 expires");
    assert_eq!(out.drop_reasons[sluice_core::DropReason::TtlExpired as usize], 1, "and is counted as expired");
    assert_eq!(out.gates[0][0][22], 63);
    assert!(ip_checksum_ok(&out.gates[0][0]), "incremental update (RFC 1624) matches a full recomputation");
}

#[test]
fn every_drop_is_counted_under_its_reason() {
    use sluice_core::DropReason;
    let mut h = Harness::default();
    let reasons = |out: &sluice_core::harness::Outcome| DropReason::counted(&out.drop_reasons).collect::<Vec<_>>();
    let routed = udp([10, 0, 0, 1], [20, 0, 1, 1], 64, (1, 2));
    let stray = udp([10, 0, 0, 1], [30, 0, 1, 1], 64, (1, 2));
    let mut lpm = Lpm::new(&[(u32::from_be_bytes([20, 0, 0, 0]), 8, 0)], &[]).unwrap();
    assert_eq!(reasons(&h.run(&mut lpm, &[routed.clone(), stray.clone(), vec![0; 20]])), [("malformed", 1), ("no_route", 1)]);
    let out = h.run(&mut TtlDecrement::new(None), &[udp([10, 0, 0, 1], [20, 0, 1, 1], 1, (1, 2)), vec![0; 14]]);
    assert_eq!(reasons(&out), [("malformed", 1), ("ttl_expired", 1)]);
    let deny = RuleSpec { src: "0.0.0.0/0".into(), dst: "30.0.0.0/8".into(), proto: None, sport: (0, 65535), dport: (0, 65535), permit: false };
    let rest = RuleSpec { dst: "0.0.0.0/0".into(), permit: true, ..deny.clone() };
    assert_eq!(reasons(&h.run(&mut Acl::new(&[deny, rest]).unwrap(), &[routed, stray])), [("denied", 1)]);
}

#[test]
fn type_check_and_mac_rewrite() {
    let mut h = Harness::default();
    let mut arp = udp([1, 1, 1, 1], [2, 2, 2, 2], 9, (1, 1));
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    let out = h.run(&mut TypeCheck::new(0x0800), &[udp([1, 1, 1, 1], [2, 2, 2, 2], 9, (1, 1)), arp]);
    assert_eq!((out.gates[0].len(), out.dropped), (1, 1));
    let out = h.run(&mut MacRewrite::new([0xa; 6], [0xb; 6]), &[udp([1, 1, 1, 1], [2, 2, 2, 2], 9, (1, 1))]);
    assert_eq!(&out.gates[0][0][..12], &[[0xb; 6], [0xa; 6]].concat()[..]);
}

#[test]
fn exact_match_splits_by_field() {
    let mut h = Harness::default();
    let ip = |s: &str| Field::DstIp.parse_key(s).unwrap();
    let mut em = ExactMatch::new(Field::DstIp, &[(ip("20.0.1.1"), 1), (ip("20.0.2.1"), 0)], Some(2)).unwrap();
    let frames = [udp([1, 1, 1, 1], [20, 0, 1, 1], 9, (1, 1)), udp([1, 1, 1, 1], [20, 0, 2, 1], 9, (1, 1)), udp([1, 1, 1, 1], [9, 9, 9, 9], 9, (1, 1))];
    let out = h.run(&mut em, &frames);
    assert_eq!(out.gates.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 1, 1]);
    assert_eq!(out.gates[1][0], frames[0]);
    let mut ports = ExactMatch::new(Field::DstPort, &[(4789, 0)], None).unwrap();
    let out = h.run(&mut ports, &[tcp([1, 1, 1, 1], [2, 2, 2, 2], (5, 4789)), udp([1, 1, 1, 1], [2, 2, 2, 2], 9, (5, 80))]);
    assert_eq!((out.gates[0].len(), out.dropped), (1, 1));
}

#[test]
fn nat_round_trips_to_identity_with_valid_checksums() {
    let mut h = Harness::default();
    let mut nat = StaticNat::new("10.0.0.0/24", "20.0.0.0/24").unwrap();
    for frame in [udp([10, 0, 0, 7], [30, 0, 0, 1], 64, (1000, 53)), tcp([10, 0, 0, 7], [30, 0, 0, 1], (1000, 80))] {
        let out = h.run(&mut nat, std::slice::from_ref(&frame)).gates.remove(0).remove(0);
        assert_eq!(&out[26..30], &[20, 0, 0, 7], "source translated");
        assert!(ip_checksum_ok(&out) && l4_checksum_ok(&out));
        // The reply comes back to the outside address and is translated inside.
        let proto_tcp = frame[23] == 6;
        let reply = if proto_tcp { tcp([30, 0, 0, 1], [20, 0, 0, 7], (80, 1000)) } else { udp([30, 0, 0, 1], [20, 0, 0, 7], 64, (53, 1000)) };
        let back = h.run(&mut nat, &[reply]).gates.remove(0).remove(0);
        assert_eq!(&back[30..34], &[10, 0, 0, 7], "destination translated back");
        assert!(ip_checksum_ok(&back) && l4_checksum_ok(&back));
    }
}

/// Naive longest-prefix match: the longest matching route, the last one among equals.
fn naive_lpm(routes: &[(u32, u8, u16)], addr: u32) -> Option<u16> {
    let mut best: Option<(u8, u16)> = None;
    for &(net, len, gate) in routes {
        if addr & mask(len) == net & mask(len) && best.is_none_or(|(l, _)| len >= l) {
            best = Some((len, gate));
        }
    }
    best.map(|b| b.1)
}


fn route() -> impl Strategy<Value = (u32, u8, u16)> {
    // Addresses in a narrow space so that prefixes overlap often.
    (0u32..4096, 8u8..=32, 0u16..8).prop_map(|(a, len, g)| ((20 << 24) | (a << 12) | (a & 0xfff), len, g))
}

proptest! {
    #[test]
    fn exact_tables_scanned_or_hashed_find_what_a_map_does(
        keys in proptest::collection::btree_set(0u64..64, 0..12),
        probes in proptest::collection::vec(0u64..64, 40),
    ) {
        let entries: Vec<(u64, u16)> = keys.iter().map(|&k| (k, (k % 7) as u16)).collect();
        let table = exact_match::ExactTable::new(&entries).unwrap();
        let map: std::collections::HashMap<u64, u16> = entries.iter().copied().collect();
        for k in probes {
            prop_assert_eq!(table.lookup(k), map.get(&k).copied(), "key {} in a table of {}", k, entries.len());
        }
        if let Some(&(k, g)) = entries.first() {
            prop_assert_eq!(exact_match::ExactTable::new(&[(k, g), (k, g)]).err(), Some(k), "a repeated key is refused");
        }
    }

    #[test]
    fn lpm_equals_a_naive_longest_prefix_scan(routes in proptest::collection::vec(route(), 1..60), probes in proptest::collection::vec(0u32..(1 << 24), 50)) {
        let table = lpm::LpmTable::new(&routes).unwrap();
        let addrs: Vec<u32> = probes.iter().map(|p| (20 << 24) | p).collect();
        let mut bulk = vec![None; addrs.len()];
        table.lookup_bulk(&addrs, &mut bulk);
        for (&addr, &found) in addrs.iter().zip(&bulk) {
            prop_assert_eq!(table.lookup(addr), naive_lpm(&routes, addr), "address {:#x}", addr);
            prop_assert_eq!(found, naive_lpm(&routes, addr), "bulk lookup of {:#x}", addr);
        }
    }

    #[test]
    fn acl_equals_a_linear_first_match_scan(
        rules in proptest::collection::vec((0u8..4, 0u8..4, any::<bool>(), 0u16..4, any::<bool>()), 1..30),
        probes in proptest::collection::vec((0u8..4, 0u8..4, 0u16..8, any::<bool>()), 40),
    ) {
        let rules: Vec<RuleSpec> = rules.into_iter().map(|(s, d, udp_only, port, permit)| RuleSpec {
            src: format!("10.0.{s}.0/24"),
            dst: if d == 0 { "0.0.0.0/0".into() } else { format!("20.0.{d}.0/24") },
            proto: udp_only.then_some(17),
            sport: (0, 65535),
            dport: (port, port + 2),
            permit,
        }).collect();
        let acl = Acl::new(&rules).unwrap();
        for (s, d, port, is_udp) in probes {
            let t = acl::FiveTuple::v4(u32::from_be_bytes([10, 0, s, 9]), u32::from_be_bytes([20, 0, d, 9]), if is_udp { 17 } else { 6 }, 1, port);
            prop_assert_eq!(acl.permits(&t), naive_acl(&rules, &t));
        }
    }
}

#[test]
fn vlan_push_then_pop_is_the_identity() {
    let mut h = Harness::default();
    let frame = udp([10, 0, 0, 1], [20, 0, 1, 1], 64, (1, 2));
    let tagged = h.run(&mut VlanPush::new(42).unwrap(), std::slice::from_ref(&frame)).gates.remove(0).remove(0);
    assert_eq!(tagged.len(), frame.len() + 4);
    assert_eq!(&tagged[12..16], &[0x81, 0x00, 0x00, 42]);
    let mut by_vlan = ExactMatch::new(Field::VlanId, &[(42, 0)], None).unwrap();
    assert_eq!(h.run(&mut by_vlan, std::slice::from_ref(&tagged)).gates[0].len(), 1);
    let back = h.run(&mut VlanPop, &[tagged]).gates.remove(0).remove(0);
    assert_eq!(back, frame);
    assert_eq!(h.run(&mut VlanPop, &[frame]).dropped, 1, "an untagged frame has nothing to pop");
    assert!(VlanPush::new(4096).is_err());
}

#[test]
fn gtpu_round_trips_to_identity_and_carries_the_tunnel_id() {
    let mut h = Harness::default();
    let frame = udp([100, 64, 0, 1], [8, 8, 8, 8], 64, (6000, 7000));
    let mut set = SetMetadata::new(0x0102);
    let mut encap = GtpuEncap::new(Endpoints::V4(u32::from_be_bytes([172, 16, 0, 1]), u32::from_be_bytes([1, 10, 100, 1])), [2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    // The harness keeps no metadata between runs, so mark and encapsulate in one pipeline of two NFs.
    let marked = h.run(&mut set, std::slice::from_ref(&frame)).gates.remove(0);
    assert_eq!(marked[0], frame, "set_metadata leaves the bytes alone");
    let tunnelled = h.run(&mut encap, &marked).gates.remove(0).remove(0);
    assert_eq!(tunnelled.len(), frame.len() + 36);
    assert!(ip_checksum_ok(&tunnelled));
    let p = SlicedPacket::from_ethernet(&tunnelled).unwrap();
    let Some(TransportSlice::Udp(udp_outer)) = p.transport else { panic!("outer UDP") };
    assert_eq!(udp_outer.destination_port(), 2152);
    assert_eq!(&tunnelled[42..50], &[0x30, 0xff, 0, (frame.len() - 14) as u8, 0, 0, 0, 0], "G-PDU header, TEID 0 (the harness does not carry marks)");
    assert_eq!(&tunnelled[50..], &frame[14..], "the inner packet rides unchanged");
    let out = h.run(&mut GtpuDecap::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]), &[tunnelled]);
    assert_eq!(out.gates[0][0], frame, "decapsulation restores the original frame");
    let garbage = udp([1, 1, 1, 1], [2, 2, 2, 2], 9, (2152, 2152));
    assert_eq!(h.run(&mut GtpuDecap::new([1; 6], [2; 6]), &[garbage]).dropped, 1, "not a G-PDU");
}

#[test]
fn token_bucket_passes_the_rate_and_the_burst() {
    let mut h = Harness::default();
    let mut tb = TokenBucket::new(1_000_000.0, 4.0).unwrap();
    let frames = vec![udp([1, 1, 1, 1], [2, 2, 2, 2], 9, (1, 2)); 10];
    h.set_now(0);
    let out = h.run(&mut tb, &frames);
    assert_eq!((out.gates[0].len(), out.dropped), (4, 6), "a full bucket lets a burst of 4 through");
    h.set_now(3_000); // 3 µs at 1 Mpps: 3 tokens
    assert_eq!(h.run(&mut tb, &frames).gates[0].len(), 3);
    assert!(TokenBucket::new(0.0, 1.0).is_err() && TokenBucket::new(1.0, 0.5).is_err());
}

#[test]
fn ip_src_rewrite_keeps_checksums_valid() {
    let mut h = Harness::default();
    for frame in [udp([10, 0, 0, 7], [30, 0, 0, 1], 64, (1000, 53)), tcp([10, 0, 0, 7], [30, 0, 0, 1], (1000, 80))] {
        let out = h.run(&mut IpSrcRewrite::new(u32::from_be_bytes([192, 0, 2, 9])), &[frame]).gates.remove(0).remove(0);
        assert_eq!(&out[26..30], &[192, 0, 2, 9]);
        assert!(ip_checksum_ok(&out) && l4_checksum_ok(&out));
    }
}

#[test]
fn vxlan_round_trips_to_identity() {
    let mut h = Harness::default();
    let frame = udp([10, 0, 0, 1], [20, 0, 1, 1], 64, (1, 2));
    let mut encap = VxlanEncap::new(Endpoints::V4(u32::from_be_bytes([172, 16, 0, 1]), u32::from_be_bytes([172, 16, 0, 2])), [2; 6], [3; 6]);
    let tunnelled = h.run(&mut encap, std::slice::from_ref(&frame)).gates.remove(0).remove(0);
    assert_eq!(tunnelled.len(), frame.len() + 50);
    assert!(ip_checksum_ok(&tunnelled));
    assert_eq!(&tunnelled[36..38], &4789u16.to_be_bytes());
    assert_eq!(tunnelled[42], 0x08, "the VNI flag is set");
    assert_eq!(&tunnelled[50..], &frame[..]);
    assert_eq!(h.run(&mut VxlanDecap, &[tunnelled]).gates[0][0], frame);
}

#[test]
fn napt_translates_both_ways_and_forgets_idle_flows() {
    let mut h = Harness::default();
    let public = u32::from_be_bytes([198, 51, 100, 1]);
    let mut napt = Napt::new("10.0.0.0/24", public, 40000, 40001, 1_000_000).unwrap();
    h.set_now(0);
    let out = h.run(&mut napt, &[udp([10, 0, 0, 7], [30, 0, 0, 1], 64, (1234, 53))]).gates.remove(0).remove(0);
    assert_eq!(&out[26..30], &[198, 51, 100, 1]);
    let port = u16::from_be_bytes([out[34], out[35]]);
    assert!((40000..=40001).contains(&port));
    assert!(ip_checksum_ok(&out) && l4_checksum_ok(&out));
    let reply = udp([30, 0, 0, 1], [198, 51, 100, 1], 64, (53, port));
    let back = h.run(&mut napt, std::slice::from_ref(&reply)).gates.remove(0).remove(0);
    assert_eq!(&back[30..34], &[10, 0, 0, 7]);
    assert_eq!(u16::from_be_bytes([back[36], back[37]]), 1234, "destination port translated back");
    assert!(ip_checksum_ok(&back) && l4_checksum_ok(&back));
    assert_eq!(napt.bindings(), 1);
    // A second and a third inside flow: the third finds no port until the first has been idle past the timeout.
    assert_eq!(h.run(&mut napt, &[udp([10, 0, 0, 8], [30, 0, 0, 1], 64, (1, 53))]).dropped, 0);
    assert_eq!(h.run(&mut napt, &[udp([10, 0, 0, 9], [30, 0, 0, 1], 64, (1, 53))]).dropped, 1, "ports exhausted");
    h.set_now(5_000_000);
    assert_eq!(h.run(&mut napt, &[reply]).dropped, 1, "an expired binding no longer lets replies in");
    assert_eq!(h.run(&mut napt, &[udp([10, 0, 0, 9], [30, 0, 0, 1], 64, (1, 53))]).dropped, 0, "idle bindings were reclaimed");
}

/// Frames of flows drawn from `flows` (source port, destination host, UDP or
/// TCP), in runs: what a Reframer's output looks like, or a random mix.
fn flow_frames(flows: &[(u16, u8, bool)], picks: &[(usize, usize)]) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for &(f, run) in picks {
        let (port, host, is_udp) = flows[f % flows.len()];
        for _ in 0..run {
            frames.push(if is_udp { udp([10, 0, 0, 7], [20, 0, host, 1], 64, (port, 53)) } else { tcp([10, 0, 0, 7], [20, 0, host, 1], (port, 80)) });
        }
    }
    frames.truncate(sluice_core::MAX_BURST);
    frames
}

proptest! {
    #[test]
    fn flow_aware_nfs_decide_runs_as_they_decide_packets(
        flows in proptest::collection::vec((1000u16..1006, 0u8..6, any::<bool>()), 1..8),
        picks in proptest::collection::vec((0usize..8, 1usize..6), 1..60),
        routes in proptest::collection::vec((0u8..6, 16u8..=32, 0u16..3), 1..8),
        rules in proptest::collection::vec((0u8..6, 1000u16..1006, any::<bool>()), 1..400),
    ) {
        let frames = flow_frames(&flows, &picks);
        let routes: Vec<(u32, u8, u16)> = routes.iter().map(|&(h, len, g)| (u32::from_be_bytes([20, 0, h, 1]), len, g)).collect();
        same_as_packet_by_packet(&mut Lpm::new(&routes, &[]).unwrap(), &mut Lpm::new(&routes, &[]).unwrap(), &frames)?;
        // Few rules: a shallow tree, decided packet by packet; many: a deep one, walked in lockstep.
        for n in [3, rules.len()] {
            let rules: Vec<RuleSpec> = rules[..n.min(rules.len())].iter().map(|&(h, port, permit)| RuleSpec {
                src: "10.0.0.0/8".into(), dst: format!("20.0.{h}.0/24"), proto: None, sport: (port, port), dport: (0, 65535), permit,
            }).collect();
            same_as_packet_by_packet(&mut Acl::new(&rules).unwrap(), &mut Acl::new(&rules).unwrap(), &frames)?;
        }
        let napt = || Napt::new("10.0.0.0/8", u32::from_be_bytes([30, 0, 0, 1]), 2000, 2003, 1_000_000_000).unwrap();
        same_as_packet_by_packet(&mut napt(), &mut napt(), &frames)?;
        let (mut batched, mut single) = (FlowStats::new(4).unwrap(), FlowStats::new(4).unwrap());
        same_as_packet_by_packet(&mut batched, &mut single, &frames)?;
        for &(port, host, is_udp) in &flows {
            let key = FiveTuple::v4(u32::from_be_bytes([10, 0, 0, 7]), u32::from_be_bytes([20, 0, host, 1]), if is_udp { 17 } else { 6 }, port, if is_udp { 53 } else { 80 });
            prop_assert_eq!(batched.get(&key), single.get(&key));
        }
    }
}

#[test]
fn flow_stats_counts_runs_with_one_lookup_and_passes_every_packet() {
    let mut h = Harness::default();
    h.set_now(5);
    let mut stats = FlowStats::new(2).unwrap();
    let frames = flow_frames(&[(1000, 1, true), (1001, 1, true), (1002, 1, false)], &[(0, 3), (1, 2), (0, 1), (2, 4)]);
    let out = h.run(&mut stats, &frames);
    assert_eq!(out.gates[0], frames, "every packet passes, in order");
    let a = FiveTuple::v4(u32::from_be_bytes([10, 0, 0, 7]), u32::from_be_bytes([20, 0, 1, 1]), 17, 1000, 53);
    let rec = stats.get(&a).unwrap();
    assert_eq!((rec.packets, rec.bytes, rec.first_ns, rec.last_ns), (4, 4 * frames[0].len() as u64, 5, 5));
    let mut slots = [0; sluice_core::telemetry::NF_COUNTERS];
    stats.read_counters(&mut slots);
    // Three runs of tracked flows looked up; the TCP flow found the table (of two) full.
    assert_eq!(&slots[..4], &[2, 4, 4, 0], "flows, lookups, untracked, unparsed");
    assert!(FlowStats::new(0).is_err());
}
