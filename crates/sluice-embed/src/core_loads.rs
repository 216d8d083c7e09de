//! Cores being filled by a heuristic: their loads, and which cores hold a
//! conflict of each module, so that "can this core take v" is O(1).

use crate::error::{EmbedError, Result};
use crate::instance::{Instance, Placement};

/// Cores being filled: their loads, and per module how many of its
/// conflicting modules each core already holds.
pub(crate) struct Cores<'a> {
    pub(crate) instance: &'a Instance,
    pub(crate) load: Vec<u64>,
    /// `conflicting[v * cores + i]`: modules on core i that v conflicts with.
    conflicting: Vec<u32>,
    pub(crate) placement: Vec<Option<usize>>,
}

impl<'a> Cores<'a> {
    pub(crate) fn new(instance: &'a Instance) -> Self {
        Self {
            instance,
            load: vec![0; instance.cores()],
            conflicting: vec![0; instance.modules() * instance.cores()],
            placement: vec![None; instance.modules()],
        }
    }

    pub(crate) fn from_placement(instance: &'a Instance, placement: &Placement) -> Self {
        let mut cores = Self::new(instance);
        for (v, &core) in placement.iter().enumerate() {
            cores.put(v, core);
        }
        cores
    }

    /// Whether core i has room for v and none of v's conflicts.
    pub(crate) fn can_take(&self, v: usize, i: usize) -> bool {
        self.load[i] + self.instance.weight(v) <= self.instance.capacity() && self.conflicting[v * self.instance.cores() + i] == 0
    }

    pub(crate) fn put(&mut self, v: usize, i: usize) {
        self.load[i] += self.instance.weight(v);
        for &c in self.instance.conflicts_of(v) {
            self.conflicting[c * self.instance.cores() + i] += 1;
        }
        self.placement[v] = Some(i);
    }

    pub(crate) fn take_off(&mut self, v: usize) -> usize {
        let i = self.placement[v].take().expect("module is placed");
        self.load[i] -= self.instance.weight(v);
        for &c in self.instance.conflicts_of(v) {
            self.conflicting[c * self.instance.cores() + i] -= 1;
        }
        i
    }

    pub(crate) fn no_room(&self, v: usize) -> EmbedError {
        EmbedError::NoRoom { module: v, weight: self.instance.weight(v) }
    }

    pub(crate) fn into_placement(self) -> Placement {
        self.placement.into_iter().map(|c| c.expect("every module is placed")).collect()
    }

    /// Flows over v's edges to modules on core i (placed ones only).
    pub(crate) fn affinity(&self, v: usize, i: usize) -> u32 {
        self.instance.links_of(v).iter().filter(|&&(u, _)| self.placement[u] == Some(i)).map(|&(_, flows)| flows).sum()
    }
}


/// Module indices by weight, heaviest first, stable in index order.
pub(crate) fn by_weight_decreasing(instance: &Instance) -> Vec<usize> {
    let mut order: Vec<usize> = (0..instance.modules()).collect();
    order.sort_by_key(|&v| std::cmp::Reverse(instance.weight(v)));
    order
}

/// Places the modules heaviest first (stable in index order), each on the
/// core `pick` chooses among `open`: the cores with room and no conflict
/// for it, in index order, never empty. Fails on the first module no core
/// can take.
pub(crate) fn place_decreasing(instance: &Instance, mut pick: impl FnMut(&Cores<'_>, usize, &[usize]) -> usize) -> Result<Placement> {
    let mut cores = Cores::new(instance);
    let mut open = Vec::with_capacity(instance.cores());
    for v in by_weight_decreasing(instance) {
        open.clear();
        open.extend((0..instance.cores()).filter(|&i| cores.can_take(v, i)));
        if open.is_empty() {
            return Err(cores.no_room(v));
        }
        let i = pick(&cores, v, &open);
        cores.put(v, i);
    }
    Ok(cores.into_placement())
}
