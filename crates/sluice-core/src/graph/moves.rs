//! Moving modules between workers while the pipeline runs (pipeline
//! decomposition). A module's node travels whole: its NF with the NF's
//! state, its fractional buffer with the packets in it, its counters; so do
//! the ring ends of its crossing edges, and an egress takes its flow's
//! delivery counters and delays along. Edges that come to cross workers get
//! new rings. Nothing is dropped: packets already past a new cut sit in the
//! moved buffers, packets behind it take the new ring.

use super::{InRing, Kind, Node, OutRing, WorkerGraph};
use crate::model::{FlowId, Model};
use crate::packet::PacketId;
use crate::ring::{spsc, Consumer};
use crate::telemetry::FlowRecorder;
use crate::wiring::RING_SLOTS;

/// Re-places the modules of `graphs` from `from`'s placement to `to`'s
/// (`to` is `from.with_moves(..)`). `graphs` must hold every worker that
/// loses or gains a module, each stopped between rounds; other workers may
/// run on, since the ring ends they hold stay where they are.
pub fn move_modules(graphs: &mut [&mut WorkerGraph], from: &Model, to: &Model) {
    let mut nodes: Vec<Node> = Vec::new();
    let mut outbound: Vec<OutRing> = Vec::new();
    let mut inbound: Vec<(usize, Consumer<PacketId>)> = Vec::new();
    let mut deliveries: Vec<(FlowId, FlowRecorder)> = Vec::new();
    for g in graphs.iter_mut() {
        let w = g.index;
        let (stay, leave): (Vec<Node>, Vec<Node>) = g.nodes.drain(..).partition(|n| to.worker_of[n.module] == w);
        g.nodes = stay;
        for node in leave.iter().filter(|n| matches!(n.kind, Kind::Egress(..))) {
            for &f in &from.sink_flows[node.module] {
                let mut carried = FlowRecorder::default();
                g.flows[f].hand_delivery_to(&mut carried);
                deliveries.push((f, carried));
            }
        }
        nodes.extend(leave);
        let (stay, leave): (Vec<OutRing>, Vec<OutRing>) = g.rings_out.drain(..).partition(|r| to.worker_of[to.edges[r.edge].from] == w);
        g.rings_out = stay;
        outbound.extend(leave);
        let (stay, leave): (Vec<InRing>, Vec<InRing>) = g.rings_in.drain(..).partition(|r| to.worker_of[to.edges[r.edge].to] == w);
        g.rings_in = stay;
        inbound.extend(leave.into_iter().map(|r| (r.edge, r.ring)));
    }
    for &e in to.crossings.iter().filter(|e| !from.crossings.contains(e)) {
        let (tx, rx) = spsc(RING_SLOTS);
        outbound.push(OutRing::new(e, tx));
        inbound.push((e, rx));
    }
    for node in nodes {
        graph_of(graphs, to.worker_of[node.module]).nodes.push(node);
    }
    for (f, mut carried) in deliveries {
        let sink = *to.flows[f].path.last().expect("validated paths are non-empty");
        carried.hand_delivery_to(&mut graph_of(graphs, to.worker_of[sink]).flows[f]);
    }
    for ring in outbound {
        graph_of(graphs, to.worker_of[to.edges[ring.edge].from]).rings_out.push(ring);
    }
    for (edge, ring) in inbound {
        graph_of(graphs, to.worker_of[to.edges[edge].to]).rings_in.push(InRing { edge, ring, target: usize::MAX });
    }
    for g in graphs.iter_mut() {
        g.link(to);
    }
}

/// Worker `w`'s graph among those handed over.
fn graph_of<'a>(graphs: &'a mut [&mut WorkerGraph], w: usize) -> &'a mut WorkerGraph {
    graphs.iter_mut().find(|g| g.index == w).unwrap_or_else(|| panic!("worker {w} gains a module but was not handed over"))
}
