//! Packets NFs keep between runs (a Reframer's flows, see
//! [`NetworkFunction::most_held`]): every round, an NF whose oldest packet
//! is due runs with no input and sends what came due, whether or not more
//! packets arrive; a run that stops sends everything they hold.

use super::{Kind, Release, Task, WorkerGraph};
use crate::nf::{free_dropped, NetworkFunction, NfContext, NfTally, Outputs};

impl WorkerGraph {
    /// Runs the NFs whose held packets are due at `now_ns`, and what they
    /// send on through the graph; returns the packets sent (pkt).
    pub(super) fn send_due(&mut self, now_ns: u64) -> usize {
        let mut sent = 0;
        for i in 0..self.holding.len() {
            let v = self.holding[i];
            if self.function(v).due_ns().is_some_and(|due| due <= now_ns) {
                sent += self.send_held(v);
            }
        }
        sent
    }

    /// How long until a packet an NF holds comes due (`None`: none held):
    /// a worker that sleeps wakes by then.
    pub fn until_due(&self) -> Option<std::time::Duration> {
        let due = self.holding.iter().filter_map(|&v| self.function(v).due_ns()).min()?;
        Some(std::time::Duration::from_nanos(due.saturating_sub(self.now_ns())))
    }

    /// Releases everything node `v`'s NF holds, if it holds any, and sends
    /// it on (a run stopping: called in topological order, after the
    /// buffer in front of it is flushed).
    pub(super) fn send_all_held(&mut self, v: usize) {
        if self.nodes[v].holds {
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
                    tally: NfTally::default(),
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

    use crate::batch::Batch;
    use crate::graph::tests::{Listed, TestGraph};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::{ModuleCode, NetworkFunction, NfContext, Outputs};
    use crate::packet::PacketId;

    /// Keeps each packet until `hold_ns` past its ingress, then sends it.
    struct Holder {
        hold_ns: u64,
        /// (due, packet), oldest first.
        held: VecDeque<(u64, PacketId)>,
        releasing: bool,
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
            self.held.front().map(|&(due, _)| due)
        }

        fn release_all(&mut self) {
            self.releasing = true;
        }

        fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
            for &id in input.as_slice() {
                self.held.push_back((ctx.pool.meta(id).ts_ns + self.hold_ns, id));
            }
            input.clear();
            let now = ctx.now();
            while let Some(&(_, id)) = self.held.front().filter(|&&(due, _)| self.releasing || due <= now) {
                self.held.pop_front();
                out.push(0, id);
            }
            self.releasing &= !self.held.is_empty();
        }
    }

    #[test]
    fn held_packets_leave_when_due_without_new_arrivals_and_a_drain_sends_the_rest() {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1))
            .module(ModuleDecl { held_pkts: 64, ..ModuleDecl::new("hold", Role::Function, 1, 1) })
            .module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "hold", 0).connect("hold", 0, "out", 0).flow("f", &["src", "hold", "out"], None);
        let holder = Holder { hold_ns: 50_000_000, held: VecDeque::new(), releasing: false };
        let mut g = TestGraph::new(&b, 10, vec![ModuleCode::Source(Box::new(Listed::new(&[0; 20]))), ModuleCode::Function(Box::new(holder)), ModuleCode::Egress]);
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
}
