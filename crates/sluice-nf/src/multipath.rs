//! Equal- and weighted-cost multipath: a route that spreads its packets
//! over several gates by a hash of each packet's 5-tuple, so that a flow
//! keeps its path (as Linux's `fib_multipath_hash_policy` 1 and VPP's
//! load-balance objects do).
//!
//! Each set of paths is a table of [`BUCKETS`] buckets, resilient: a
//! bucket goes to the path of the highest score −w / ln u, u a hash of the
//! bucket and the path's gate in (0, 1) (weighted rendezvous hashing). A
//! bucket's choice compares only the scores of the paths there are, each
//! its own, so removing a path moves only the buckets it held and adding
//! one only the buckets it wins; each path holds a share of the buckets
//! close to its share of the weights.

use sluice_core::wire::five_tuple::mix;
#[cfg(test)]
use sluice_core::wire::five_tuple::FiveTuple;

/// Buckets of a set of paths (a power of two: a flow hash's low bits pick
/// one): enough that a path's share of them is within a fraction of a
/// percent of its weight's.
pub const BUCKETS: usize = 1 << 16;

/// The most paths a multipath route may have.
pub const MAX_PATHS: usize = 64;

/// One set of paths: the gate of each bucket.
pub struct PathSet {
    buckets: Box<[u16]>,
}

impl PathSet {
    /// The buckets of `paths` (gate, weight); the error names the problem.
    pub fn new(paths: &[(u16, u32)]) -> Result<Self, String> {
        if paths.is_empty() || paths.len() > MAX_PATHS {
            return Err(format!("a multipath route has 1..={MAX_PATHS} paths, not {}", paths.len()));
        }
        if let Some(&(gate, _)) = paths.iter().find(|p| p.1 == 0) {
            return Err(format!("path to gate {gate}: its weight must be ≥ 1"));
        }
        if let Some((i, &(gate, _))) = paths.iter().enumerate().find(|(i, p)| paths[..*i].iter().any(|q| q.0 == p.0)) {
            return Err(format!("paths[{i}]: gate {gate} is named twice"));
        }
        let buckets = (0..BUCKETS as u64)
            .map(|b| {
                let score = |&(gate, weight): &(u16, u32)| -f64::from(weight) / unit(mix(b << 16 | u64::from(gate))).ln();
                let best = paths.iter().max_by(|p, q| score(p).total_cmp(&score(q))).expect("at least one path");
                best.0
            })
            .collect();
        Ok(Self { buckets })
    }

    /// The gate of the flow of hash `flow_hash` (see [`FiveTuple::hash`](sluice_core::wire::five_tuple::FiveTuple::hash)).
    #[inline]
    pub fn gate(&self, flow_hash: u64) -> u16 {
        self.buckets[flow_hash as usize & (BUCKETS - 1)]
    }
}


/// `x`'s top 53 bits as a number in (0, 1).
fn unit(x: u64) -> f64 {
    ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 000 flows of distinct 5-tuples.
    fn flows() -> Vec<FiveTuple> {
        (0..10_000u32).map(|i| FiveTuple::v4(0x0a00_0000 | i, 0x1400_0101, 6, 1024 + (i % 50_000) as u16, 443)).collect()
    }

    /// Each path's share of `flows` (by its gate) under `set`.
    fn shares(set: &PathSet, gates: &[u16]) -> Vec<f64> {
        let flows = flows();
        gates.iter().map(|&g| flows.iter().filter(|f| set.gate(f.hash(7)) == g).count() as f64 / flows.len() as f64).collect()
    }

    #[test]
    fn flows_spread_by_the_weights() {
        for weights in [[1, 1, 1, 1], [1, 2, 3, 4]] {
            let paths: Vec<(u16, u32)> = weights.iter().enumerate().map(|(g, &w)| (g as u16, w)).collect();
            let total: u32 = weights.iter().sum();
            for (share, &w) in shares(&PathSet::new(&paths).unwrap(), &[0, 1, 2, 3]).iter().zip(&weights) {
                let expected = f64::from(w) / f64::from(total);
                assert!((share - expected).abs() <= 0.05 * expected, "weights {weights:?}: share {share} for {expected}");
            }
        }
    }

    #[test]
    fn removing_a_path_moves_only_its_flows_and_adding_one_only_what_it_wins() {
        let four = PathSet::new(&[(0, 1), (1, 1), (2, 1), (3, 1)]).unwrap();
        let three = PathSet::new(&[(0, 1), (1, 1), (3, 1)]).unwrap();
        let mut moved = 0;
        for f in flows() {
            let (before, after) = (four.gate(f.hash(7)), three.gate(f.hash(7)));
            assert!(before == after || before == 2, "a flow of gate {before} moved to {after}");
            moved += usize::from(before != after);
        }
        // Read the other way: adding gate 2 to three paths takes flows to it alone.
        assert!((moved as f64 - 2500.0).abs() < 250.0, "{moved} flows were on gate 2");
    }

    #[test]
    fn a_flow_keeps_its_path_and_seeds_split_alike_sets_differently() {
        let set = PathSet::new(&[(0, 1), (1, 1)]).unwrap();
        let f = flows()[17];
        assert_eq!(set.gate(f.hash(7)), set.gate(f.hash(7)));
        let differ = flows().iter().filter(|f| set.gate(f.hash(7)) != set.gate(f.hash(8))).count();
        assert!(differ > 1000, "{differ} flows change path with the seed");
    }

    #[test]
    fn bad_path_sets_are_refused_by_name() {
        assert!(PathSet::new(&[]).err().unwrap().contains("1..=64 paths"));
        assert_eq!(PathSet::new(&[(0, 1), (1, 0)]).err().unwrap(), "path to gate 1: its weight must be ≥ 1");
        assert_eq!(PathSet::new(&[(0, 1), (0, 2)]).err().unwrap(), "paths[1]: gate 0 is named twice");
    }
}
