//! Heuristics that place modules on cores, all deterministic (the random
//! one by its seed) and all checked against capacity and conflicts as they
//! go. Ties go to the lower module index and the lower core index.
//!
//! All take the modules heaviest first (stable in index order) and differ
//! in the core each module goes to:
//!
//! - [`round_robin`]: the worst case the dissertation compares against:
//!   the next core in turn that can take it.
//! - [`random`]: the straw man: a core drawn at random among those that
//!   can take it.
//! - [`best_fit`]: best-fit decreasing as published: the most loaded core
//!   that can take it.
//!
//! Ours, [`path_fit`](crate::path_fit::path_fit), is in its own file.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::core_loads::place_decreasing;
use crate::error::Result;
use crate::instance::{Instance, Placement};

/// Round robin: modules heaviest first, each on the first core from the
/// one after the previous module's that has room and no conflict.
pub fn round_robin(instance: &Instance) -> Result<Placement> {
    let n = instance.cores();
    let mut next = 0;
    place_decreasing(instance, |_, _, open| {
        let i = open.iter().copied().min_by_key(|&i| (i + n - next) % n).expect("open is never empty");
        next = (i + 1) % n;
        i
    })
}

/// Straw man: modules heaviest first, each on a core drawn uniformly (by
/// `seed`) among those with room and no conflict.
pub fn random(instance: &Instance, seed: u64) -> Result<Placement> {
    let mut rng = SmallRng::seed_from_u64(seed);
    place_decreasing(instance, |_, _, open| open[rng.gen_range(0..open.len())])
}

/// Best-fit decreasing: modules by weight (heaviest first, stable), each on
/// the most loaded core (lower index on ties) that has room and no conflict.
pub fn best_fit(instance: &Instance) -> Result<Placement> {
    place_decreasing(instance, |cores, _, open| open.iter().copied().min_by_key(|&i| (std::cmp::Reverse(cores.load[i]), i)).expect("open is never empty"))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::check::{check, crossings};
    use crate::path_fit::{improve, path_fit, MAX_PASSES};
    use crate::error::EmbedError;

    /// Random instances: up to 30 modules of weight 1..=10 on 2..=6 cores
    /// of capacity 20..=40, chains over random modules, random conflicts.
    fn instances() -> impl Strategy<Value = Instance> {
        (1usize..30, 2usize..6, 20u64..40).prop_flat_map(|(n, cores, capacity)| {
            (
                proptest::collection::vec(1u64..=10, n),
                proptest::collection::vec(proptest::collection::vec(0..n, 1..8), 0..10),
                proptest::collection::vec((0..n, 0..n), 0..12),
            )
                .prop_map(move |(weights, flows, pairs)| {
                    let pairs: Vec<_> = pairs.into_iter().filter(|(a, b)| a != b).collect();
                    Instance::new(weights, cores, capacity, flows, &pairs).expect("valid by construction")
                })
        })
    }

    proptest! {
        #[test]
        fn every_heuristic_returns_an_embedding_or_says_no_room(instance in instances(), seed in 0u64..4) {
            for result in [round_robin(&instance), random(&instance, seed), best_fit(&instance), path_fit(&instance)] {
                match result {
                    Ok(placement) => { check(&instance, &placement).map_err(|e| TestCaseError::fail(e.to_string()))?; }
                    Err(e) => prop_assert!(matches!(e, EmbedError::NoRoom { .. }), "{e}"),
                }
            }
        }

        #[test]
        fn improving_never_adds_crossings(instance in instances()) {
            if let Ok(start) = best_fit(&instance) {
                let before = crossings(&instance, &start).sum();
                let after = improve(&instance, start, MAX_PASSES);
                check(&instance, &after).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(crossings(&instance, &after).sum() <= before);
            }
        }
    }

    /// Two chains of four equal modules, two cores that hold one chain each (and a little more):
    /// best fit interleaves them by weight order, path fit keeps each
    /// chain on one core.
    #[test]
    fn path_fit_keeps_chains_together_where_best_fit_splits_them() {
        let weights = vec![3, 3, 3, 3, 2, 2, 2, 2];
        let instance = Instance::new(weights, 2, 11, vec![vec![0, 4, 1, 5], vec![2, 6, 3, 7]], &[]).unwrap();
        let bf = crossings(&instance, &best_fit(&instance).unwrap()).sum();
        let ours = crossings(&instance, &path_fit(&instance).unwrap()).sum();
        assert!(bf > 0);
        assert_eq!(ours, 0, "best fit {bf}");
    }

    #[test]
    fn heuristics_say_which_module_has_no_room() {
        let instance = Instance::new(vec![5, 5, 5], 2, 5, vec![], &[]).unwrap();
        assert_eq!(best_fit(&instance), Err(EmbedError::NoRoom { module: 2, weight: 5 }));
        assert_eq!(round_robin(&instance), Err(EmbedError::NoRoom { module: 2, weight: 5 }));
    }

    #[test]
    fn conflicting_modules_land_on_different_cores() {
        let instance = Instance::new(vec![1, 1], 2, 10, vec![vec![0, 1]], &[(0, 1)]).unwrap();
        for placement in [round_robin(&instance), random(&instance, 7), best_fit(&instance), path_fit(&instance)] {
            let placement = placement.unwrap();
            assert_ne!(placement[0], placement[1]);
        }
    }
}
