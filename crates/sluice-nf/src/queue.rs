//! `queue(capacity)`: a task boundary, as BESS's Queue. The walker keeps
//! the packets in a queue of `capacity` in front of this module (arrivals
//! beyond it are dropped and counted) and serves it a batch at a time as a
//! task of its own; the NF itself passes what it is given.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Smallest queue (pkt): two of the largest batches.
pub const MIN_CAPACITY: usize = 2 * sluice_core::MAX_BURST;
/// Largest queue (pkt).
pub const MAX_CAPACITY: usize = 1 << 20;

/// Forwards every packet on gate 0 (the queueing is the walker's).
pub struct Queue;

/// Checks a queue capacity (pkt).
pub fn check_capacity(capacity: usize) -> Result<usize, String> {
    if (MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
        Ok(capacity)
    } else {
        Err(format!("queue capacity {capacity} pkt is outside {MIN_CAPACITY}..={MAX_CAPACITY}"))
    }
}

impl NetworkFunction for Queue {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, _ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        out.forward(0, input);
    }
}

/// `queue`: a task boundary (BESS's Queue): the worker keeps up to
/// `capacity` packets in front of the module and serves them a batch at a time.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// Packets the queue holds (pkt, 512..=2^20).
    pub capacity: usize,
}

impl crate::NfConfig for QueueSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        check_capacity(self.capacity)?;
        Ok(Box::new(Queue))
    }

    fn queue_capacity(&self) -> Option<usize> {
        Some(self.capacity)
    }
}
