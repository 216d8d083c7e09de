//! Scheduling algorithms behind one interface: packets of flows go in,
//! the next packet to put on the link comes out. Each keeps a queue per
//! flow, bounded; a packet that finds its flow's queue full is given back
//! and counted as that flow's drop.

mod any;
mod drr;
mod priority;
pub mod qfq;
#[cfg(test)]
mod qfq_linear;
mod queues;
pub mod tree;
mod wf2q_plus;

pub use any::{Algorithm, AnyScheduler, QFQ_LMAX};
pub use drr::Drr;
pub use priority::Priority;
pub use qfq::Qfq;
pub use queues::Queues;
pub use tree::{Shape, Tree};
pub use wf2q_plus::Wf2qPlus;

/// A scheduling algorithm over flows `0..flows`, holding items of type `T`.
pub trait Scheduler<T> {
    /// Queues `item`, a packet of `len` bytes of `flow`; gives it back when
    /// the flow's queue is full (counted, see [`Scheduler::drops`]).
    fn enqueue(&mut self, flow: usize, len: u32, item: T) -> Result<(), T>;

    /// The next packet to send: its flow, length (bytes) and item.
    fn dequeue(&mut self) -> Option<(usize, u32, T)>;

    /// Packets queued.
    fn len(&self) -> usize;

    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Packets of `flow` refused at a full queue so far.
    fn drops(&self, flow: usize) -> u64;

    /// The time is `now_ns` (ns), before a release: an algorithm that
    /// shapes (see [`Tree`]) takes what it may send by then.
    fn advance(&mut self, _now_ns: u64) {}
}
