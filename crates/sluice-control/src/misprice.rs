//! What the model misprices, learnt from what the controller took back.
//!
//! Two ways a model misses. It underprices a buffer it does see: when a
//! flow goes over its SLO after buffers were raised and the raise is taken
//! back, the flow's measured delay change over the model's says by how much,
//! and later raises of those buffers are priced up by that factor. Or it
//! sees no link at all: a flow goes over with nothing on its path to cut
//! and no hold-up the model knows of (a buffer on another worker made that
//! worker take more traffic, which pushed more onto a worker the flow
//! crosses). Then every buffer is switched off, as under Null, and the drop
//! of the flow's delay the next period is charged to them, as a hold-up
//! per (flow, buffer) the model adds to their next insertion; unless Null
//! was measured to keep that flow over its SLO too, where switching off
//! is no remedy (RC(16): its bulk buffers are what bring the
//! robot-control flow inside).
//!
//! Both wear off slowly. Without them a controller retried the same raise
//! whenever its cooldown ended, over the SLO every time (a generated
//! pipeline under projgrad: one period in ten).

use std::collections::HashMap;

use sluice_core::{Flow, FlowId, ModuleId};

/// Share of what is learnt kept from one period to the next (half-life
/// about 70 periods).
const KEEP: f64 = 0.99;
/// The largest factor learnt at once.
const MAX_FACTOR: f64 = 100.0;
/// A learnt hold-up below this is forgotten (s).
const FORGOTTEN: f64 = 1e-9;

/// Raises of one change that delay a flow, and by how much: what a
/// [`Misprice`] learns from.
pub(crate) struct Raise {
    /// The modules raised.
    pub modules: Vec<ModuleId>,
    /// The delay the model said they add to the flow (s).
    pub modelled: f64,
    /// The delay the flow's measurement moved by (s).
    pub measured: f64,
}

/// What the model misprices, per module and per (flow, module).
#[derive(Clone, Default)]
pub(crate) struct Misprice {
    /// Per module, the factor by which the model underprices its raises (≥ 1).
    factor: Vec<f64>,
    /// Per (flow, module), the delay a full buffer at the module adds to
    /// the flow beyond what the model sees (s).
    hold_up: HashMap<(FlowId, ModuleId), f64>,
    /// Buffers switched off last period for a flow the model could not
    /// explain, and the flow's delay then (s).
    pending: Vec<(FlowId, Vec<ModuleId>, f64)>,
    /// Per flow, its delay when last measured with every buffer off (s).
    unbuffered: Vec<Option<f64>>,
    /// Periods seen (the first measures start-up, not a schedule).
    periods: u64,
}

impl Misprice {
    /// Ages what was learnt by a period, charges last period's unexplained
    /// switch-offs with the drop of their flows' delays (`delay`, per flow,
    /// s), notes the delays if every buffer was off (`unbuffered`, and the
    /// period not stalled), and returns the prices for this period.
    pub(crate) fn update(&mut self, modules: usize, delay: &[Option<f64>], unbuffered: bool) -> Misprice {
        self.factor.resize(modules, 1.0);
        self.periods += 1;
        if self.periods > 1 && unbuffered {
            self.unbuffered.clear();
            self.unbuffered.extend_from_slice(delay);
        }
        for k in &mut self.factor {
            *k = 1.0 + (*k - 1.0) * KEEP;
        }
        self.hold_up.retain(|_, d| {
            *d *= KEEP;
            *d > FORGOTTEN
        });
        for (f, off, then) in std::mem::take(&mut self.pending) {
            let Some(now) = delay.get(f).copied().flatten() else { continue };
            let share = (then - now) / off.len() as f64;
            if share > 0.0 {
                for v in off {
                    let d = self.hold_up.entry((f, v)).or_default();
                    *d = d.max(share);
                }
            }
        }
        Misprice { pending: Vec::new(), ..self.clone() }
    }

    /// `raise` added more to a flow's delay than the model said (at the
    /// current factors): scale its modules' factors up to match.
    pub(crate) fn learn(&mut self, raise: &Raise) {
        let Raise { modules, modelled, measured } = raise;
        if measured <= modelled || *measured <= 0.0 {
            return;
        }
        let factor = if *modelled > 0.0 { (measured / modelled).min(MAX_FACTOR) } else { MAX_FACTOR };
        for &v in modules {
            if let Some(k) = self.factor.get_mut(v) {
                *k = (*k * factor).min(MAX_FACTOR);
            }
        }
    }

    /// Flows went over with nothing the model could cut, and every buffer
    /// on was switched off for them (`switched`, see
    /// [`switch_off_unexplained`](crate::rules::switch_off_unexplained)):
    /// charge those buffers with what the flows' delays drop by next
    /// period. Returns why the next settings are a fallback, if they are.
    /// `flows` and their `delay` (s) are the period's.
    pub(crate) fn unexplained(&mut self, flows: &[Flow], delay: &[Option<f64>], switched: Vec<(FlowId, Vec<ModuleId>)>) -> Option<String> {
        let why = switched.first().map(|(f, _)| {
            format!("flow '{}' went over its SLO by more than its buffers explain: every buffer off, as under Null", flows[*f].name)
        });
        for (f, off) in switched {
            if let (Some(delay), false) = (delay[f], off.is_empty()) {
                self.pending.push((f, off, delay));
            }
        }
        why
    }

    /// Whether flow `f` was over `slo` (s) when last measured with every buffer off.
    pub(crate) fn over_unbuffered(&self, f: FlowId, slo: f64) -> bool {
        self.unbuffered.get(f).copied().flatten().is_some_and(|d| d > slo)
    }

    /// The model's delay `change` (s) for flow `f` when module v's trigger
    /// moves by `share` of a full buffer, priced up by what was learnt.
    pub(crate) fn price(&self, f: FlowId, v: ModuleId, change: f64, share: f64) -> f64 {
        let learnt = if share > 0.0 { self.hold_up.get(&(f, v)).map_or(0.0, |d| d * share) } else { 0.0 };
        let priced = if change > 0.0 { change * self.factor.get(v).copied().unwrap_or(1.0) } else { change };
        priced + learnt
    }
}
