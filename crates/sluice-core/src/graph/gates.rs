//! The order in which a splitter's gates are served: tightest SLO first,
//! gates of equal SLO in an order drawn afresh each time. Buffers behind
//! a splitter that fire in the same round run one after another, and in a
//! fixed order the flows behind the first gate would always wait least
//! (L2L3(16) under Max, 16 flows with one SLO: 9 µs for the first, 18 µs
//! for the last).

use std::collections::HashMap;

use super::hops::Hop;
use crate::model::{Model, ModuleId};

/// Per gate of module `m`, the rank of the tightest SLO of the flows
/// through it (gates no SLO flow passes rank last); empty when all rank alike.
pub(super) fn gate_rank(model: &Model, hops: &HashMap<(ModuleId, ModuleId), Hop>, m: ModuleId) -> Box<[u32]> {
    let tightest: Vec<u64> = model.next[m].iter().map(|&child| hops.get(&(m, child)).map_or(u64::MAX, |h| h.tightest_slo_ns)).collect();
    let mut slos = tightest.clone();
    slos.sort_unstable();
    slos.dedup();
    if slos.len() <= 1 {
        return Box::default();
    }
    tightest.iter().map(|t| slos.binary_search(t).expect("every SLO is listed") as u32).collect()
}


/// Shuffles `gates` (Fisher–Yates; each draw 16 random bits of the
/// walker's generator `draws`, scaled by Lemire's multiply-shift, uniform to
/// within gates/65536), then puts them tightest SLO first by `rank` (per
/// gate; empty: all alike). Sorting by rank alone keeps each rank's order
/// uniformly random.
pub(super) fn order(draws: &mut u64, rank: &[u32], gates: &mut [u32]) {
    let mut bits = 0;
    for (drawn, i) in (1..gates.len()).rev().enumerate() {
        if drawn % 4 == 0 {
            bits = draw(draws);
        }
        let j = ((bits & 0xFFFF) * (i as u64 + 1)) >> 16;
        bits >>= 16;
        gates.swap(i, j as usize);
    }
    if !rank.is_empty() {
        gates.sort_unstable_by_key(|&g| rank[g as usize]);
    }
}

/// The next number of the xorshift generator whose state is `state`.
pub(super) fn draw(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
