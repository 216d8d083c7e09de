//! The fractional buffer that sits in front of every network function.
//!
//! Contract (Batchy §3): with trigger `b = 0` an arriving batch goes straight
//! to the NF, after anything still queued has been flushed in order; with
//! `b ≥ 1` packets queue until at least `b` are present and the NF then runs
//! on exactly `b`, the remainder staying queued. The trigger is read once per
//! arrival, so a control thread may change it at any time: packets are never
//! lost, duplicated or reordered.

use crate::batch::{copy_handles, Batch, MAX_BURST};
use crate::packet::PacketId;

/// Default capacity (pkt): a remainder below `B ≤ MAX_BURST` plus one
/// arriving batch, all a run-to-completion buffer ever holds.
const RTC_CAPACITY: usize = 2 * MAX_BURST;

/// A FIFO of packet handles in front of a network function.
pub struct FractionalBuffer {
    queue: Box<[PacketId]>,
    head: usize,
    len: usize,
}

impl Default for FractionalBuffer {
    fn default() -> Self {
        Self::with_capacity(RTC_CAPACITY)
    }
}

impl FractionalBuffer {
    /// A buffer holding up to `capacity` packets (≥ 2·MAX_BURST), for
    /// modules that queue between scheduler turns (weighted-fair mode).
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(capacity >= RTC_CAPACITY, "a fractional buffer holds at least 2·MAX_BURST packets");
        Self { queue: vec![PacketId(0); capacity].into_boxed_slice(), head: 0, len: 0 }
    }

    /// The oldest queued packet, if any.
    #[inline]
    pub fn front(&self) -> Option<PacketId> {
        (self.len > 0).then(|| self.queue[self.head])
    }

    /// Packets it can hold (pkt).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.queue.len()
    }

    /// Appends one packet; the caller makes sure there is room.
    #[inline]
    pub fn push(&mut self, id: PacketId) {
        self.enqueue(&[id]);
    }

    /// Takes the oldest queued packet out, if any.
    #[inline]
    pub fn pop(&mut self) -> Option<PacketId> {
        let id = self.front()?;
        self.head = wrap(self.head + 1, self.queue.len());
        self.len -= 1;
        Some(id)
    }

    /// Room left (pkt).
    #[inline]
    pub fn room(&self) -> usize {
        self.queue.len() - self.len
    }

    /// Appends as many packets of `input` as fit, leaving the rest in `input`
    /// (the caller drops them); returns how many were queued.
    #[inline]
    pub fn enqueue_from(&mut self, input: &mut Batch) -> usize {
        let n = input.len().min(self.room());
        self.enqueue(&input.as_slice()[..n]);
        input.drain_front(n);
        n
    }

    /// Moves up to `n` queued packets into `out`; `false` when the queue is empty.
    #[inline]
    pub fn take_into(&mut self, n: usize, out: &mut Batch) -> bool {
        let n = n.min(self.len).min(MAX_BURST);
        if n == 0 {
            return false;
        }
        self.dequeue(n, out);
        true
    }

    /// Packets queued (pkt).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Admits an arriving batch under trigger `trigger` (pkt). With a
    /// trigger the packets join the queue and `input` is left empty, unless
    /// the queue is empty and `input` is exactly one run: then it stays, to
    /// run as it is (no copy in and out). With no trigger they stay in
    /// `input`, to be run after the queue is flushed.
    #[inline]
    pub fn admit(&mut self, trigger: usize, input: &mut Batch) {
        if trigger > 0 && !self.passes_through(trigger, input) {
            self.enqueue(input.as_slice());
            input.clear();
        }
    }

    /// Whether `input` is one whole run that meets an empty queue.
    #[inline]
    fn passes_through(&self, trigger: usize, input: &Batch) -> bool {
        self.len == 0 && input.len() == trigger
    }

    /// The next batch the NF must run on, or `None` when no run is due.
    ///
    /// Call after [`admit`](Self::admit) with the same trigger until it
    /// returns `None`; the caller's NF must empty the returned batch.
    #[inline]
    pub fn next_run<'a>(
        &mut self,
        trigger: usize,
        input: &'a mut Batch,
        scratch: &'a mut Batch,
    ) -> Option<&'a mut Batch> {
        if trigger == 0 {
            if self.len > 0 {
                self.dequeue(self.len.min(MAX_BURST), scratch);
                return Some(scratch);
            }
            return (!input.is_empty()).then_some(input);
        }
        if self.len >= trigger {
            self.dequeue(trigger, scratch);
            return Some(scratch);
        }
        self.passes_through(trigger, input).then_some(input)
    }

    #[inline]
    fn enqueue(&mut self, ids: &[PacketId]) {
        let cap = self.queue.len();
        assert!(self.len + ids.len() <= cap, "fractional buffer overflow");
        let tail = wrap(self.head + self.len, cap);
        let first = ids.len().min(cap - tail);
        copy_handles(&mut self.queue[tail..tail + first], &ids[..first]);
        copy_handles(&mut self.queue[..ids.len() - first], &ids[first..]);
        self.len += ids.len();
    }

    #[inline]
    fn dequeue(&mut self, n: usize, out: &mut Batch) {
        debug_assert!(out.is_empty() && n <= self.len && n <= MAX_BURST);
        let cap = self.queue.len();
        let first = n.min(cap - self.head);
        out.extend_from_slice(&self.queue[self.head..self.head + first]);
        out.extend_from_slice(&self.queue[..n - first]);
        self.head = wrap(self.head + n, cap);
        self.len -= n;
    }
}

/// `i` modulo `cap` for `i < 2·cap` (head and length are each below the
/// capacity): a compare instead of a division, which costs tens of
/// cycles at every arrival.
#[inline]
fn wrap(i: usize, cap: usize) -> usize {
    debug_assert!(i < 2 * cap);
    if i >= cap { i - cap } else { i }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Runs every due NF call and returns (trigger, packets) per call.
    fn arrive(buf: &mut FractionalBuffer, trigger: usize, input: &mut Batch, seen: &mut Vec<(usize, Vec<u32>)>) {
        let mut scratch = Batch::default();
        buf.admit(trigger, input);
        while let Some(run) = buf.next_run(trigger, input, &mut scratch) {
            seen.push((trigger, run.as_slice().iter().map(|p| p.0).collect()));
            run.clear();
        }
    }

    #[test]
    fn zero_trigger_flushes_queue_first_in_order() {
        let mut buf = FractionalBuffer::default();
        let mut seen = Vec::new();
        let mut input = Batch::default();
        input.extend_from_slice(&[PacketId(1), PacketId(2), PacketId(3)]);
        arrive(&mut buf, 4, &mut input, &mut seen);
        assert!(seen.is_empty());
        assert_eq!(buf.len(), 3);
        input.extend_from_slice(&[PacketId(4), PacketId(5)]);
        arrive(&mut buf, 0, &mut input, &mut seen);
        assert_eq!(seen, vec![(0, vec![1, 2, 3]), (0, vec![4, 5])]);
        assert!(buf.is_empty());
    }

    #[test]
    fn trigger_runs_exactly_b_and_keeps_remainder() {
        let mut buf = FractionalBuffer::default();
        let mut seen = Vec::new();
        let mut input = Batch::default();
        input.extend_from_slice(&(0..7).map(PacketId).collect::<Vec<_>>());
        arrive(&mut buf, 3, &mut input, &mut seen);
        assert_eq!(seen, vec![(3, vec![0, 1, 2]), (3, vec![3, 4, 5])]);
        assert_eq!(buf.len(), 1);
    }

    #[test]
    fn a_whole_run_meeting_an_empty_queue_runs_in_place_and_otherwise_queues_behind() {
        let mut buf = FractionalBuffer::default();
        let (mut input, mut scratch) = (Batch::default(), Batch::default());
        input.extend_from_slice(&[PacketId(1), PacketId(2)]);
        buf.admit(2, &mut input);
        let arrived: *const Batch = &input;
        let run = buf.next_run(2, &mut input, &mut scratch).expect("a whole run is due");
        assert!(std::ptr::eq(run, arrived), "the arriving batch runs as it is");
        run.clear();
        assert!(buf.next_run(2, &mut input, &mut scratch).is_none());
        let mut seen = Vec::new();
        input.push(PacketId(3));
        arrive(&mut buf, 2, &mut input, &mut seen);
        input.extend_from_slice(&[PacketId(4), PacketId(5)]);
        arrive(&mut buf, 2, &mut input, &mut seen);
        assert_eq!(seen, vec![(2, vec![3, 4])], "a whole run behind a waiting packet queues behind it");
        assert_eq!(buf.front(), Some(PacketId(5)));
    }

    proptest! {
        /// Random arrival sizes; a second thread changes the trigger at random.
        /// Every run with b > 0 has exactly b packets; order is preserved and
        /// nothing is lost or duplicated.
        #[test]
        fn concurrent_trigger_changes_keep_every_packet(
            sizes in proptest::collection::vec(1usize..=MAX_BURST, 1..200),
            triggers in proptest::collection::vec(0usize..=MAX_BURST, 1..50),
        ) {
            let trigger = Arc::new(AtomicUsize::new(triggers[0]));
            let done = Arc::new(AtomicBool::new(false));
            let changer = {
                let (trigger, done) = (trigger.clone(), done.clone());
                std::thread::spawn(move || {
                    for &t in triggers.iter().cycle() {
                        if done.load(Ordering::Relaxed) { break; }
                        trigger.store(t, Ordering::Relaxed);
                        std::thread::yield_now();
                    }
                })
            };
            let mut buf = FractionalBuffer::default();
            let mut seen = Vec::new();
            let mut next = 0u32;
            let mut input = Batch::default();
            for &n in &sizes {
                for _ in 0..n { input.push(PacketId(next)); next += 1; }
                let b = trigger.load(Ordering::Relaxed);
                arrive(&mut buf, b, &mut input, &mut seen);
            }
            done.store(true, Ordering::Relaxed);
            changer.join().unwrap();
            let mut rest = Batch::default();
            let mut out = Vec::new();
            for (b, run) in &seen {
                if *b > 0 { prop_assert_eq!(run.len(), *b); }
                out.extend_from_slice(run);
            }
            while buf.take_into(MAX_BURST, &mut rest) {
                out.extend(rest.as_slice().iter().map(|p| p.0));
                rest.clear();
            }
            prop_assert_eq!(out, (0..next).collect::<Vec<_>>());
        }
    }
}
