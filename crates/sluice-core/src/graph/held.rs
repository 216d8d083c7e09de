//! Packets NFs keep between runs (a Reframer's flows, see
//! [`NetworkFunction::most_held`]): when an NF's oldest packet is due, the
//! round runs it with no input and it sends what came due, whether or not
//! more packets arrive; a run that stops sends everything they hold.
//!
//! The worker keeps what each such NF last said of its packets (see
//! [`NfContext::note_held`](crate::nf::NfContext::note_held)) and the
//! earliest of their due times, so that a round where nothing is due
//! costs one comparison, not a call to every NF that keeps packets.

use super::{Kind, Release, Task, WorkerGraph};
use crate::nf::{free_dropped, Held, NetworkFunction, NfContext, Outputs};

impl WorkerGraph {
    /// Runs the NFs whose held packets are due at `now_ns`, and what they
    /// send on through the graph; returns the packets sent (pkt). Called
    /// once `now_ns` reaches `wake_ns`, which it sets to the next due time.
    pub(super) fn send_due(&mut self, now_ns: u64) -> usize {
        let mut sent = 0;
        for i in 0..self.holding.len() {
            let v = self.holding[i];
            if self.nodes[v].held.due_ns <= now_ns {
                sent += self.send_held(v);
            }
        }
        self.wake_ns = self.next_due_ns();
        sent
    }

    /// When the next packet an NF holds comes due, as they last said (ns
    /// since the origin; `u64::MAX`: none held).
    pub(super) fn next_due_ns(&self) -> u64 {
        self.holding.iter().map(|&v| self.nodes[v].held.due_ns).min().unwrap_or(u64::MAX)
    }

    /// How long until a packet an NF holds comes due (`None`: none held):
    /// a worker that sleeps wakes by then.
    pub fn until_due(&self) -> Option<std::time::Duration> {
        let due = self.next_due_ns();
        (due != u64::MAX).then(|| std::time::Duration::from_nanos(due.saturating_sub(self.now_ns())))
    }

    /// Asks node `v`'s NF again what it holds, after the worker changed it
    /// outside a run (its hold time set, its packets dropped).
    pub(super) fn ask_held(&mut self, v: usize) {
        let held = Held::of(self.function(v));
        self.nodes[v].held = held;
        self.wake_ns = self.wake_ns.min(held.due_ns);
    }

    /// Releases everything node `v`'s NF holds, if it holds any, and sends
    /// it on (a run stopping: called in topological order, after the
    /// buffer in front of it is flushed).
    pub(super) fn send_all_held(&mut self, v: usize) {
        if self.nodes[v].holds {
            // The run that sends them says what is left.
            self.function_mut(v).release_all();
            self.send_held(v);
        }
    }

    /// Runs node `v`'s NF with no input, again while it has packets ready,
    /// and walks what it sends; returns the packets it sent (pkt).
    fn send_held(&mut self, v: usize) -> usize {
        let before = self.function(v).held();
        self.nodes[v].release = Release::Held;
        self.walk(Task { node: v as u32, gate: Task::CONTINUE });
        before - self.function(v).held()
    }

    /// Drops and counts everything the NFs hold (a worker that is down);
    /// returns the packets dropped (pkt).
    pub(super) fn drop_held(&mut self) -> usize {
        let mut dropped = 0;
        for i in 0..self.holding.len() {
            let node = &mut self.nodes[self.holding[i]];
            let Kind::Function(nf) = &mut node.kind else { unreachable!("only NFs hold packets") };
            nf.release_all();
            while nf.ready() {
                let mut ctx = NfContext {
                    pool: &mut self.pool,
                    now_ns: None,
                    clock: &self.clocking.clock,
                    origin: self.clocking.origin,
                    tally: &mut self.tally,
                    flows: &mut self.flows,
                    batch_size: self.batch_size,
                };
                nf.process(&mut ctx, &mut node.scratch, &mut Outputs { gates: &mut node.out });
                ctx.tally.fold_into(&mut node.counters);
                for gate in node.out.iter_mut() {
                    for &id in gate.as_slice() {
                        free_dropped(&mut self.pool, &mut self.flows, id);
                    }
                    node.counters.down_dropped += gate.len() as u64;
                    dropped += gate.len();
                    gate.clear();
                }
            }
            self.ask_held(self.holding[i]);
        }
        dropped
    }

    fn function(&self, v: usize) -> &dyn NetworkFunction {
        match &self.nodes[v].kind {
            Kind::Function(nf) => nf.as_ref(),
            _ => unreachable!("only NFs hold packets"),
        }
    }

    pub(super) fn function_mut(&mut self, v: usize) -> &mut dyn NetworkFunction {
        match &mut self.nodes[v].kind {
            Kind::Function(nf) => nf.as_mut(),
            _ => unreachable!("only NFs hold packets"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::time::Duration;

    use crate::backend::Actions;
    use crate::batch::Batch;
    use crate::graph::move_modules;
    use crate::graph::tests::{Listed, TestGraph, TestWorkers};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::{ModuleCode, NetworkFunction, NfContext, Outputs};
    use crate::packet::PacketId;
    use crate::WalkerConfig;

    /// Keeps each packet until `hold_ns` past its ingress, then sends it.
    struct Holder {
        hold_ns: u64,
        /// (ingress, packet), oldest first.
        held: VecDeque<(u64, PacketId)>,
        releasing: bool,
    }

    impl Holder {
        fn new(hold_ns: u64) -> Self {
            Self { hold_ns, held: VecDeque::new(), releasing: false }
        }
    }

    impl NetworkFunction for Holder {
        fn outgates(&self) -> usize {
            1
        }

        fn most_held(&self) -> usize {
            64
        }

        fn held(&self) -> usize {
            self.held.len()
        }

        fn due_ns(&self) -> Option<u64> {
            self.held.front().map(|&(ingress, _)| ingress + self.hold_ns)
        }

        fn release_all(&mut self) {
            self.releasing = true;
        }

        fn set_hold_ns(&mut self, ns: u64) {
            self.hold_ns = ns;
        }

        fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
            for &id in input.as_slice() {
                self.held.push_back((ctx.pool.meta(id).ts_ns, id));
            }
            input.clear();
            let now = ctx.now();
            while let Some(&(_, id)) = self.held.front().filter(|&&(ingress, _)| self.releasing || ingress + self.hold_ns <= now) {
                self.held.pop_front();
                out.push(0, id);
            }
            self.releasing &= !self.held.is_empty();
            ctx.note_held(self.due_ns(), self.ready());
        }
    }

    /// src → hold (a [`Holder`], its hold time controlled up to `max_hold_ns`) → out, one flow.
    fn src_hold_out(max_hold_ns: Option<u64>) -> ModelBuilder {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1))
            .module(ModuleDecl { held_pkts: 64, max_hold_ns, ..ModuleDecl::new("hold", Role::Function, 1, 1) })
            .module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "hold", 0).connect("hold", 0, "out", 0).flow("f", &["src", "hold", "out"], None);
        b
    }

    #[test]
    fn held_packets_leave_when_due_without_new_arrivals_and_a_drain_sends_the_rest() {
        let b = src_hold_out(None);
        let mut g = TestGraph::new(&b, 10, vec![ModuleCode::Source(Box::new(Listed::new(&[0; 20]))), ModuleCode::Function(Box::new(Holder::new(50_000_000))), ModuleCode::Egress]);
        g.rounds(1);
        let c = g.counters();
        assert_eq!((c.flows[0].delivered, c.in_flight), (0, 10), "held for 50 ms");
        let wait = g.graph.until_due().expect("packets are held");
        assert!(wait <= Duration::from_millis(50));
        std::thread::sleep(wait + Duration::from_millis(5));
        g.rounds(1);
        let c = g.counters();
        assert_eq!((c.flows[0].delivered, c.in_flight), (10, 10), "the first ten came due; the next ten are held");
        g.graph.drain();
        let c = g.counters();
        assert_eq!((c.flows[0].delivered, c.in_flight), (20, 0), "a drain sends what is held");
        assert_eq!(g.graph.until_due(), None);
    }

    #[test]
    fn a_shorter_hold_time_sends_packets_already_held_by_it() {
        let b = src_hold_out(Some(60_000_000_000));
        let mut g = TestGraph::new(&b, 10, vec![ModuleCode::Source(Box::new(Listed::new(&[0; 10]))), ModuleCode::Function(Box::new(Holder::new(60_000_000_000))), ModuleCode::Egress]);
        g.rounds(1);
        assert!(g.graph.until_due().expect("packets are held") > Duration::from_secs(30));
        let hold = g.module("hold");
        g.knobs.apply(&g.model, &Actions { holds: vec![(hold, 1_000_000)], ..Actions::default() }).expect("a valid hold time");
        g.rounds(1);
        assert!(g.graph.until_due().expect("still held") <= Duration::from_millis(1), "the new time is the worker's at once");
        std::thread::sleep(Duration::from_millis(2));
        g.rounds(1);
        let c = g.counters();
        assert_eq!((c.flows[0].delivered, c.in_flight), (10, 0), "sent by the new time, not the one they were held under");
    }

    #[test]
    fn a_module_that_moves_to_another_worker_sends_what_it_held_there_when_due() {
        let mut b = src_hold_out(None);
        b.spare_workers(1);
        let instances = vec![ModuleCode::Source(Box::new(Listed::new(&[0; 10]))), ModuleCode::Function(Box::new(Holder::new(20_000_000))), ModuleCode::Egress];
        let mut w = TestWorkers::new(&b, 10, instances, WalkerConfig { timing: false, ..WalkerConfig::default() });
        w.rounds(1);
        assert_eq!(w.tally(), (vec![[10, 0, 0]], 10), "held for 20 ms");
        let (hold, out) = (w.model.module_id("hold").unwrap(), w.model.module_id("out").unwrap());
        let to = w.model.with_moves(&[(hold, 1), (out, 1)]).unwrap();
        let [g0, g1] = &mut w.graphs[..] else { panic!("two workers") };
        move_modules(&mut [g0, g1], &w.model, &to);
        w.model = to;
        std::thread::sleep(Duration::from_millis(25));
        w.rounds(1);
        assert_eq!(w.tally(), (vec![[10, 10, 0]], 0), "sent on the new worker when due");
    }
}
