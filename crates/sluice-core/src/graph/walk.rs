//! The depth-first push of a batch through the graph: a batch arrives at
//! a module's fractional buffer, which decides when the NF runs; the NF
//! sorts packets into per-gate batches, and each non-empty gate's batch is
//! handed to the module behind it at once (or to a ring, across workers).
//! The walker, not the NFs, keeps the counters the controllers read.

use super::{Kind, Target, WorkerGraph, BUSY_SAMPLING};
use crate::batch::Batch;
use crate::nf::{free_dropped, NfContext, Outputs};

impl WorkerGraph {
    /// Runs module `v`'s NF on what its buffer holds, `n` packets a run:
    /// once, or until the buffer is empty when `all`. Returns the packets run (pkt).
    pub(super) fn run_queued(&mut self, v: usize, n: usize, all: bool) -> usize {
        let mut scratch = self.nodes[v].scratch.take().expect("a module is never re-entered in a DAG");
        let mut moved = 0;
        while self.take_queued(v, n, &mut scratch) {
            moved += scratch.len();
            self.run(v, &mut scratch);
            if !all {
                break;
            }
        }
        self.nodes[v].scratch = Some(scratch);
        moved
    }

    /// Moves up to `n` packets from module `v`'s buffer into `out`; `false` when it was empty.
    pub(super) fn take_queued(&mut self, v: usize, n: usize, out: &mut Batch) -> bool {
        let node = &mut self.nodes[v];
        let taken = node.buffer.take_into(n, out);
        if node.queued {
            self.queued_pkts -= out.len();
        }
        taken
    }

    /// A batch arrives at module `v`'s fractional buffer.
    pub(super) fn deliver(&mut self, v: usize, input: &mut Batch) {
        let node = &mut self.nodes[v];
        let trigger = node.trigger;
        node.counters.arrivals += 1;
        let n = input.len() as u64;
        node.counters.arrived_pkts += n;
        if node.last_arrival_round != self.rounds {
            node.last_arrival_round = self.rounds;
            node.last_round_pkts = 0;
            node.counters.arrival_rounds += 1;
        }
        // (k + n)² − k²: the round's square kept current as packets come.
        node.counters.round_pkts_sq += n * (2 * node.last_round_pkts + n);
        node.last_round_pkts += n;
        if node.queued {
            self.queued_pkts += node.buffer.enqueue_from(input);
            if let Some(u) = self.unit_of[v] {
                self.stride.wake(u);
            }
            for &id in input.as_slice() {
                free_dropped(&mut self.pool, &mut self.flows, id);
            }
            node.counters.dropped += input.len() as u64;
            input.clear();
            return;
        }
        // Packets that waited here since an earlier arrival have left L1.
        let waited = trigger > 0 && !node.buffer.is_empty();
        node.buffer.admit(trigger, input);
        let mut scratch = node.scratch.take().expect("a module is never re-entered in a DAG");
        while let Some(batch) = self.nodes[v].buffer.next_run(trigger, input, &mut scratch) {
            if waited {
                self.pool.prefetch(batch.as_slice());
            }
            self.run(v, batch);
        }
        self.nodes[v].scratch = Some(scratch);
    }

    /// Runs module `v`'s NF on `batch`, then hands each gate's packets on.
    /// On sampled rounds its busy time runs from the previous clock mark (so
    /// it includes the module's own buffer handling) to the end of the NF.
    pub(super) fn run(&mut self, v: usize, batch: &mut Batch) {
        let node = &mut self.nodes[v];
        let egress = matches!(node.kind, Kind::Egress(_));
        let start = match (self.sampled, self.timing && egress) {
            (true, _) => self.mark,
            (false, true) => self.clock.raw(),
            (false, false) => 0,
        };
        let now_ns = (start != 0).then(|| self.clock.delta_as_nanos(self.origin, start));
        node.counters.runs += 1;
        node.counters.run_pkts += batch.len() as u64;
        let mut ctx = NfContext {
            pool: &mut self.pool,
            now_ns,
            clock: &self.clock,
            origin: self.origin,
            dropped: &mut node.counters.dropped,
            created: &mut node.counters.created,
            flows: &mut self.flows,
            timing: self.timing,
        };
        match &mut node.kind {
            Kind::Function(nf) => nf.process(&mut ctx, batch, &mut Outputs { gates: &mut node.out }),
            Kind::Egress(flow) => {
                ctx.deliver(*flow, batch.as_slice());
                batch.clear();
            }
            Kind::Source(_) => unreachable!("a source has no ingate"),
        }
        debug_assert!(batch.is_empty(), "an NF must empty its input batch");
        if self.sampled {
            let end = self.clock.raw();
            node.counters.busy_ns += BUSY_SAMPLING * self.clock.delta_as_nanos(start, end);
            self.mark = end;
        }
        self.dispatch(v);
    }

    /// Hands each gate's packets of module `v` on, gate by gate. A splitter
    /// serves the gates it filled tightest SLO first, and gates whose
    /// tightest SLOs are equal in an order drawn afresh each time: buffers
    /// behind it that fire in the same round run one after another, and in
    /// a fixed order the flows behind the first gate would always wait
    /// least (L2L3(16) under Max, 16 flows with one SLO: 9 µs for the
    /// first, 18 µs for the last).
    pub(super) fn dispatch(&mut self, v: usize) {
        let n = self.nodes[v].out.len();
        if n <= 1 {
            if n == 1 && !self.nodes[v].out[0].is_empty() {
                self.hand_on(v, 0);
            }
            return;
        }
        // A module is never re-entered in a DAG, so its list is free here.
        let mut filled = std::mem::take(&mut self.nodes[v].filled);
        let mut k = 0;
        for g in 0..n {
            if !self.nodes[v].out[g].is_empty() {
                filled[k] = g as u32;
                k += 1;
            }
        }
        if k > 1 {
            self.order_gates(v, &mut filled[..k]);
        }
        for &g in &filled[..k] {
            self.hand_on(v, g as usize);
        }
        self.nodes[v].filled = filled;
    }

    /// Hands what gate `g` of module `v` holds (something) to the module behind it.
    #[inline]
    pub(super) fn hand_on(&mut self, v: usize, g: usize) {
        let child = match self.nodes[v].next[g] {
            Target::Local(child) => child,
            Target::Ring(r) => {
                self.send(v, g, r);
                return;
            }
        };
        let spare = self.spares.pop().expect("one spare batch per graph level");
        let mut batch = std::mem::replace(&mut self.nodes[v].out[g], spare);
        self.deliver(child, &mut batch);
        let spare = std::mem::replace(&mut self.nodes[v].out[g], batch);
        self.spares.push(spare);
    }

    /// Hands gate `g`'s packets of module `v` to ring `r`; what does not fit
    /// is dropped at `v` (sources pause before rings fill, so only a burst of
    /// buffered packets can overflow).
    #[inline(never)]
    pub(super) fn send(&mut self, v: usize, g: usize, r: usize) {
        let node = &mut self.nodes[v];
        let ring = &mut self.rings_out[r].1;
        for &id in node.out[g].as_slice() {
            if ring.push(id).is_err() {
                free_dropped(&mut self.pool, &mut self.flows, id);
                node.counters.dropped += 1;
            }
        }
        node.out[g].clear();
    }
}
