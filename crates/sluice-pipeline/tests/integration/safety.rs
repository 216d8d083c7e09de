//! Null's schedule is the floor: on generated pipelines (random branching,
//! NF costs and placement on 1-4 workers, run-to-completion or
//! weighted-fair) whose SLOs run from loose to just feasible for Null,
//! every SLO-aware controller delivers at least Null's rate (within 3%)
//! and is over SLO in at most 2 points more of the periods than Null.
//! Simulator, seeded, 100 measured periods of 2 ms. A failure prints the
//! pipeline's description; `SLUICE_SAFETY_DUMP=DIR` writes every case to
//! DIR, and `sluice run DIR/case-N.json --backend sim --controller C
//! --periods 100 --warmup 20 --period-ms 2` replays one.
//! `SLUICE_SAFETY_CASES=N` runs more cases.

use crate::common;

use serde_json::Value;
use sluice_control::{ControlParams, RunPlan, RunReport};
use sluice_pipeline::{controller, Pipeline};

/// The controllers that take SLOs into account (Max and NFVnice are the
/// published baselines: by design they do not).
const SLO_AWARE: [&str; 3] = ["onoff", "projgrad", "wfq-opt"];
/// How far below Null's rate a controller may run (the simulator repeats
/// itself; this is for the round-to-round phase of buffers).
const RATE_TOLERANCE: f64 = 0.03;
/// How many more points of periods over SLO than Null a controller may have.
const VIOLATION_POINTS: f64 = 2.0;

fn plan() -> RunPlan {
    RunPlan { periods: 100, warmup_periods: 20, period_ns: 2_000_000, control: ControlParams::default(), ..RunPlan::default() }
}

fn run(spec: &Value, name: &str) -> RunReport {
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let plan = plan();
    sluice_pipeline::run(&p, controller(name, &plan).unwrap(), sluice_pipeline::BackendKind::Sim, true, &plan, &mut |_| {}, &|| false).unwrap()
}

/// The p95 delay of each flow under Null over the measured periods (µs).
fn null_p95(report: &RunReport) -> Vec<f64> {
    let measured: Vec<_> = report.periods.iter().filter(|p| !p.warmup).collect();
    (0..report.flow_totals.len())
        .map(|f| measured.iter().map(|p| p.telemetry.flows[f].p95_ns as f64 / 1e3).fold(0.0, f64::max))
        .collect()
}

#[test]
fn slo_aware_controllers_do_no_worse_than_null_where_null_meets_the_slos() {
    // Twelve seeds give each of the four worker counts with and without
    // weighted-fair scheduling once (seed % 4 and seed % 3 below).
    let cases: u64 = std::env::var("SLUICE_SAFETY_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(12);
    let mut failures = Vec::new();
    for seed in 0..cases {
        let workers = 1 + seed as usize % 4;
        let mut spec = common::generated(seed, workers, (1e6, 1e6));
        if seed % 3 == 2 {
            spec["scheduler"] = serde_json::json!({"mode": "wfq", "backpressure_pkts": 512});
        }
        // SLOs from loose (10× Null's worst p95) to just feasible for it (1.2×).
        let worst = null_p95(&run(&spec, "null"));
        let mut rng = common::Draw(seed.wrapping_add(7) | 1);
        for (f, flow) in spec["flows"].as_array_mut().unwrap().iter_mut().enumerate() {
            flow["slo_us"] = (worst[f].max(1.0) * rng.between(1.2, 10.0)).into();
        }
        let null = run(&spec, "null");
        if let Ok(dir) = std::env::var("SLUICE_SAFETY_DUMP") {
            std::fs::write(format!("{dir}/case-{seed}.json"), spec.to_string()).unwrap();
        }
        for name in SLO_AWARE {
            let r = run(&spec, name);
            let (rate, floor) = (r.summary.rate_pps, null.summary.rate_pps * (1.0 - RATE_TOLERANCE));
            let (viol, allowed) = (r.summary.violation_pct, null.summary.violation_pct + VIOLATION_POINTS);
            if rate < floor || viol > allowed {
                failures.push(format!(
                    "seed {seed}, {workers} workers, {name}: {:.3} Mpps at {viol:.0}% over, Null {:.3} Mpps at {:.0}% over\n{spec}",
                    rate / 1e6,
                    null.summary.rate_pps / 1e6,
                    null.summary.violation_pct
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} runs below Null's floor:\n{}", failures.len(), cases * SLO_AWARE.len() as u64, failures.join("\n\n"));
}
