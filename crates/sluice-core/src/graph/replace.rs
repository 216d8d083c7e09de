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

#[cfg(test)]
mod tests {
    use crate::graph::tests::{split_in_two, ByFlow, Log};

    #[test]
    fn a_replaced_nf_runs_the_packets_its_buffer_held_and_a_misfit_is_refused() {
        let log = Log::default();
        let mut g = split_in_two(&[0; 20], [None, None], &log);
        g.trigger("a0", 8);
        g.rounds(1);
        let a0 = g.module("a0");
        let misfit = Box::new(ByFlow { name: "wide", gates: 2, log: log.clone() });
        let refused = g.graph.replace_function(a0, misfit).err().expect("two outgates where a0 has one");
        assert!(refused.contains("2 outgates"), "{refused}");
        let split = g.module("out0");
        assert!(g.graph.replace_function(split, Box::new(ByFlow { name: "x", gates: 1, log: log.clone() })).is_err(), "an egress runs no NF");
        assert!(g.graph.replace_function(a0, Box::new(ByFlow { name: "new", gates: 1, log: log.clone() })).is_ok(), "same gates");
        g.graph.drain();
        let runs: Vec<(&str, usize)> = log.lock().unwrap().iter().filter(|r| r.0 != "split").copied().collect();
        assert_eq!(runs, [("a0", 8), ("a0", 8), ("new", 4)], "the buffer stayed; the new NF ran what it held");
        let c = g.counters();
        assert_eq!((c.flows[0].delivered, c.in_flight), (20, 0));
        assert_eq!(c.modules[a0].run_pkts, 20, "the module's counters stayed");
    }
}
