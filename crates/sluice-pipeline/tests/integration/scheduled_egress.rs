//! A pipeline whose flows leave through a scheduled egress: classes share
//! an overloaded link by weight, every packet is delivered or dropped and
//! counted, and a bad description is refused naming what is wrong.

use crate::common;

use common::{one_engine_at_a_time, rc};
use serde_json::{json, Value};
use sluice_control::{drive, Null, RunPlan};
use sluice_pipeline::Pipeline;

/// RC(4) with cheap branches at `rate_pps`, its four flows in two classes
/// of weights 3 (rc, bulk1) and 1 (bulk2, bulk3) over a link of `link_pps`
/// of its 60-byte packets a second.
fn scheduled(rate_pps: f64, link_pps: f64) -> Value {
    let mut spec = rc(4);
    for m in spec["modules"].as_array_mut().unwrap() {
        if m["nf"]["type"] == "bypass" {
            m["nf"]["cycles_per_batch"] = json!(1);
        }
    }
    spec["modules"][0]["source"]["synthetic"]["streams"][0]["rate_pps"] = json!(rate_pps);
    spec["egress_scheduler"] = json!({
        "algorithm": "drr",
        "link_bits_per_s": link_pps * (60.0 + 24.0) * 8.0,
        // Deep enough that a worker's turn off its core (ms, on two cores
        // shared with the arbiter) does not empty the faster-served class.
        "queue_pkts": 4096,
        "classes": [
            {"name": "tight", "weight": 3, "flows": ["rc", "bulk1"]},
            {"name": "bulk", "weight": 1, "flows": ["bulk2", "bulk3"]}
        ]
    });
    spec
}

#[test]
fn classes_share_an_overloaded_link_by_weight_and_every_packet_is_accounted() {
    // One worker runs the scheduler inline; two are the clients of an
    // arbiter thread, each with a flow of each class (on two cores a
    // worker waits its turn with the arbiter now and then: it must not
    // starve one class alone).
    for (workers, algorithm) in [(1, "drr"), (2, "drr"), (1, "qfq")] {
        let mut spec = scheduled(400e3, 200e3);
        spec["egress_scheduler"]["algorithm"] = json!(algorithm);
        if workers == 2 {
            for m in spec["modules"].as_array_mut().unwrap() {
                if m["name"].as_str().is_some_and(|n| n.ends_with("bulk1") || n.ends_with("bulk3")) {
                    m["worker"] = json!(1);
                }
            }
        }
        shares_by_weight(&spec, workers);
    }
}

#[test]
fn a_full_class_makes_the_sources_wait_instead_of_dropping() {
    let _engine = one_engine_at_a_time();
    // Offered 400 kpps into a link of 200 kpps, sources waiting when a class is full.
    for workers in [1, 2] {
        let mut spec = scheduled(400e3, 200e3);
        spec["egress_scheduler"]["on_full"] = json!("wait");
        if workers == 2 {
            for m in spec["modules"].as_array_mut().unwrap() {
                if m["name"].as_str().is_some_and(|n| n.ends_with("bulk1") || n.ends_with("bulk3")) {
                    m["worker"] = json!(1);
                }
            }
        }
        let p = Pipeline::from_json(&spec.to_string()).unwrap();
        let plan = RunPlan { periods: 10, warmup_periods: 2, period_ns: 50_000_000, ..RunPlan::default() };
        let report = drive(&mut p.engine(true).unwrap(), &mut Null, &plan, &mut |_| {}).unwrap();
        let t = &report.flow_totals;
        for (f, flow) in t.iter().enumerate() {
            assert_eq!(flow.dropped, 0, "{workers} workers, flow {f}: nothing dropped ({flow:?})");
            assert_eq!(flow.generated, flow.delivered, "{workers} workers, flow {f}: every packet made was delivered");
        }
        // The sources slowed to what the link carries, and kept it busy.
        let delivered = t.iter().map(|f| f.delivered).sum::<u64>() as f64;
        let bound = 200e3 * (plan.periods + plan.warmup_periods) as f64 * 0.05 + 2.0 * 4096.0;
        assert!(delivered <= 1.05 * bound && delivered >= 0.7 * 200e3 * 0.6, "{workers} workers: {delivered} delivered, the link carries {bound} at most");
    }
}

#[test]
fn the_simulator_shares_the_link_on_its_virtual_clock() {
    let p = Pipeline::from_json(&scheduled(400e3, 200e3).to_string()).unwrap();
    let plan = RunPlan { periods: 10, warmup_periods: 2, period_ns: 50_000_000, ..RunPlan::default() };
    let report = drive(&mut p.simulator().unwrap(), &mut Null, &plan, &mut |_| {}).unwrap();
    let t = &report.flow_totals;
    let delivered = |flows: &[usize]| flows.iter().map(|&f| t[f].delivered).sum::<u64>() as f64;
    let (tight, bulk) = (delivered(&[0, 1]), delivered(&[2, 3]));
    assert!((tight / (tight + bulk) - 0.75).abs() < 0.02, "tight's share {:.3}", tight / (tight + bulk));
    // Virtual time: the link's 200 kpps over 12 periods of 50 ms, and the
    // two class queues (4096 each) let out after them.
    let on_time = 200e3 * 0.6;
    assert!(tight + bulk >= 0.99 * on_time && tight + bulk <= on_time + 2.0 * 4096.0 + 64.0, "{} delivered", tight + bulk);
    assert!(t.iter().all(|f| f.generated == f.delivered + f.dropped), "{t:?}");
}

fn shares_by_weight(spec: &Value, workers: usize) {
    let _engine = one_engine_at_a_time();
    // Offered 400 kpps, a quarter per flow; the link carries half.
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    assert_eq!(p.model().workers(), workers);
    let plan = RunPlan { periods: 10, warmup_periods: 2, period_ns: 50_000_000, ..RunPlan::default() };
    let report = drive(&mut p.engine(true).unwrap(), &mut Null, &plan, &mut |_| {}).unwrap();
    let t = &report.flow_totals;
    let delivered = |flows: &[usize]| flows.iter().map(|&f| t[f].delivered).sum::<u64>() as f64;
    let (tight, bulk) = (delivered(&[0, 1]), delivered(&[2, 3]));
    let share = tight / (tight + bulk);
    assert!((share - 0.75).abs() < 0.05 * 0.75, "{workers} workers: tight's share {share:.3} for weight 3 of 4 ({tight} and {bulk} delivered)");
    // The link's 200 kpps over the run, and the class queues let out at its end.
    let bound = 200e3 * (plan.periods + plan.warmup_periods) as f64 * 0.05 + 2.0 * 4096.0;
    assert!(tight + bulk <= 1.05 * bound, "the link bounds what was delivered: {} of at most {bound}", tight + bulk);
    for (f, flow) in t.iter().enumerate() {
        assert!(flow.dropped > 0, "flow {f}: its class's queue overflows");
        assert_eq!(flow.generated, flow.delivered + flow.dropped, "{workers} workers, flow {f}: generated = delivered + dropped ({flow:?})");
    }
}

#[test]
fn a_scheduled_egress_is_refused_where_it_cannot_run_or_is_ill_described() {
    let refused = |patch: &dyn Fn(&mut Value), expect: &str| {
        let mut spec = scheduled(1e3, 1e3);
        patch(&mut spec);
        let err = Pipeline::from_json(&spec.to_string()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(expect), "expected '{expect}' in: {err}");
    };
    refused(&|s| s["egress_scheduler"]["algorithm"] = json!("cbq"), "egress_scheduler.algorithm: unknown kind `cbq` (known: fifo, priority, drr, wf2q+, qfq)");
    refused(&|s| s["egress_scheduler"]["classes"][1]["flows"] = json!(["bulk2"]), "flow 'bulk3' is in no class");
    refused(&|s| s["egress_scheduler"]["classes"][1]["flows"] = json!(["bulk1", "bulk2", "bulk3"]), "flow 'bulk1' is in class 'tight' and in class 'bulk'");
    refused(
        &|s| {
            s["egress_scheduler"]["classes"][0]["flows"] = json!(["rc", "bulk*"]);
            s["egress_scheduler"]["classes"][1]["flows"] = json!(["b*"]);
        },
        "flow 'bulk1' is in class 'tight' and in class 'bulk'",
    );
    // A name beats a prefix: bulk1 is tight's, the prefix takes the rest.
    let mut spec = scheduled(1e3, 1e3);
    spec["egress_scheduler"]["classes"][1]["flows"] = json!(["bulk*"]);
    let plan = Pipeline::from_json(&spec.to_string()).unwrap().egress().unwrap().class_of_flow.clone();
    assert_eq!(plan, vec![0, 0, 1, 1]);
    refused(&|s| s["egress_scheduler"]["classes"][0]["weight"] = json!(0), "class 'tight': weight 0 is outside 1..=");
    refused(
        &|s| {
            s["egress_scheduler"]["algorithm"] = json!("qfq");
            s["egress_scheduler"]["classes"][1]["weight"] = json!(5000);
        },
        "class 'bulk': weight 5000 is outside 1..=1024 for Qfq",
    );
    refused(&|s| s["egress_scheduler"]["classes"][0]["flows"] = json!(["rc", "bulk1", "nope"]), "no flow matches 'nope'");
    refused(&|s| s["egress_scheduler"]["link_bits_per_s"] = json!(0.0), "link_bits_per_s 0 must be in");
    refused(&|s| s["egress_scheduler"]["overhead_bytes"] = json!(70000), "overhead_bytes 70000 must be ≤ 65535");
    refused(&|s| s["egress_scheduler"]["queue_pkts"] = json!(30000), "more than a worker's pool makes room for");
    refused(&|s| s["egress_scheduler"]["pace"] = json!(1), "egress_scheduler: unknown key `pace`");
    refused(&|s| s["egress_scheduler"]["on_full"] = json!("block"), "egress_scheduler.on_full: unknown kind `block` (known: drop, wait)");
    refused(&|s| s["egress_scheduler"]["scan_gap_us"] = json!(-1.0), "scan_gap_us -1 must be in [0, 1000]");
    let mut two = scheduled(1e3, 1e3);
    two["modules"][2]["worker"] = json!(1);
    let sim = Pipeline::from_json(&two.to_string()).unwrap().simulator().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(sim.contains("a scheduled egress across workers runs on the engine"), "{sim}");
}
