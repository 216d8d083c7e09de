//! QFQ+ (Checconi, Rizzo and Valente; Valente's aggregate variant, as in
//! Linux's sch_qfq), each flow an aggregate of its own. Every flow has a
//! virtual start S and finish F (F = S + its budget of `lmax` bytes at its
//! weight); flows are sorted into groups by lmax/weight, one power of two
//! apart, and each group into slots of its rounded start times. A group is
//! eligible when its rounded S has reached the system's virtual time V and
//! ready when no eligible group of a larger slot finishes first; the ready
//! eligible group with the smallest slot is served, the flow at the front
//! of its first slot with it, for up to a budget of `lmax` bytes, charged
//! for what it sent. Four bitmaps of groups (ER, IR, EB, IB) and one of
//! slots per group make every choice a find-first-set: O(1) per packet
//! whatever the number of flows, with a worst-case lag of a few packets
//! per flow beyond WF²Q+'s.
//!
//! The algorithm is written once over a `Book`, where the groups'
//! states and the flows waiting in their slots are kept: `Bitmaps`, the
//! O(1) structures above; the tests run it on a plain one as well
//! (`qfq_linear`), whose choices are scans, and require the same order.

use super::{Queues, Scheduler};

/// Slots per group (the bucket list).
const SLOTS: usize = 32;
/// Groups: slot sizes 2^MIN_SLOT_SHIFT .. 2^(MIN_SLOT_SHIFT + MAX_INDEX).
const MAX_INDEX: usize = 24;
/// Largest weight (2^10).
pub const MAX_WEIGHT: u32 = 1 << 10;
/// Largest packet and budget (bytes): 64 KiB.
pub const MAX_LMAX: u32 = 1 << MTU_SHIFT;
const MTU_SHIFT: u32 = 16;
/// Fixed-point fraction bits of virtual times.
const FRAC_BITS: u32 = 30;
const ONE_FP: u64 = 1 << FRAC_BITS;
/// log2 of the smallest slot: the largest budget at weight 1 spans the groups.
const MIN_SLOT_SHIFT: u32 = FRAC_BITS + MTU_SHIFT - MAX_INDEX as u32;
/// Group states, as indices of the bitmaps: eligible or ineligible, ready or blocked.
const ER: usize = 0;
const IR: usize = 1;
const EB: usize = 2;
const IB: usize = 3;

/// `a > b` on wrapping virtual times.
fn gt(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

fn round_down(ts: u64, shift: u32) -> u64 {
    ts & !((1u64 << shift) - 1)
}

/// Where QFQ keeps its groups' states (ER, IR, EB, IB) and the flows that
/// wait in each group's slots, counted from the group's front slot.
pub(super) trait Book {
    /// Room for `flows` flows in `groups` groups, all empty.
    fn new(flows: usize, groups: usize) -> Self;
    /// The lowest group from `from` up whose state is one of `states`.
    fn first_in(&self, states: &[usize], from: usize) -> Option<usize>;
    /// Group `g` takes state `state`.
    fn enter(&mut self, g: usize, state: usize);
    /// Group `g` leaves state `state`, if it is in it.
    fn leave(&mut self, g: usize, state: usize);
    /// The groups below `below` in state `from` go to state `to`.
    fn move_below(&mut self, below: usize, from: usize, to: usize);
    /// Whether a flow waits in group `g`'s slots.
    fn holds(&self, g: usize) -> bool;
    /// Puts `flow` in group `g`'s slot `slot` from the front (≤ SLOTS − 2).
    fn insert(&mut self, g: usize, slot: usize, flow: usize);
    /// Takes the first flow of group `g`'s front slot out.
    fn take_front(&mut self, g: usize) -> usize;
    /// The first flow of group `g`'s first slot that holds one, that slot made the front.
    fn advance(&mut self, g: usize) -> Option<usize>;
    /// Moves group `g`'s front back `i` slots (its start moved back).
    fn rotate(&mut self, g: usize, i: usize);
}

/// No flow (an empty slot or the end of one).
const NONE: usize = usize::MAX;

/// QFQ's own [`Book`]: a bitmap of groups per state, and per group a ring
/// of slots, each a stack of flows linked through them (as Linux's hlist),
/// with a bitmap of the slots that hold one; every operation O(1).
pub(super) struct Bitmaps {
    states: [u64; 4],
    slots: Vec<Slots>,
    /// Per flow, the next flow in its slot.
    next: Vec<usize>,
}

struct Slots {
    /// The slot at the ring's front, and which slots (from it) hold flows.
    front: usize,
    full: u32,
    /// Per slot, its first flow.
    heads: [usize; SLOTS],
}

/// Bits of `bitmap` below `below` (all of them from 64 up).
fn mask_below(below: usize) -> u64 {
    if below >= 64 { u64::MAX } else { (1u64 << below) - 1 }
}

impl Book for Bitmaps {
    fn new(flows: usize, groups: usize) -> Self {
        Self { states: [0; 4], slots: (0..groups).map(|_| Slots { front: 0, full: 0, heads: [NONE; SLOTS] }).collect(), next: vec![NONE; flows] }
    }

    #[inline]
    fn first_in(&self, states: &[usize], from: usize) -> Option<usize> {
        let bits = states.iter().fold(0, |bits, &s| bits | self.states[s]) & !mask_below(from);
        (bits != 0).then(|| bits.trailing_zeros() as usize)
    }

    #[inline]
    fn enter(&mut self, g: usize, state: usize) {
        self.states[state] |= 1 << g;
    }

    #[inline]
    fn leave(&mut self, g: usize, state: usize) {
        self.states[state] &= !(1 << g);
    }

    #[inline]
    fn move_below(&mut self, below: usize, from: usize, to: usize) {
        let moved = self.states[from] & mask_below(below);
        self.states[to] |= moved;
        self.states[from] &= !moved;
    }

    #[inline]
    fn holds(&self, g: usize) -> bool {
        self.slots[g].full != 0
    }

    #[inline]
    fn insert(&mut self, g: usize, slot: usize, flow: usize) {
        let s = &mut self.slots[g];
        let i = (s.front + slot) % SLOTS;
        self.next[flow] = s.heads[i];
        s.heads[i] = flow;
        s.full |= 1 << slot;
    }

    #[inline]
    fn take_front(&mut self, g: usize) -> usize {
        let s = &mut self.slots[g];
        let flow = s.heads[s.front];
        debug_assert_ne!(flow, NONE, "the front slot of a scheduled group holds a flow");
        s.heads[s.front] = self.next[flow];
        if s.heads[s.front] == NONE {
            s.full &= !1;
        }
        flow
    }

    #[inline]
    fn advance(&mut self, g: usize) -> Option<usize> {
        let s = &mut self.slots[g];
        if s.full == 0 {
            return None;
        }
        let i = s.full.trailing_zeros() as usize;
        if i > 0 {
            s.front = (s.front + i) % SLOTS;
            s.full >>= i;
        }
        Some(s.heads[s.front])
    }

    #[inline]
    fn rotate(&mut self, g: usize, i: usize) {
        let s = &mut self.slots[g];
        s.full <<= i;
        s.front = (s.front + SLOTS - i % SLOTS) % SLOTS;
    }
}

struct Flow {
    s: u64,
    f: u64,
    group: usize,
    /// ONE_FP / weight.
    inv_w: u64,
    budget: u32,
    initial_budget: u32,
}

struct Group {
    s: u64,
    f: u64,
    slot_shift: u32,
}

/// QFQ+ over weighted flows (weights 1..=[`MAX_WEIGHT`]) whose packets are
/// at most `lmax` bytes (a flow's budget per turn; a longer packet is sent
/// at the start of a turn and ends it).
pub struct Qfq<T>(Core<T, Bitmaps>);

impl<T> Qfq<T> {
    /// QFQ+ with `weights[f]` as flow f's share, packets of at most `lmax`
    /// bytes, up to `limit` queued packets per flow; or why not.
    pub fn new(weights: &[u32], lmax: u32, limit: usize) -> Result<Self, String> {
        Core::new(weights, lmax, limit).map(Self)
    }
}

impl<T> Scheduler<T> for Qfq<T> {
    fn enqueue(&mut self, flow: usize, len: u32, item: T) -> Result<(), T> {
        self.0.enqueue(flow, len, item)
    }

    fn dequeue(&mut self) -> Option<(usize, u32, T)> {
        self.0.dequeue()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn drops(&self, flow: usize) -> u64 {
        self.0.drops(flow)
    }
}

/// QFQ+ on the book `B` keeps.
pub(super) struct Core<T, B> {
    queues: Queues<T>,
    flows: Vec<Flow>,
    groups: Vec<Group>,
    book: B,
    v: u64,
    old_v: u64,
    /// ONE_FP / Σ weights.
    iwsum: u64,
    lmax: u32,
    in_service: Option<usize>,
}

impl<T, B: Book> Core<T, B> {
    /// As [`Qfq::new`].
    pub(super) fn new(weights: &[u32], lmax: u32, limit: usize) -> Result<Self, String> {
        if let Some(w) = weights.iter().find(|&&w| !(1..=MAX_WEIGHT).contains(&w)) {
            return Err(format!("QFQ weight {w} is outside 1..={MAX_WEIGHT}"));
        }
        if !(64..=MAX_LMAX).contains(&lmax) {
            return Err(format!("QFQ largest packet {lmax} bytes is outside 64..={MAX_LMAX}"));
        }
        let wsum: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let groups = (0..=MAX_INDEX).map(|i| Group { s: 0, f: 0, slot_shift: MIN_SLOT_SHIFT + i as u32 }).collect();
        let flows = weights
            .iter()
            .map(|&w| {
                let inv_w = ONE_FP / u64::from(w);
                Flow { s: 0, f: 0, group: group_index(inv_w, lmax), inv_w, budget: lmax, initial_budget: lmax }
            })
            .collect();
        Ok(Self {
            queues: Queues::new(weights.len(), limit),
            flows,
            groups,
            book: B::new(weights.len(), MAX_INDEX + 1),
            v: 0,
            old_v: 0,
            iwsum: ONE_FP / wsum.max(1),
            lmax,
            in_service: None,
        })
    }

    /// The state of group `g` from its timestamps: eligible when its S has
    /// reached V, blocked when an eligible ready group of a larger slot finishes first.
    fn calc_state(&self, g: usize) -> usize {
        let mut state = usize::from(gt(self.groups[g].s, self.v));
        if let Some(larger) = self.book.first_in(&[ER], g) {
            if gt(self.groups[g].f, self.groups[larger].f) {
                state |= EB;
            }
        }
        state
    }

    /// Group `g` takes the state its timestamps give it.
    fn place(&mut self, g: usize) {
        let state = self.calc_state(g);
        self.book.enter(g, state);
    }

    /// Unblocks the smaller groups once group `g`, which finished at `old_f`, no longer blocks them.
    fn unblock_groups(&mut self, g: usize, old_f: u64) {
        if let Some(larger) = self.book.first_in(&[ER], g + 1) {
            if !gt(self.groups[larger].f, old_f) {
                return;
            }
        }
        self.book.move_below(g, EB, ER);
        self.book.move_below(g, IB, IR);
    }

    /// Makes eligible the groups whose slot V has crossed since the last choice.
    fn make_eligible(&mut self) {
        let (slot, old_slot) = (self.v >> MIN_SLOT_SHIFT, self.old_v >> MIN_SLOT_SHIFT);
        if slot != old_slot {
            let flipped = (64 - (slot ^ old_slot).leading_zeros()) as usize;
            self.book.move_below(flipped, IR, ER);
            self.book.move_below(flipped, IB, EB);
        }
    }

    /// With no eligible group, V jumps to the smallest start; then groups become eligible.
    fn update_eligible(&mut self) {
        if let Some(first) = self.book.first_in(&[IR, IB], 0) {
            if self.book.first_in(&[ER], 0).is_none() {
                let s = self.groups[first].s;
                if gt(s, self.v) {
                    self.v = s;
                }
            }
            self.make_eligible();
        }
    }

    /// Puts `flow` in its group's slot of `rounded_s` (at most the last but one slot).
    fn slot_insert(&mut self, flow: usize, rounded_s: u64) {
        let g = self.flows[flow].group;
        let shift = self.groups[g].slot_shift;
        let mut slot = (rounded_s.wrapping_sub(self.groups[g].s) >> shift) as usize;
        if slot > SLOTS - 2 {
            // Far ahead (an out-of-order service before): shift the flow's timestamps back.
            let delta = rounded_s.wrapping_sub(self.groups[g].s).wrapping_sub(((SLOTS - 2) as u64) << shift);
            let f = &mut self.flows[flow];
            f.s = f.s.wrapping_sub(delta);
            f.f = f.f.wrapping_sub(delta);
            slot = SLOTS - 2;
        }
        self.book.insert(g, slot, flow);
    }

    /// The start of a flow that becomes backlogged: its finish if that is
    /// still ahead of V (and not stale), else V, or a start that keeps the
    /// blocked groups' order.
    fn update_start(&mut self, flow: usize) {
        let (g, f) = (self.flows[flow].group, self.flows[flow].f);
        let shift = self.groups[g].slot_shift;
        let rounded_f = round_down(f, shift);
        let limit = round_down(self.v, shift).wrapping_add(1 << shift);
        if !gt(f, self.v) || gt(rounded_f, limit) {
            if let Some(larger) = self.book.first_in(&[ER], g) {
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

    /// Schedules `flow` by its timestamps: into its group's slots, the group's state updated.
    fn schedule(&mut self, flow: usize) {
        let g = self.flows[flow].group;
        let shift = self.groups[g].slot_shift;
        let rounded_s = round_down(self.flows[flow].s, shift);
        let reset = if self.book.holds(g) {
            if gt(self.groups[g].s, self.flows[flow].s) {
                // The group's start moves back: make room, and it was surely ineligible.
                self.book.rotate(g, (self.groups[g].s.wrapping_sub(rounded_s) >> shift) as usize);
                self.book.leave(g, IR);
                self.book.leave(g, IB);
                true
            } else {
                false
            }
        } else {
            if self.book.first_in(&[ER], 0).is_none() && gt(rounded_s, self.v) && self.in_service.is_none() {
                self.v = rounded_s;
            }
            true
        };
        if reset {
            let grp = &mut self.groups[g];
            grp.s = rounded_s;
            grp.f = rounded_s.wrapping_add(2 << shift);
            self.place(g);
        }
        self.slot_insert(flow, rounded_s);
    }

    /// Starts a turn of `flow`, which was idle: a full budget, timestamps
    /// from its start, and service at once or a place in the schedule.
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

    /// A full budget for `flow`'s next turn, and its finish at the end of it.
    fn recharge(&mut self, flow: usize) {
        let f = &mut self.flows[flow];
        f.budget = self.lmax;
        f.initial_budget = self.lmax;
        f.f = f.s.wrapping_add(u64::from(self.lmax) * f.inv_w);
    }

    /// The next flow to serve, taken out of the schedule; group states updated.
    fn choose_next(&mut self) -> Option<usize> {
        self.update_eligible();
        self.old_v = self.v;
        let g = self.book.first_in(&[ER], 0)?;
        let old_f = self.groups[g].f;
        let flow = self.book.take_front(g);
        match self.book.advance(g) {
            None => self.book.leave(g, ER),
            Some(front) => {
                let rounded_s = round_down(self.flows[front].s, self.groups[g].slot_shift);
                if self.groups[g].s == rounded_s {
                    return Some(flow);
                }
                let grp = &mut self.groups[g];
                grp.s = rounded_s;
                grp.f = rounded_s.wrapping_add(2 << grp.slot_shift);
                self.book.leave(g, ER);
                self.place(g);
            }
        }
        self.unblock_groups(g, old_f);
        Some(flow)
    }
}

/// The group of a flow: log2 of its budget's span in virtual time, rounded up, above the smallest slot.
fn group_index(inv_w: u64, lmax: u32) -> usize {
    let slot_size = u64::from(lmax) * inv_w;
    let size_map = slot_size >> MIN_SLOT_SHIFT;
    if size_map == 0 {
        return 0;
    }
    let index = (64 - size_map.leading_zeros()) as usize;
    // An exact power of two fits the group below.
    let exact = slot_size == 1u64 << (index as u32 + MIN_SLOT_SHIFT - 1);
    (index - usize::from(exact)).min(MAX_INDEX)
}

impl<T, B: Book> Scheduler<T> for Core<T, B> {
    fn enqueue(&mut self, flow: usize, len: u32, item: T) -> Result<(), T> {
        let was_idle = self.queues.queued(flow) == 0;
        self.queues.push(flow, len, item)?;
        if was_idle && self.in_service != Some(flow) {
            self.activate(flow);
        }
        Ok(())
    }

    fn dequeue(&mut self) -> Option<(usize, u32, T)> {
        let mut serving = self.in_service?;
        let head = self.queues.head_len(serving);
        if head.is_none_or(|len| self.flows[serving].budget < len) {
            // Charge the turn for what it sent; a flow still backlogged is scheduled again.
            let f = &mut self.flows[serving];
            let used = (f.initial_budget - f.budget).min(self.lmax);
            f.f = f.s.wrapping_add(u64::from(used) * f.inv_w);
            if head.is_some() {
                // A new turn from where this one ended.
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
        let (len, item) = self.queues.pop(serving).expect("the flow in service is backlogged");
        let f = &mut self.flows[serving];
        f.budget = f.budget.saturating_sub(len);
        self.v = self.v.wrapping_add(u64::from(len) * self.iwsum);
        Some((serving, len, item))
    }

    fn len(&self) -> usize {
        self.queues.len()
    }

    fn drops(&self, flow: usize) -> u64 {
        self.queues.drops(flow)
    }
}
