//! QFQ+ as [`super::qfq`] runs it, on plain data structures: each group's
//! state is a field where QFQ keeps four bitmaps, and each scheduled flow
//! knows when it was put in its slot where QFQ keeps a ring of slot stacks;
//! every choice is a scan over the groups and flows (O(N) a packet). The
//! property test below checks that both send the same packets in the same
//! order on random workloads: a check of the O(1) machinery (find-first-set
//! over the bitmaps, the slot ring's front, rotation and occupancy bits),
//! the decisions it implements being written here once more, plainly.

use super::qfq::{gt, group_index, round_down, EB, ER, IB, IR, MAX_INDEX, MIN_SLOT_SHIFT, ONE_FP, SLOTS};
use super::Queues;

struct Flow {
    s: u64,
    f: u64,
    group: usize,
    inv_w: u64,
    budget: u32,
    initial_budget: u32,
    /// When it was put in its slot (a slot is a stack: the latest comes out
    /// first), while it is scheduled.
    scheduled: Option<u64>,
}

struct Group {
    s: u64,
    f: u64,
    slot_shift: u32,
    /// ER, IR, EB or IB; `None` while it schedules no flow.
    state: Option<usize>,
}

/// QFQ+ by scanning.
pub(super) struct LinearQfq {
    queues: Queues<()>,
    flows: Vec<Flow>,
    groups: Vec<Group>,
    v: u64,
    old_v: u64,
    iwsum: u64,
    lmax: u32,
    in_service: Option<usize>,
    /// Flows put in slots so far: the order within a slot.
    inserted: u64,
}

impl LinearQfq {
    pub(super) fn new(weights: &[u32], lmax: u32, limit: usize) -> Self {
        let wsum: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let flows = weights
            .iter()
            .map(|&w| {
                let inv_w = ONE_FP / u64::from(w);
                Flow { s: 0, f: 0, group: group_index(inv_w, lmax), inv_w, budget: lmax, initial_budget: lmax, scheduled: None }
            })
            .collect();
        let groups = (0..=MAX_INDEX).map(|i| Group { s: 0, f: 0, slot_shift: MIN_SLOT_SHIFT + i as u32, state: None }).collect();
        Self { queues: Queues::new(weights.len(), limit), flows, groups, v: 0, old_v: 0, iwsum: ONE_FP / wsum.max(1), lmax, in_service: None, inserted: 0 }
    }

    /// The lowest-numbered group from `from` up in `state`.
    fn first_in(&self, state: usize, from: usize) -> Option<usize> {
        (from..self.groups.len()).find(|&g| self.groups[g].state == Some(state))
    }

    fn calc_state(&self, g: usize) -> usize {
        let mut state = usize::from(gt(self.groups[g].s, self.v));
        if let Some(larger) = self.first_in(ER, g) {
            if gt(self.groups[g].f, self.groups[larger].f) {
                state |= EB;
            }
        }
        state
    }

    /// Groups below `limit` (all when `None`) in state `from` go to `to`.
    fn move_groups(&mut self, below: Option<usize>, from: usize, to: usize) {
        for g in self.groups.iter_mut().take(below.unwrap_or(usize::MAX)) {
            if g.state == Some(from) {
                g.state = Some(to);
            }
        }
    }

    fn unblock_groups(&mut self, g: usize, old_f: u64) {
        if let Some(larger) = self.first_in(ER, g + 1) {
            if !gt(self.groups[larger].f, old_f) {
                return;
            }
        }
        self.move_groups(Some(g), EB, ER);
        self.move_groups(Some(g), IB, IR);
    }

    fn make_eligible(&mut self) {
        let (slot, old_slot) = (self.v >> MIN_SLOT_SHIFT, self.old_v >> MIN_SLOT_SHIFT);
        if slot != old_slot {
            let flipped = (64 - (slot ^ old_slot).leading_zeros()) as usize;
            let below = (flipped <= MAX_INDEX).then_some(flipped);
            self.move_groups(below, IR, ER);
            self.move_groups(below, IB, EB);
        }
    }

    fn update_eligible(&mut self) {
        let ineligible = (0..self.groups.len()).find(|&g| matches!(self.groups[g].state, Some(IR | IB)));
        if let Some(first) = ineligible {
            if self.first_in(ER, 0).is_none() {
                let s = self.groups[first].s;
                if gt(s, self.v) {
                    self.v = s;
                }
            }
            self.make_eligible();
        }
    }

    /// The flows group `g` schedules.
    fn scheduled(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.flows.len()).filter(move |&f| self.flows[f].group == g && self.flows[f].scheduled.is_some())
    }

    /// The flow at the top of group `g`'s first slot that holds one: its
    /// start is the earliest (rounded, from the group's), and of those it was put in last.
    fn first_scheduled(&self, g: usize) -> Option<usize> {
        let group = &self.groups[g];
        self.scheduled(g).min_by_key(|&f| {
            let flow = &self.flows[f];
            (round_down(flow.s, group.slot_shift).wrapping_sub(group.s), std::cmp::Reverse(flow.scheduled))
        })
    }

    fn slot_insert(&mut self, flow: usize, rounded_s: u64) {
        let g = self.flows[flow].group;
        let shift = self.groups[g].slot_shift;
        let slot = (rounded_s.wrapping_sub(self.groups[g].s) >> shift) as usize;
        if slot > SLOTS - 2 {
            let delta = rounded_s.wrapping_sub(self.groups[g].s).wrapping_sub(((SLOTS - 2) as u64) << shift);
            let f = &mut self.flows[flow];
            f.s = f.s.wrapping_sub(delta);
            f.f = f.f.wrapping_sub(delta);
        }
        self.inserted += 1;
        self.flows[flow].scheduled = Some(self.inserted);
    }

    fn update_start(&mut self, flow: usize) {
        let (g, f) = (self.flows[flow].group, self.flows[flow].f);
        let shift = self.groups[g].slot_shift;
        let rounded_f = round_down(f, shift);
        let limit = round_down(self.v, shift).wrapping_add(1 << shift);
        if !gt(f, self.v) || gt(rounded_f, limit) {
            if let Some(larger) = self.first_in(ER, g) {
                let next_f = self.groups[larger].f;
                if gt(rounded_f, next_f) {
                    self.flows[flow].s = if gt(limit, next_f) { next_f } else { limit };
                    return;
                }
            }
            self.flows[flow].s = self.v;
        } else {
            self.flows[flow].s = f;
        }
    }

    fn schedule(&mut self, flow: usize) {
        let g = self.flows[flow].group;
        let rounded_s = round_down(self.flows[flow].s, self.groups[g].slot_shift);
        let reset = if self.scheduled(g).next().is_some() {
            if gt(self.groups[g].s, self.flows[flow].s) {
                if matches!(self.groups[g].state, Some(IR | IB)) {
                    self.groups[g].state = None;
                }
                true
            } else {
                false
            }
        } else {
            if self.first_in(ER, 0).is_none() && gt(rounded_s, self.v) && self.in_service.is_none() {
                self.v = rounded_s;
            }
            true
        };
        if reset {
            let group = &mut self.groups[g];
            group.s = rounded_s;
            group.f = rounded_s.wrapping_add(2 << group.slot_shift);
            self.groups[g].state = Some(self.calc_state(g));
        }
        self.slot_insert(flow, rounded_s);
    }

    fn activate(&mut self, flow: usize) {
        self.update_start(flow);
        self.recharge(flow);
        match self.in_service {
            None => {
                self.in_service = Some(flow);
                self.v = self.flows[flow].s;
                self.old_v = self.v;
            }
            Some(serving) if serving != flow => self.schedule(flow),
            Some(_) => {}
        }
    }

    fn recharge(&mut self, flow: usize) {
        let f = &mut self.flows[flow];
        f.budget = self.lmax;
        f.initial_budget = self.lmax;
        f.f = f.s.wrapping_add(u64::from(self.lmax) * f.inv_w);
    }

    fn choose_next(&mut self) -> Option<usize> {
        self.update_eligible();
        self.old_v = self.v;
        let g = self.first_in(ER, 0)?;
        let old_f = self.groups[g].f;
        let flow = self.first_scheduled(g).expect("a scheduled group schedules a flow");
        self.flows[flow].scheduled = None;
        match self.first_scheduled(g) {
            None => self.groups[g].state = None,
            Some(front) => {
                let rounded_s = round_down(self.flows[front].s, self.groups[g].slot_shift);
                if self.groups[g].s == rounded_s {
                    return Some(flow);
                }
                let group = &mut self.groups[g];
                group.s = rounded_s;
                group.f = rounded_s.wrapping_add(2 << group.slot_shift);
                group.state = None;
                self.groups[g].state = Some(self.calc_state(g));
            }
        }
        self.unblock_groups(g, old_f);
        Some(flow)
    }

    pub(super) fn enqueue(&mut self, flow: usize, len: u32) -> bool {
        let was_idle = self.queues.queued(flow) == 0;
        if self.queues.push(flow, len, ()).is_err() {
            return false;
        }
        if was_idle && self.in_service != Some(flow) {
            self.activate(flow);
        }
        true
    }

    pub(super) fn dequeue(&mut self) -> Option<(usize, u32)> {
        let mut serving = self.in_service?;
        let head = self.queues.head_len(serving);
        if head.is_none_or(|len| self.flows[serving].budget < len) {
            let f = &mut self.flows[serving];
            let used = (f.initial_budget - f.budget).min(self.lmax);
            f.f = f.s.wrapping_add(u64::from(used) * f.inv_w);
            if head.is_some() {
                self.flows[serving].s = self.flows[serving].f;
                self.recharge(serving);
                self.schedule(serving);
            } else if self.queues.is_empty() {
                self.in_service = None;
                return None;
            }
            serving = self.choose_next().expect("a backlogged flow is scheduled");
            self.in_service = Some(serving);
        }
        let (len, ()) = self.queues.pop(serving).expect("the flow in service is backlogged");
        let f = &mut self.flows[serving];
        f.budget = f.budget.saturating_sub(len);
        self.v = self.v.wrapping_add(u64::from(len) * self.iwsum);
        Some((serving, len))
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
        fn qfq_sends_what_a_scan_over_its_flows_and_groups_sends(
            weights in prop::collection::vec(prop_oneof![1u32..=4, 1u32..=1024, Just(1024u32)], 2..24),
            lmax in prop_oneof![64u32..=2048, 2048u32..=65536],
            bursts in prop::collection::vec((any::<bool>(), 1usize..40, prop::collection::vec((any::<prop::sample::Index>(), 0.0f64..1.0), 40)), 1..60),
        ) {
            let mut fast = Qfq::new(&weights, lmax, 64).unwrap();
            let mut slow = LinearQfq::new(&weights, lmax, 64);
            for (i, (enqueue, n, packets)) in bursts.into_iter().enumerate() {
                for (flow, size) in &packets[..n] {
                    if enqueue {
                        // Sizes from 64 bytes to the budget.
                        let (flow, len) = (flow.index(weights.len()), 64 + (size * f64::from(lmax - 64)) as u32);
                        prop_assert_eq!(fast.enqueue(flow, len, ()).is_ok(), slow.enqueue(flow, len), "burst {}", i);
                    } else {
                        prop_assert_eq!(fast.dequeue().map(|(f, l, ())| (f, l)), slow.dequeue(), "burst {}", i);
                    }
                }
            }
            while let Some((f, l, ())) = fast.dequeue() {
                prop_assert_eq!(Some((f, l)), slow.dequeue());
            }
            prop_assert_eq!(slow.dequeue(), None);
        }
    }
}
