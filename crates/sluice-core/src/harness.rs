//! Running a network function outside a pipeline, on frames given as
//! bytes: for NF tests.

use crate::batch::{Batch, MAX_BURST};
use crate::nf::{NetworkFunction, NfContext, Outputs};
use crate::pool::PacketPool;

/// What one run of an NF did with its input.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The frames each outgate received, in order.
    pub gates: Vec<Vec<Vec<u8>>>,
    /// Packets sent to the drop gate.
    pub dropped: u64,
}

/// A pool and batches to run NFs on.
pub struct Harness {
    pool: PacketPool,
    input: Batch,
    outs: Vec<Box<Batch>>,
    clock: quanta::Clock,
    /// The time NFs see (ns), when set; else the clock's.
    now_ns: Option<u64>,
}

impl Default for Harness {
    fn default() -> Self {
        Self {
            pool: PacketPool::new(4 * MAX_BURST),
            input: Batch::default(),
            outs: Vec::new(),
            clock: quanta::Clock::new(),
            now_ns: None,
        }
    }
}

impl Harness {
    fn load(&mut self, nf: &dyn NetworkFunction, frames: &[Vec<u8>]) {
        assert!(frames.len() <= MAX_BURST, "one batch holds at most {MAX_BURST} packets");
        self.outs.resize_with(nf.outgates(), Batch::boxed);
        for f in frames {
            let id = self.pool.alloc(f.len()).expect("the harness pool holds a batch");
            self.pool.data_mut(id).copy_from_slice(f);
            self.input.push(id);
        }
    }

    fn call(&mut self, nf: &mut dyn NetworkFunction) -> u64 {
        let mut dropped = 0;
        let mut ctx = NfContext {
            pool: &mut self.pool,
            now_ns: self.now_ns,
            clock: &self.clock,
            origin: 0,
            dropped: &mut dropped,
            flows: &mut [],
            timing: false,
        };
        nf.process(&mut ctx, &mut self.input, &mut Outputs { gates: &mut self.outs });
        assert!(self.input.is_empty(), "an NF must empty its input batch");
        dropped
    }

    /// Makes NFs see time `now_ns` (ns) from now on (for NFs that keep time).
    pub fn set_now(&mut self, now_ns: u64) {
        self.now_ns = Some(now_ns);
    }

    /// Runs `nf` once on copies of `frames` (at most one batch).
    pub fn run(&mut self, nf: &mut dyn NetworkFunction, frames: &[Vec<u8>]) -> Outcome {
        self.load(nf, frames);
        let dropped = self.call(nf);
        let mut gates = Vec::with_capacity(self.outs.len());
        for out in &mut self.outs {
            gates.push(out.as_slice().iter().map(|&id| self.pool.data(id).to_vec()).collect());
            for &id in out.as_slice() {
                self.pool.free(id);
            }
            out.clear();
        }
        Outcome { gates, dropped }
    }
}
