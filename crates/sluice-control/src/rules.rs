//! The buffer rules both SLO-aware controllers share: feasibility recovery,
//! short-circuiting useless buffers, and inserting buffers where every flow
//! has room for them (Batchy §4).

use std::ops::RangeInclusive;

use sluice_core::{Actions, FlowId, ModuleId};

use crate::misprice::Raise;
use crate::view::{View, FULL_SHARE};

/// Removes buffers that cannot help: input batches already ≥ 0.7·B, a
/// trigger no larger than the input batch, or a buffer whose wait alone
/// exceeds the SLO of a flow through the module. (Batchy takes 1/x for
/// that wait, the time between runs: right for evenly spaced arrivals;
/// where whole rounds of packets come at once, a trigger that divides a
/// round's packets runs rarely yet holds nobody back, see `View::wait`.)
pub(crate) fn short_circuit(view: &View<'_>, trigger: &mut [u32]) {
    for v in view.live() {
        if trigger[v] == 0 {
            continue;
        }
        let full = view.b_in[v] >= FULL_SHARE * view.batch;
        let useless = trigger[v] as f64 <= view.b_in[v];
        let wait = view.wait(v, trigger[v] as f64);
        let too_slow = view.flows_through[v].iter().filter_map(|&f| view.slo[f]).any(|slo| wait > slo);
        if full || useless || too_slow {
            trigger[v] = 0;
        }
    }
}

/// For every flow over its SLO, first takes back the raises of the last
/// change that delay it (`before`: the period before), expecting the delay
/// it had then: a flow can go over because other branches' runs now fall
/// inside its wait (their phase moved), which the model does not see and
/// no cut on its own path undoes. Then cuts triggers along its path,
/// module by module (largest delay per packet of trigger first) by
/// ⌈excess / (∂t_f/∂b_v)⌉ down to the input batch size; short-circuits a
/// buffer cut that far, and the whole path when cutting cannot bring the
/// flow inside its SLO. The excess is counted from the flow's growth
/// target, where the gradient step would have stopped, not from the SLO
/// (Batchy's D_f − t_f): cut to the SLO itself, a flow sits on it and
/// goes over again in the next period its delay scatters upward, or when
/// its delay moves in whole walker rounds (RC(16) with its SLO lowered to
/// 27 µs landed at 27.007 µs).
pub(crate) fn recover(view: &View<'_>, delta: f64, before: &Before, trigger: &mut [u32]) -> Recovery {
    let n = view.model.modules.len();
    let (mut frozen, mut taken_back) = (vec![false; n], vec![false; n]);
    let (mut mispriced, mut unexplained) = (Vec::new(), Vec::new());
    for (f, flow) in view.model.flows.iter().enumerate() {
        let (Some(over_slo), Some(slo), Some(target)) = (view.excess(f), view.slo[f], view.growth_target(f, delta)) else {
            continue;
        };
        // How far the growth target lies below the SLO (s); the cut aims there.
        let margin = slo - target;
        let mut excess = over_slo + margin;
        for &v in &flow.path {
            frozen[v] = true;
        }
        if let Some(raise) = last_raise(view, before, f) {
            excess -= raise.modelled.max(raise.measured);
            for &v in &raise.modules {
                trigger[v] = trigger[v].min(before.trigger[v]);
                frozen[v] = true;
                taken_back[v] = true;
            }
            mispriced.push(raise);
        }
        let mut path: Vec<ModuleId> = flow.path.iter().copied().filter(|&v| trigger[v] > 0 && view.r[v] > 0.0).collect();
        path.sort_by(|&a, &b| view.dt_db(b).total_cmp(&view.dt_db(a)));
        for &v in &path {
            if excess <= 0.0 {
                break;
            }
            let slope = view.dt_db(v);
            let floor = view.b_in[v].ceil();
            let cut = (excess / slope).ceil();
            let new = (trigger[v] as f64 - cut).max(floor);
            excess -= (trigger[v] as f64 - new) * slope;
            // Cut down to the input batch size, a buffer only delays: remove it.
            trigger[v] = if new <= floor { 0 } else { new as u32 };
        }
        if excess > margin {
            for &v in &path {
                trigger[v] = 0;
            }
            let left = switch_off_hold_ups(view, f, excess - margin, trigger, &mut frozen);
            if left > 0.0 {
                unexplained.extend(switch_off_unexplained(view, f, trigger, &mut frozen));
            }
        }
    }
    Recovery { frozen, taken_back, mispriced, unexplained }
}

/// The last resort for flow `f`, over its SLO by more than any cut the
/// model prices recovers: every buffer still on is switched off (Null's
/// schedule) and frozen; returns `f` and those buffers, for
/// [`Misprice::unexplained`](crate::misprice::Misprice::unexplained) to
/// charge with what the flow's delay drops by. Not in a period the core
/// stalled (see [`View::stalled`]), nor for a flow Null was measured to
/// keep over its SLO too.
pub(crate) fn switch_off_unexplained(view: &View<'_>, f: FlowId, trigger: &mut [u32], frozen: &mut [bool]) -> Option<(FlowId, Vec<ModuleId>)> {
    if view.stalled() || view.slo[f].is_some_and(|slo| view.misprice.over_unbuffered(f, slo)) {
        return None;
    }
    let on: Vec<ModuleId> = view.live().filter(|&v| trigger[v] > 0).collect();
    for &v in &on {
        trigger[v] = 0;
        frozen[v] = true;
    }
    Some((f, on))
}

/// Per module (of `n`), whether [`switch_off_unexplained`] switched it
/// off. That is a probe of Null's schedule and starts no cooldown: the
/// next period either charges those buffers with the drop of the flow's
/// delay, which prices their return, or shows that Null keeps the flow
/// over too, and then they belong back at once (RC(16): its bulk buffers).
pub(crate) fn probed(n: usize, unexplained: &[(FlowId, Vec<ModuleId>)]) -> Vec<bool> {
    let mut probed = vec![false; n];
    for &v in unexplained.iter().flat_map(|(_, off)| off) {
        probed[v] = true;
    }
    probed
}

/// The last change's raises that delay flow `f`, if any.
pub(crate) fn last_raise(view: &View<'_>, before: &Before, f: usize) -> Option<Raise> {
    let modules: Vec<ModuleId> =
        view.live().filter(|&v| view.trigger[v] > before.trigger[v] && view.dt_f_db(f, v) > 0.0).collect();
    if modules.is_empty() {
        return None;
    }
    let modelled = modules.iter().map(|&v| view.delay_change(f, v, before.trigger[v], view.trigger[v])).sum();
    let measured = before.delay[f].zip(view.delay[f]).map_or(0.0, |(then, now)| now - then);
    Some(Raise { modules, modelled, measured })
}

/// Switches off buffers off flow `f`'s path whose longer runs hold it up
/// on a worker it shares (by the model, [`View::delay_change`]), the
/// largest hold-up first, until `excess` (s) is covered; returns what is
/// left of it. A flow whose own path has nothing left to cut can still be
/// over because another branch's buffers grew the runs its rounds wait
/// through, or pushed more traffic onto a worker it crosses; leaving those
/// buffers be kept it over its SLO for good.
pub(crate) fn switch_off_hold_ups(view: &View<'_>, f: usize, mut excess: f64, trigger: &mut [u32], frozen: &mut [bool]) -> f64 {
    let mut others: Vec<(ModuleId, f64)> = view
        .live()
        .filter(|&v| trigger[v] > 0 && !view.flows_through[v].contains(&f))
        .map(|v| (v, view.delay_change(f, v, 0, trigger[v])))
        .filter(|&(_, held)| held > 0.0)
        .collect();
    others.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (v, held) in others {
        if excess <= 0.0 {
            break;
        }
        trigger[v] = 0;
        frozen[v] = true;
        excess -= held;
    }
    excess
}

/// What [`recover`] did, per module.
pub(crate) struct Recovery {
    /// On the path of a flow over its SLO, or taken back: sits out
    /// insertion and the gradient step this period.
    pub frozen: Vec<bool>,
    /// Its last raise was taken back.
    pub taken_back: Vec<bool>,
    /// The raises taken back, each with what it did to the flow that went over.
    pub mispriced: Vec<Raise>,
    /// Flows over by more than the model explains, with the buffers
    /// switched off for them (see [`switch_off_unexplained`]).
    pub unexplained: Vec<(FlowId, Vec<ModuleId>)>,
}

/// The triggers and delays of the period before the one measured.
#[derive(Clone, Default)]
pub(crate) struct Before {
    /// Trigger in force per module (pkt).
    pub trigger: Vec<u32>,
    /// Measured delay per flow (s).
    pub delay: Vec<Option<f64>>,
}

impl Before {
    /// Keeps this period's triggers and delays for the next, returning the
    /// last period's (this period's own at the first: nothing was raised).
    pub(crate) fn roll(&mut self, view: &View<'_>) -> Before {
        let now = Before { trigger: view.trigger.clone(), delay: view.delay.clone() };
        if self.trigger.is_empty() {
            self.clone_from(&now);
        }
        std::mem::replace(self, now)
    }
}

/// Inserts a buffer in front of every unbuffered, unfrozen controlled
/// module where every flow has the budget for the delay it adds (see
/// `View::delay_change`) below its growth target, most CPU saved first
/// (counting the modules down the chain it feeds), at the top of
/// `triggers(v)` (pkt) where that fits, else at its bottom; each insertion
/// spends the flows' budgets. A module fed whole by a buffered one
/// (directly or down a chain) gets no buffer: it already receives that
/// buffer's batches, and one of its own would only add a wait.
pub(crate) fn insert(
    view: &View<'_>,
    delta: f64,
    trigger: &mut [u32],
    frozen: &[bool],
    triggers: impl Fn(ModuleId) -> RangeInclusive<f64>,
) {
    let mut budget: Vec<Option<f64>> = (0..view.model.flows.len())
        .map(|f| Some(view.growth_target(f, delta)? - view.delay[f].unwrap_or(0.0)))
        .collect();
    let mut candidates: Vec<ModuleId> =
        view.live().filter(|&v| !frozen[v] && trigger[v] == 0 && view.b_in[v] < FULL_SHARE * view.batch).collect();
    candidates.sort_by(|&a, &b| view.chain_dl_db(a).total_cmp(&view.chain_dl_db(b)));
    for v in candidates {
        if view.fed_by_buffer(v, trigger) {
            continue;
        }
        let range = triggers(v);
        for b in [*range.end(), *range.start()] {
            let b = b.clamp(1.0, view.batch) as u32;
            if b as f64 <= view.b_in[v] {
                break;
            }
            // What the buffer adds to each flow: its wait on the flows through
            // it, the hold-up of its longer runs on the others.
            let added: Vec<f64> = (0..budget.len()).map(|f| view.delay_change(f, v, 0, b)).collect();
            let fits = budget.iter().zip(&added).all(|(left, &a)| a <= 0.0 || left.is_none_or(|left| left >= a));
            if fits {
                trigger[v] = b;
                // A buffer that shortens a flow's rounds (see `View::dt_f_db`)
                // leaves its budget as it is: a saving is spent once measured.
                for (left, a) in budget.iter_mut().zip(added) {
                    if let Some(left) = left {
                        *left -= a.max(0.0);
                    }
                }
                break;
            }
        }
    }
}

/// Takes back the raises (and insertions) at modules below a module whose
/// trigger changes in the same period: a new trigger upstream changes the
/// arrivals downstream — a buffer raised to 32 sends bursts of 32 — and a
/// downstream trigger priced on the old, smoother arrivals can leave a
/// packet waiting for the next burst. Such a module moves a period later,
/// on arrivals measured under the new upstream trigger.
pub(crate) fn one_level_at_a_time(view: &View<'_>, trigger: &mut [u32]) {
    let model = view.model;
    let mut changed_above = vec![false; model.modules.len()];
    for &v in &model.topo_order {
        if changed_above[v] && trigger[v] > view.trigger[v] {
            trigger[v] = view.trigger[v];
        }
        let moves = changed_above[v] || trigger[v] != view.trigger[v];
        for &w in &model.next[v] {
            changed_above[w] |= moves;
        }
    }
}

/// Periods a buffer that recovery switched off waits before it may be
/// inserted again, the first time, and a module whose raise recovery took
/// back before it may move again: without it, growth and recovery chase
/// each other around the SLO (VRF(16,4): a raise that moved other
/// branches' runs into half the flows' waits, taken back, made again in
/// the next period and over again). Short, because the first removal is
/// as often a stall of the core (every flow over its SLO for a period) as
/// a buffer the model misjudged: a long first cooldown kept a whole
/// router's buffers off, at the unbuffered rate, for ten periods after a
/// 100 ms period in which the VM lost the core.
pub(crate) const COOLDOWN_PERIODS: u32 = 2;
/// Longest cooldown (periods): each removal or take-back at the same module
/// doubles its cooldown up to this, so a buffer the cost model keeps
/// misjudging stops being tried every few periods. The doubling wears off:
/// every stretch without a removal as long as a module's next cooldown
/// halves that cooldown (down to the first length), so a switch
/// that runs for hours does not keep a buffer off for a minute at a time
/// over removals long past.
pub(crate) const MAX_COOLDOWN_PERIODS: u32 = 640;

/// One module's cooldown (periods).
#[derive(Clone, Copy)]
struct Backoff {
    /// Periods it still cools.
    left: u32,
    /// Length of its next cooldown.
    next: u32,
    /// Periods since its last cooldown ended without a new one.
    quiet: u32,
}

impl Backoff {
    const FRESH: Self = Self { left: 0, next: COOLDOWN_PERIODS, quiet: 0 };

    fn start(&mut self) {
        self.left = self.next;
        self.next = (self.next * 2).min(MAX_COOLDOWN_PERIODS);
        self.quiet = 0;
    }

    fn age(&mut self) {
        if self.left > 0 {
            self.left -= 1;
            return;
        }
        self.quiet += 1;
        if self.next > COOLDOWN_PERIODS && self.quiet >= self.next {
            self.next = (self.next / 2).max(COOLDOWN_PERIODS);
            self.quiet = 0;
        }
    }
}

/// Per-module cooldown after recovery removed a buffer or took a raise back.
#[derive(Default)]
pub(crate) struct Cooldown(Vec<Backoff>);

impl Cooldown {
    /// Starts the cooldown of every module in `started`, ages the others,
    /// and returns which modules are cooling.
    pub(crate) fn update(&mut self, started: &[bool]) -> Vec<bool> {
        self.0.resize(started.len(), Backoff::FRESH);
        for (backoff, &start) in self.0.iter_mut().zip(started) {
            if start {
                backoff.start();
            } else {
                backoff.age();
            }
        }
        self.0.iter().map(|b| b.left > 0).collect()
    }
}

/// Per module, whether its buffer went from on (`before`) to off (`after`).
pub(crate) fn switched_off(before: &[u32], after: &[u32]) -> Vec<bool> {
    before.iter().zip(after).map(|(&b, &a)| b > 0 && a == 0).collect()
}

/// The triggers that differ between `before` and `after`, as actions.
pub(crate) fn changes(before: &[u32], after: &[u32]) -> Actions {
    let triggers = before.iter().zip(after).enumerate().filter(|(_, (b, a))| b != a).map(|(m, (_, &a))| (m, a)).collect();
    Actions { triggers, ..Actions::default() }
}

#[cfg(test)]
mod tests {
    use super::{Cooldown, COOLDOWN_PERIODS, MAX_COOLDOWN_PERIODS};

    /// Periods module 0 cools after a start, counting the start's own period.
    fn cooling_after_start(c: &mut Cooldown) -> u32 {
        let mut periods = 0;
        let mut started = true;
        while c.update(&[started])[0] {
            started = false;
            periods += 1;
        }
        periods
    }

    #[test]
    fn cooldown_doubles_on_repeats_and_wears_off_after_as_long_quiet() {
        let mut c = Cooldown::default();
        let lengths: Vec<u32> = (0..10).map(|_| cooling_after_start(&mut c)).collect();
        assert_eq!(&lengths[..3], &[COOLDOWN_PERIODS, 2 * COOLDOWN_PERIODS, 4 * COOLDOWN_PERIODS]);
        assert_eq!(lengths[9], MAX_COOLDOWN_PERIODS);
        // Quiet for as long as its next cooldown: that one is halved.
        for _ in 0..MAX_COOLDOWN_PERIODS {
            c.update(&[false]);
        }
        assert_eq!(cooling_after_start(&mut c), MAX_COOLDOWN_PERIODS / 2);
        // Quiet for twice as long again: back to the first length.
        for _ in 0..2 * MAX_COOLDOWN_PERIODS {
            c.update(&[false]);
        }
        assert_eq!(cooling_after_start(&mut c), COOLDOWN_PERIODS);
    }
}
