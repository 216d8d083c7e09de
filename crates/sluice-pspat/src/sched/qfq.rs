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

use super::{Queues, Scheduler};

/// Slots per group (the bucket list).
pub(super) const SLOTS: usize = 32;
/// Groups: slot sizes 2^MIN_SLOT_SHIFT .. 2^(MIN_SLOT_SHIFT + MAX_INDEX).
pub(super) const MAX_INDEX: usize = 24;
/// Largest weight (2^10).
pub const MAX_WEIGHT: u32 = 1 << 10;
/// Largest packet and budget (bytes): 64 KiB.
pub const MAX_LMAX: u32 = 1 << MTU_SHIFT;
const MTU_SHIFT: u32 = 16;
/// Fixed-point fraction bits of virtual times.
const FRAC_BITS: u32 = 30;
pub(super) const ONE_FP: u64 = 1 << FRAC_BITS;
/// log2 of the smallest slot: the largest budget at weight 1 spans the groups.
pub(super) const MIN_SLOT_SHIFT: u32 = FRAC_BITS + MTU_SHIFT - MAX_INDEX as u32;
/// No flow (an empty slot or the end of one).
const NONE: usize = usize::MAX;

/// Group states, as indices of the bitmaps: eligible or ineligible, ready or blocked.
pub(super) const ER: usize = 0;
pub(super) const IR: usize = 1;
pub(super) const EB: usize = 2;
pub(super) const IB: usize = 3;

/// `a > b` on wrapping virtual times.
pub(super) fn gt(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

pub(super) fn round_down(ts: u64, shift: u32) -> u64 {
    ts & !((1u64 << shift) - 1)
}

/// Bits of `bitmap` from `from` up.
fn mask_from(bitmap: u64, from: usize) -> u64 {
    bitmap & !((1u64 << from) - 1)
}

struct Flow {
    s: u64,
    f: u64,
    group: usize,
    /// ONE_FP / weight.
    inv_w: u64,
    budget: u32,
    initial_budget: u32,
    /// The next flow in its slot.
    next: usize,
}

struct Group {
    s: u64,
    f: u64,
    slot_shift: u32,
    /// The slot at the bucket list's front, and which slots (from it) hold flows.
    front: usize,
    full_slots: u32,
    /// Per slot, its first flow (a stack, as Linux's hlist).
    slots: [usize; SLOTS],
}

/// QFQ+ over weighted flows (weights 1..=[`MAX_WEIGHT`]) whose packets are
/// at most `lmax` bytes (a flow's budget per turn; a longer packet is sent
/// at the start of a turn and ends it).
pub struct Qfq<T> {
    queues: Queues<T>,
    flows: Vec<Flow>,
    groups: Vec<Group>,
    bitmaps: [u64; 4],
    v: u64,
    old_v: u64,
    /// ONE_FP / Σ weights.
    iwsum: u64,
    lmax: u32,
    in_service: Option<usize>,
}

impl<T> Qfq<T> {
    /// QFQ+ with `weights[f]` as flow f's share, packets of at most `lmax`
    /// bytes, up to `limit` queued packets per flow; or why not.
    pub fn new(weights: &[u32], lmax: u32, limit: usize) -> Result<Self, String> {
        if let Some(w) = weights.iter().find(|&&w| !(1..=MAX_WEIGHT).contains(&w)) {
            return Err(format!("QFQ weight {w} is outside 1..={MAX_WEIGHT}"));
        }
        if !(64..=MAX_LMAX).contains(&lmax) {
            return Err(format!("QFQ largest packet {lmax} bytes is outside 64..={MAX_LMAX}"));
        }
        let wsum: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let groups = (0..=MAX_INDEX)
            .map(|i| Group { s: 0, f: 0, slot_shift: MIN_SLOT_SHIFT + i as u32, front: 0, full_slots: 0, slots: [NONE; SLOTS] })
            .collect();
        let flows = weights
            .iter()
            .map(|&w| {
                let inv_w = ONE_FP / u64::from(w);
                Flow { s: 0, f: 0, group: group_index(inv_w, lmax), inv_w, budget: lmax, initial_budget: lmax, next: NONE }
            })
            .collect();
        Ok(Self {
            queues: Queues::new(weights.len(), limit),
            flows,
            groups,
            bitmaps: [0; 4],
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
        let larger = mask_from(self.bitmaps[ER], g);
        if larger != 0 && gt(self.groups[g].f, self.groups[larger.trailing_zeros() as usize].f) {
            state |= EB;
        }
        state
    }

    fn move_groups(&mut self, mask: u64, from: usize, to: usize) {
        self.bitmaps[to] |= self.bitmaps[from] & mask;
        self.bitmaps[from] &= !mask;
    }

    /// Unblocks the smaller groups once group `g`, which finished at `old_f`, no longer blocks them.
    fn unblock_groups(&mut self, g: usize, old_f: u64) {
        let larger = mask_from(self.bitmaps[ER], g + 1);
        if larger != 0 && !gt(self.groups[larger.trailing_zeros() as usize].f, old_f) {
            return;
        }
        let smaller = (1u64 << g) - 1;
        self.move_groups(smaller, EB, ER);
        self.move_groups(smaller, IB, IR);
    }

    /// Makes eligible the groups whose slot V has crossed since the last choice.
    fn make_eligible(&mut self) {
        let (slot, old_slot) = (self.v >> MIN_SLOT_SHIFT, self.old_v >> MIN_SLOT_SHIFT);
        if slot != old_slot {
            let flipped = 64 - (slot ^ old_slot).leading_zeros();
            let mask = if flipped > MAX_INDEX as u32 { u64::MAX } else { (1u64 << flipped) - 1 };
            self.move_groups(mask, IR, ER);
            self.move_groups(mask, IB, EB);
        }
    }

    /// With no eligible group, V jumps to the smallest start; then groups become eligible.
    fn update_eligible(&mut self) {
        let ineligible = self.bitmaps[IR] | self.bitmaps[IB];
        if ineligible != 0 {
            if self.bitmaps[ER] == 0 {
                let s = self.groups[ineligible.trailing_zeros() as usize].s;
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
        let grp = &mut self.groups[g];
        let i = (grp.front + slot) % SLOTS;
        self.flows[flow].next = grp.slots[i];
        grp.slots[i] = flow;
        grp.full_slots |= 1 << slot;
    }

    /// Takes the first flow of group `g`'s front slot out.
    fn front_slot_remove(&mut self, g: usize) -> usize {
        let grp = &mut self.groups[g];
        let flow = grp.slots[grp.front];
        debug_assert_ne!(flow, NONE, "the front slot of a scheduled group holds a flow");
        grp.slots[grp.front] = self.flows[flow].next;
        if grp.slots[grp.front] == NONE {
            grp.full_slots &= !1;
        }
        flow
    }

    /// The first flow of group `g`'s first non-empty slot, that slot made the front.
    fn slot_scan(&mut self, g: usize) -> Option<usize> {
        let grp = &mut self.groups[g];
        if grp.full_slots == 0 {
            return None;
        }
        let i = grp.full_slots.trailing_zeros() as usize;
        if i > 0 {
            grp.front = (grp.front + i) % SLOTS;
            grp.full_slots >>= i;
        }
        Some(grp.slots[grp.front])
    }

    /// Moves group `g`'s front back so that a start of `rounded_s`, below its S, has a slot.
    fn slot_rotate(&mut self, g: usize, rounded_s: u64) {
        let grp = &mut self.groups[g];
        let i = (grp.s.wrapping_sub(rounded_s) >> grp.slot_shift) as usize;
        grp.full_slots <<= i;
        grp.front = (grp.front + SLOTS - i % SLOTS) % SLOTS;
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
            let larger = mask_from(self.bitmaps[ER], g);
            if larger != 0 {
                let next_f = self.groups[larger.trailing_zeros() as usize].f;
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
        let rounded_s = round_down(self.flows[flow].s, self.groups[g].slot_shift);
        let reset = if self.groups[g].full_slots != 0 {
            if gt(self.groups[g].s, self.flows[flow].s) {
                // The group's start moves back: make room, and it was surely ineligible.
                self.slot_rotate(g, rounded_s);
                self.bitmaps[IR] &= !(1 << g);
                self.bitmaps[IB] &= !(1 << g);
                true
            } else {
                false
            }
        } else {
            if self.bitmaps[ER] == 0 && gt(rounded_s, self.v) && self.in_service.is_none() {
                self.v = rounded_s;
            }
            true
        };
        if reset {
            let grp = &mut self.groups[g];
            grp.s = rounded_s;
            grp.f = rounded_s.wrapping_add(2 << grp.slot_shift);
            let state = self.calc_state(g);
            self.bitmaps[state] |= 1 << g;
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
        if self.bitmaps[ER] == 0 {
            return None;
        }
        let g = self.bitmaps[ER].trailing_zeros() as usize;
        let old_f = self.groups[g].f;
        let flow = self.front_slot_remove(g);
        match self.slot_scan(g) {
            None => self.bitmaps[ER] &= !(1 << g),
            Some(front) => {
                let rounded_s = round_down(self.flows[front].s, self.groups[g].slot_shift);
                if self.groups[g].s == rounded_s {
                    return Some(flow);
                }
                let grp = &mut self.groups[g];
                grp.s = rounded_s;
                grp.f = rounded_s.wrapping_add(2 << grp.slot_shift);
                self.bitmaps[ER] &= !(1 << g);
                let state = self.calc_state(g);
                self.bitmaps[state] |= 1 << g;
            }
        }
        self.unblock_groups(g, old_f);
        Some(flow)
    }
}

/// The group of a flow: log2 of its budget's span in virtual time, rounded up, above the smallest slot.
pub(super) fn group_index(inv_w: u64, lmax: u32) -> usize {
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

impl<T> Scheduler<T> for Qfq<T> {
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
