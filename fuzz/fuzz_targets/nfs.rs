//! Every NF that parses packets, on arbitrary frames: no panic, and every
//! packet leaves by a gate or the drop gate, is taken in as the router's
//! or is held (none lost, none made up but those the NF counts as made).
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use sluice_core::harness::Harness;
use sluice_core::packet::MAX_PACKET_LEN;
use sluice_core::NetworkFunction;
use sluice_nf::{Interfaces, NfSpec};

/// The NFs, built once (an LPM table is 32 MiB) and kept across inputs, so
/// that stateful ones (NAPT, token bucket) see sequences of packets too.
static NFS: Mutex<Vec<(NfSpec, Box<dyn NetworkFunction>)>> = Mutex::new(Vec::new());
static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut nfs = NFS.lock().unwrap_or_else(|e| e.into_inner());
    if nfs.is_empty() {
        // Each packet-parsing NF as its own file sets it up for fuzzing.
        let interfaces = Interfaces::sample();
        for spec in NfSpec::fuzz_samples() {
            let nf = spec.build_on(&interfaces).expect("valid NF configuration");
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
        let held = nf.held();
        let out = harness.run(nf.as_mut(), &frames);
        let passed: usize = out.gates.iter().map(Vec::len).sum();
        let now_held = nf.held();
        assert_eq!(
            passed as u64 + out.dropped + out.taken_in + now_held as u64,
            frames.len() as u64 + out.created + held as u64,
            "{spec:?} lost or made packets"
        );
    }
});
