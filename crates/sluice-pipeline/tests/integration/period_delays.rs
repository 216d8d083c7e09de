//! Each period's delays are its own, on both backends. Alone in its test
//! binary: its engine measures delays of µs, and the other tests' threads,
//! run beside it in one binary, took the pinned worker's core for ms at a
//! time on a two-core machine.

use crate::common;

use common::{on_both_backends, pipeline, plan};
use sluice_control::{drive, Controller, Max, Null, RunPlan};
use sluice_core::{Actions, Model, Telemetry};

/// Max at 200 kpps for three periods, then Null at 20 kpps: the RC flow's
/// delays drop from the time its buffers take to fill (hundreds of µs) to
/// the µs of passing packets straight through, and a period delivers a
/// tenth of the packets. (At 1 Mpps a debug build's worker was near
/// saturation on a two-core VM, and a busy spell queued packets for ms.)
struct MaxThenNull;

impl Controller for MaxThenNull {
    fn name(&self) -> &str {
        "max-then-null"
    }

    fn init(&mut self, model: &Model) -> Actions {
        Actions { rates: vec![(0, 0, 200e3)], ..Max.init(model) }
    }

    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions {
        if telemetry.period == 2 { Actions { rates: vec![(0, 0, 20e3)], ..Null.init(model) } } else { Actions::default() }
    }
}

#[test]
fn each_period_s_delays_are_its_own_on_both_backends() {
    on_both_backends(&pipeline(4), |backend| {
        let report = drive(backend, &mut MaxThenNull, &RunPlan { warmup_periods: 0, ..plan(8) }, &mut |_| {}).unwrap();
        let rc: Vec<_> = report.periods.iter().map(|p| &p.telemetry.flows[0]).collect();
        let under_max = rc[2].p50_ns;
        // Delays carried over from a period under Max would outnumber a
        // later period's own tenfold and move its median in every later
        // period. A period in which the machine took the engine's worker
        // off its core has a high median of its own (two of four, seen
        // beside another test run), so the quietest later period decides.
        let under_null: Vec<u64> = rc[4..].iter().map(|f| f.p50_ns).collect();
        let quietest = under_null.iter().min().copied().unwrap_or(u64::MAX);
        assert!(quietest < under_max / 4, "medians {under_null:?} ns under Null beside {under_max} ns under Max");
    });
}
