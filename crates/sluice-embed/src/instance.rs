//! The embedding instance: modules, cores, flows and conflicts.

use std::collections::BTreeMap;

use crate::error::{EmbedError, Result};

/// A core index per module, indexed by module.
pub type Placement = Vec<usize>;

/// A validated embedding instance.
#[derive(Debug, Clone)]
pub struct Instance {
    weights: Vec<u64>,
    cores: usize,
    capacity: u64,
    flows: Vec<Vec<usize>>,
    conflicts: Vec<Vec<usize>>,
    /// Per module, its flow-graph neighbours and how many flows use that
    /// edge (in either direction); crossings are counted per flow.
    links: Vec<Vec<(usize, u32)>>,
}

/// Cores an instance may have: every per-core table is sized by it.
pub const MAX_CORES: usize = 1 << 16;

impl Instance {
    /// Validates and builds an instance: `weights[v]` is module v's CPU
    /// demand, `flows` are paths of module indices, `conflicts` pairs of
    /// modules that must not share a core.
    pub fn new(weights: Vec<u64>, cores: usize, capacity: u64, flows: Vec<Vec<usize>>, conflicts: &[(usize, usize)]) -> Result<Self> {
        if cores == 0 || capacity == 0 {
            return Err(EmbedError::NoCores { cores, capacity });
        }
        if cores > MAX_CORES {
            return Err(EmbedError::TooManyCores { cores, max: MAX_CORES });
        }
        let modules = weights.len();
        if let Some((module, &weight)) = weights.iter().enumerate().find(|(_, &w)| w > capacity) {
            return Err(EmbedError::TooHeavy { module, weight, capacity });
        }
        let known = |what: &dyn Fn() -> String, module: usize| {
            if module < modules {
                Ok(module)
            } else {
                Err(EmbedError::UnknownModule { what: what(), module, modules })
            }
        };
        let mut edges: BTreeMap<(usize, usize), u32> = BTreeMap::new();
        for (flow, path) in flows.iter().enumerate() {
            if path.is_empty() {
                return Err(EmbedError::EmptyFlow { flow });
            }
            for &v in path {
                known(&|| format!("flow {flow}"), v)?;
            }
            for hop in path.windows(2) {
                *edges.entry((hop[0].min(hop[1]), hop[0].max(hop[1]))).or_default() += 1;
            }
        }
        let mut adjacency = vec![Vec::new(); modules];
        for (i, &(a, b)) in conflicts.iter().enumerate() {
            known(&|| format!("conflict {i}"), a)?;
            known(&|| format!("conflict {i}"), b)?;
            if a == b {
                return Err(EmbedError::SelfConflict { module: a });
            }
            adjacency[a].push(b);
            adjacency[b].push(a);
        }
        for list in &mut adjacency {
            list.sort_unstable();
            list.dedup();
        }
        let mut links = vec![Vec::new(); modules];
        for (&(a, b), &flows) in &edges {
            if a != b {
                links[a].push((b, flows));
                links[b].push((a, flows));
            }
        }
        Ok(Self { weights, cores, capacity, flows, conflicts: adjacency, links })
    }

    /// Number of modules.
    pub fn modules(&self) -> usize {
        self.weights.len()
    }

    /// Module v's weight (CPU demand, in the instance's unit).
    pub fn weight(&self, v: usize) -> u64 {
        self.weights[v]
    }

    /// Number of identical cores.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Capacity of each core (same unit as the weights).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The flows, as paths of module indices.
    pub fn flows(&self) -> &[Vec<usize>] {
        &self.flows
    }

    /// The modules module v must not share a core with (sorted).
    pub fn conflicts_of(&self, v: usize) -> &[usize] {
        &self.conflicts[v]
    }

    /// Module v's neighbours on any flow, with the number of flows using
    /// each edge.
    pub fn links_of(&self, v: usize) -> &[(usize, u32)] {
        &self.links[v]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_instances_are_refused_by_name() {
        let new = |w: Vec<u64>, flows: Vec<Vec<usize>>, c: &[(usize, usize)]| Instance::new(w, 2, 10, flows, c).unwrap_err().to_string();
        assert!(new(vec![1, 11], vec![], &[]).contains("module 1 weighs 11"));
        assert!(new(vec![1], vec![vec![0, 3]], &[]).contains("flow 0 names module 3"));
        assert!(new(vec![1], vec![vec![]], &[]).contains("flow 0 has an empty path"));
        assert!(new(vec![1, 1], vec![], &[(1, 1)]).contains("module 1 is in conflict with itself"));
        assert!(Instance::new(vec![1], 0, 10, vec![], &[]).unwrap_err().to_string().contains("at least one core"));
    }

    #[test]
    fn links_count_the_flows_over_each_edge() {
        let inst = Instance::new(vec![1; 3], 2, 10, vec![vec![0, 1, 2], vec![0, 1], vec![2, 1]], &[]).unwrap();
        assert_eq!(inst.links_of(1), &[(0, 2), (2, 2)]);
    }
}
