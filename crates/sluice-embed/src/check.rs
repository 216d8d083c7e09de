//! The checker every placement passes before anyone uses it: capacity,
//! one core per module, conflicts, and the crossings recomputed per flow.

use crate::error::{EmbedError, Result};
use crate::instance::{Instance, Placement};

/// Crossings of a placement: per flow, and their summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossings {
    /// Per flow, the edges of its path whose ends are on different cores.
    pub per_flow: Vec<u32>,
}

impl Crossings {
    /// Total over all flows (the sum objective).
    pub fn sum(&self) -> u64 {
        self.per_flow.iter().map(|&c| u64::from(c)).sum()
    }

    /// The largest of any flow (the max objective); 0 without flows.
    pub fn max(&self) -> u32 {
        self.per_flow.iter().copied().max().unwrap_or(0)
    }
}

/// Crossings of `placement` per flow; the placement must have one entry
/// per module (checked by [`check`]).
pub fn crossings(instance: &Instance, placement: &Placement) -> Crossings {
    let per_flow = instance
        .flows()
        .iter()
        .map(|path| path.windows(2).filter(|hop| placement[hop[0]] != placement[hop[1]]).count() as u32)
        .collect();
    Crossings { per_flow }
}

/// Verifies that `placement` is an embedding of `instance` (every module
/// on an existing core, no core over capacity, no two conflicting modules
/// on one core) and returns its crossings.
pub fn check(instance: &Instance, placement: &Placement) -> Result<Crossings> {
    if placement.len() != instance.modules() {
        return Err(EmbedError::WrongLength { got: placement.len(), modules: instance.modules() });
    }
    let mut load = vec![0u64; instance.cores()];
    for (module, &core) in placement.iter().enumerate() {
        if core >= instance.cores() {
            return Err(EmbedError::UnknownCore { module, core, cores: instance.cores() });
        }
        load[core] += instance.weight(module);
    }
    if let Some((core, &load)) = load.iter().enumerate().find(|(_, &l)| l > instance.capacity()) {
        return Err(EmbedError::Overloaded { core, load, capacity: instance.capacity() });
    }
    for a in 0..instance.modules() {
        if let Some(&b) = instance.conflicts_of(a).iter().find(|&&b| b > a && placement[b] == placement[a]) {
            return Err(EmbedError::ConflictShared { a, b, core: placement[a] });
        }
    }
    Ok(crossings(instance, placement))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_cores() -> Instance {
        Instance::new(vec![4, 4, 4], 2, 8, vec![vec![0, 1, 2], vec![0, 2]], &[(0, 2)]).unwrap()
    }

    #[test]
    fn counts_crossings_per_flow() {
        let c = check(&two_cores(), &vec![0, 0, 1]).unwrap();
        assert_eq!(c.per_flow, vec![1, 1]);
        assert_eq!((c.sum(), c.max()), (2, 1));
    }

    #[test]
    fn refuses_what_is_not_an_embedding() {
        let inst = two_cores();
        assert_eq!(check(&inst, &vec![0, 0]), Err(EmbedError::WrongLength { got: 2, modules: 3 }));
        assert_eq!(check(&inst, &vec![0, 2, 1]), Err(EmbedError::UnknownCore { module: 1, core: 2, cores: 2 }));
        assert_eq!(check(&inst, &vec![0, 0, 0]).unwrap_err(), EmbedError::Overloaded { core: 0, load: 12, capacity: 8 });
        assert_eq!(check(&inst, &vec![0, 1, 0]), Err(EmbedError::ConflictShared { a: 0, b: 2, core: 0 }));
    }
}
