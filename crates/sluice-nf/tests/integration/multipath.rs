//! An LPM's multipath routes on real frames: flows spread by the weights,
//! IPv4 and IPv6, each flow on one path, and a path removed moves only
//! its flows.

use etherparse::PacketBuilder;
use sluice_core::harness::Harness;
use sluice_core::MAX_BURST;
use sluice_nf::lpm::LpmSpec;
use sluice_nf::NfConfig;

/// A UDP frame of flow `i`: IPv4 to 20.0.0.9, or IPv6 to 2001:db8:2::9,
/// from a source address and port of its own.
fn frame(i: u32, v6: bool) -> Vec<u8> {
    let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let sport = 1024 + (i % 60_000) as u16;
    let mut v = Vec::new();
    if v6 {
        let mut src = [0x20, 0x01, 0x0d, 0xb8, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        src[12..].copy_from_slice(&i.to_be_bytes());
        eth.ipv6(src, [0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9], 64).udp(sport, 443).write(&mut v, &[7; 18])
    } else {
        eth.ipv4((0x0a00_0000 | i).to_be_bytes(), [20, 0, 0, 9], 64).udp(sport, 443).write(&mut v, &[7; 18])
    }
    .unwrap();
    v
}

/// The gate `spec`'s LPM sends each frame of `frames` to.
fn gates_of(spec: &LpmSpec, frames: &[Vec<u8>]) -> Vec<usize> {
    let mut lpm = spec.build().unwrap();
    let mut gates = Vec::with_capacity(frames.len());
    for chunk in frames.chunks(MAX_BURST) {
        let out = Harness::default().run(lpm.as_mut(), chunk);
        assert_eq!(out.dropped, 0);
        gates.extend(chunk.iter().map(|f| out.gates.iter().position(|g| g.contains(f)).expect("every frame leaves by a gate")));
    }
    gates
}

fn spec(paths: &[(u16, u32)]) -> LpmSpec {
    LpmSpec {
        routes: vec![("10.0.0.0/8".into(), 4)],
        multipath: vec![("20.0.0.0/8".into(), paths.to_vec()), ("2001:db8:2::/48".into(), paths.to_vec())],
        hash_seed: 11,
        ..LpmSpec::default()
    }
}

#[test]
fn flows_of_both_families_spread_by_weight_and_keep_their_path() {
    let weights = [(0, 1), (1, 2), (2, 3), (3, 4)];
    for v6 in [false, true] {
        let frames: Vec<Vec<u8>> = (0..10_000).map(|i| frame(i, v6)).collect();
        let gates = gates_of(&spec(&weights), &frames);
        for &(gate, weight) in &weights {
            let share = gates.iter().filter(|&&g| g == usize::from(gate)).count() as f64 / 1e4;
            let expected = f64::from(weight) / 10.0;
            assert!((share - expected).abs() <= 0.05 * expected, "v6 {v6}: gate {gate} has {share} of the flows for {expected}");
        }
        assert_eq!(gates_of(&spec(&weights), &frames), gates, "a flow's packets take one path");
    }
}

#[test]
fn an_ipv6_flow_label_is_hashed_only_where_asked() {
    // One 5-tuple, 1 000 flow labels (the low 20 bits of the header's first word).
    let labelled: Vec<Vec<u8>> = (0..1_000u32)
        .map(|label| {
            let mut f = frame(7, true);
            f[15] = (f[15] & 0xf0) | (label >> 16) as u8;
            f[16..18].copy_from_slice(&(label as u16).to_be_bytes());
            f
        })
        .collect();
    let paths = [(0, 1), (1, 1), (2, 1), (3, 1)];
    let one = gates_of(&spec(&paths), &labelled);
    assert!(one.iter().all(|&g| g == one[0]), "a 5-tuple keeps one path whatever its labels");
    let by_label = LpmSpec { hash_flow_label: true, ..spec(&paths) };
    let spread = gates_of(&by_label, &labelled);
    for gate in 0..4 {
        let share = spread.iter().filter(|&&g| g == gate).count();
        assert!((200..=300).contains(&share), "gate {gate}: {share} of 1 000 labels for 250");
    }
    assert_eq!(gates_of(&by_label, &labelled), spread, "a label keeps its path");
}

#[test]
fn removing_a_path_moves_only_its_flows() {
    let frames: Vec<Vec<u8>> = (0..4_000).map(|i| frame(i, i % 2 == 1)).collect();
    let before = gates_of(&spec(&[(0, 1), (1, 1), (2, 1), (3, 1)]), &frames);
    let after = gates_of(&spec(&[(0, 1), (1, 1), (3, 1)]), &frames);
    assert!(before.iter().zip(&after).all(|(b, a)| b == a || *b == 2), "only gate 2's flows move");
    assert!(after.iter().all(|&g| g != 2));
}

#[test]
fn a_multipath_route_is_refused_where_it_cannot_be() {
    let mut both = spec(&[(0, 1)]);
    both.routes.push(("20.0.0.0/8".into(), 1));
    assert_eq!(both.build().err().unwrap(), "multipath[0]: prefix 20.0.0.0/8 is a route too");
    assert_eq!(spec(&[(0, 1), (0, 1)]).build().err().unwrap(), "multipath[0]: paths[1]: gate 0 is named twice");
    assert_eq!(spec(&[(0, 1), (5, 1)]).outgates(), 6, "the paths' gates count");
}
