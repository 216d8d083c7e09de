//! QFQ+ on a plain [`Book`]: each group's state is a field where QFQ
//! keeps four bitmaps, and each waiting flow knows its slot (counted from a
//! fixed origin) and when it entered it, where QFQ keeps a ring of slot
//! stacks; every choice is a scan over the groups or the flows (O(N) a
//! packet). The property test below runs the same algorithm on both books
//! and requires the same packets in the same order on random workloads: a
//! check of the O(1) machinery (find-first-set over the bitmaps, the slot
//! ring's front, rotation and occupancy bits).

use super::qfq::{Book, Core};

/// A waiting flow's place.
#[derive(Clone, Copy)]
struct Place {
    group: usize,
    /// Its slot, counted from a fixed origin (wrapping).
    slot: u64,
    /// When it entered the slot: a slot is a stack, the latest comes out first.
    entered: u64,
}

pub(super) struct Scan {
    /// Per group, its state (`None`: in none).
    states: Vec<Option<usize>>,
    /// Per group, its front slot, counted from the origin.
    fronts: Vec<u64>,
    /// Per flow, where it waits.
    places: Vec<Option<Place>>,
    /// Flows put in slots so far.
    entered: u64,
}

impl Scan {
    /// The flows group `g`'s slots hold.
    fn waiting(&self, g: usize) -> impl Iterator<Item = (usize, Place)> + '_ {
        self.places.iter().enumerate().filter_map(move |(f, p)| p.filter(|p| p.group == g).map(|p| (f, p)))
    }

    /// The flow on top of group `g`'s slot `slot`.
    fn top_of(&self, g: usize, slot: u64) -> Option<usize> {
        self.waiting(g).filter(|(_, p)| p.slot == slot).max_by_key(|(_, p)| p.entered).map(|(f, _)| f)
    }
}

impl Book for Scan {
    fn new(flows: usize, groups: usize) -> Self {
        Self { states: vec![None; groups], fronts: vec![0; groups], places: vec![None; flows], entered: 0 }
    }

    fn first_in(&self, states: &[usize], from: usize) -> Option<usize> {
        (from..self.states.len()).find(|&g| self.states[g].is_some_and(|s| states.contains(&s)))
    }

    fn enter(&mut self, g: usize, state: usize) {
        self.states[g] = Some(state);
    }

    fn leave(&mut self, g: usize, state: usize) {
        if self.states[g] == Some(state) {
            self.states[g] = None;
        }
    }

    fn move_below(&mut self, below: usize, from: usize, to: usize) {
        for s in self.states.iter_mut().take(below) {
            if *s == Some(from) {
                *s = Some(to);
            }
        }
    }

    fn holds(&self, g: usize) -> bool {
        self.waiting(g).next().is_some()
    }

    fn insert(&mut self, g: usize, slot: usize, flow: usize) {
        self.entered += 1;
        self.places[flow] = Some(Place { group: g, slot: self.fronts[g].wrapping_add(slot as u64), entered: self.entered });
    }

    fn take_front(&mut self, g: usize) -> usize {
        let flow = self.top_of(g, self.fronts[g]).expect("the front slot of a scheduled group holds a flow");
        self.places[flow] = None;
        flow
    }

    fn advance(&mut self, g: usize) -> Option<usize> {
        let front = self.fronts[g];
        let first = self.waiting(g).map(|(_, p)| p.slot).min_by_key(|slot| slot.wrapping_sub(front))?;
        self.fronts[g] = first;
        self.top_of(g, first)
    }

    fn rotate(&mut self, g: usize, i: usize) {
        self.fronts[g] = self.fronts[g].wrapping_sub(i as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{Qfq, Scheduler};
    use proptest::prelude::*;

    proptest! {
        /// Random weights (1..=1024, so that flows fall in many groups),
        /// budgets and packets; bursts of enqueues and of dequeues, so that
        /// groups block one another and flows come back far ahead of their group.
        #[test]
        fn qfq_sends_what_it_sends_on_a_plain_book(
            weights in prop::collection::vec(prop_oneof![1u32..=4, 1u32..=1024, Just(1024u32)], 2..24),
            lmax in prop_oneof![64u32..=2048, 2048u32..=65536],
            bursts in prop::collection::vec((any::<bool>(), 1usize..40, prop::collection::vec((any::<prop::sample::Index>(), 0.0f64..1.0), 40)), 1..60),
        ) {
            let mut fast = Qfq::new(&weights, lmax, 64).unwrap();
            let mut slow: Core<(), Scan> = Core::new(&weights, lmax, 64).unwrap();
            for (i, (enqueue, n, packets)) in bursts.into_iter().enumerate() {
                for (flow, size) in &packets[..n] {
                    if enqueue {
                        // Sizes from 64 bytes to the budget.
                        let (flow, len) = (flow.index(weights.len()), 64 + (size * f64::from(lmax - 64)) as u32);
                        prop_assert_eq!(fast.enqueue(flow, len, ()).is_ok(), slow.enqueue(flow, len, ()).is_ok(), "burst {}", i);
                    } else {
                        prop_assert_eq!(fast.dequeue(), slow.dequeue(), "burst {}", i);
                    }
                }
            }
            while let Some(sent) = fast.dequeue() {
                prop_assert_eq!(Some(sent), slow.dequeue());
            }
            prop_assert_eq!(slow.dequeue(), None);
        }
    }
}
