//! Flows a module downstream of the source decides (a random split, a
//! lookup): a packet that belongs to no flow yet becomes flow f's at the
//! first hop of f's path that no other flow takes, and is counted there as
//! generated for f. From then on its drops are f's drops, wherever they
//! happen, and a flow's generated = delivered + dropped + in flight holds
//! for splitter-decided flows as for those a source stamps.

use std::collections::HashMap;

use super::hops::Hop;
use crate::batch::Batch;
use crate::model::{Model, ModuleId};
use crate::packet::NO_FLOW;
use crate::pool::PacketPool;

/// Per module, per outgate: the flow whose packets that gate's hop claims, or [`NO_FLOW`].
pub(super) fn claim_hops(model: &Model, hops: &HashMap<(ModuleId, ModuleId), Hop>) -> Vec<Vec<u16>> {
    let mut claims: Vec<Vec<u16>> = model.next.iter().map(|gates| vec![NO_FLOW; gates.len()]).collect();
    for (f, flow) in model.flows.iter().enumerate() {
        let Some(hop) = flow.path.windows(2).find(|hop| hops[&(hop[0], hop[1])].flows == 1) else { continue };
        let (from, to) = (hop[0], hop[1]);
        // The hop names modules, not gates: claim only where one gate leads there.
        let mut gates = (0..model.next[from].len()).filter(|&g| model.next[from][g] == to);
        if let (Some(g), None) = (gates.next(), gates.next()) {
            claims[from][g] = f as u16;
        }
    }
    claims
}

/// Clears the claims of the gates of modules whose packets all belong to a
/// flow already (`stamped`, per module): there is nothing to claim there.
pub(super) fn skip_stamped(model: &Model, claims: &mut [Vec<u16>], stamped: &[bool]) {
    for m in (0..model.modules.len()).filter(|&m| stamped[m]) {
        claims[m].fill(NO_FLOW);
    }
}

/// Stamps the packets of `batch` that belong to no flow yet as flow `flow`'s; returns how many (pkt).
#[inline]
pub(super) fn claim(pool: &mut PacketPool, batch: &Batch, flow: u16) -> u64 {
    let mut claimed = 0;
    for &id in batch.as_slice() {
        let meta = pool.meta_mut(id);
        if meta.flow == NO_FLOW {
            meta.flow = flow;
            claimed += 1;
        }
    }
    claimed
}
