//! A single-producer single-consumer mailbox in PSPAT's style: only the
//! slots are shared, no indices. A slot holding 0 is empty. The consumer
//! reads slots in order and clears a cache line's worth at once, after it
//! has read the whole line; the producer checks for room once per line, by
//! looking one line ahead, so that it never writes the line the consumer
//! reads. Producer and consumer each touch a shared line once per line of
//! packets (8), not once per packet, and never the same line at once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Slots per cache line (64 bytes of u64).
pub const LINE: usize = 8;

#[repr(align(64))]
struct Line([AtomicU64; LINE]);

struct Slots {
    lines: Box<[Line]>,
    /// Lines − 1 (their number is a power of two).
    mask: usize,
}

impl Slots {
    #[inline]
    fn slot(&self, i: usize) -> &AtomicU64 {
        &self.lines[(i / LINE) & self.mask].0[i % LINE]
    }
}

/// The writing end: owned by one client thread.
pub struct Producer {
    slots: Arc<Slots>,
    /// Next slot to write (counts up; reduced modulo the size on use).
    head: usize,
    /// Slots up to here (exclusive) are known to be free.
    free_until: usize,
}

/// The reading end: owned by the arbiter.
pub struct Consumer {
    slots: Arc<Slots>,
    /// Next slot to read.
    tail: usize,
}

/// A mailbox of at least `capacity` values: whole lines, one more than
/// needed (the producer keeps one line between itself and the consumer),
/// their number rounded up to a power of two.
pub fn mailbox(capacity: usize) -> (Producer, Consumer) {
    let lines = (capacity.div_ceil(LINE).max(1) + 1).next_power_of_two();
    let slots = Arc::new(Slots { lines: (0..lines).map(|_| Line(Default::default())).collect(), mask: lines - 1 });
    (Producer { slots: slots.clone(), head: 0, free_until: 0 }, Consumer { slots, tail: 0 })
}

impl Producer {
    /// Writes `value` (≠ 0); false when the mailbox is full.
    #[inline]
    pub fn push(&mut self, value: u64) -> bool {
        debug_assert_ne!(value, 0, "0 marks an empty slot");
        if self.head == self.free_until && !self.claim_line() {
            return false;
        }
        self.slots.slot(self.head).store(value, Ordering::Release);
        self.head += 1;
        true
    }

    /// Writes as many of `values` (each ≠ 0) as there is room for, in order; returns how many.
    #[inline]
    pub fn push_burst(&mut self, values: &[u64]) -> usize {
        for (n, &v) in values.iter().enumerate() {
            if !self.push(v) {
                return n;
            }
        }
        values.len()
    }

    /// The line at `head` is the producer's if the line after it is free:
    /// the consumer clears a line's last slot last, so one load tells.
    #[cold]
    fn claim_line(&mut self) -> bool {
        let ahead = self.head + 2 * LINE - 1;
        if self.slots.slot(ahead).load(Ordering::Acquire) != 0 {
            return false;
        }
        self.free_until = self.head + LINE;
        true
    }
}

impl Consumer {
    /// Takes the oldest value, if there is one.
    #[inline]
    pub fn pop(&mut self) -> Option<u64> {
        let v = self.slots.slot(self.tail).load(Ordering::Acquire);
        if v == 0 {
            return None;
        }
        self.tail += 1;
        if self.tail.is_multiple_of(LINE) {
            self.clear_line(self.tail - LINE);
        }
        Some(v)
    }

    /// Whether a value waits (the next `pop` takes one).
    #[inline]
    pub fn has_next(&self) -> bool {
        self.slots.slot(self.tail).load(Ordering::Acquire) != 0
    }

    /// Takes up to `out.len()` values into `out`, oldest first; returns how many.
    #[inline]
    pub fn pop_burst(&mut self, out: &mut [u64]) -> usize {
        for (n, slot) in out.iter_mut().enumerate() {
            match self.pop() {
                Some(v) => *slot = v,
                None => return n,
            }
        }
        out.len()
    }

    /// Gives the line starting at slot `first` back to the producer, its
    /// last slot last (the one the producer looks at).
    fn clear_line(&self, first: usize) {
        for i in first..first + LINE - 1 {
            self.slots.slot(i).store(0, Ordering::Relaxed);
        }
        self.slots.slot(first + LINE - 1).store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_out_in_order_and_a_full_mailbox_refuses_more() {
        let (mut p, mut c) = mailbox(32);
        let mut pushed = 0u64;
        while p.push(pushed + 1) {
            pushed += 1;
        }
        // 8 lines (5 rounded up) of which the producer keeps one free.
        assert_eq!(pushed, 56);
        for i in 1..=pushed {
            assert_eq!(c.pop(), Some(i));
        }
        assert_eq!(c.pop(), None);
        assert!(p.push(7), "room again once the consumer cleared its lines");
    }
}
