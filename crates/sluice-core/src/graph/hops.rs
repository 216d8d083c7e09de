//! What each hop (an edge between two modules, as flow paths name it)
//! carries: how many flows, and the tightest SLO among them. One pass over
//! the flows' paths, so that linking a graph of thousands of flows does
//! not scan every flow for every gate.

use std::collections::HashMap;

use crate::model::{Model, ModuleId};

/// The flows through one hop.
#[derive(Clone, Copy, Default)]
pub(super) struct Hop {
    /// Flows whose path takes it.
    pub(super) flows: usize,
    /// The tightest delay SLO among them (ns; `u64::MAX`: none has one).
    pub(super) tightest_slo_ns: u64,
}

/// Every hop of every flow's path, by (from, to).
pub(super) fn hops(model: &Model) -> HashMap<(ModuleId, ModuleId), Hop> {
    let mut hops: HashMap<(ModuleId, ModuleId), Hop> = HashMap::new();
    // A removed flow takes no new packets: none is claimed for it.
    for flow in model.flows.iter().filter(|f| !f.removed) {
        for hop in flow.path.windows(2) {
            let h = hops.entry((hop[0], hop[1])).or_insert(Hop { flows: 0, tightest_slo_ns: u64::MAX });
            h.flows += 1;
            h.tightest_slo_ns = h.tightest_slo_ns.min(flow.slo_ns.unwrap_or(u64::MAX));
        }
    }
    hops
}
