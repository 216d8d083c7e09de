//! Poll policies on the engine: at light load a sleeping policy asks to
//! sleep through most of each period and loses nothing; a busy one never
//! waits. These check what each policy decides, not the CPU share the
//! machine then gives (that is `sluice experiment polling`'s figure).

use crate::common;

use sluice_control::{RunPlan, RunReport};
use sluice_pipeline::{controller, Pipeline};

/// RC(2) at 2 kpps under Null on the engine with poll policy `poll`.
fn light_load(poll: serde_json::Value) -> RunReport {
    light_load_with_slos(poll, None)
}

/// The same, every flow's SLO set to `slo_us` if given.
fn light_load_with_slos(poll: serde_json::Value, slo_us: Option<f64>) -> RunReport {
    at_rate(2_000.0, poll, slo_us)
}

/// RC(2) at `pps` under Null on the engine with poll policy `poll`, every
/// flow's SLO set to `slo_us` if given.
fn at_rate(pps: f64, poll: serde_json::Value, slo_us: Option<f64>) -> RunReport {
    let mut spec = common::rc(2);
    spec["modules"][0]["source"]["synthetic"]["streams"][0]["rate_pps"] = pps.into();
    spec["poll"] = poll;
    for f in spec["flows"].as_array_mut().unwrap().iter_mut().filter(|_| slo_us.is_some()) {
        f["slo_us"] = slo_us.into();
    }
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let plan = RunPlan { periods: 4, warmup_periods: 1, period_ns: 100_000_000, ..RunPlan::default() };
    let _engine = common::one_engine_at_a_time();
    sluice_pipeline::run(&p, controller("null", &plan).unwrap(), sluice_pipeline::BackendKind::Engine, true, &plan, &mut |_| {}, &|| false).unwrap()
}

/// Checks that the worker decided to sleep in most measured periods of
/// `r`: more than `least` sleeps or waits, asking for `asked_us` each on
/// average. (What it decides, not how long the machine then let it sleep:
/// a sleep that ends late leaves room for fewer in a period; and a period
/// the machine stalled in leaves slo-aware less slack in the next.)
fn sleeps_most_periods(r: &RunReport, least: u64, asked_us: std::ops::RangeInclusive<f64>, name: &str) {
    let measured: Vec<_> = r.periods.iter().filter(|p| !p.warmup).map(|p| &p.telemetry.workers[0]).collect();
    let sleeping = measured.iter().filter(|w| w.waits > least && asked_us.contains(&w.wait_asked_us)).count();
    assert!(2 * sleeping > measured.len(), "{name}: {measured:?}");
}

/// Sleeps and waits over the run.
fn waits(r: &RunReport) -> u64 {
    r.periods.iter().map(|p| p.telemetry.workers[0].waits).sum()
}

#[test]
fn an_empty_poll_worker_gives_its_core_back_at_light_load_and_loses_nothing() {
    let busy = light_load(serde_json::json!({"policy": "busy"}));
    // A sleep costs this VM's thread 25-40 µs of CPU whatever its length:
    // sleeps shorter than ~200 µs save little.
    let sleepy = light_load(serde_json::json!({"policy": "empty-poll", "empty_polls": 4, "min_sleep_us": 100.0, "max_sleep_us": 1000.0}));
    for r in [&busy, &sleepy] {
        assert!(r.summary.lossless && r.summary.generated > 600, "{:?}", r.summary);
    }
    // A busy worker never waits; a sleepy one asks for sleeps of 100..1000 µs
    // after runs of empty polls, through most of the time between packets.
    assert_eq!(waits(&busy), 0);
    sleeps_most_periods(&sleepy, 10, 100.0..=1000.0, "empty-poll");
    // What it slept is measured, not taken for what it asked: a sleep ends
    // after its deadline (by at least the time to wake), never on it to the ns.
    let s = &sleepy.periods.last().unwrap().telemetry.workers[0];
    assert!(s.waits > 0 && s.wait_late_us > 0.0, "{s:?}");
}

#[test]
fn slo_batching_sleeps_between_rounds_with_work_so_batches_fill_and_loses_nothing() {
    // 40 kpps: a packet every 25 µs, so a busy worker takes them one by one
    // on any machine that carries RC(2) at all, and a receive queue of 4096
    // holds 100 ms of them (a stall of this VM's shorter than that loses
    // nothing). Every SLO 1 s: a stall of tens of ms (CI has them) leaves the
    // flows' slack room for the longest sleep, so the slack, which is not
    // what this test is about, bounds no sleep.
    let pps = 40_000.0;
    let slo_us = Some(1_000_000.0);
    let poll = serde_json::json!({"policy": "slo-batching", "min_sleep_us": 50.0, "max_sleep_us": 500.0});
    let batching = at_rate(pps, poll.clone(), slo_us);
    let busy = at_rate(pps, serde_json::json!({"policy": "busy"}), slo_us);
    for r in [&batching, &busy] {
        assert!(r.summary.lossless && r.summary.generated > 10_000, "{:?}", r.summary);
    }
    let measured = |r: &RunReport| r.periods.iter().filter(|p| !p.warmup).map(|p| (p.telemetry.workers[0].clone(), p.telemetry.modules[0].b)).collect::<Vec<_>>();
    // Each wake-up finds the packets of a sleep of ≥ 50 µs (≥ 2, ~20 at the
    // longest) waiting: batches of several packets, most rounds with work
    // and a sleep after most of those. Busy polling never sleeps (its
    // batches are whatever the machine lets pile up between its rounds:
    // one packet here, three when CPU hogs take two thirds of its core).
    let sleeping = measured(&batching).iter().filter(|(w, b)| *b >= 4.0 && w.waits > 50 && 2 * w.empty_polls < w.polls && w.wait_asked_us >= 50.0).count();
    assert!(2 * sleeping > measured(&batching).len(), "{:?}", measured(&batching));
    assert!(measured(&busy).iter().all(|(w, _)| w.waits == 0), "{:?}", measured(&busy));
    // RC(2)'s robot-control flow has an SLO of 35 µs: no room for a sleep of 50 µs, so it polls.
    let tight = at_rate(pps, poll, None);
    assert!(tight.summary.lossless && waits(&tight) == 0, "{:?}", tight.summary);
}

#[test]
fn poll_settings_out_of_range_are_refused_by_name() {
    let mut spec = common::rc(2);
    spec["poll"] = serde_json::json!({"policy": "empty-poll", "min_sleep_us": 0.0});
    let e = Pipeline::from_json(&spec.to_string()).err().unwrap().to_string();
    assert!(e.contains("poll") && e.contains("min_sleep_us"), "{e}");
    spec["poll"] = serde_json::json!({"policy": "snooze"});
    let e = Pipeline::from_json(&spec.to_string()).err().unwrap().to_string();
    assert!(e.contains("snooze"), "{e}");
}

#[test]
fn slo_aware_sleeps_where_the_slos_leave_room_and_polls_where_they_do_not() {
    // RC(2): the robot-control flow's SLO is 35 µs; a sleep of at least
    // 50 µs has no room beside it, so the worker keeps polling (and is
    // then as likely as a busy one to see this machine stall a period).
    let tight = light_load(serde_json::json!({"policy": "slo-aware", "empty_polls": 4}));
    assert_eq!(waits(&tight), 0, "slo-aware with no room for a sleep waited");
    // With every SLO at 1 s the same worker sleeps. (Not 10 ms: a stall of
    // this VM's of several ms puts a flow's measured delay near such an
    // SLO, and the worker then rightly polls for a period.)
    let poll = serde_json::json!({"policy": "slo-aware", "empty_polls": 4, "min_sleep_us": 100.0, "max_sleep_us": 1000.0});
    let loose = light_load_with_slos(poll, Some(1_000_000.0));
    sleeps_most_periods(&loose, 10, 100.0..=1000.0, "slo-aware with room");
    assert!(loose.summary.lossless && loose.summary.violation_pct == 0.0, "{:?}", loose.summary);
    // From the first period on: before anything is measured, a flow's slack is its whole SLO.
    let first = &loose.periods[0];
    let w = &first.telemetry.workers[0];
    assert!(first.warmup && w.waits > 10 && w.wait_asked_us >= 100.0, "{w:?}");
}

#[test]
fn vpp_adaptive_and_metronome_sleep_at_light_load_and_lose_nothing() {
    // vpp-adaptive waits for each packet's arrival (the source's emulated
    // interrupt): at 2 kpps a worker that wakes for every packet.
    let vpp = light_load(serde_json::json!({"policy": "vpp-adaptive", "threshold_pkts": 4, "max_sleep_us": 1000.0}));
    let metronome = light_load(serde_json::json!({"policy": "metronome", "vacation_us": 200.0}));
    for (name, r) in [("vpp-adaptive", &vpp), ("metronome", &metronome)] {
        assert!(r.summary.lossless && r.summary.generated > 600, "{name}: {:?}", r.summary);
        sleeps_most_periods(r, 10, 0.0..=1000.0, name);
    }
    // vpp-adaptive waits for the next arrival, asking for the gap to it
    // (under 500 µs at 2 kpps), not for its most (1 ms). (The delay that
    // gives is `sluice experiment polling`'s figure, not a check here; nor
    // is how many waits fit in a period, which a late wake-up cuts.)
    let worker = &vpp.periods.last().unwrap().telemetry.workers[0];
    assert!(worker.waits > 0 && worker.wait_asked_us < 500.0, "{worker:?}");
}

#[test]
fn a_sparse_flow_with_a_tight_slo_keeps_its_worker_from_long_sleeps_in_periods_it_delivers_nothing_in() {
    // RC(2) at 40 kpps, its robot-control flow (SLO 35 µs) given one packet
    // in 20 000 (2 pkt/s: most 100 ms periods deliver none of it); the bulk
    // flow's SLO (100 ms) leaves room for the longest sleep. The sparse
    // flow still bounds every sleep to its share of 35 µs, under the
    // shortest sleep of 50: the worker polls throughout.
    let mut spec = common::rc(2);
    spec["modules"][0]["source"]["synthetic"]["streams"][0]["rate_pps"] = 40_000.0.into();
    spec["modules"][1]["nf"]["weights"] = serde_json::json!([1.0, 20_000.0]);
    spec["poll"] = serde_json::json!({"policy": "slo-batching", "min_sleep_us": 50.0, "max_sleep_us": 500.0});
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let plan = RunPlan { periods: 6, warmup_periods: 1, period_ns: 100_000_000, ..RunPlan::default() };
    let _engine = common::one_engine_at_a_time();
    let r = sluice_pipeline::run(&p, controller("null", &plan).unwrap(), sluice_pipeline::BackendKind::Engine, true, &plan, &mut |_| {}, &|| false).unwrap();
    let silent = r.periods.iter().filter(|p| p.telemetry.flows[0].delivered == 0).count();
    assert!(silent >= 2, "periods without a packet of the sparse flow: {silent}");
    assert!(r.summary.lossless && waits(&r) == 0, "{:?}, {} waits", r.summary, waits(&r));
}

#[test]
fn the_learned_policy_with_the_shipped_model_sleeps_at_light_load_and_loses_nothing() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/sluice/models/polling.json");
    let learned = light_load_with_slos(serde_json::json!({"policy": "learned", "model": model, "log_features": true}), Some(10_000.0));
    assert!(learned.summary.lossless && learned.summary.generated > 600, "{:?}", learned.summary);
    // It logged what it read: a row per round short of a batch, the idle time and the rate last.
    let w = &learned.periods.last().unwrap().telemetry.workers[0];
    assert!(!w.poll_features.is_empty() && w.poll_features.iter().all(|row| row.len() == sluice_core::poll::features::FEATURES), "{w:?}");
    // It slept (over the run: in a period where this VM's rounds run slow the model may poll throughout).
    let measured: Vec<_> = learned.periods.iter().filter(|p| !p.warmup).map(|p| &p.telemetry.workers[0]).collect();
    assert!(measured.iter().map(|w| w.waits).sum::<u64>() > 10 && measured.iter().any(|w| w.wait_asked_us >= 1.0), "{measured:?}");
}

#[test]
fn the_learned_policy_sleeps_no_longer_than_the_slos_leave_room_for() {
    // RC(2)'s robot-control flow has an SLO of 35 µs: whatever the model
    // predicts, a sleep takes at most half the slack (the worker's share).
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/sluice/models/polling.json");
    let tight = light_load(serde_json::json!({"policy": "learned", "model": model}));
    for p in &tight.periods {
        let w = &p.telemetry.workers[0];
        assert!(w.waits == 0 || w.wait_asked_us <= 17.5, "{w:?}");
    }
}
