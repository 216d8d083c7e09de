//! Pipeline descriptions shared by the integration tests.

use serde_json::{json, Value};
use sluice_control::RunPlan;
use sluice_core::Backend;
use sluice_pipeline::Pipeline;

/// RC(n) (see [`rc`]), validated.
#[allow(dead_code)]
pub fn pipeline(n: usize) -> Pipeline {
    Pipeline::from_json(&rc(n).to_string()).unwrap()
}

/// `periods` periods of 20 ms after one of warm-up.
#[allow(dead_code)]
pub fn plan(periods: usize) -> RunPlan {
    RunPlan { periods, warmup_periods: 1, period_ns: 20_000_000, ..RunPlan::default() }
}

/// Runs `check` on the simulator, then on the engine (one engine at a time).
#[allow(dead_code)]
pub fn on_both_backends(p: &Pipeline, mut check: impl FnMut(&mut dyn Backend)) {
    let _engine = one_engine_at_a_time();
    check(&mut p.simulator().unwrap());
    check(&mut p.engine(true).unwrap());
}

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

/// A pipeline drawn from `seed`: one source, a split into 2–4 branches,
/// each a chain of 1–3 Bypass modules of random cost, some splitting again
/// at random; every leaf a sink ending a flow with an SLO drawn from
/// `slo_us` (µs). The first split draws at random (flows are decided
/// there) or looks up the destination (the source's streams carry the
/// flows). Branches are placed on random workers among `workers`. Costs
/// are cycles of the nominal 2.6 GHz clock.
#[allow(dead_code)]
pub fn generated(seed: u64, workers: usize, slo_us: (f64, f64)) -> Value {
    let mut rng = Draw(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let lookup = rng.below(2) == 0;
    let mut g = Generated { modules: vec![], edges: vec![], flows: vec![], streams: vec![], rng, workers, slo_us, lookup };
    g.modules.push(json!({"name": "src", "source": {"synthetic": {"streams": []}}}));
    g.split("src", vec!["src".into()], 0, 0);
    if g.streams.is_empty() {
        g.streams.push(json!({}));
    }
    g.modules[0]["source"]["synthetic"]["streams"] = json!(g.streams);
    json!({"name": format!("generated({seed})"), "batch_size": 32, "modules": g.modules, "edges": g.edges, "flows": g.flows})
}

/// A xorshift generator, seeded: the same draws on every machine.
#[allow(dead_code)]
pub struct Draw(pub u64);

#[allow(dead_code)]
impl Draw {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// A number in lo..hi.
    pub fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Generated {
    modules: Vec<Value>,
    edges: Vec<Value>,
    flows: Vec<Value>,
    streams: Vec<Value>,
    rng: Draw,
    workers: usize,
    slo_us: (f64, f64),
    /// The first split looks up the destination instead of drawing at random.
    lookup: bool,
}

impl Generated {
    /// A split behind `from`'s gate 0 with its branches; `path` leads to
    /// `from`.
    fn split(&mut self, from: &str, path: Vec<String>, depth: usize, worker: usize) {
        let name = format!("split{}", self.modules.len());
        let branches = 2 + self.rng.below(3) as usize;
        let lookup = self.lookup && depth == 0;
        let nf = if lookup {
            let table: Vec<(String, usize)> = (0..branches).map(|b| (format!("20.0.{b}.1"), b)).collect();
            json!({"type": "exact_match", "field": "dst_ip", "table": table})
        } else {
            let weights: Vec<f64> = (0..branches).map(|_| 1.0 + self.rng.below(4) as f64).collect();
            json!({"type": "random_split", "weights": weights, "seed": self.rng.below(1000)})
        };
        self.modules.push(json!({"name": name, "nf": nf, "worker": worker}));
        self.edges.push(json!({"from": from, "to": name}));
        let mut path = path;
        path.push(name.clone());
        for b in 0..branches {
            let worker = if self.rng.below(3) == 0 { self.rng.below(self.workers as u64) as usize } else { worker };
            let mut last = (name.clone(), b);
            let mut branch = path.clone();
            for _ in 0..1 + self.rng.below(3) {
                let nf = format!("nf{}", self.modules.len());
                let (t0, t1) = (self.rng.below(3000), self.rng.below(300));
                self.modules.push(json!({"name": nf, "nf": {"type": "bypass", "cycles_per_batch": t0, "cycles_per_packet": t1}, "worker": worker}));
                self.edges.push(json!({"from": last.0, "outgate": last.1, "to": nf}));
                branch.push(nf.clone());
                last = (nf, 0);
            }
            let template = json!({"dst_ip": format!("20.0.{b}.1")});
            if depth == 0 && self.rng.below(3) == 0 {
                if lookup {
                    self.streams.push(json!({"template": template}));
                }
                self.split(&last.0, branch, depth + 1, worker);
                continue;
            }
            let sink = format!("out{}", self.modules.len());
            self.modules.push(json!({"name": sink, "sink": {}, "worker": worker}));
            self.edges.push(json!({"from": last.0, "outgate": last.1, "to": sink}));
            branch.push(sink);
            let flow = format!("f{}", self.flows.len());
            let slo = self.rng.between(self.slo_us.0, self.slo_us.1);
            self.flows.push(json!({"name": flow, "path": branch, "slo_us": slo}));
            if lookup {
                self.streams.push(json!({"flow": flow, "template": template}));
            }
        }
    }
}
