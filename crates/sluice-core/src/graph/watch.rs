//! The walker's side of a trace and of captures (see [`crate::trace`] and
//! [`crate::capture`]): around each module run, while a [`Watch`] is
//! attached, it marks and follows traced packets and copies captured ones.

use crate::batch::Batch;
use crate::model::ModuleId;
use crate::pool::PacketPool;
use crate::drop_reason::NfDrops;
use crate::packet::{PacketId, NO_FLOW};
use crate::trace::{Hop, Reasons, Way};
use crate::watch::Watch;

/// Before module `module` runs on `batch`: copies what its captures of
/// arrivals take, marks what its trace takes, and notes which of the
/// batch's packets the trace follows (`Watch::in_run`).
pub(super) fn before_run(watch: &mut Watch, module: ModuleId, pool: &PacketPool, batch: &Batch) {
    watch.in_run.clear();
    for capture in watch.captures.iter_mut().filter(|c| c.module == module && c.gate.is_none()) {
        for &id in batch.as_slice() {
            capture.copy(pool.data(id));
        }
    }
    let Some(trace) = &watch.trace else { return };
    let marks = trace.module == module && trace.marking();
    for &id in batch.as_slice() {
        if marks && !trace.follows(id) {
            trace.mark(id, pool.meta(id), pool.data(id));
        }
        if !trace.follows(id) || watch.in_run.len() == watch.in_run.capacity() {
            continue;
        }
        let meta = pool.meta(id);
        if let Some(r) = trace.record_of(id, meta) {
            watch.in_run.push((id, r, meta.flow));
        }
    }
}

/// After module `module`'s run, which dropped `dropped` (pkt, by
/// reason): copies what its captures of a gate take, and adds a hop to
/// each followed packet of the run's input: the gate it left by; or,
/// gone from every gate (or made an answer of: of a flow before, of none
/// now) in a run that dropped, that it was dropped, for one of the run's
/// reasons; or else kept. `now_ns` reads the time (ns since the clock's origin).
pub(super) fn after_run(watch: &mut Watch, module: ModuleId, pool: &PacketPool, out: &[Box<Batch>], dropped: &NfDrops, now_ns: impl Fn() -> u64) {
    for capture in watch.captures.iter_mut().filter(|c| c.module == module) {
        if let Some(batch) = capture.gate.and_then(|g| out.get(g as usize)) {
            for &id in batch.as_slice() {
                capture.copy(pool.data(id));
            }
        }
    }
    if watch.captures.iter().any(|c| c.done()) {
        watch.captures.retain(|c| !c.done());
    }
    let reasons = Reasons::of(dropped);
    follow(watch, module, now_ns, |id, flow| match out.iter().position(|b| b.as_slice().contains(&id)) {
        Some(_) if !reasons.is_empty() && flow != NO_FLOW && pool.meta(id).flow == NO_FLOW => Way::Dropped(reasons),
        Some(g) => Way::Gate(g as u16),
        None if reasons.is_empty() => Way::Kept,
        None => Way::Dropped(reasons),
    });
}

/// Where the ways of `batch`'s packets end at `module`, as `way` says (an egress hands them on, a full queue drops
/// them): copies what its captures take, and ends the followed packets'
/// ways there.
pub(super) fn ends_at(watch: &mut Watch, module: ModuleId, pool: &PacketPool, batch: &Batch, way: Way, now_ns: impl Fn() -> u64) {
    before_run(watch, module, pool, batch);
    follow(watch, module, now_ns, |_, _| way);
}

/// After source `module` made `batch`: the packets
/// leave it by its one gate.
pub(super) fn left_source(watch: &mut Watch, module: ModuleId, pool: &PacketPool, batch: &Batch, now_ns: impl Fn() -> u64) {
    before_run(watch, module, pool, batch);
    follow(watch, module, now_ns, |_, _| Way::Gate(0));
}

/// Adds a hop at `module` to the record of each followed packet of the
/// run, the way `way_of` says it went (given the packet and its flow
/// before the run).
fn follow(watch: &Watch, module: ModuleId, now_ns: impl Fn() -> u64, way_of: impl Fn(PacketId, u16) -> Way) {
    let (Some(trace), false) = (&watch.trace, watch.in_run.is_empty()) else { return };
    let now = now_ns();
    for &(id, r, flow) in &watch.in_run {
        let since_arrival_ns = now.saturating_sub(trace.arrival_of(r));
        trace.add(r, id, Hop { module, worker: watch.worker, since_arrival_ns, way: way_of(id, flow) });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::super::tests::{ByFlow, DropOdd, Listed, Log, TestGraph};
    use crate::capture::capture;
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::ModuleCode;
    use crate::packet_filter::PacketFilter;
    use crate::trace::{Reasons, Trace, Way};
    use crate::DropReason;

    /// Takes every second packet it is asked about.
    struct EverySecond(AtomicUsize);

    impl PacketFilter for EverySecond {
        fn matches(&self, _frame: &[u8]) -> bool {
            self.0.fetch_add(1, Ordering::Relaxed) % 2 == 1
        }
    }

    /// src → split (by flow) → a0 (drops odd sequence numbers) / a1 → out0 / out1.
    fn graph(flows: &[u16]) -> TestGraph {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1))
            .module(ModuleDecl::new("split", Role::Function, 1, 2))
            .module(ModuleDecl::new("a0", Role::Function, 1, 1))
            .module(ModuleDecl::new("a1", Role::Function, 1, 1))
            .module(ModuleDecl::new("out0", Role::Sink, 1, 0))
            .module(ModuleDecl::new("out1", Role::Sink, 1, 0));
        b.connect("src", 0, "split", 0).connect("split", 0, "a0", 0).connect("split", 1, "a1", 0);
        b.connect("a0", 0, "out0", 0).connect("a1", 0, "out1", 0);
        b.flow("f0", &["src", "split", "a0", "out0"], None).flow("f1", &["src", "split", "a1", "out1"], None);
        let split = ByFlow { name: "split", gates: 2, log: Log::default() };
        let a1 = ByFlow { name: "a1", gates: 1, log: Log::default() };
        let instances = vec![
            ModuleCode::Source(Box::new(Listed::new(flows))),
            ModuleCode::Function(Box::new(split)),
            ModuleCode::Function(Box::new(DropOdd)),
            ModuleCode::Function(Box::new(a1)),
            ModuleCode::Egress,
            ModuleCode::Egress,
        ];
        TestGraph::new(&b, 4, instances)
    }

    /// The ways of each traced packet: (module name, way) per hop.
    fn ways(g: &mut TestGraph) -> Vec<Vec<(String, Way)>> {
        let mut records = None;
        g.graph.edit_watch(|w| records = w.trace());
        let name = |m: usize| g.model.modules[m].name.clone();
        records.expect("a trace").iter().map(|r| r.hops.iter().map(|h| (name(h.module), h.way)).collect()).collect()
    }

    #[test]
    fn a_trace_follows_the_next_packets_at_a_module_to_where_each_ends() {
        // Sequence numbers 0..8: the flow-0 packets with odd ones are dropped at a0.
        let mut g = graph(&[1, 0, 1, 0, 1, 0, 0, 0]);
        g.rounds(1);
        let trace = Trace::new(g.module("split"), 4, None, g.graph.pool_handles());
        g.graph.edit_watch(|w| w.set_trace(Some(trace.clone())));
        assert_eq!(g.rounds(3), 4, "the other four packets");
        let (gate, dropped, sent) = (Way::Gate, Way::Dropped(Reasons::just(DropReason::Denied)), Way::Sent);
        let hop = |m: &str, w| (m.to_string(), w);
        assert_eq!(
            ways(&mut g),
            [
                vec![hop("split", gate(1)), hop("a1", gate(0)), hop("out1", sent)],
                vec![hop("split", gate(0)), hop("a0", dropped)],
                vec![hop("split", gate(0)), hop("a0", gate(0)), hop("out0", sent)],
                vec![hop("split", gate(0)), hop("a0", dropped)],
            ]
        );
        g.graph.edit_watch(|w| w.set_trace(None));
        assert!(g.graph.watch.is_none(), "a worker that watches nothing carries no watch");
        let c = g.counters();
        assert_eq!((c.flows[0].delivered + c.flows[0].dropped + c.flows[1].delivered, c.in_flight), (8, 0), "nothing lost to the trace");
    }

    #[test]
    fn a_trace_marks_only_what_its_filter_takes_and_stops_at_its_count() {
        let mut g = graph(&[1; 12]);
        let filter: Arc<dyn PacketFilter> = Arc::new(EverySecond(AtomicUsize::new(0)));
        let trace = Trace::new(g.module("src"), 3, Some(filter), g.graph.pool_handles());
        g.graph.edit_watch(|w| w.set_trace(Some(trace.clone())));
        g.rounds(3);
        let mut seqs = None;
        g.graph.edit_watch(|w| seqs = w.trace().map(|r| r.iter().map(|p| (p.number, p.seq, p.hops.len())).collect::<Vec<_>>()));
        assert_eq!(seqs.unwrap(), [(0, 1, 4), (1, 3, 4), (2, 5, 4)], "src, split, a1, out1 for every second packet, three of them");
    }

    #[test]
    fn a_capture_copies_a_gates_packets_up_to_its_count_and_ends() {
        let mut g = graph(&[0, 1, 0, 1, 1, 1, 1, 0]);
        let (tap, mut reader) = capture(g.module("split"), Some(1), None, 4);
        g.graph.edit_watch(|w| w.add_capture(tap));
        g.rounds(2);
        let mut frames = 0;
        while let Some(frame) = reader.next_frame() {
            assert_eq!((frame.len, frame.data.len()), (60, 60));
            frames += 1;
            reader.give_back(frame);
        }
        assert_eq!(frames, 4, "the first four packets of flow 1");
        assert!(reader.ended() && reader.missed() == 0);
        assert!(g.graph.watch.is_none(), "a capture that took its count is let go");
        assert_eq!(g.counters().flows[1].delivered, 5, "and the packets went on");
    }
}
