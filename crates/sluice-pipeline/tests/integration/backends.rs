//! Both backends end to end: accounting, draining, determinism, controllers.

use crate::common;

use common::{on_both_backends, pipeline, plan};
use sluice_control::{drive, Max, Null, RunPlan};
use sluice_core::{Backend, Telemetry};
use sluice_pipeline::Pipeline;

#[test]
fn engine_accounts_for_every_packet_and_drains_on_stop() {
    let _engine = common::one_engine_at_a_time();
    let p = pipeline(4);
    let mut engine = p.engine(true).unwrap();
    let report = drive(&mut engine, &mut Max, &plan(3), &mut |_| {}).unwrap();
    for period in &report.periods {
        let t = period.telemetry.totals;
        assert_eq!(t.generated, t.delivered + t.dropped + t.in_flight, "{t:?}");
    }
    let s = &report.summary;
    assert!(s.generated > 0);
    assert_eq!(s.in_flight, 0, "stopping drains every fractional buffer");
    assert_eq!(s.generated, s.delivered + s.dropped);
}

#[test]
fn the_engine_times_its_core_probe_every_period_unless_timing_is_off() {
    use sluice_core::core_probe::PROBE_CAP_NS;
    let _engine = common::one_engine_at_a_time();
    let p = pipeline(4);
    for timing in [true, false] {
        let mut engine = p.engine(timing).unwrap();
        let report = drive(&mut engine, &mut Max, &plan(3), &mut |_| {}).unwrap();
        for period in &report.periods {
            let probe_ns = period.telemetry.workers[0].probe_ns;
            if timing {
                assert!(probe_ns > 1.0 && probe_ns <= PROBE_CAP_NS as f64, "period {}: probe {probe_ns} ns", period.telemetry.period);
            } else {
                assert_eq!(probe_ns, 0.0, "no probe without timing");
            }
        }
    }
    let mut sim = p.simulator().unwrap();
    let report = drive(&mut sim, &mut Max, &plan(2), &mut |_| {}).unwrap();
    assert!(report.periods.iter().all(|r| r.telemetry.workers[0].probe_ns == 0.0), "the simulator has no core to probe");
}

#[test]
fn changes_made_while_the_workers_are_held_meet_no_packet_until_they_are_let_go() {
    // A deny-all ACL swapped in for RC's first bypass and swapped out again
    // while every worker is held (a transaction refused and undone) never
    // sees a packet: nothing is dropped, and every packet is accounted for.
    let _engine = common::one_engine_at_a_time();
    let p = pipeline(2);
    let mut engine = p.engine(true).unwrap();
    let m = p.model().module_id("rc").unwrap();
    let deny = serde_json::json!({"rules": [{"permit": false, "src": "0.0.0.0/0", "dst": "0.0.0.0/0", "proto": null, "sport": [0, 65535], "dport": [0, 65535]}]});
    let mut deny = sluice_nf::NfSpec::from_fields("acl", &deny).unwrap().build_on(&sluice_nf::Interfaces::none()).unwrap();
    let before = engine.run_period(20_000_000, &|| false);
    assert!(before.totals.delivered > 0);
    for _ in 0..20 {
        engine.hold();
        let bypass = engine.replace_function(m, deny).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1));
        deny = engine.replace_function(m, bypass).unwrap();
        engine.release();
        engine.run_period(1_000_000, &|| false);
    }
    let report = drive(&mut engine, &mut Null, &plan(2), &mut |_| {}).unwrap();
    assert_eq!(report.module_totals[m].dropped, 0, "the deny-all ran on no packet");
    assert!(report.summary.lossless && report.summary.delivered > before.totals.delivered, "{:?}", report.summary);
}

#[test]
fn simulator_is_deterministic() {
    let p = pipeline(4);
    let run = || {
        let mut sim = p.simulator().unwrap();
        drive(&mut sim, &mut Max, &plan(3), &mut |_| {}).unwrap()
    };
    let (a, b) = (run(), run());
    assert_eq!(a.summary, b.summary);
    // Everything but the wall-clock time the control side took to read it.
    let simulated = |r: &sluice_control::RunReport| Telemetry { read_ns: 0, ..r.periods[2].telemetry.clone() };
    assert_eq!(simulated(&a), simulated(&b));
}

#[test]
fn simulator_follows_the_cost_model() {
    // One branch: Bypass(10000, 0) alone; under Null every batch of 32 costs
    // 10000 cycles, so the rate is 32 packets per 10000 cycles.
    let json = serde_json::json!({
        "modules": [
            {"name": "src", "source": {"synthetic": {"streams": [{}]}}},
            {"name": "nf", "nf": {"type": "bypass", "cycles_per_batch": 10000, "cycles_per_packet": 0}},
            {"name": "out", "sink": {}}
        ],
        "edges": [{"from": "src", "to": "nf"}, {"from": "nf", "to": "out"}],
        "flows": [{"name": "f", "path": ["src", "nf", "out"], "slo_us": 1000}]
    });
    let p = Pipeline::from_json(&json.to_string()).unwrap();
    let mut sim = p.simulator().unwrap();
    let report = drive(&mut sim, &mut Null, &plan(2), &mut |_| {}).unwrap();
    let cost_ns = 10_000.0 * sluice_pipeline::ns_per_cycle();
    let expected = 32.0 * 1e9 / cost_ns;
    let got = report.summary.rate_pps;
    assert!((got / expected - 1.0).abs() < 0.01, "rate {got} vs cost model {expected}");
    let t = &report.periods[1].telemetry;
    // The simulator times every round (`WalkerConfig::busy_sampling` 1).
    assert!((t.workers[0].busy_fraction - 1.0).abs() < 0.01, "busy {}", t.workers[0].busy_fraction);
    assert_eq!(t.modules[1].b, 32.0);
}

/// Runs `check` on the simulator, then on the engine, of `p`.
#[test]
fn max_fills_batches_and_null_passes_them_through_on_both_backends() {
    on_both_backends(&pipeline(4), |backend| {
        let max = drive(backend, &mut Max, &plan(2), &mut |_| {}).unwrap();
        let last = &max.periods.last().unwrap().telemetry;
        assert_eq!(last.modules[2].trigger, 32);
        assert!(max.summary.mean_batch > 31.0, "{}", max.summary.mean_batch);
        assert!((last.modules[2].b_in - 8.0).abs() < 1.5, "a 4-way split cuts 32 into ~8: {}", last.modules[2].b_in);
        // Every round brings the split the source's 32; its branches get a
        // binomial share, mean 8, sd √(32 · ¼ · ¾) ≈ 2.45. Rounds are
        // counted for the controlled modules (rc), not for the split.
        let (split, rc) = (&last.modules[1], &last.modules[2]);
        assert_eq!((split.b_round, split.b_round_sd), (None, None), "{split:?}");
        let (b_round, sd) = (rc.b_round.unwrap(), rc.b_round_sd.unwrap());
        assert!((b_round - 8.0).abs() < 1.0 && (sd - 2.45).abs() < 0.3, "{rc:?}");
    });
}

#[test]
fn bad_descriptions_are_refused_with_the_culprit_named() {
    let bad = |patch: &dyn Fn(&mut serde_json::Value), expect: &str| {
        let mut spec = common::rc(2);
        patch(&mut spec);
        let err = Pipeline::from_json(&spec.to_string()).err().expect("refused").to_string();
        assert!(err.contains(expect), "{err:?} does not contain {expect:?}");
    };
    bad(&|s| s["flows"][0]["slo_us"] = 0.into(), "flow 'rc': delay SLO must be > 0 µs");
    bad(&|s| s["batch_size"] = 0.into(), "batch size 0 is out of range");
    bad(&|s| s["batch_size"] = 300.into(), "batch size 300 is out of range");
    bad(&|s| drop(s["edges"].as_array_mut().unwrap().remove(1)), "module 'split' outgate 0 is dangling");
    bad(&|s| s["flows"][1]["path"][2] = "rc".into(), "flow 'bulk1': path does not follow the graph: no edge from 'rc' to 'out_bulk1'");
    bad(&|s| s["modules"][1]["nf"]["weights"] = serde_json::json!([1.0, -1.0]), "module 'split': random split weights");
    bad(&|s| s["modules"][0]["source"]["synthetic"]["streams"][0]["flow"] = "nope".into(), "source 'src' names unknown flow 'nope'");
    bad(&|s| s["modules"][0]["source"]["synthetic"]["streams"][0]["template"] = serde_json::json!({"dst_ip": "1.2.3"}), "'1.2.3' is not an IPv4 or IPv6 address");
    bad(&|s| s["modules"][0]["source"]["synthetic"]["streams"][0]["burst_pkts"] = 5000.into(), "source 'src': source: burst_pkts 5000: needs 1..=4096");
    bad(&|s| s["modules"][1]["nf"]["type"] = "warp_drive".into(), "modules[1]: unknown kind `warp_drive` (known: bypass, random_split");
    bad(&|s| s["modules"][2]["worker"] = 70_000.into(), "modules[2].worker: 70000 is out of range 0..=255");
    bad(&|s| s["spare_workers"] = (1u64 << 40).into(), "spare_workers: 1099511627776 is out of range 0..=255");
    bad(&|s| s["flows"][0]["slo_us"] = 0.into(), "flows[0]: flow 'rc': delay SLO must be > 0 µs");
    bad(&|s| s["edges"][1]["outgate"] = 5.into(), "modules[1]: module 'split' has no outgate 5 (it has 2)");
    bad(
        &|s| s["modules"][0]["source"] = serde_json::json!({"pcap": {"path": "/nonexistent.pcap"}}),
        "pcap file '/nonexistent.pcap'",
    );
}

#[test]
fn one_millisecond_control_periods_work() {
    let _engine = common::one_engine_at_a_time();
    let p = pipeline(4);
    let mut engine = p.engine(true).unwrap();
    let plan = RunPlan { periods: 50, warmup_periods: 0, period_ns: 1_000_000, ..RunPlan::default() };
    let report = drive(&mut engine, &mut Max, &plan, &mut |_| {}).unwrap();
    assert_eq!(report.periods.len(), 50);
    for period in &report.periods {
        let t = period.telemetry.totals;
        assert_eq!(t.generated, t.delivered + t.dropped + t.in_flight);
    }
    assert!(report.summary.delivered > 0);
}

#[test]
fn modules_on_two_workers_exchange_packets_over_rings() {
    let _engine = common::one_engine_at_a_time();
    // RC(4) with the bulk branches on worker 1: the split on worker 0 feeds them through rings.
    let mut spec = common::rc(4);
    for m in spec["modules"].as_array_mut().unwrap() {
        if m["name"].as_str().unwrap().starts_with("bulk") {
            m["worker"] = 1.into();
        }
    }
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    assert_eq!(p.model().crossings.len(), 3);
    let mut sim = p.simulator().unwrap();
    let mut engine = p.engine(true).unwrap();
    let backends: [&mut dyn Backend; 2] = [&mut sim, &mut engine];
    for backend in backends {
        let report = drive(backend, &mut Null, &plan(3), &mut |_| {}).unwrap();
        let s = &report.summary;
        assert_eq!(s.in_flight, 0, "stopping drains buffers and rings on both workers");
        assert_eq!(s.generated, s.delivered + s.dropped);
        let last = &report.periods.last().unwrap().telemetry;
        assert_eq!(last.workers.len(), 2);
        let rates: Vec<f64> = last.flows.iter().map(|f| f.rate_pps).collect();
        assert!(rates.iter().all(|&r| r > 0.0), "{rates:?}");
    }
    let report = drive(&mut p.simulator().unwrap(), &mut Null, &plan(3), &mut |_| {}).unwrap();
    let rc = &report.periods.last().unwrap().telemetry.flows[0];
    assert!(rc.p95_ns < 35_000, "rc no longer waits behind the bulk branches: p95 {} ns", rc.p95_ns);
}

#[test]
fn an_age_bound_flushes_a_buffer_that_waits_too_long() {
    // 10 kpps into a buffer of trigger 32: a full batch takes 3.2 ms to gather.
    let spec = |age: Option<f64>| {
        serde_json::json!({
            "modules": [
                {"name": "src", "source": {"synthetic": {"streams": [{"rate_pps": 10000.0}]}}},
                {"name": "nf", "nf": {"type": "bypass", "cycles_per_batch": 1000, "cycles_per_packet": 10}, "max_age_us": age},
                {"name": "out", "sink": {}}
            ],
            "edges": [{"from": "src", "to": "nf"}, {"from": "nf", "to": "out"}],
            "flows": [{"name": "f", "path": ["src", "nf", "out"], "slo_us": 1000}]
        })
        .to_string()
    };
    let max_delay = |age| {
        let p = Pipeline::from_json(&spec(age)).unwrap();
        let mut sim = p.simulator().unwrap();
        let report = drive(&mut sim, &mut Max, &plan(2), &mut |_| {}).unwrap();
        report.periods.last().unwrap().telemetry.flows[0].max_ns
    };
    assert!(max_delay(None) > 3_000_000);
    assert!(max_delay(Some(200.0)) < 200_000 + 10_000, "{}", max_delay(Some(200.0)));
    let err = Pipeline::from_json(&spec(Some(0.0))).err().unwrap().to_string();
    assert_eq!(err, "pipeline description: modules[1]: module 'nf': age bound 0 µs must be > 0");
}

/// Two flows from worker 0; flow a's function runs on worker 1, which is
/// down in periods 3 and 4.
fn outage_pipeline() -> Pipeline {
    let spec = serde_json::json!({
        "name": "outage", "batch_size": 32,
        "modules": [
            {"name": "src", "source": {"synthetic": {"streams": [{"flow": "a", "rate_pps": 200000.0, "template": {"dst_ip": "20.0.1.1"}}, {"flow": "b", "rate_pps": 200000.0, "template": {"dst_ip": "20.0.2.1"}}]}}},
            {"name": "split", "nf": {"type": "exact_match", "field": "dst_ip", "table": [["20.0.1.1", 0], ["20.0.2.1", 1]]}},
            {"name": "fa", "nf": {"type": "bypass", "cycles_per_batch": 100, "cycles_per_packet": 10}, "worker": 1},
            {"name": "fb", "nf": {"type": "bypass", "cycles_per_batch": 100, "cycles_per_packet": 10}},
            {"name": "out_a", "sink": {}, "worker": 1}, {"name": "out_b", "sink": {}},
        ],
        "edges": [
            {"from": "src", "to": "split"}, {"from": "split", "outgate": 0, "to": "fa"}, {"from": "split", "outgate": 1, "to": "fb"},
            {"from": "fa", "to": "out_a"}, {"from": "fb", "to": "out_b"},
        ],
        "flows": [{"name": "a", "path": ["src", "split", "fa", "out_a"]}, {"name": "b", "path": ["src", "split", "fb", "out_b"]}],
        "outages": [{"worker": 1, "from": 3, "until": 5}],
    });
    Pipeline::from_json(&spec.to_string()).unwrap()
}

#[test]
fn a_worker_that_is_down_drops_and_counts_what_reaches_it_and_only_then() {
    let _engine = common::one_engine_at_a_time();
    let p = outage_pipeline();
    let plan = p.plan(7, 1, 20_000_000, Default::default());
    let mut sim = p.simulator().unwrap();
    let mut engine = p.engine(true).unwrap();
    let backends: [&mut dyn Backend; 2] = [&mut sim, &mut engine];
    for backend in backends {
        let report = drive(backend, &mut Null, &plan, &mut |_| {}).unwrap();
        let s = &report.summary;
        assert_eq!((s.in_flight, s.generated), (0, s.delivered + s.dropped));
        let [a, b] = [report.flow_totals[0], report.flow_totals[1]];
        assert!(a.generated > 0 && b.generated > 0);
        assert_eq!(b.dropped, 0);
        assert_eq!(b.generated, b.delivered, "flow b never touches worker 1");
        assert_eq!(a.generated, a.delivered + a.dropped, "every lost packet of a is counted");
        assert!(a.dropped > 0);
        for (i, period) in report.periods.iter().enumerate() {
            let dropped = period.telemetry.flows[0].dropped;
            // Down from the start of period 3 to the start of period 5; a drop
            // may still be read in the period after.
            assert!((3..=5).contains(&i) || dropped == 0, "flow a lost {dropped} packets in period {i}");
        }
        let during: u64 = report.periods[3..5].iter().map(|p| p.telemetry.flows[0].delivered).sum();
        assert!(during < a.delivered / 10, "flow a stalls while worker 1 is down: {during} of {}", a.delivered);
    }
    let bad = serde_json::json!({"modules": [{"name": "src", "source": {"synthetic": {"streams": [{}]}}}, {"name": "out", "sink": {}}],
        "edges": [{"from": "src", "to": "out"}], "outages": [{"worker": 3, "from": 1, "until": 2}]});
    let err = Pipeline::from_json(&bad.to_string()).err().expect("refused").to_string();
    assert!(err.contains("outage of worker 3 from period 1 until 2: needs one of the 1 workers"), "{err}");
}

#[test]
fn a_queue_module_is_a_task_of_its_own_and_loses_nothing_it_accepts() {
    let spec = |capacity: usize| {
        serde_json::json!({
            "name": "queued", "batch_size": 32,
            "modules": [
                {"name": "src", "source": {"synthetic": {"streams": [{"flow": "f", "rate_pps": 2000000.0}]}}},
                {"name": "q", "nf": {"type": "queue", "capacity": capacity}},
                {"name": "work", "nf": {"type": "bypass", "cycles_per_batch": 200, "cycles_per_packet": 20}},
                {"name": "out", "sink": {}},
            ],
            "edges": [{"from": "src", "to": "q"}, {"from": "q", "to": "work"}, {"from": "work", "to": "out"}],
            "flows": [{"name": "f", "path": ["src", "q", "work", "out"]}],
        })
        .to_string()
    };
    let p = Pipeline::from_json(&spec(1024)).unwrap();
    let report = drive(&mut p.simulator().unwrap(), &mut Null, &plan(3), &mut |_| {}).unwrap();
    let s = &report.summary;
    assert!(s.delivered > 0 && s.in_flight == 0);
    assert_eq!(s.generated, s.delivered + s.dropped);
    let q = p.model().module_id("q").unwrap();
    let last = &report.periods.last().unwrap().telemetry.modules[q];
    assert!(last.b > 1.0, "the queue is served in batches, not packet by packet: {last:?}");
    let err = Pipeline::from_json(&spec(10)).err().expect("refused").to_string();
    assert!(err.contains("queue capacity 10 pkt is outside 512..=1048576"), "{err}");
}
