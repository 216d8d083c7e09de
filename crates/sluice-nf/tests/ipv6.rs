//! The NFs on IPv6 packets: routed, hop-limited and marked as IPv4 ones
//! are, passed unchanged by the IPv4-only rewriters, and checked against
//! etherparse.

use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TransportSlice};
use proptest::prelude::*;
use sluice_core::harness::Harness;
use sluice_core::NetworkFunction;
use sluice_nf::*;

mod common;
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
        let out = h.run(&mut TtlDecrement, &[udp6(dst(1), 64, vlan), udp6(dst(1), 1, vlan), udp6(dst(1), 0, vlan)]);
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
    let mut lpm = LpmSpec { routes: vec![("20.0.1.0/24".into(), 0), ("2001:db8:0:1::/64".into(), 1), ("2001:db8::/32".into(), 2)] }
        .build()
        .unwrap();
    let frames = [udp4([20, 0, 1, 9]), udp6(dst(1), 64, None), udp6(dst(2), 64, Some(3)), udp4([9, 9, 9, 9]), udp6([0xfe; 16], 64, None)];
    let out = Harness::default().run(lpm.as_mut(), &frames);
    assert_eq!(out.gates, vec![vec![frames[0].clone()], vec![frames[1].clone()], vec![frames[2].clone()]]);
    assert_eq!(out.dropped, 2, "the misses of each family");
    for bad in ["2001:db8::/129", "2001:db8:::/32"] {
        let err = LpmSpec { routes: vec![(bad.into(), 0)] }.build().err().unwrap();
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
        let spec = LpmSpec { routes };
        same_as_packet_by_packet(spec.build().unwrap().as_mut(), spec.build().unwrap().as_mut(), &frames)?;
    }
}
