//! Hold times of NFs that hold packets (a Reframer's T_buff) under SLO
//! control. A longer hold makes longer runs of one flow, so less work per
//! packet downstream, and adds up to its length to the delays of the flows
//! through it. The controllers' model of a buffer (cost per packet against
//! the delay it adds) extends to a hold with one more measured figure: the
//! work a µs of hold saves.
//!
//! Per period, for each module whose hold is controlled:
//! - its flows' slack: (1 − δ)·SLO less the measured statistic, the least
//!   among its flows with an SLO that delivered (δ as the controllers take it);
//! - its gain: the relative drop of the work per packet on its flows' paths
//!   from it on (the modules' busy time over the packets it took in) per µs
//!   the hold grew since the period before.
//!
//! The hold moves by half the slack, down when the slack is negative and
//! halved when a flow is over its SLO. It grows only while growing pays:
//! when the last growth bought less than [`MIN_GAIN_PER_US`], it returns to
//! the hold before and stays there [`REST_PERIODS`] periods before it tries
//! again. Where no work is measured (modules without cost), the slack
//! alone decides. A module none of whose flows has an SLO holds for its
//! bound. Holds stay within [`MIN_HOLD_NS`] and the module's bound and
//! start at an eighth of the bound.

use sluice_core::{Model, ModuleId, Telemetry};

use crate::view::ControlParams;

/// The shortest hold the controller sets (ns).
pub const MIN_HOLD_NS: u64 = 1_000;
/// The least share of the work per packet a µs more of hold must save for
/// the hold to keep growing (0.1%: 10 µs must save 1%).
pub const MIN_GAIN_PER_US: f64 = 0.001;
/// Periods a hold rests after a growth that did not pay, before it tries again.
pub const REST_PERIODS: u32 = 8;

/// One controlled hold.
struct Hold {
    module: ModuleId,
    /// The modules whose work it changes: it and what follows it on its flows' paths.
    downstream: Vec<ModuleId>,
    ns: u64,
    /// The hold and the work per packet (ns) measured under it, the period before.
    before: Option<(u64, f64)>,
    /// Periods left before it may grow again.
    resting: u32,
}

/// The hold in force per module whose hold is controlled.
pub struct HoldControl {
    holds: Vec<Hold>,
}

impl HoldControl {
    /// Holds for the modules of `model` with a hold bound.
    pub fn new(model: &Model) -> Self {
        let holds = (0..model.modules.len())
            .filter_map(|m| {
                let bound = model.modules[m].max_hold_ns?;
                let mut downstream: Vec<ModuleId> =
                    model.flows.iter().filter_map(|f| f.path.iter().position(|&v| v == m).map(|i| &f.path[i..])).flatten().copied().collect();
                downstream.sort_unstable();
                downstream.dedup();
                Some(Hold { module: m, downstream, ns: (bound / 8).clamp(MIN_HOLD_NS.min(bound), bound), before: None, resting: 0 })
            })
            .collect();
        Self { holds }
    }

    /// The holds in force (module, ns).
    pub fn holds(&self) -> Vec<(ModuleId, u64)> {
        self.holds.iter().map(|h| (h.module, h.ns)).collect()
    }

    /// The holds for the next period, after `telemetry`'s (module, ns).
    pub fn step(&mut self, model: &Model, telemetry: &Telemetry, control: &ControlParams) -> Vec<(ModuleId, u64)> {
        for h in &mut self.holds {
            let Some(bound) = model.modules[h.module].max_hold_ns else { continue };
            let m = h.module;
            // Per flow: its slack below (1 − δ)·SLO, and whether it is over the SLO.
            let slacks = model.flows.iter().enumerate().filter(|(_, f)| f.path.contains(&m)).filter_map(|(f, flow)| {
                let (t, slo) = (telemetry.flows.get(f).filter(|t| t.delivered > 0)?, flow.slo_ns?);
                let stat = control.statistic.of(t) as i64;
                Some((((1.0 - control.delta) * slo as f64) as i64 - stat, stat > slo as i64))
            });
            let packets = telemetry.modules[m].r * telemetry.period_ns as f64 * 1e-9;
            let busy: u64 = h.downstream.iter().map(|&v| telemetry.modules[v].busy_ns).sum();
            let work = (packets >= 1.0 && busy > 0).then(|| busy as f64 / packets);
            let now = h.ns as i64;
            let next = match slacks.reduce(|a, b| (a.0.min(b.0), a.1 || b.1)) {
                None => bound as i64,
                Some((slack, true)) => (now + slack / 2).min(now / 2),
                Some((slack, false)) if slack <= 0 => now + slack / 2,
                Some((slack, false)) => match (h.before, work) {
                    // The last growth did not pay: back to the hold before, and rest.
                    (Some((then, then_work)), Some(work)) if h.ns > then + 1_000 && (then_work - work) / then_work / ((h.ns - then) as f64 / 1e3) < MIN_GAIN_PER_US => {
                        h.resting = REST_PERIODS;
                        then as i64
                    }
                    _ if h.resting > 0 => {
                        h.resting -= 1;
                        now
                    }
                    _ => now + slack / 2,
                },
            };
            h.before = work.map(|w| (h.ns, w));
            h.ns = (next.max(0) as u64).clamp(MIN_HOLD_NS.min(bound), bound);
        }
        self.holds()
    }
}
