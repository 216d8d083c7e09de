//! Moving modules between workers while running, and pipeline
//! decomposition onto a spare worker.

use crate::common;

use serde_json::json;
use sluice_control::{drive, Controller, Max, Null, RunPlan, RunReport};
use sluice_core::{Actions, Backend, Model, ModuleId, Telemetry};
use sluice_pipeline::Pipeline;

fn plan(periods: usize) -> RunPlan {
    RunPlan { periods, warmup_periods: 0, period_ns: 20_000_000, ..RunPlan::default() }
}

/// Full batches everywhere (so buffers hold packets when they move), and
/// the named modules moved to worker 1 after period `at`.
struct MoveAt {
    at: usize,
    modules: Vec<&'static str>,
    period: usize,
}

impl Controller for MoveAt {
    fn name(&self) -> &str {
        "move-at"
    }

    fn init(&mut self, model: &Model) -> Actions {
        Max.init(model)
    }

    fn step(&mut self, model: &Model, _t: &Telemetry) -> Actions {
        self.period += 1;
        if self.period != self.at + 1 {
            return Actions::default();
        }
        let id = |name: &str| -> ModuleId { model.module_id(name).unwrap() };
        Actions { moves: self.modules.iter().map(|&m| (id(m), 1)).collect(), ..Actions::default() }
    }
}

fn rc4_with_a_spare() -> Pipeline {
    let mut spec = common::rc(4);
    spec["spare_workers"] = json!(1);
    Pipeline::from_json(&spec.to_string()).unwrap()
}

fn run_with_a_move(backend: &mut dyn Backend) -> RunReport {
    let mut ctl = MoveAt { at: 2, modules: vec!["bulk2", "out_bulk2", "bulk3", "out_bulk3"], period: 0 };
    drive(backend, &mut ctl, &plan(6), &mut |_| {}).unwrap()
}

/// Lossless, every flow delivers after the move, and worker 1 works only after it.
fn check_move(r: &RunReport) {
    let s = &r.summary;
    assert!(s.generated > 0);
    assert_eq!((s.dropped, s.in_flight), (0, 0), "{s:?}");
    assert_eq!(s.generated, s.delivered);
    for (f, t) in r.flow_totals.iter().enumerate() {
        assert!(t.delivered > 0 && t.dropped == 0 && t.misdelivered == 0, "flow {f}: {t:?}");
    }
    assert_eq!(r.periods[2].moves.len(), 4);
    for p in &r.periods[..=2] {
        assert_eq!(p.telemetry.workers[1].busy_fraction, 0.0, "the spare idles before the move");
    }
    for p in &r.periods[3..] {
        let t = p.telemetry.totals;
        assert_eq!(t.generated, t.delivered + t.dropped + t.in_flight, "{t:?}");
    }
    // Over the periods after the move, not in each: a busy machine may leave
    // the spare's thread unscheduled for a whole period.
    let after = &r.periods[3..];
    for f in 0..r.flow_totals.len() {
        assert!(after.iter().any(|p| p.telemetry.flows[f].delivered > 0), "flow {f} delivers after the move");
    }
    assert!(after.iter().any(|p| p.telemetry.workers[1].busy_fraction > 0.0), "the moved modules run on worker 1");
}

#[test]
fn modules_move_to_a_spare_worker_mid_run_on_the_simulator_without_loss() {
    let mut sim = rc4_with_a_spare().simulator().unwrap();
    let r = run_with_a_move(&mut sim);
    check_move(&r);
    assert_eq!(sim.model().worker_of, vec![0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(sim.model().crossings.len(), 2, "split -> bulk2 and split -> bulk3 run through rings");
}

#[test]
fn modules_move_to_a_spare_worker_mid_run_on_the_engine_without_loss() {
    let _engine = common::one_engine_at_a_time();
    let mut engine = rc4_with_a_spare().engine(true).unwrap();
    let r = run_with_a_move(&mut engine);
    check_move(&r);
}

#[test]
fn a_move_that_folds_a_ring_is_refused_and_changes_nothing() {
    let mut spec = common::rc(2);
    spec["modules"][3]["worker"] = json!(1);
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let mut sim = p.simulator().unwrap();
    let err = sim.apply(&Actions { moves: vec![(3, 0)], triggers: vec![(2, 4)], ..Actions::default() }).unwrap_err();
    assert_eq!(err.to_string(), "module 'out_rc': moving it onto the worker of 'rc' would fold a ring between workers; only splits are supported while running");
    assert_eq!(sim.model().worker_of, p.model().worker_of);
    let err = sim.apply(&Actions { moves: vec![(3, 7)], ..Actions::default() }).unwrap_err();
    assert_eq!(err.to_string(), "module 'out_rc': cannot move it to worker 7: there are 2 workers");
}

/// RC with three slow bulk branches of ~20 µs a batch each: with every
/// module at a full batch a round takes ~60 µs, over the 35 µs SLO of the
/// robot-control flow whatever the triggers (an inherent violation).
fn slowed_rc(spare_workers: usize) -> Pipeline {
    let mut spec = common::rc(4);
    for m in spec["modules"].as_array_mut().unwrap() {
        if m["name"].as_str().is_some_and(|n| n.starts_with("bulk")) {
            m["nf"]["cycles_per_batch"] = json!((20_000.0 / sluice_pipeline::ns_per_cycle()).round() as u64);
        }
    }
    spec["spare_workers"] = json!(spare_workers);
    Pipeline::from_json(&spec.to_string()).unwrap()
}

#[test]
fn decomposition_moves_the_bulk_flows_that_do_not_fit_and_restores_the_slo() {
    let run = |spares| {
        let mut sim = slowed_rc(spares).simulator().unwrap();
        drive(&mut sim, &mut Null, &plan(8), &mut |_| {}).unwrap()
    };
    let alone = run(0);
    assert!(alone.periods.iter().all(|p| p.violated), "without a spare the robot-control flow misses its SLO throughout");

    let split = run(1);
    let moved: Vec<&(usize, usize)> = split.periods.iter().flat_map(|p| &p.moves).collect();
    let p = slowed_rc(1);
    let names: Vec<&str> = moved.iter().map(|&&(m, w)| {
        assert_eq!(w, 1);
        p.model().modules[m].name.as_str()
    }).collect();
    // The tightest flow stays with one bulk branch (20 µs fits in 35); the
    // other two bulk flows' own modules move.
    assert_eq!(names, ["bulk2", "out_bulk2", "bulk3", "out_bulk3"]);
    let at = split.periods.iter().position(|p| !p.moves.is_empty()).unwrap();
    assert_eq!(at, 0, "decomposed as soon as the violation is seen");
    assert!(split.periods[at + 1..].iter().all(|p| !p.violated), "inside the SLO from the next period on");
    assert_eq!(split.summary.generated, split.summary.delivered + split.summary.dropped);
    // The moved modules carry their flows from the spare worker (what it does to the rate is
    // `sluice experiment decompose`'s kpps column): packets reach each of them in every period after.
    for &&(m, _) in &moved {
        assert!(split.periods[at + 1..].iter().all(|p| p.telemetry.modules[m].r > 0.0), "{} idle on the spare worker", p.model().modules[m].name);
    }
}
