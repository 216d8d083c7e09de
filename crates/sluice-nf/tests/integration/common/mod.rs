//! What the NF test files share.

use proptest::prelude::*;
use sluice_core::harness::Harness;
use sluice_core::wire::ipv4::mask;
use sluice_core::NetworkFunction;
use sluice_nf::{acl, RuleSpec};

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

/// First-match ACL by a scan; a prefix of length 0 matches either family.
pub fn naive_acl(rules: &[RuleSpec], t: &acl::FiveTuple) -> bool {
    use sluice_core::wire::ipv6;
    let m = |p: &str, a: u128| {
        if p.contains(':') {
            let (net, len) = ipv6::parse_prefix(p).unwrap();
            len == 0 || (t.v6 && a & ipv6::mask(len) == net)
        } else {
            let (net, len) = sluice_core::wire::ipv4::parse_prefix(p).unwrap();
            len == 0 || (!t.v6 && a as u32 & mask(len) == net)
        }
    };
    for r in rules {
        if m(&r.src, t.src)
            && m(&r.dst, t.dst)
            && r.proto.is_none_or(|p| p == t.proto)
            && r.sport.0 <= t.sport
            && t.sport <= r.sport.1
            && r.dport.0 <= t.dport
            && t.dport <= r.dport.1
        {
            return r.permit;
        }
    }
    false
}
