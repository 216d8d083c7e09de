//! Runs walker rounds of a 10-module Bypass(0,0) chain at B = 32: a fixed
//! workload for instruction counts (`valgrind --tool=callgrind`).

use sluice_core::{wire, Instance, Knobs, ModelBuilder, ModuleDecl, Role, WalkerConfig, WorkerGraph};
use sluice_nf::Bypass;
use sluice_traffic::{Stream, SyntheticSource, TemplateSpec};

/// source → `len` × Bypass(0,0) → sink, B = `batch`.
fn chain(len: usize, batch: usize, timing: bool) -> WorkerGraph {
    let mut b = ModelBuilder::default();
    let names: Vec<String> = (0..len).map(|i| format!("nf{i}")).collect();
    b.module(ModuleDecl::new("src", Role::Source, 0, 1));
    for n in &names {
        b.module(ModuleDecl::new(n, Role::Function, 1, 1));
    }
    b.module(ModuleDecl::new("out", Role::Sink, 1, 0));
    let mut path = vec!["src"];
    path.extend(names.iter().map(String::as_str));
    path.push("out");
    for w in path.windows(2) {
        b.connect(w[0], 0, w[1], 0);
    }
    b.flow("f", &path, Some(1000.0));
    let model = b.build(batch).expect("valid chain");
    let frame = TemplateSpec::default().build().expect("valid template");
    let source = SyntheticSource::new(vec![Stream { frame, flow: Some(0), rate_pps: f64::INFINITY }], 1).expect("valid source");
    let mut instances: Vec<Option<Instance>> = vec![Some(Instance::Source(Box::new(source)))];
    instances.extend((0..len).map(|_| Some(Instance::Function(Box::new(Bypass::new(0, 0))))));
    instances.push(Some(Instance::Egress));
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    let config = WalkerConfig { timing, ..WalkerConfig::default() };
    let wiring = wire(&model, config.schedule, None).pop().expect("one worker");
    WorkerGraph::new(&model, 0, &mut instances, &Knobs::new(&model), clock, origin, config, wiring).expect("chain builds")
}


fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let mut g = chain(10, 32, false);
    let moved: usize = (0..rounds).map(|_| g.round()).sum();
    println!("{moved} packets in {rounds} rounds");
}
