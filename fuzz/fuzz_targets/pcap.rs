//! The capture reader (pcap, pcapng) on arbitrary files: refused with a
//! reason, or replayed without a panic.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use sluice_core::{Batch, PacketPool, PacketSource};
use sluice_traffic::{Capture, FlowRules, PcapReplay, PrefixRule};

fuzz_target!(|data: &[u8]| {
    let rules = FlowRules::of_prefixes(&[PrefixRule { prefix: [10, 0, 0, 0].into(), len: 8, flow: 0 }]).expect("a valid rule");
    match Capture::read(data, "fuzz.pcap").and_then(|c| PcapReplay::new(Arc::new(c), "fuzz.pcap", rules, f64::INFINITY)) {
        Ok(mut replay) => {
            let mut pool = PacketPool::new(64);
            let mut batch = Batch::default();
            replay.fill(&mut pool, 0, &mut batch, 32);
            assert!(batch.len() <= 32);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
