//! Ours: path-aware best fit on a coarsened graph, then local search.
//!
//! 1. Coarsen: merge neighbours on a path that carry exactly the same flows
//!    (a user's chain, the shared head of a pipeline) into one unit, as long
//!    as a unit stays within half a core and holds no conflicting pair.
//! 2. Place the units heaviest first, each on the core holding most flows'
//!    worth of its placed neighbours (the most loaded such core on ties):
//!    chains stay whole and follow their selectors.
//! 3. Refine on the modules with [`improve`]: moves and swaps that lower the
//!    total crossings while capacity and conflicts allow.
//!
//! The same refinement also runs from plain best fit and from path-aware
//! best fit on the uncoarsened modules; the best of the three is returned,
//! so the result never has more crossings than improved best fit.

use crate::check::crossings;
use crate::core_loads::{place_decreasing, Cores};
use crate::error::Result;
use crate::heuristic::best_fit;
use crate::instance::{Instance, Placement};

/// Passes [`improve`] makes over all moves and swaps at most in [`path_fit`].
pub const MAX_PASSES: usize = 50;

/// Places the modules of `instance` with the fewest total crossings the
/// three starts above reach; fails (naming a module) only if none fits.
pub fn path_fit(instance: &Instance) -> Result<Placement> {
    let (coarse, unit_of) = coarsen(instance);
    let coarse_start = affinity_fit(&coarse)
        .or_else(|_| best_fit(&coarse))
        .map(|p| improve(&coarse, p, MAX_PASSES))
        .map(|p| unit_of.iter().map(|&u| p[u]).collect());
    let starts = [coarse_start, affinity_fit(instance), best_fit(instance)];
    let mut best: Option<(u64, Placement)> = None;
    let mut first_error = None;
    for start in starts {
        match start {
            Ok(placement) => {
                let improved = improve(instance, placement, MAX_PASSES);
                let sum = crossings(instance, &improved).sum();
                // The earlier start wins ties: the coarse one first.
                if !matches!(&best, Some((fewest, _)) if *fewest <= sum) {
                    best = Some((sum, improved));
                }
            }
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| first_error.expect("every start failed, so one error is kept"))
}

/// The coarsened instance and each module's unit in it.
fn coarsen(instance: &Instance) -> (Instance, Vec<usize>) {
    let n = instance.modules();
    let mut flows_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (f, path) in instance.flows().iter().enumerate() {
        for &v in path {
            if flows_of[v].last() != Some(&f) {
                flows_of[v].push(f);
            }
        }
    }
    let mut units = UnionFind::new(n, (0..n).map(|v| instance.weight(v)).collect());
    let mut members: Vec<Vec<usize>> = (0..n).map(|v| vec![v]).collect();
    for path in instance.flows() {
        for hop in path.windows(2) {
            let (a, b) = (units.find(hop[0]), units.find(hop[1]));
            let fits = units.weight[a] + units.weight[b] <= instance.capacity() / 2;
            let apart = || members[a].iter().any(|&u| members[b].iter().any(|w| instance.conflicts_of(u).binary_search(w).is_ok()));
            if a != b && flows_of[hop[0]] == flows_of[hop[1]] && fits && !apart() {
                let (root, gone) = units.union(a, b);
                let moved = std::mem::take(&mut members[gone]);
                members[root].extend(moved);
            }
        }
    }
    let mut unit_index = vec![usize::MAX; n];
    let mut weights = Vec::new();
    let unit_of: Vec<usize> = (0..n)
        .map(|v| {
            let root = units.find(v);
            if unit_index[root] == usize::MAX {
                unit_index[root] = weights.len();
                weights.push(units.weight[root]);
            }
            unit_index[root]
        })
        .collect();
    let flows = instance
        .flows()
        .iter()
        .map(|path| {
            let mut units: Vec<usize> = path.iter().map(|&v| unit_of[v]).collect();
            units.dedup();
            units
        })
        .collect();
    let conflicts: Vec<(usize, usize)> =
        (0..n).flat_map(|a| instance.conflicts_of(a).iter().filter(move |&&b| b > a).map(move |&b| (a, b))).map(|(a, b)| (unit_of[a], unit_of[b])).collect();
    let coarse = Instance::new(weights, instance.cores(), instance.capacity(), flows, &conflicts).expect("units of a valid instance are valid");
    (coarse, unit_of)
}

/// Union-find over modules that tracks each set's total weight.
struct UnionFind {
    parent: Vec<usize>,
    weight: Vec<u64>,
}

impl UnionFind {
    fn new(n: usize, weight: Vec<u64>) -> Self {
        Self { parent: (0..n).collect(), weight }
    }

    fn find(&mut self, v: usize) -> usize {
        let mut root = v;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut v = v;
        while self.parent[v] != root {
            v = std::mem::replace(&mut self.parent[v], root);
        }
        root
    }

    /// Joins two roots; returns (the root kept, the root merged into it).
    fn union(&mut self, a: usize, b: usize) -> (usize, usize) {
        let (root, gone) = if a < b { (a, b) } else { (b, a) };
        self.parent[gone] = root;
        self.weight[root] += self.weight[gone];
        (root, gone)
    }
}

/// Path-aware best fit: modules by weight (heaviest first, stable), each on
/// the core that holds most flows' worth of its placed neighbours, the
/// most loaded one on ties. Fails where a core runs out, like best fit.
fn affinity_fit(instance: &Instance) -> Result<Placement> {
    place_decreasing(instance, |cores, v, open| {
        open.iter().copied().min_by_key(|&i| (std::cmp::Reverse((cores.affinity(v, i), cores.load[i])), i)).expect("open is never empty")
    })
}

/// Local search on the total crossings: in each pass, every module moves
/// to the core that lowers the crossings most, then every pair of modules
/// on different cores swaps if that lowers them; only moves that keep
/// capacity and conflicts. Stops after a pass without improvement or after
/// `max_passes`. The result is never worse than `placement`.
pub fn improve(instance: &Instance, placement: Placement, max_passes: usize) -> Placement {
    let mut cores = Cores::from_placement(instance, &placement);
    let n = instance.modules();
    for _ in 0..max_passes {
        let mut improved = false;
        for v in 0..n {
            let from = cores.take_off(v);
            let stay = cores.affinity(v, from);
            let to = (0..instance.cores())
                .filter(|&i| i != from && cores.can_take(v, i))
                .map(|i| (cores.affinity(v, i), i))
                .filter(|&(gain, _)| gain > stay)
                .max_by_key(|&(gain, i)| (gain, std::cmp::Reverse(i)))
                .map_or(from, |(_, i)| i);
            improved |= to != from;
            cores.put(v, to);
        }
        for v in 0..n {
            for u in v + 1..n {
                improved |= try_swap(&mut cores, v, u);
            }
        }
        if !improved {
            break;
        }
    }
    cores.into_placement()
}

/// Swaps v and u (on different cores) if capacity and conflicts allow and
/// the total crossings drop; returns whether it did.
fn try_swap(cores: &mut Cores<'_>, v: usize, u: usize) -> bool {
    let (a, b) = (cores.placement[v].expect("placed"), cores.placement[u].expect("placed"));
    if a == b {
        return false;
    }
    let link = cores.instance.links_of(v).iter().find(|&&(w, _)| w == u).map_or(0, |&(_, f)| f);
    // Crossings saved: v's neighbours on b and u's on a, minus the edge
    // between them (it still crosses), minus what each leaves behind.
    let gain_v = i64::from(cores.affinity(v, b)) - i64::from(link) - i64::from(cores.affinity(v, a));
    let gain_u = i64::from(cores.affinity(u, a)) - i64::from(link) - i64::from(cores.affinity(u, b));
    if gain_v + gain_u <= 0 {
        return false;
    }
    cores.take_off(v);
    cores.take_off(u);
    if cores.can_take(v, b) && cores.can_take(u, a) {
        cores.put(v, b);
        cores.put(u, a);
        true
    } else {
        cores.put(v, a);
        cores.put(u, b);
        false
    }
}


