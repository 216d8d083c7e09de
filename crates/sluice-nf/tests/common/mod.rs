//! What the NF test files share.

use proptest::prelude::*;
use sluice_core::harness::Harness;
use sluice_core::NetworkFunction;

/// Runs `batched` on all of `frames` at once and `single` on each alone:
/// the flow-aware shortcuts must change nothing.
pub fn same_as_packet_by_packet(batched: &mut dyn NetworkFunction, single: &mut dyn NetworkFunction, frames: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let mut h = Harness::default();
    h.set_now(1_000);
    let whole = h.run(batched, frames);
    let mut gates = vec![Vec::new(); whole.gates.len()];
    let mut dropped = 0;
    for f in frames {
        let one = h.run(single, std::slice::from_ref(f));
        dropped += one.dropped;
        for (g, out) in one.gates.into_iter().enumerate() {
            gates[g].extend(out);
        }
    }
    prop_assert_eq!(whole.dropped, dropped);
    prop_assert_eq!(whole.gates, gates);
    Ok(())
}
