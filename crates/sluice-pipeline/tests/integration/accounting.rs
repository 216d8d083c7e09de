//! Nothing is lost unseen: on generated pipelines, under every built-in
//! controller, on one to four workers, every packet is accounted for per
//! module and per flow, a pipeline that drops nothing by design loses
//! nothing, and backpressure crosses the rings between workers.

use crate::common;

use sluice_control::{drive, ControlParams, RunPlan, RunReport, CONTROLLERS};
use sluice_core::{Backend, Model, ModuleCounters, Role};
use sluice_pipeline::{controller, Pipeline};

fn plan(periods: usize, period_ms: u64) -> RunPlan {
    RunPlan { periods, warmup_periods: 1, period_ns: period_ms * 1_000_000, ..RunPlan::default() }
}

/// Runs `p` under `name` on `backend` and checks the accounting of the drained run.
fn run_and_check(p: &Pipeline, name: &str, backend: &mut dyn Backend, plan: &RunPlan, case: &str) -> RunReport {
    let mut ctl = controller(name, plan).unwrap();
    let report = drive(backend, ctl.as_mut(), plan, &mut |_| {}).unwrap();
    let s = &report.summary;
    let why = || format!("{case} under {name}: {s:?}\n{}", p.model().modules.iter().map(|m| m.name.clone()).collect::<Vec<_>>().join(" "));
    assert_eq!(s.in_flight, 0, "drained: {}", why());
    assert!(s.accounted, "generated = delivered + dropped: {}", why());
    assert_eq!(s.dropped, s.drops.nf + s.drops.queue_full + s.drops.egress_full + s.drops.aqm + s.drops.worker_down + s.drops.duplicates, "every drop has a reason: {}", why());
    assert!(s.lossless, "nothing drops by design here, on any number of workers: {}", why());
    for (f, t) in report.flow_totals.iter().enumerate() {
        let flow = &p.model().flows[f].name;
        assert!(t.generated > 0, "{case} under {name}: flow {flow} counts what it was given: {t:?}");
        assert_eq!(t.generated, t.delivered + t.dropped, "{case} under {name}: flow {flow} accounts for its packets: {t:?}");
        assert_eq!(t.misdelivered, 0, "{case} under {name}: flow {flow}");
    }
    let delivered: u64 = report.flow_totals.iter().map(|t| t.delivered).sum();
    assert_eq!(delivered, s.delivered, "{case} under {name}: every delivery is a flow's");
    report
}

/// Per module: what arrived ran or was dropped at arrival; what ran (and
/// what the NF made) went out of a gate or to the drop gate.
fn check_modules(model: &Model, modules: &[ModuleCounters], case: &str) {
    for (m, decl) in model.modules.iter().enumerate() {
        let c = &modules[m];
        if decl.role != Role::Source {
            assert_eq!(c.arrived_pkts, c.run_pkts + c.queue_dropped + c.down_dropped, "{case}: module {} ({c:?})", decl.name);
        }
        if decl.role != Role::Sink {
            let out: u64 = model.next[m].iter().map(|&child| modules[child].arrived_pkts).sum();
            assert_eq!(c.run_pkts + c.created, out + c.dropped + c.duplicates, "{case}: module {} sends what it ran ({c:?})", decl.name);
        }
    }
}

#[test]
fn generated_pipelines_lose_nothing_under_every_controller_on_one_to_four_workers_on_the_simulator() {
    for seed in 0..12u64 {
        for workers in 1..=4 {
            let spec = common::generated(seed, workers, (50.0, 2000.0));
            let p = Pipeline::from_json(&spec.to_string()).unwrap();
            for name in CONTROLLERS {
                let case = format!("seed {seed}, {workers} workers");
                let report = run_and_check(&p, name, &mut p.simulator().unwrap(), &plan(3, 2), &case);
                check_modules(p.model(), &report.module_totals, &format!("{case} under {name}"));
            }
        }
    }
}

#[test]
fn generated_pipelines_lose_nothing_on_the_engine() {
    let _engine = common::one_engine_at_a_time();
    for seed in [1u64, 5] {
        for workers in [1, 2] {
            let spec = common::generated(seed, workers, (50.0, 2000.0));
            let p = Pipeline::from_json(&spec.to_string()).unwrap();
            for name in CONTROLLERS {
                let case = format!("seed {seed}, {workers} workers");
                let report = run_and_check(&p, name, &mut p.engine(true).unwrap(), &plan(2, 5), &case);
                check_modules(p.model(), &report.module_totals, &format!("{case} under {name}, engine"));
            }
        }
    }
}

/// RC(4) with its bulk branches and their egresses on a second worker.
fn rc4_split_across_workers() -> Pipeline {
    let mut spec = common::rc(4);
    for m in spec["modules"].as_array_mut().unwrap() {
        let name = m["name"].as_str().unwrap().to_string();
        if name.starts_with("bulk") || name.starts_with("out_bulk") {
            m["worker"] = 1.into();
        }
    }
    Pipeline::from_json(&spec.to_string()).unwrap()
}

#[test]
fn backpressure_crosses_the_ring_between_workers_under_weighted_fair_controllers() {
    let p = rc4_split_across_workers();
    for name in ["nfvnice", "wfq-opt", "max", "projgrad"] {
        let mut sim = p.simulator().unwrap();
        let report = run_and_check(&p, name, &mut sim, &plan(4, 20), "RC(4) on two workers, simulator");
        assert!(report.summary.delivered > 10_000, "{name}: the pipeline ran");
    }
    let _engine = common::one_engine_at_a_time();
    for name in ["nfvnice", "wfq-opt"] {
        let mut engine = p.engine(true).unwrap();
        run_and_check(&p, name, &mut engine, &plan(3, 20), "RC(4) on two workers, engine");
    }
}

#[test]
fn flows_a_splitter_decides_count_what_they_were_given_and_lose() {
    // A worker down drops what reaches it: each flow is charged its own.
    let mut spec = common::rc(4);
    for m in spec["modules"].as_array_mut().unwrap() {
        if m["name"].as_str().unwrap().ends_with("bulk2") {
            m["worker"] = 1.into();
        }
    }
    spec["outages"] = serde_json::json!([{"worker": 1, "from": 1, "until": 3}]);
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let plan = p.plan(3, 1, 10_000_000, ControlParams::default());
    let mut ctl = controller("null", &plan).unwrap();
    let report = drive(&mut p.simulator().unwrap(), ctl.as_mut(), &plan, &mut |_| {}).unwrap();
    let s = &report.summary;
    assert!(s.accounted && !s.lossless && s.drops.worker_down > 0 && s.drops.worker_down == s.dropped, "{s:?}");
    let bulk2 = p.model().flows.iter().position(|f| f.name == "bulk2").unwrap();
    for (f, t) in report.flow_totals.iter().enumerate() {
        assert!(t.generated > 0 && t.generated == t.delivered + t.dropped, "{t:?}");
        assert_eq!(t.dropped > 0, f == bulk2, "only the flow whose worker was down lost packets: {t:?}");
    }
    assert_eq!(report.flow_totals[bulk2].dropped, s.dropped);
}
