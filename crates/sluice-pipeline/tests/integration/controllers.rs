//! The SLO-aware controllers on the simulator (deterministic).

use crate::common;

use sluice_control::{drive, ControlParams, PeriodRecord, RunPlan, RunReport, Steps, SloStatistic};
use sluice_pipeline::Pipeline;

/// Runs `controller` on the simulator, its SLOs on the plan's statistic.
fn run(spec: &serde_json::Value, controller: &str, plan: &RunPlan) -> RunReport {
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let mut ctl = sluice_pipeline::controller(controller, plan).unwrap();
    let mut sim = p.simulator_with(ctl.schedule(p.model(), p.schedule())).unwrap();
    let r = drive(&mut sim, ctl.as_mut(), plan, &mut |_| {}).unwrap();
    if std::env::var_os("SLUICE_TEST_DUMP").is_some() {
        for (i, p) in r.periods.iter().enumerate() {
            let p95: Vec<u64> = p.telemetry.flows.iter().map(|f| f.p95_ns / 100).collect();
            eprintln!("{controller} {i:2} v={} fb={:?} rate={:.2} t={:?} p95={:?}", p.violated as u8, p.fallback, p.rate_pps / 1e6, triggers(p), p95);
        }
    }
    r
}

fn plan(periods: usize) -> RunPlan {
    RunPlan { periods, warmup_periods: 0, period_ns: 50_000_000, ..RunPlan::default() }
}

fn triggers(p: &PeriodRecord) -> Vec<u32> {
    p.telemetry.modules.iter().map(|m| m.trigger).collect()
}

/// Periods (from `from` on) in which some flow was over its SLO.
fn violations(r: &RunReport, from: usize) -> Vec<usize> {
    r.periods.iter().enumerate().skip(from).filter(|(_, p)| p.violated).map(|(i, _)| i).collect()
}

/// Periods that must pass without a trigger change for a point to count as settled.
const HELD: usize = 5;

#[test]
fn projgrad_reaches_a_kkt_point_on_rc16_within_10_periods() {
    let r = run(&common::rc(16), "projgrad", &plan(20));
    // A KKT point: the controller leaves every trigger alone, period after period.
    let settled = (1..r.periods.len() - HELD).find(|&i| r.periods[i..=i + HELD].iter().all(|p| triggers(p) == triggers(&r.periods[i])));
    let settled = settled.expect("triggers hold still for 5 periods");
    assert!(settled <= 10, "triggers first held still from period {settled}");
    assert_eq!(violations(&r, settled), Vec::<usize>::new(), "no SLO is violated from there on");
    let last = r.periods.last().unwrap();
    assert!(last.mean_batch > 28.0, "{}", last.mean_batch);
    assert!(last.telemetry.modules[2].trigger > 1, "the robot-control flow's own buffer is in use");
    // Later moves are one packet at most: the measured p95 wanders within a histogram bucket.
    for w in r.periods[settled..].windows(2) {
        for (a, b) in triggers(&w[0]).iter().zip(triggers(&w[1])) {
            assert!(a.abs_diff(b) <= 1, "a trigger jumped from {a} to {b} after settling");
        }
    }
}

#[test]
fn projgrad_starts_a_buffer_full_only_where_a_full_one_costs_next_to_nothing() {
    // RC(16) starts unbuffered and over the robot-control SLO. A bulk
    // buffer's fill time is ~1 ms against its 100 ms SLO, and Bypass(10000,
    // 0) holds nobody up with longer runs: such buffers start at B, so the
    // pipeline is inside the SLO from the first period the controller acts
    // in. The robot-control buffer (35 µs) starts just above its input batch.
    let r = run(&common::rc(16), "projgrad", &plan(6));
    let t = triggers(&r.periods[1]);
    let model = Pipeline::from_json(&common::rc(16).to_string()).unwrap().model().clone();
    let id = |name: &str| model.module_id(name).unwrap();
    assert!((1..16).all(|i| t[id(&format!("bulk{i}"))] == 32), "bulk buffers start full: {t:?}");
    assert!(t[id("rc")] < 8, "the robot-control buffer starts small: {t:?}");
    assert_eq!(violations(&r, 1), Vec::<usize>::new());
}

#[test]
fn projgrad_recovers_within_two_periods_when_the_slo_halves() {
    let mut p = plan(24);
    p.slo_schedules.push((0, Steps(vec![(12, 17.5)])));
    let r = run(&common::rc(16), "projgrad", &p);
    assert_eq!(violations(&r, 14), Vec::<usize>::new(), "back inside 17.5 µs by period 14");
    assert!(r.periods[11].telemetry.flows[0].p95_ns > 17_500, "the old operating point violates the new SLO");
}

#[test]
fn projgrad_recovery_lands_below_the_slo_with_margin() {
    // 35 → 27 µs: the robot-control buffer is cut, not removed. Cut to the
    // SLO itself, the flow's p95 (which moves in whole walker rounds here)
    // landed at 27.007 µs, over again; cut to the growth target it lands
    // at or below (1 − 2δ)·27 µs.
    let mut p = plan(16);
    p.slo_schedules.push((0, Steps(vec![(12, 27.0)])));
    let r = run(&common::rc(16), "projgrad", &p);
    let (before, after) = (r.periods[12].telemetry.modules[2].trigger, r.periods[13].telemetry.modules[2].trigger);
    assert!(before > after && after > 0, "trigger {before} → {after}");
    let p95 = r.periods[13].telemetry.flows[0].p95_ns;
    assert!(p95 as f64 <= 0.9 * 27_000.0, "p95 {p95} ns after the cut");
}

#[test]
fn projgrad_recovers_within_two_periods_after_a_tenfold_load_drop() {
    let mut spec = common::rc(16);
    spec["modules"][0]["source"]["synthetic"]["streams"][0]["rate_pps"] = 4_000_000.0.into();
    spec["modules"][0]["source"]["synthetic"]["streams"][0]["rate_schedule"] = serde_json::json!([[12, 400000.0]]);
    // The plan carries the spec's rate schedule.
    let plan = Pipeline::from_json(&spec.to_string()).unwrap().plan(24, 0, 50_000_000, ControlParams::default());
    let r = run(&spec, "projgrad", &plan);
    assert!(r.periods[11].telemetry.modules[2].trigger > 1, "buffering before the drop");
    assert_eq!(violations(&r, 14), Vec::<usize>::new(), "back inside the SLO by period 14");
}

#[test]
fn triggers_stay_within_bounds_and_onoff_uses_only_zero_or_b() {
    for controller in sluice_control::CONTROLLERS {
        let r = run(&common::rc(8), controller, &plan(8));
        for p in &r.periods {
            for t in triggers(p) {
                assert!(t <= 32, "{controller} set trigger {t}");
                if *controller == "onoff" {
                    assert!(t == 0 || t == 32, "onoff set trigger {t}");
                }
            }
        }
    }
}

#[test]
fn wfq_opt_meets_the_robot_control_slo_with_weights_from_the_model() {
    let r = run(&common::rc(16), "wfq-opt", &plan(16));
    let null = run(&common::rc(16), "null", &plan(16));
    // Periods 0 and 1 run unbuffered (the first measures start-up, the
    // second the floor). The robot-control buffer then at most doubles a
    // period while the model's error is learnt (sent straight to the
    // model's batch, it was over in period 2; with that miss smoothed, in
    // periods 3-5 too).
    assert_eq!(violations(&r, 2), Vec::<usize>::new(), "inside the SLO from the first controlled period");
    let rc = |i: usize| r.periods[i].telemetry.modules[2].trigger;
    assert!((1..r.periods.len()).all(|i| rc(i) <= 2 * rc(i - 1).max(1)), "{:?}", (0..r.periods.len()).map(rc).collect::<Vec<_>>());
    let rate = |r: &RunReport| r.periods[8..].iter().map(|p| p.rate_pps).sum::<f64>();
    assert!(rate(&r) > 5.0 * rate(&null), "{} vs {}", rate(&r), rate(&null));
    let weights_differ = r.periods.last().unwrap().telemetry.modules.iter().map(|m| m.trigger).collect::<std::collections::BTreeSet<_>>().len() > 1;
    assert!(weights_differ, "the robot-control module runs with a smaller batch than the bulk ones");
}

#[test]
fn on_the_mean_projgrad_batches_flows_without_slo_to_bring_another_inside_an_slo_null_misses() {
    // RC(4) with bulk modules of Bypass(10000, 100) and an SLO on the
    // robot-control flow only: under Null every round runs the three bulk
    // modules on a few packets each, and the robot-control packets wait
    // through those rounds. An SLO on its mean at 60% of that is out of
    // reach on its own (unbuffered) path; batching the bulk modules, which
    // then run in fewer rounds, shortens the rounds it waits through
    // (priced as hold-up, 100 cycles a packet of their longer runs, it
    // would look like a delay the flow has no room for).
    let mut spec = common::rc(4);
    for bulk in 1..4 {
        spec["flows"][bulk]["slo_us"] = serde_json::Value::Null;
        spec["modules"][2 * bulk + 2]["nf"]["cycles_per_packet"] = 100.into();
    }
    let mean = RunPlan { control: ControlParams { statistic: SloStatistic::Mean, ..ControlParams::default() }, ..plan(12) };
    let null = run(&spec, "null", &mean);
    let null_mean_ns = null.periods.last().unwrap().telemetry.flows[0].mean_ns;
    spec["flows"][0]["slo_us"] = (0.6 * null_mean_ns as f64 / 1e3).into();
    let r = run(&spec, "projgrad", &mean);
    assert_eq!(violations(&r, 0)[0], 0, "the first period, unbuffered, is over the SLO");
    assert_eq!(violations(&r, 4), Vec::<usize>::new(), "inside the SLO from period 4 on");
    let last = triggers(r.periods.last().unwrap());
    assert!([4, 6, 8].iter().all(|&bulk| last[bulk] > 16), "the bulk modules batch: {last:?}");
}

/// A random split into 4 branches, each a chain of three Bypass(1000, 10)
/// modules (SLO 500 µs per flow).
fn chains() -> serde_json::Value {
    let mut modules = vec![
        serde_json::json!({"name": "src", "source": {"synthetic": {"streams": [{}]}}}),
        serde_json::json!({"name": "split", "nf": {"type": "random_split", "weights": [1.0, 1.0, 1.0, 1.0], "seed": 1}}),
    ];
    let (mut edges, mut flows) = (vec![serde_json::json!({"from": "src", "to": "split"})], vec![]);
    for i in 0..4 {
        let chain: Vec<String> = (0..3).map(|k| format!("b{i}_{k}")).chain([format!("out{i}")]).collect();
        for name in &chain[..3] {
            modules.push(serde_json::json!({"name": name, "nf": {"type": "bypass", "cycles_per_batch": 1000, "cycles_per_packet": 10}}));
        }
        modules.push(serde_json::json!({"name": chain[3], "sink": {}}));
        edges.push(serde_json::json!({"from": "split", "outgate": i, "to": chain[0]}));
        for w in chain.windows(2) {
            edges.push(serde_json::json!({"from": w[0], "to": w[1]}));
        }
        let path: Vec<&str> = ["src", "split"].into_iter().chain(chain.iter().map(String::as_str)).collect();
        flows.push(serde_json::json!({"name": format!("f{i}"), "path": path, "slo_us": 500.0}));
    }
    serde_json::json!({"name": "chains", "batch_size": 32, "modules": modules, "edges": edges, "flows": flows})
}

#[test]
fn projgrad_buffers_the_head_of_a_chain_only() {
    let spec = chains();
    let model = Pipeline::from_json(&spec.to_string()).unwrap().model().clone();
    let r = run(&spec, "projgrad", &plan(10));
    let id = |i: usize, k: usize| model.module_id(&format!("b{i}_{k}")).unwrap();
    for (n, p) in r.periods.iter().enumerate() {
        let t = triggers(p);
        for i in 0..4 {
            assert_eq!((t[id(i, 1)], t[id(i, 2)]), (0, 0), "period {n}: branch {i}'s later modules get the head's batches as they are");
        }
    }
    let last = triggers(r.periods.last().unwrap());
    assert!((0..4).all(|i| last[id(i, 0)] > 1), "every branch's head is buffered: {last:?}");
    assert_eq!(violations(&r, 1), Vec::<usize>::new());
}

#[test]
fn projgrad_buffers_again_soon_after_a_one_period_stall() {
    // A stall (the core taken away for a while) looks to the controller
    // like one period far over the SLO: here the SLO dips to 5 µs for one
    // period, so recovery short-circuits the robot-control flow's path.
    let mut p = plan(30);
    p.slo_schedules.push((0, Steps(vec![(12, 5.0), (13, 35.0)])));
    let r = run(&common::rc(16), "projgrad", &p);
    assert_eq!(r.periods[13].telemetry.modules[2].trigger, 0, "recovery switched the robot-control buffer off");
    // Back where it was within four periods of the stall, not after a long
    // cooldown spent at the unbuffered rate.
    let back = (13..r.periods.len()).find(|&i| triggers(&r.periods[i]) == triggers(&r.periods[11]));
    assert!(back.is_some_and(|i| i <= 17), "triggers before the stall back in period {back:?}");
    // Period 13 probes Null's schedule (the stall is more than the
    // robot-control buffer explains), which keeps the flow over too; from
    // then on the controller knows, and the bulk buffers are back at once.
    assert_eq!(violations(&r, 14), Vec::<usize>::new());
    assert_eq!(r.periods[14].telemetry.modules[4].trigger, 32, "a bulk buffer is back after the probe");
}

#[test]
fn projgrad_grows_the_flows_with_room_past_one_held_at_its_growth_target() {
    // Four branches of Bypass(100, 10) settle at SLO 3 µs; then three get
    // 4 µs and the fourth an SLO that puts its delay between its growth
    // target, (1 − 2δ)·SLO, and the active band, (1 − δ)·SLO. That flow may
    // not grow and must not stop the others from growing either: the
    // projection keeps its delay from rising (here by trading its own
    // buffer for theirs).
    let mut spec = chains();
    for f in 0..4 {
        spec["flows"][f]["slo_us"] = 3.0.into();
    }
    for m in spec["modules"].as_array_mut().unwrap().iter_mut().filter(|m| m["nf"]["type"] == "bypass") {
        m["nf"]["cycles_per_batch"] = 100.into();
    }
    let model = Pipeline::from_json(&spec.to_string()).unwrap().model().clone();
    let head = |i: usize| model.module_id(&format!("b{i}_0")).unwrap();
    let settled = run(&spec, "projgrad", &plan(12));
    let (p10, p11) = (&settled.periods[10], &settled.periods[11]);
    assert_eq!(triggers(p10), triggers(p11), "settled by period 10");
    let t0_us = p11.telemetry.flows[0].p95_ns as f64 / 1e3;
    let mut p = plan(24);
    p.slo_schedules.push((0, Steps(vec![(12, t0_us / 0.925)])));
    p.slo_schedules.extend((1..4).map(|f| (f, Steps(vec![(12, 4.0)]))));
    let r = run(&spec, "projgrad", &p);
    let (before, after) = (triggers(p11), triggers(r.periods.last().unwrap()));
    // Without the rule they stayed where they were.
    assert!((1..4).all(|i| after[head(i)] > before[head(i)] + 4), "the others grow: {before:?} → {after:?}");
    assert_eq!(violations(&r, 0), Vec::<usize>::new());
}

#[test]
fn projgrad_waits_before_making_a_raise_recovery_took_back_again() {
    // The robot-control flow goes over its SLO (dipped for one period) right
    // after a raise of its buffer: recovery takes the raise back, and the
    // buffer sits out the next period rather than being raised into the
    // same violation again.
    let trigger = |r: &RunReport, i: usize| r.periods[i].telemetry.modules[2].trigger;
    let free = run(&common::rc(16), "projgrad", &plan(12));
    let i = (1..9).find(|&i| trigger(&free, i) > 0 && trigger(&free, i + 1) > trigger(&free, i)).expect("the robot-control buffer grows");
    let p95_us = free.periods[i + 1].telemetry.flows[0].p95_ns as f64 / 1e3;
    let mut p = plan(12);
    p.slo_schedules.push((0, Steps(vec![(i + 1, 0.97 * p95_us), (i + 2, 35.0)])));
    let r = run(&common::rc(16), "projgrad", &p);
    assert_eq!(violations(&r, i), vec![i + 1]);
    assert!(trigger(&r, i + 2) <= trigger(&r, i), "taken back: {} → {}", trigger(&r, i + 1), trigger(&r, i + 2));
    assert_eq!(trigger(&r, i + 3), trigger(&r, i + 2), "not raised again in the next period");
    assert!(trigger(&r, 11) > trigger(&r, i + 2), "raised again once the cooldown is over");
}
