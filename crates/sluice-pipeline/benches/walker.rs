//! The walker on chains of modules: per-packet cost of a 10-module
//! Bypass(0,0) chain at B = 1, 32, 256; per-batch overhead of an empty
//! module (chain of 10 vs chain of 1); telemetry on vs off; the L2L3(1)
//! router chain at B = 1, 32, 256, its next hop a fixed MAC rewrite or a
//! `next_hop` that reads the neighbour table (a static gateway), and its
//! flows' route an ordinary or a multipath one.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_core::WorkerGraph;
use sluice_nf::{BypassSpec, IpChecksumSpec, LpmSpec, MacRewriteSpec, NfSpec, TtlDecrementSpec, TypeCheckSpec};

/// source → `len` × Bypass(0,0) → sink, B = `batch`.
fn chain(len: usize, batch: usize, timing: bool) -> WorkerGraph {
    let nfs = vec![NfSpec::Bypass(BypassSpec { cycles_per_batch: 0, cycles_per_packet: 0 }); len];
    sluice_pipeline::chain::chain(&nfs, 1, batch, timing).expect("a valid chain")
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

/// The L2L3(1) router chain: type check → LPM (500 routes) → TTL → next
/// The L2L3(1) router chain, its next hop a fixed MAC rewrite or a
/// `next_hop` reading the neighbour table (see
/// `sluice_pipeline::chain::router_chain`).
fn router_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("router_chain_per_packet");
    for &hop in sluice_pipeline::chain::ROUTER_HOPS {
        for batch in [1usize, 32, 256] {
            group.throughput(Throughput::Elements(batch as u64));
            group.bench_function(BenchmarkId::new(hop, batch), |b| {
                let mut g = sluice_pipeline::chain::router_chain(hop, batch).expect("a valid chain");
                b.iter(|| assert_eq!(g.round(), batch));
            });
        }
    }
    group.finish();
}

/// The L2L3(1) chain with a MAC rewrite, its flows' 20.0.0.0/8 an
/// ordinary route or a multipath route (one path, so that the chain
/// stays a chain): what hashing each packet's 5-tuple to its bucket costs.
fn multipath_route(c: &mut Criterion) {
    let filler = sluice_nf::lpm::sample_routes(1, 499);
    let route = LpmSpec { routes: [filler.clone(), vec![("20.0.0.0/8".into(), 0)]].concat(), ..LpmSpec::default() };
    let multipath = LpmSpec { routes: filler, multipath: vec![("20.0.0.0/8".into(), vec![(0, 1)])], ..LpmSpec::default() };
    let mut group = c.benchmark_group("router_chain_route_kind");
    for (name, lpm) in [("route", route), ("multipath", multipath)] {
        let nfs = vec![
            NfSpec::TypeCheck(TypeCheckSpec { ether_type: 0x0800, also: Vec::new() }),
            NfSpec::Lpm(lpm),
            NfSpec::TtlDecrement(TtlDecrementSpec { icmp: false }),
            NfSpec::MacRewrite(MacRewriteSpec { src: "02:00:00:00:00:fe".into(), dst: "02:00:00:01:00:00".into() }),
            NfSpec::IpChecksum(IpChecksumSpec {}),
        ];
        for batch in [1usize, 32] {
            group.throughput(Throughput::Elements(batch as u64));
            group.bench_function(BenchmarkId::new(name, batch), |b| {
                let mut g = sluice_pipeline::chain::chain(&nfs, 4096, batch, true).expect("a valid chain");
                b.iter(|| assert_eq!(g.round(), batch));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, per_packet, empty_module, telemetry, router_chain, multipath_route);
criterion_main!(benches);
