//! Weighted-fair mode: turns follow weights, backpressure bounds the queues.

use crate::common;

use sluice_control::{drive, Controller, RunPlan};
use sluice_core::{Actions, Model, Telemetry};
use sluice_pipeline::Pipeline;

/// Sets fixed weights before the first period.
struct Weights(Vec<(&'static str, u32)>);

impl Controller for Weights {
    fn name(&self) -> &str {
        "weights"
    }

    fn init(&mut self, model: &Model) -> Actions {
        let id = |n: &str| model.module_id(n).unwrap();
        Actions { weights: self.0.iter().map(|&(n, w)| (id(n), w)).collect(), ..Actions::default() }
    }

    fn step(&mut self, _: &Model, _: &Telemetry) -> Actions {
        Actions::default()
    }
}

fn rc_wfq(n: usize, backpressure: Option<usize>) -> Pipeline {
    let mut spec = common::rc(n);
    spec["scheduler"] = serde_json::json!({"mode": "wfq", "backpressure_pkts": backpressure});
    Pipeline::from_json(&spec.to_string()).unwrap()
}

fn plan() -> RunPlan {
    RunPlan { periods: 3, warmup_periods: 1, period_ns: 20_000_000, ..RunPlan::default() }
}

#[test]
fn backlogged_queues_are_served_by_weight() {
    let p = rc_wfq(3, None);
    let mut sim = p.simulator().unwrap();
    // The source's 8 turns bring bulk2 ~85 packets per turn of its own: its
    // queue stays backlogged, as does bulk1's (~28 per turn at weight 3).
    let mut ctl = Weights(vec![("src", 8), ("bulk1", 3), ("bulk2", 1)]);
    let report = drive(&mut sim, &mut ctl, &plan(), &mut |_| {}).unwrap();
    let t = &report.periods.last().unwrap().telemetry;
    let (b1, b2) = (t.modules[4].x, t.modules[6].x);
    assert!((b1 / b2 - 3.0).abs() < 0.1, "bulk1 runs {b1}/s, bulk2 {b2}/s: want 3:1");
    assert!(t.modules[6].dropped > 0, "without backpressure the slower queue overflows");
    let s = report.summary;
    assert_eq!(s.generated, s.delivered + s.dropped + s.in_flight);
}

#[test]
fn backpressure_keeps_every_packet_on_both_backends() {
    let p = rc_wfq(4, Some(256));
    let mut sim = p.simulator().unwrap();
    let mut engine = p.engine(true).unwrap();
    let backends: [&mut dyn sluice_core::Backend; 2] = [&mut sim, &mut engine];
    for backend in backends {
        let report = drive(backend, &mut Weights(vec![]), &plan(), &mut |_| {}).unwrap();
        let s = report.summary;
        assert_eq!(s.dropped, 0);
        assert!(s.delivered > 0);
        assert_eq!(s.generated, s.delivered + s.in_flight);
        for p in &report.periods {
            assert!(p.telemetry.totals.in_flight <= 256 + 2 * 32, "{:?}", p.telemetry.totals);
        }
    }
}
