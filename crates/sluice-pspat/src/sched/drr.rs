//! Deficit round robin (Shreedhar and Varghese): backlogged flows take
//! turns; a turn adds the flow's quantum (its weight × the base quantum,
//! bytes) to its deficit and sends packets while the head fits in it.
//! O(1) per packet.

use std::collections::VecDeque;

use super::{Queues, Scheduler};

/// DRR over weighted flows.
pub struct Drr<T> {
    queues: Queues<T>,
    /// Per flow, bytes added per turn.
    quantum: Vec<u64>,
    deficit: Vec<u64>,
    /// Backlogged flows in turn order; the front one is being served.
    active: VecDeque<usize>,
    /// Whether the front flow's turn has begun (its quantum added).
    in_turn: bool,
}

impl<T> Drr<T> {
    /// DRR with `weights[f]` (≥ 1) times `quantum` bytes per turn for flow f
    /// (a quantum of at least the largest packet keeps it O(1)), up to
    /// `limit` queued packets per flow.
    pub fn new(weights: &[u32], quantum: u32, limit: usize) -> Self {
        assert!(weights.iter().all(|&w| w >= 1) && quantum >= 1, "weights and the quantum must be ≥ 1");
        Self {
            queues: Queues::new(weights.len(), limit),
            quantum: weights.iter().map(|&w| u64::from(w) * u64::from(quantum)).collect(),
            deficit: vec![0; weights.len()],
            active: VecDeque::new(),
            in_turn: false,
        }
    }
}

impl<T> Scheduler<T> for Drr<T> {
    fn enqueue(&mut self, flow: usize, len: u32, item: T) -> Result<(), T> {
        let was_idle = self.queues.queued(flow) == 0;
        self.queues.push(flow, len, item)?;
        if was_idle {
            self.active.push_back(flow);
        }
        Ok(())
    }

    fn dequeue(&mut self) -> Option<(usize, u32, T)> {
        loop {
            let &flow = self.active.front()?;
            if !self.in_turn {
                self.deficit[flow] += self.quantum[flow];
                self.in_turn = true;
            }
            let head = self.queues.head_len(flow).expect("active flows are backlogged");
            if u64::from(head) <= self.deficit[flow] {
                self.deficit[flow] -= u64::from(head);
                let (len, item) = self.queues.pop(flow).expect("backlogged");
                if self.queues.queued(flow) == 0 {
                    // An emptied flow leaves the round and keeps no credit.
                    self.deficit[flow] = 0;
                    self.active.pop_front();
                    self.in_turn = false;
                }
                return Some((flow, len, item));
            }
            self.active.rotate_left(1);
            self.in_turn = false;
        }
    }

    fn len(&self) -> usize {
        self.queues.len()
    }

    fn drops(&self, flow: usize) -> u64 {
        self.queues.drops(flow)
    }
}
