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
        let (stay, leave): (Vec<OutRing>, Vec<OutRing>) = g.links.rings_out.drain(..).partition(|r| to.worker_of[to.edges[r.edge].from] == w);
        g.links.rings_out = stay;
        outbound.extend(leave);
        let (stay, leave): (Vec<InRing>, Vec<InRing>) = g.links.rings_in.drain(..).partition(|r| to.worker_of[to.edges[r.edge].to] == w);
        g.links.rings_in = stay;
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
        graph_of(graphs, to.worker_of[to.edges[ring.edge].from]).links.rings_out.push(ring);
    }
    for (edge, ring) in inbound {
        let graph = graph_of(graphs, to.worker_of[to.edges[edge].to]);
        graph.links.rings_in.push(InRing::new(edge, ring, graph.links.ring_codel));
    }
    for g in graphs.iter_mut() {
        g.link(to);
    }
}

/// Worker `w`'s graph among those handed over.
fn graph_of<'a>(graphs: &'a mut [&mut WorkerGraph], w: usize) -> &'a mut WorkerGraph {
    graphs.iter_mut().find(|g| g.index == w).unwrap_or_else(|| panic!("worker {w} gains a module but was not handed over"))
}

#[cfg(test)]
mod tests {
    use super::move_modules;
    use crate::backend::Actions;
    use crate::graph::tests::{ByFlow, Listed, Log, TestWorkers};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::ModuleCode;
    use crate::WalkerConfig;

    #[test]
    fn a_module_moves_with_the_packets_its_buffer_holds_and_a_new_ring_carries_the_rest() {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1)).module(ModuleDecl::new("a", Role::Function, 1, 1)).module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "a", 0).connect("a", 0, "out", 0).flow("f", &["src", "a", "out"], None);
        b.spare_workers(1);
        let log = Log::default();
        let a = ModuleCode::Function(Box::new(ByFlow { name: "a", gates: 1, log: log.clone() }));
        let config = WalkerConfig { timing: false, ..WalkerConfig::default() };
        let mut w = TestWorkers::new(&b, 10, vec![ModuleCode::Source(Box::new(Listed::new(&[0; 30]))), a, ModuleCode::Egress], config);
        let (m_a, m_out) = (w.model.module_id("a").unwrap(), w.model.module_id("out").unwrap());
        w.knobs.apply(&w.model, &Actions { triggers: vec![(m_a, 8)], ..Actions::default() }).unwrap();
        w.rounds(1);
        assert_eq!(w.tally(), (vec![[10, 8, 0]], 2), "a's buffer holds two");
        let to = w.model.with_moves(&[(m_a, 1), (m_out, 1)]).unwrap();
        let [g0, g1] = &mut w.graphs[..] else { panic!("two workers") };
        move_modules(&mut [g0, g1], &w.model, &to);
        w.model = to;
        assert_eq!(w.model.crossings.len(), 1, "src → a crosses now");
        assert_eq!(w.tally(), (vec![[10, 8, 0]], 2), "the held two moved with a");
        w.rounds(4);
        w.graphs[0].drain();
        w.graphs[1].poll_inbound();
        w.graphs[1].drain();
        assert_eq!(w.tally(), (vec![[30, 30, 0]], 0), "nothing lost in the move");
        let runs: Vec<usize> = log.lock().unwrap().iter().map(|r| r.1).collect();
        assert_eq!(runs.iter().sum::<usize>(), 30);
        assert!(runs[..runs.len() - 1].iter().all(|&n| n == 8), "a kept its trigger on its new worker: {runs:?}");
    }
}
