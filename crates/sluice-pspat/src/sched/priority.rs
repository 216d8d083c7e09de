//! Strict priority: a flow is served only when every flow of a higher
//! priority is empty; flows of one priority FIFO among themselves. With
//! every flow on one level, it is FIFO.

use std::collections::VecDeque;

use super::{Queues, Scheduler};

/// Strict priority over flows with a level each (0 is served first).
pub struct Priority<T> {
    queues: Queues<T>,
    level: Vec<usize>,
    /// Per level, the flows of its queued packets in arrival order.
    order: Vec<VecDeque<usize>>,
}

impl<T> Priority<T> {
    /// Flows with `levels[f]` as flow f's priority (0 highest), up to `limit` queued packets each.
    pub fn new(levels: &[usize], limit: usize) -> Self {
        let top = levels.iter().copied().max().map_or(0, |l| l + 1);
        // Room for every packet a level's queues may hold: enqueueing never allocates.
        let order = (0..top).map(|l| VecDeque::with_capacity(levels.iter().filter(|&&of| of == l).count() * limit)).collect();
        Self { queues: Queues::new(levels.len(), limit), level: levels.to_vec(), order }
    }

    /// First in, first out over `flows` flows (all on one level).
    pub fn fifo(flows: usize, limit: usize) -> Self {
        Self::new(&vec![0; flows], limit)
    }
}

impl<T> Scheduler<T> for Priority<T> {
    fn enqueue(&mut self, flow: usize, len: u32, item: T) -> Result<(), T> {
        self.queues.push(flow, len, item)?;
        self.order[self.level[flow]].push_back(flow);
        Ok(())
    }

    fn dequeue(&mut self) -> Option<(usize, u32, T)> {
        let flow = self.order.iter_mut().find_map(|o| o.pop_front())?;
        let (len, item) = self.queues.pop(flow).expect("a packet per entry");
        Some((flow, len, item))
    }

    fn len(&self) -> usize {
        self.queues.len()
    }

    fn drops(&self, flow: usize) -> u64 {
        self.queues.drops(flow)
    }
}
