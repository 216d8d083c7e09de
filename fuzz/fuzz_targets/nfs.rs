//! Every NF that parses packets, on arbitrary frames: no panic, and every
//! packet leaves by a gate or the drop gate (none lost, none made up).
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use sluice_core::harness::Harness;
use sluice_core::packet::MAX_PACKET_LEN;
use sluice_core::NetworkFunction;
use sluice_nf::NfSpec;

/// One configuration of each packet-parsing NF.
const SPECS: &[&str] = &[
    r#"{"type": "type_check", "ether_type": 2048}"#,
    r#"{"type": "exact_match", "field": "dst_mac", "table": [["02:00:00:00:00:01", 0]], "default_gate": 1}"#,
    r#"{"type": "exact_match", "field": "vlan_id", "table": [["7", 0]]}"#,
    r#"{"type": "exact_match", "field": "dst_ip", "table": [["10.0.0.1", 0]], "default_gate": 1}"#,
    r#"{"type": "exact_match", "field": "src_port", "table": [["2152", 0]], "default_gate": 1}"#,
    r#"{"type": "lpm", "routes": [["10.0.0.0/8", 0], ["10.1.0.0/16", 1], ["0.0.0.0/0", 2]]}"#,
    r#"{"type": "ttl_decrement"}"#,
    r#"{"type": "mac_rewrite", "src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}"#,
    r#"{"type": "ip_checksum"}"#,
    r#"{"type": "ip_src_rewrite", "addr": "192.0.2.1"}"#,
    r#"{"type": "acl", "rules": [{"src": "10.0.0.0/8", "proto": 17, "dport": [1000, 2000], "permit": true}, {"permit": false}]}"#,
    r#"{"type": "static_nat", "inside": "10.0.0.0/8", "outside": "100.0.0.0/8"}"#,
    r#"{"type": "napt", "inside": "10.0.0.0/8", "public": "192.0.2.1", "first_port": 1024, "last_port": 1100, "timeout_s": 1.0}"#,
    r#"{"type": "vlan_pop"}"#,
    r#"{"type": "vlan_push", "vlan": 7}"#,
    r#"{"type": "gtpu_encap", "src_ip": "1.1.1.1", "dst_ip": "2.2.2.2", "src_mac": "02:00:00:00:00:01", "dst_mac": "02:00:00:00:00:02"}"#,
    r#"{"type": "gtpu_decap", "src_mac": "02:00:00:00:00:01", "dst_mac": "02:00:00:00:00:02"}"#,
    r#"{"type": "vxlan_encap", "src_ip": "1.1.1.1", "dst_ip": "2.2.2.2", "src_mac": "02:00:00:00:00:01", "dst_mac": "02:00:00:00:00:02"}"#,
    r#"{"type": "vxlan_decap"}"#,
];

/// The NFs, built once (an LPM table is 32 MiB) and kept across inputs, so
/// that stateful ones (NAPT, token bucket) see sequences of packets too.
static NFS: Mutex<Vec<(NfSpec, Box<dyn NetworkFunction>)>> = Mutex::new(Vec::new());
static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut nfs = NFS.lock().unwrap_or_else(|e| e.into_inner());
    if nfs.is_empty() {
        for s in SPECS {
            let spec: NfSpec = serde_json::from_str(s).expect("valid NF configuration");
            let nf = spec.build().expect("valid NF configuration");
            nfs.push((spec, nf));
        }
    }
    // Up to 4 frames, split at the first bytes' say, each at most one buffer long.
    let Some((&cut, rest)) = data.split_first() else { return };
    let at = (cut as usize * rest.len() / 256).min(rest.len());
    let frames: Vec<Vec<u8>> = [&rest[..at], &rest[at..]].iter().map(|f| f[..f.len().min(MAX_PACKET_LEN - 64)].to_vec()).collect();
    let mut harness = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let harness = harness.get_or_insert_with(Harness::default);
    for (spec, nf) in nfs.iter_mut() {
        let out = harness.run(nf.as_mut(), &frames);
        let passed: usize = out.gates.iter().map(Vec::len).sum();
        assert_eq!(passed as u64 + out.dropped, frames.len() as u64, "{spec:?} lost or made packets");
    }
});
