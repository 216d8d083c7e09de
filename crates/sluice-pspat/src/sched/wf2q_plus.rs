//! WF²Q+ (Bennett and Zhang): each backlogged flow's head packet has a
//! virtual start S and finish F; among the packets already eligible
//! (S ≤ V, the system's virtual time) the one that finishes first goes
//! next. With the link's rate as the unit, V advances by each packet's
//! length and never lags the smallest S of a backlogged flow. O(log N)
//! per packet (two ordered sets).

use std::collections::BTreeSet;

use super::{Queues, Scheduler};

/// Fixed-point scale of virtual times (bits below the byte).
const SCALE: u32 = 24;

/// WF²Q+ over weighted flows.
pub struct Wf2qPlus<T> {
    queues: Queues<T>,
    /// Per flow, virtual time per byte: Σ weights / weight (scaled).
    per_byte: Vec<u128>,
    start: Vec<u128>,
    finish: Vec<u128>,
    /// The system's virtual time (scaled bytes).
    now: u128,
    /// Backlogged flows whose head is eligible, by finish; the others by start.
    eligible: BTreeSet<(u128, usize)>,
    waiting: BTreeSet<(u128, usize)>,
}

impl<T> Wf2qPlus<T> {
    /// WF²Q+ with `weights[f]` (≥ 1) as flow f's share, up to `limit` queued packets per flow.
    pub fn new(weights: &[u32], limit: usize) -> Self {
        assert!(weights.iter().all(|&w| w >= 1), "weights must be ≥ 1");
        let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let n = weights.len();
        Self {
            queues: Queues::new(n, limit),
            per_byte: weights.iter().map(|&w| (total << SCALE) / u128::from(w)).collect(),
            start: vec![0; n],
            finish: vec![0; n],
            now: 0,
            eligible: BTreeSet::new(),
            waiting: BTreeSet::new(),
        }
    }

    /// Files `flow` (backlogged, its tags set) as eligible or waiting.
    fn file(&mut self, flow: usize) {
        if self.start[flow] <= self.now {
            self.eligible.insert((self.finish[flow], flow));
        } else {
            self.waiting.insert((self.start[flow], flow));
        }
    }

    /// Makes eligible every waiting flow whose start V has reached.
    fn promote(&mut self) {
        while let Some(&(s, flow)) = self.waiting.first() {
            if s > self.now {
                break;
            }
            self.waiting.pop_first();
            self.eligible.insert((self.finish[flow], flow));
        }
    }
}

impl<T> Scheduler<T> for Wf2qPlus<T> {
    fn enqueue(&mut self, flow: usize, len: u32, item: T) -> Result<(), T> {
        let was_idle = self.queues.queued(flow) == 0;
        self.queues.push(flow, len, item)?;
        if was_idle {
            self.start[flow] = self.finish[flow].max(self.now);
            self.finish[flow] = self.start[flow] + u128::from(len) * self.per_byte[flow];
            self.file(flow);
        }
        Ok(())
    }

    fn dequeue(&mut self) -> Option<(usize, u32, T)> {
        if self.eligible.is_empty() {
            // V never lags the smallest start of a backlogged flow.
            let &(s, _) = self.waiting.first()?;
            self.now = self.now.max(s);
        }
        self.promote();
        let (_, flow) = self.eligible.pop_first().expect("a flow is eligible once V reached the smallest start");
        let (len, item) = self.queues.pop(flow).expect("filed flows are backlogged");
        self.now += u128::from(len) << SCALE;
        if let Some(next) = self.queues.head_len(flow) {
            self.start[flow] = self.finish[flow];
            self.finish[flow] = self.start[flow] + u128::from(next) * self.per_byte[flow];
            self.file(flow);
        }
        self.promote();
        Some((flow, len, item))
    }

    fn len(&self) -> usize {
        self.queues.len()
    }

    fn drops(&self, flow: usize) -> u64 {
        self.queues.drops(flow)
    }
}
