//! Replacing a module's network function while the pipeline runs: a table
//! NF (routes, rules, mappings) rebuilt whole off the data path is swapped
//! in between two rounds, read-copy-update style, so a packet meets the old
//! table or the new one, never half of each. The buffer in front of it, its
//! counters and its wiring stay; the old NF goes back to the caller, to be
//! freed off the data path.

use super::{Kind, WorkerGraph};
use crate::model::ModuleId;
use crate::nf::NetworkFunction;

impl WorkerGraph {
    /// Swaps module `m`'s NF for `nf`, which must have the same gates; an
    /// NF that keeps packets between runs is not replaced (what it holds
    /// would be lost). Returns the old NF, or why not.
    pub fn replace_function(&mut self, m: ModuleId, nf: Box<dyn NetworkFunction>) -> Result<Box<dyn NetworkFunction>, String> {
        let node = self.nodes.iter_mut().find(|n| n.module == m).ok_or_else(|| format!("not on worker {}", self.index))?;
        let Kind::Function(old) = &mut node.kind else {
            return Err("is not a network function".into());
        };
        if (old.outgates(), old.ingates()) != (nf.outgates(), nf.ingates()) {
            let why = format!("the new configuration has {} outgates and {} ingates where the running one has {} and {}", nf.outgates(), nf.ingates(), old.outgates(), old.ingates());
            return Err(why);
        }
        if old.most_held() > 0 || nf.most_held() > 0 {
            return Err("keeps packets between runs: it cannot be replaced while it runs".into());
        }
        Ok(std::mem::replace(old, nf))
    }
}
