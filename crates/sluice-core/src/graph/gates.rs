//! The order in which a splitter's gates are served: tightest SLO first,
//! gates of equal SLO in an order drawn afresh each time.

use super::WorkerGraph;
use crate::model::{Flow, Model, ModuleId};

/// Per gate of module `m`, the rank of the tightest SLO of the flows
/// through it (gates no SLO flow passes rank last); empty when all rank alike.
pub(super) fn gate_rank(model: &Model, m: ModuleId) -> Box<[u32]> {
    let tightest: Vec<u64> = model.next[m]
        .iter()
        .map(|&child| {
            let through = |f: &&Flow| f.path.windows(2).any(|hop| hop == [m, child]);
            model.flows.iter().filter(through).filter_map(|f| f.slo_ns).min().unwrap_or(u64::MAX)
        })
        .collect();
    let mut slos = tightest.clone();
    slos.sort_unstable();
    slos.dedup();
    if slos.len() <= 1 {
        return Box::default();
    }
    tightest.iter().map(|t| slos.binary_search(t).expect("every SLO is listed") as u32).collect()
}


impl WorkerGraph {
    /// Shuffles `gates` of module `v` (Fisher–Yates; each draw 16 random
    /// bits scaled by Lemire's multiply-shift, uniform to within
    /// gates/65536), then puts them tightest SLO first
    /// (sorting by rank alone keeps each rank's order uniformly random).
    pub(super) fn order_gates(&mut self, v: usize, gates: &mut [u32]) {
        let mut bits = 0;
        for (drawn, i) in (1..gates.len()).rev().enumerate() {
            if drawn % 4 == 0 {
                bits = self.draw();
            }
            let j = ((bits & 0xFFFF) * (i as u64 + 1)) >> 16;
            bits >>= 16;
            gates.swap(i, j as usize);
        }
        let rank = &self.nodes[v].gate_rank;
        if !rank.is_empty() {
            gates.sort_unstable_by_key(|&g| rank[g as usize]);
        }
    }

    /// The next number of the walker's xorshift generator.
    pub(super) fn draw(&mut self) -> u64 {
        self.draws ^= self.draws << 13;
        self.draws ^= self.draws >> 7;
        self.draws ^= self.draws << 17;
        self.draws
    }
}
