//! A bounded FIFO queue per flow, with drops counted per flow: what every
//! algorithm keeps under its own order of service.

use std::collections::VecDeque;

/// Per flow: its packets (length in bytes, item), oldest first.
pub struct Queues<T> {
    queues: Vec<VecDeque<(u32, T)>>,
    limit: usize,
    drops: Vec<u64>,
    len: usize,
}

impl<T> Queues<T> {
    /// `flows` queues of up to `limit` packets each (≥ 1).
    pub fn new(flows: usize, limit: usize) -> Self {
        assert!(limit >= 1, "a queue holds at least one packet");
        Self { queues: (0..flows).map(|_| VecDeque::with_capacity(limit.min(1024))).collect(), limit, drops: vec![0; flows], len: 0 }
    }

    /// Number of flows.
    pub fn flows(&self) -> usize {
        self.queues.len()
    }

    /// Appends to `flow`'s queue; gives `item` back (a drop) when it is full.
    /// Panics on a flow out of range: the caller's mapping is wrong.
    pub fn push(&mut self, flow: usize, len: u32, item: T) -> Result<(), T> {
        let q = &mut self.queues[flow];
        if q.len() >= self.limit {
            self.drops[flow] += 1;
            return Err(item);
        }
        q.push_back((len, item));
        self.len += 1;
        Ok(())
    }

    /// Takes `flow`'s oldest packet.
    pub fn pop(&mut self, flow: usize) -> Option<(u32, T)> {
        let p = self.queues[flow].pop_front()?;
        self.len -= 1;
        Some(p)
    }

    /// The length of `flow`'s oldest packet (bytes).
    pub fn head_len(&self, flow: usize) -> Option<u32> {
        self.queues[flow].front().map(|p| p.0)
    }

    /// Packets queued for `flow`.
    pub fn queued(&self, flow: usize) -> usize {
        self.queues[flow].len()
    }

    /// Packets queued in all.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no packet is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Packets of `flow` refused so far.
    pub fn drops(&self, flow: usize) -> u64 {
        self.drops[flow]
    }
}
