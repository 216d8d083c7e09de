//! Running a network function outside a pipeline, on frames given as
//! bytes: for NF tests.

use crate::batch::{Batch, MAX_BURST};
use crate::nf::{NetworkFunction, NfContext, NfTally, Outputs};
use crate::packet::PacketMeta;
use crate::pool::PacketPool;
use crate::telemetry::ModuleCounters;

/// What one run of an NF did with its input.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The frames each outgate received, in order.
    pub gates: Vec<Vec<Vec<u8>>>,
    /// The metadata of those frames (offset and length as the pool keeps them).
    pub metas: Vec<Vec<PacketMeta>>,
    /// Packets sent to the drop gate.
    pub dropped: u64,
    /// The same by reason (see [`crate::DropReason`]).
    pub drop_reasons: crate::NfDrops,
    /// Packets the NF took in as addressed to the router (see [`crate::NfContext::take_in`]).
    pub taken_in: u64,
    /// Packets the NF made (copies, answers, requests, fragments).
    pub created: u64,
}

/// A pool and batches to run NFs on.
pub struct Harness {
    pool: PacketPool,
    input: Batch,
    outs: Vec<Box<Batch>>,
    clock: quanta::Clock,
    /// The time NFs see (ns), when set; else the clock's.
    now_ns: Option<u64>,
    /// The batch size NFs see (pkt).
    batch_size: usize,
}

impl Default for Harness {
    fn default() -> Self {
        Self {
            pool: PacketPool::new(4 * MAX_BURST),
            input: Batch::default(),
            outs: Vec::new(),
            clock: quanta::Clock::new(),
            now_ns: None,
            batch_size: MAX_BURST,
        }
    }
}

impl Harness {
    fn load(&mut self, nf: &dyn NetworkFunction, frames: &[Vec<u8>], metas: &[PacketMeta]) {
        assert!(frames.len() <= MAX_BURST, "one batch holds at most {MAX_BURST} packets");
        self.outs.resize_with(nf.outgates(), Batch::boxed);
        for (i, f) in frames.iter().enumerate() {
            let meta = metas.get(i).copied().unwrap_or_default();
            let id = self.pool.alloc_copy(f, meta).expect("the harness pool holds a batch");
            self.input.push(id);
        }
    }

    fn call(&mut self, nf: &mut dyn NetworkFunction) -> (u64, crate::NfDrops, u64, u64) {
        let mut counters = ModuleCounters::default();
        let mut ctx = NfContext {
            pool: &mut self.pool,
            now_ns: self.now_ns,
            clock: &self.clock,
            origin: 0,
            tally: &mut NfTally::default(),
            flows: &mut [],
            batch_size: self.batch_size,
        };
        nf.process(&mut ctx, &mut self.input, &mut Outputs { gates: &mut self.outs });
        ctx.tally.fold_into(&mut counters);
        assert!(self.input.is_empty(), "an NF must empty its input batch");
        (counters.dropped + counters.duplicates, counters.nf_drops, counters.delivered, counters.created)
    }

    /// Makes NFs see time `now_ns` (ns) from now on (for NFs that keep time).
    pub fn set_now(&mut self, now_ns: u64) {
        self.now_ns = Some(now_ns);
    }

    /// Makes NFs see batch size `b` (pkt; default [`MAX_BURST`]).
    pub fn set_batch_size(&mut self, b: usize) {
        self.batch_size = b.clamp(1, MAX_BURST);
    }

    /// Runs `nf` once on copies of `frames` (at most one batch).
    pub fn run(&mut self, nf: &mut dyn NetworkFunction, frames: &[Vec<u8>]) -> Outcome {
        self.run_with_meta(nf, frames, &[])
    }

    /// Runs `nf` once on copies of `frames` carrying `metas` (flow, sequence
    /// number, ingress time…; default metadata where `metas` is shorter).
    pub fn run_with_meta(&mut self, nf: &mut dyn NetworkFunction, frames: &[Vec<u8>], metas: &[PacketMeta]) -> Outcome {
        self.load(nf, frames, metas);
        let (dropped, drop_reasons, taken_in, created) = self.call(nf);
        let mut gates = Vec::with_capacity(self.outs.len());
        let mut out_metas = Vec::with_capacity(self.outs.len());
        for out in &mut self.outs {
            gates.push(out.as_slice().iter().map(|&id| self.pool.data(id).to_vec()).collect());
            out_metas.push(out.as_slice().iter().map(|&id| *self.pool.meta(id)).collect());
            for &id in out.as_slice() {
                self.pool.free(id);
            }
            out.clear();
        }
        Outcome { gates, metas: out_metas, dropped, drop_reasons, taken_in, created }
    }
}
