//! Descriptions mutated at random from valid ones (seeded: the same cases
//! every run): each is refused with a message naming what is wrong, or it
//! validates and runs a period on the simulator (and, for some, on the
//! engine) without a panic, an abort or a hang, every packet accounted
//! for. `SLUICE_FUZZ_CASES=N` runs more. `make fuzz` runs the same idea
//! under libFuzzer (fuzz/fuzz_targets/description.rs).

use crate::common;

use common::Draw;
use serde_json::{json, Value};
use sluice_control::{drive, RunPlan, CONTROLLERS};
use sluice_pipeline::{controller, Pipeline};

/// Values that break things: huge and negative counts, odd floats, wrong types.
fn odd_value(rng: &mut Draw) -> Value {
    let choices = [
        json!(0),
        json!(-1),
        json!(1u64 << 40),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e308),
        json!(-1e-300),
        json!(0.5),
        json!(""),
        json!("x"),
        json!(null),
        json!([]),
        json!({}),
        json!(true),
        json!([1, 2]),
        json!(65535),
        json!(257),
    ];
    choices[rng.below(choices.len() as u64) as usize].clone()
}

/// Every path to a node of `v`, as a list of keys and indices.
fn paths(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(at.clone());
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                at.push(json!(k));
                paths(child, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                at.push(json!(i));
                paths(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn node<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        Value::String(k) => &mut v[k.as_str()],
        Value::Number(i) => &mut v[i.as_u64().unwrap() as usize],
        _ => unreachable!(),
    })
}

/// One random change to `spec`: a number set to another (often valid),
/// a value replaced by an odd one, a key removed or added, an element doubled.
fn mutate(spec: &mut Value, rng: &mut Draw) {
    let mut all = Vec::new();
    paths(spec, &mut Vec::new(), &mut all);
    let numbers: Vec<Vec<Value>> = all.iter().filter(|p| node(spec, p).is_number()).cloned().collect();
    if !numbers.is_empty() && rng.below(2) == 0 {
        let nearby = [json!(0), json!(1), json!(2), json!(7), json!(31), json!(32), json!(33), json!(255), json!(256), json!(1e6), json!(1e9), json!(-1), json!(0.5)];
        *node(spec, &numbers[rng.below(numbers.len() as u64) as usize]) = nearby[rng.below(nearby.len() as u64) as usize].clone();
        return;
    }
    let path = all[rng.below(all.len() as u64) as usize].clone();
    match rng.below(4) {
        0 | 1 => *node(spec, &path) = odd_value(rng),
        2 => {
            if let Some((last, parent)) = path.split_last() {
                match (node(spec, parent), last) {
                    (Value::Object(map), Value::String(k)) => drop(map.remove(k)),
                    (Value::Array(items), Value::Number(i)) => drop(items.remove(i.as_u64().unwrap() as usize)),
                    _ => {}
                }
            }
        }
        _ => match node(spec, &path) {
            Value::Object(map) => drop(map.insert("extra_key".into(), json!(1))),
            Value::Array(items) if !items.is_empty() => {
                let copy = items[rng.below(items.len() as u64) as usize].clone();
                items.push(copy);
            }
            other => *other = odd_value(rng),
        },
    }
}

#[test]
fn mutated_descriptions_are_refused_clearly_or_run_cleanly() {
    let cases: u64 = std::env::var("SLUICE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(250);
    let plan = RunPlan { periods: 1, warmup_periods: 0, period_ns: 1_000_000, ..RunPlan::default() };
    let bases: Vec<Value> = (0..8).map(|seed| common::generated(seed, 1 + seed as usize % 3, (20.0, 500.0))).chain([common::rc(3)]).collect();
    let mut rng = Draw(0x5EED_CAFE_F00D_1234);
    let (mut refused, mut ran) = (0, 0);
    let _engine = common::one_engine_at_a_time();
    for case in 0..cases {
        let mut spec = bases[rng.below(bases.len() as u64) as usize].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut spec, &mut rng);
        }
        let text = spec.to_string();
        match Pipeline::from_json(&text) {
            Err(e) => {
                let message = e.to_string();
                assert!(!message.is_empty() && !message.contains("panicked"), "case {case}: {message}");
                refused += 1;
            }
            Ok(p) => {
                let name = CONTROLLERS[rng.below(CONTROLLERS.len() as u64) as usize];
                let mut ctl = controller(name, &plan).unwrap();
                let report = drive(&mut p.simulator().unwrap(), ctl.as_mut(), &plan, &mut |_| {});
                if let Ok(report) = report {
                    assert!(report.summary.accounted, "case {case} under {name}: {:?}\n{text}", report.summary);
                }
                if case % 16 == 0 {
                    let mut ctl = controller(name, &plan).unwrap();
                    if let Ok(report) = drive(&mut p.engine(true).unwrap(), ctl.as_mut(), &plan, &mut |_| {}) {
                        assert!(report.summary.accounted, "case {case} on the engine under {name}: {:?}\n{text}", report.summary);
                    }
                }
                ran += 1;
            }
        }
    }
    assert!(refused > cases / 10 && ran > cases / 10, "the mutations cover both outcomes: {refused} refused, {ran} ran");
}

/// Found by `make fuzz`: a splitter with several gates whose run drops
/// every packet (here an exact match on a MAC no packet carries, no
/// default gate) left the walker no gate to serve, and it indexed past
/// the filled ones.
#[test]
fn a_splitter_that_drops_every_packet_of_a_run_is_no_crash() {
    let spec = json!({
        "name": "drop-all", "batch_size": 32,
        "modules": [
            {"name": "src", "source": {"synthetic": {"streams": [{}]}}},
            {"name": "split", "nf": {"type": "exact_match", "field": "dst_mac", "table": [["02:00:00:00:00:aa", 0], ["02:00:00:00:00:bb", 1]], "default_gate": null}},
            {"name": "a", "sink": {}}, {"name": "b", "sink": {}},
        ],
        "edges": [{"from": "src", "to": "split"}, {"from": "split", "outgate": 0, "to": "a"}, {"from": "split", "outgate": 1, "to": "b"}],
    });
    let p = Pipeline::from_json(&spec.to_string()).unwrap();
    let plan = RunPlan { periods: 2, warmup_periods: 0, period_ns: 1_000_000, ..RunPlan::default() };
    let mut sim = p.simulator().unwrap();
    let r = drive(&mut sim, controller("null", &plan).unwrap().as_mut(), &plan, &mut |_| {}).unwrap();
    assert!(r.summary.generated > 0 && r.summary.dropped == r.summary.generated, "{:?}", r.summary);
}
