//! A Reframer in a pipeline: it releases on time on the simulator's
//! virtual clock with no new arrivals, raises the run length of one flow,
//! and every packet it held is delivered when the run stops.

use crate::common;

use serde_json::{json, Value};
use sluice_control::{drive, Null, RunPlan, RunReport};
use sluice_pipeline::Pipeline;

const T_BUFF_US: f64 = 50.0;

/// `streams` UDP 5-tuples (source ports) of one Sluice flow at `pps` each,
/// interleaved by the source, through a Reframer and a cheap NF.
fn spec(streams: usize, pps: f64) -> Value {
    let streams: Vec<Value> = (0..streams).map(|i| json!({"flow": "f", "rate_pps": pps, "template": {"src_port": 1000 + i}})).collect();
    json!({
        "name": "reframed",
        "batch_size": 32,
        "modules": [
            {"name": "src", "source": {"synthetic": {"streams": streams}}},
            {"name": "reframer", "nf": {"type": "reframer", "t_buff_us": T_BUFF_US, "max_burst": 64}},
            {"name": "ttl", "nf": {"type": "ttl_decrement"}},
            {"name": "out", "sink": {}}
        ],
        "edges": [{"from": "src", "to": "reframer"}, {"from": "reframer", "to": "ttl"}, {"from": "ttl", "to": "out"}],
        "flows": [{"name": "f", "path": ["src", "reframer", "ttl", "out"]}]
    })
}

fn run(backend: &mut dyn sluice_core::Backend, periods: usize) -> RunReport {
    let plan = RunPlan { periods, warmup_periods: 0, period_ns: 10_000_000, ..RunPlan::default() };
    drive(backend, &mut Null, &plan, &mut |_| {}).unwrap()
}

/// The Reframer's counter `name` over the run.
fn counter(p: &Pipeline, report: &RunReport, name: &str) -> u64 {
    let m = p.model().modules.iter().position(|m| m.name == "reframer").unwrap();
    let slot = p.own_counters(m).1.iter().position(|&n| n == name).unwrap();
    report.module_totals[m].nf[slot]
}

fn check_lossless(report: &RunReport) {
    let s = &report.summary;
    assert_eq!(s.in_flight, 0, "every held packet leaves when the run stops: {s:?}");
    assert!(s.accounted && s.lossless, "{s:?}");
    let f = &report.flow_totals[0];
    assert_eq!(f.generated, f.delivered, "{f:?}");
}

#[test]
fn on_the_simulator_flows_leave_as_runs_within_t_buff() {
    // 16 five-tuples at 100 kpps each: about five packets of each in t_buff.
    let p = Pipeline::from_json(&spec(16, 100e3).to_string()).unwrap();
    let report = run(&mut p.simulator().unwrap(), 5);
    check_lossless(&report);
    let (pin, rin, pout, rout) = (counter(&p, &report, "packets_in"), counter(&p, &report, "runs_in"), counter(&p, &report, "packets_out"), counter(&p, &report, "runs_out"));
    assert_eq!(pin, pout);
    let (slf_in, slf_out) = (pin as f64 / rin as f64, pout as f64 / rout as f64);
    assert!(slf_in < 1.1, "the source interleaves its streams: SLF in {slf_in:.2}");
    assert!(slf_out > 4.0, "flows leave together: SLF out {slf_out:.2}");
    // Every packet's delay: its wait (≤ t_buff) and the rounds around it, on
    // a virtual clock where the NFs cost nothing (idle rounds step 1 µs).
    for period in &report.periods {
        let max_us = period.telemetry.flows[0].max_ns as f64 / 1e3;
        assert!(max_us <= T_BUFF_US + 2.0, "period {}: a packet waited {max_us:.1} µs", period.telemetry.period);
    }
    assert!(counter(&p, &report, "released_timeout") > 0);
}

#[test]
fn a_lone_packet_is_released_on_time_with_no_more_arrivals() {
    // One packet a millisecond: each one waits alone and must leave at t_buff.
    let p = Pipeline::from_json(&spec(1, 1e3).to_string()).unwrap();
    let report = run(&mut p.simulator().unwrap(), 3);
    check_lossless(&report);
    let last = &report.periods.last().unwrap().telemetry.flows[0];
    assert!(last.delivered >= 9, "{last:?}");
    let (min_us, max_us) = (last.p50_ns as f64 / 1e3, last.max_ns as f64 / 1e3);
    assert!(min_us >= T_BUFF_US * 0.99 && max_us <= T_BUFF_US + 2.0, "delays {min_us:.1}..{max_us:.1} µs");
    assert_eq!(counter(&p, &report, "released_timeout"), report.flow_totals[0].delivered);
}

#[test]
fn on_the_engine_nothing_is_lost_and_the_run_drains() {
    let _engine = common::one_engine_at_a_time();
    let p = Pipeline::from_json(&spec(16, 50e3).to_string()).unwrap();
    let report = run(&mut p.engine(true).unwrap(), 3);
    check_lossless(&report);
    assert!(counter(&p, &report, "runs_out") < counter(&p, &report, "runs_in"));
}

#[test]
fn bad_settings_are_refused_naming_the_module_and_field() {
    for (field, value) in [("t_buff_us", json!(0.0)), ("max_burst", json!(0)), ("max_held", json!(1 << 20))] {
        let mut s = spec(1, 1e3);
        s["modules"][1]["nf"][field] = value;
        let err = Pipeline::from_json(&s.to_string()).err().expect("refused").to_string();
        assert!(err.contains("modules[1]") && err.contains(field), "{field}: {err}");
    }
}

/// Warm-up periods of the runs under SLO control.
const WARMUP: usize = 5;

/// `s` with its Reframer's hold under SLO control (up to 400 µs) and a
/// 200 µs SLO (p95) on its flow, run 30 periods of 10 ms on the
/// simulator: the pipeline, the lossless report, the hold of each period (ns).
fn under_slo_control(mut s: Value) -> (Pipeline, RunReport, Vec<u64>) {
    s["modules"][1]["nf"]["t_buff_us"] = json!(400.0);
    s["modules"][1]["nf"]["slo_control"] = json!(true);
    s["flows"][0]["slo_us"] = json!(200.0);
    let p = Pipeline::from_json(&s.to_string()).unwrap();
    let plan = RunPlan { periods: 30, warmup_periods: WARMUP, period_ns: 10_000_000, ..RunPlan::default() };
    let report = drive(&mut p.simulator().unwrap(), &mut Null, &plan, &mut |_| {}).unwrap();
    check_lossless(&report);
    let holds = report.periods.iter().map(|r| r.holds[0].1).collect();
    (p, report, holds)
}

#[test]
fn under_slo_control_the_hold_grows_into_the_slack_and_keeps_the_slo() {
    let (p, report, holds) = under_slo_control(spec(16, 100e3));
    assert_eq!(holds[0], 50_000, "starts at an eighth of its bound");
    let last = *holds.last().unwrap();
    assert!((120_000..=200_000).contains(&last), "grows into the slack, below the SLO: {holds:?}");
    let measured = &report.periods[WARMUP..];
    let violated = measured.iter().filter(|r| r.violated).count();
    assert!(violated * 50 <= measured.len(), "{violated} of {} periods over the SLO: {holds:?}", measured.len());
    let (pout, rout) = (counter(&p, &report, "packets_out"), counter(&p, &report, "runs_out"));
    assert!(pout as f64 / rout as f64 > 8.0, "longer holds, longer runs: SLF out {:.1}", pout as f64 / rout as f64);
}

#[test]
fn a_hold_is_refused_for_a_module_whose_hold_is_not_controlled() {
    let p = Pipeline::from_json(&spec(1, 1e3).to_string()).unwrap();
    let mut sim = p.simulator().unwrap();
    let err = sluice_core::Backend::apply(&mut sim, &sluice_core::Actions { holds: vec![(1, 10_000)], ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("reframer") && err.to_string().contains("hold time"), "{err}");
}

#[test]
fn a_worker_that_goes_down_drops_and_counts_what_its_reframer_held() {
    let mut s = spec(16, 100e3);
    s["modules"][1]["worker"] = json!(1);
    s["outages"] = json!([{"worker": 1, "from": 2, "until": 3}]);
    let p = Pipeline::from_json(&s.to_string()).unwrap();
    let plan = p.plan(5, 0, 10_000_000, sluice_control::ControlParams::default());
    let report = drive(&mut p.simulator().unwrap(), &mut Null, &plan, &mut |_| {}).unwrap();
    let sum = &report.summary;
    assert_eq!(sum.in_flight, 0, "{sum:?}");
    assert!(sum.accounted && sum.drops.worker_down > 0, "{sum:?}");
    let f = &report.flow_totals[0];
    assert_eq!(f.generated, f.delivered + f.dropped, "{f:?}");
    let m = p.model().modules.iter().position(|m| m.name == "reframer").unwrap();
    assert!(report.module_totals[m].down_dropped > 0, "the held packets are the reframer's drops");
}

#[test]
fn a_hold_that_saves_no_work_stops_growing_though_the_slo_leaves_room() {
    // The same flow and SLO, but the NF behind the Reframer costs the same
    // per packet whatever its runs and batches (the simulator's cost model,
    // no cost per batch): holding longer buys nothing, so the hold stays
    // near where it started.
    let mut s = spec(16, 100e3);
    s["modules"][2]["t0_ns"] = json!(0.0);
    s["modules"][2]["t1_ns"] = json!(20.0);
    let (_, _, holds) = under_slo_control(s);
    assert!(holds.iter().all(|&h| h <= 130_000), "grew though it saved nothing: {holds:?}");
    assert!(holds[1] > holds[0], "it tried: {holds:?}");
}
