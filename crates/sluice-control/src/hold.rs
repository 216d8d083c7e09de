//! Hold times of NFs that hold packets (a Reframer's T_buff) under SLO
//! control. A longer hold makes longer runs of one flow, so less work per
//! packet downstream, and adds up to its length to the delays of the flows
//! through it: each hold follows the delay slack of those flows. Per
//! period, a module's hold moves by half the least slack ((1 − δ)·SLO less
//! the measured statistic, δ as the controllers take it) among its flows
//! with an SLO that delivered, within
//! [`MIN_HOLD_NS`] and the module's bound; a flow over its SLO itself
//! halves it at once besides. A module none of whose flows has an SLO holds for its
//! bound. Holds start at an eighth of their bound.

use sluice_core::{Model, ModuleId, Telemetry};

use crate::view::ControlParams;

/// The shortest hold the controller sets (ns).
pub const MIN_HOLD_NS: u64 = 1_000;

/// The hold in force per module whose hold is controlled.
pub struct HoldControl {
    holds: Vec<(ModuleId, u64)>,
}

impl HoldControl {
    /// Holds for the modules of `model` with a hold bound.
    pub fn new(model: &Model) -> Self {
        let holds = (0..model.modules.len()).filter_map(|m| model.modules[m].max_hold_ns.map(|bound| (m, (bound / 8).clamp(MIN_HOLD_NS.min(bound), bound)))).collect();
        Self { holds }
    }

    /// The holds in force (module, ns).
    pub fn holds(&self) -> &[(ModuleId, u64)] {
        &self.holds
    }

    /// The holds for the next period, after `telemetry`'s (module, ns).
    pub fn step(&mut self, model: &Model, telemetry: &Telemetry, control: &ControlParams) -> Vec<(ModuleId, u64)> {
        for (m, hold) in &mut self.holds {
            let Some(bound) = model.modules[*m].max_hold_ns else { continue };
            // Per flow: its slack below (1 − δ)·SLO, and whether it is over the SLO.
            let slacks = model.flows.iter().enumerate().filter(|(_, f)| f.path.contains(m)).filter_map(|(f, flow)| {
                let (t, slo) = (telemetry.flows.get(f).filter(|t| t.delivered > 0)?, flow.slo_ns?);
                let stat = control.statistic.of(t) as i64;
                Some((((1.0 - control.delta) * slo as f64) as i64 - stat, stat > slo as i64))
            });
            let next = match slacks.reduce(|a, b| (a.0.min(b.0), a.1 || b.1)) {
                None => bound as i64,
                Some((slack, true)) => (*hold as i64 + slack / 2).min(*hold as i64 / 2),
                Some((slack, false)) => *hold as i64 + slack / 2,
            };
            *hold = (next.max(0) as u64).clamp(MIN_HOLD_NS.min(bound), bound);
        }
        self.holds.clone()
    }
}
