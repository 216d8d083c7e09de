//! Pipeline descriptions shared by the integration tests.

use serde_json::{json, Value};

/// RC(n) as PIPELINES.md draws it: a random split, Bypass(1,1) on gate 0
/// (SLO 35 µs), Bypass(10000,0) on the others (SLO 100 ms).
pub fn rc(n: usize) -> Value {
    let mut modules = vec![
        json!({"name": "src", "source": {"synthetic": {"streams": [{}]}}}),
        json!({"name": "split", "nf": {"type": "random_split", "weights": vec![1.0; n], "seed": 1}}),
    ];
    let mut edges = vec![json!({"from": "src", "to": "split"})];
    let mut flows = vec![];
    for i in 0..n {
        let (name, cycles, slo) = if i == 0 { ("rc".to_string(), (1, 1), 35.0) } else { (format!("bulk{i}"), (10_000, 0), 100_000.0) };
        modules.push(json!({"name": name, "nf": {"type": "bypass", "cycles_per_batch": cycles.0, "cycles_per_packet": cycles.1}}));
        modules.push(json!({"name": format!("out_{name}"), "sink": {}}));
        edges.push(json!({"from": "split", "outgate": i, "to": name}));
        edges.push(json!({"from": name, "to": format!("out_{name}")}));
        flows.push(json!({"name": name, "path": ["src", "split", name, format!("out_{name}")], "slo_us": slo}));
    }
    json!({"name": format!("rc({n})"), "batch_size": 32, "modules": modules, "edges": edges, "flows": flows})
}

/// Engines pin their workers to the same cores: tests that start one take
/// turns (within one test binary; not every binary starts engines).
#[allow(dead_code)]
pub fn one_engine_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ENGINE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ENGINE.lock().unwrap_or_else(|e| e.into_inner())
}
