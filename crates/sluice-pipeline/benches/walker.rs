//! The walker on chains of modules: per-packet cost of a 10-module
//! Bypass(0,0) chain at B = 1, 32, 256; per-batch overhead of an empty
//! module (chain of 10 vs chain of 1); telemetry on vs off.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
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

fn per_packet(c: &mut Criterion) {
    let mut group = c.benchmark_group("bypass_chain10_per_packet");
    for batch in [1usize, 32, 256] {
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_function(BenchmarkId::from_parameter(batch), |b| {
            let mut g = chain(10, batch, true);
            b.iter(|| g.round());
        });
    }
    group.finish();
}

fn empty_module(c: &mut Criterion) {
    let mut group = c.benchmark_group("empty_module_per_batch");
    group.throughput(Throughput::Elements(1));
    for len in [1usize, 10] {
        group.bench_function(BenchmarkId::new("chain", len), |b| {
            let mut g = chain(len, 32, true);
            b.iter(|| g.round());
        });
    }
    group.finish();
}

fn telemetry(c: &mut Criterion) {
    let mut group = c.benchmark_group("telemetry_chain10_b32");
    group.throughput(Throughput::Elements(32));
    for timing in [false, true] {
        group.bench_function(if timing { "on" } else { "off" }, |b| {
            let mut g = chain(10, 32, timing);
            b.iter(|| g.round());
        });
    }
    group.finish();
}

criterion_group!(benches, per_packet, empty_module, telemetry);
criterion_main!(benches);
