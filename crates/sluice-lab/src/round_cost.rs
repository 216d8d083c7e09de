//! What a walker round costs on three fixed workloads, one worker, no
//! controller: `replay` (source → egress: the round itself), `chain` (the
//! router chain Ethernet check → LPM → TTL → MAC rewrite → checksum →
//! egress) and `branch4` (LPM → four branches of TTL → MAC rewrite →
//! checksum, each to its egress: a split that leaves each branch a quarter
//! of the batch). The traffic is 4096 interleaved UDP flows to 500
//! destination /24s, routed by 500 /24 routes; each branch is a flow of
//! the model, whose egress records delays when timing (see
//! [`sluice_core::DelaySampling`]). A workload starts where an engine
//! worker stands after a control period of such traffic: the period's
//! reading taken, its flows' delays sampled as the engine samples them at
//! these rates (see [`settle`]).
//!
//! Fitting ns per round = T0 + T1·B over B gives the walker's per-round
//! cost T0 and the per-packet cost T1 of each workload; chain's T0 less
//! replay's, over its five NFs, is the cost of one NF visit ([`nf_visit_ns`]).

use sluice_core::telemetry::MIN_DRAWN_ROUNDS;
use sluice_core::{wire, Counters, DelaySampling, Knobs, Model, ModelBuilder, ModuleCode, ModuleDecl, Role, WalkerConfig, WorkerGraph};
use sluice_nf::{IpChecksumSpec, LpmSpec, MacRewriteSpec, NfSpec, TtlDecrementSpec, TypeCheckSpec};
use sluice_traffic::{Stream, SyntheticSource, TemplateSpec};

use sluice_pipeline::{Error, Result};

/// The workloads, by name.
pub const CASES: &[&str] = &["replay", "chain", "branch4"];

/// Flows the traffic interleaves (one frame each).
pub const FLOWS: usize = 4096;
/// Routes of the LPM.
const ROUTES: usize = 500;
/// Branches of `branch4`.
const BRANCHES: usize = 4;

/// TTL decrement → MAC rewrite → checksum: a next hop.
fn next_hop() -> [NfSpec; 3] {
    [
        NfSpec::TtlDecrement(TtlDecrementSpec { icmp: false }),
        NfSpec::MacRewrite(MacRewriteSpec { src: "02:00:00:00:00:fe".into(), dst: "02:00:00:01:00:00".into() }),
        NfSpec::IpChecksum(IpChecksumSpec {}),
    ]
}

/// Destination /24 number `r` (0..ROUTES) as "20.a.b".
fn net(r: usize) -> String {
    format!("20.{}.{}", r / 250, r % 250 + 1)
}

/// The traffic, one frame per flow in the order the source interleaves
/// them: flow i is 10.0.0.1:(1000 + i) → 20.a.b.(i / ROUTES + 1):5000 in
/// destination /24 `i % ROUTES`, UDP, 60 bytes.
pub fn frames() -> Result<Vec<Vec<u8>>> {
    (0..FLOWS)
        .map(|i| {
            let t = TemplateSpec { dst_ip: format!("{}.{}", net(i % ROUTES), i / ROUTES + 1), src_port: 1000 + i as u16, ..TemplateSpec::default() };
            Ok(t.build()?)
        })
        .collect()
}

/// NFs of the `chain` workload.
const CHAIN_NFS: usize = 5;

/// The router chain: Ethernet check → LPM → a next hop.
fn chain() -> [NfSpec; CHAIN_NFS] {
    let [ttl, mac, checksum] = next_hop();
    [NfSpec::TypeCheck(TypeCheckSpec { ether_type: 0x0800, also: Vec::new() }), lpm(1), ttl, mac, checksum]
}

/// What one NF visit costs the walker (ns): the chain's T0 less the
/// replay's (`chain_t0_ns`, `replay_t0_ns`), over the chain's NFs.
pub fn nf_visit_ns(chain_t0_ns: f64, replay_t0_ns: f64) -> f64 {
    (chain_t0_ns - replay_t0_ns) / CHAIN_NFS as f64
}

/// An LPM of one route per destination /24, /24 `r` to gate `r % gates`:
/// consecutive flows take the gates in turn.
fn lpm(gates: usize) -> NfSpec {
    NfSpec::Lpm(LpmSpec { routes: (0..ROUTES).map(|r| (format!("{}.0/24", net(r)), (r % gates) as u16)).collect(), ..LpmSpec::default() })
}

/// The NFs of workload `case`: the head every packet passes, then the
/// branches behind the head's gates, one list of NFs each.
pub fn shape(case: &str) -> Result<(Vec<NfSpec>, Vec<Vec<NfSpec>>)> {
    Ok(match case {
        "replay" => (vec![], vec![vec![]]),
        "chain" => (chain().to_vec(), vec![vec![]]),
        "branch4" => (vec![lpm(BRANCHES)], (0..BRANCHES).map(|_| next_hop().to_vec()).collect()),
        other => return Err(Error::Spec(format!("unknown round-cost workload '{other}' (known: {})", CASES.join(", ")))),
    })
}

/// Workload `case` on one worker at batch size `batch` (`timing`: delay
/// histograms, busy time and the core probe on), settled (see [`settle`]).
pub fn workload(case: &str, batch: usize, timing: bool) -> Result<WorkerGraph> {
    let (mut graph, model) = build(case, batch, timing)?;
    settle(&mut graph, &model);
    Ok(graph)
}

/// Runs `graph` through a control period long enough for each of its
/// flows to be sampled as sparsely as the engine samples a busy flow's
/// delays (one round in [`DelaySampling::ENGINE`]'s `one_in` past a
/// period's floor), then takes the period's reading, as an engine worker
/// does at each period's end. Without it every packet past the floor
/// would be timed for good, which the engine does only for flows too slow
/// to draw [`MIN_DRAWN_ROUNDS`] rounds a period.
pub fn settle(graph: &mut WorkerGraph, model: &Model) {
    let sampling = DelaySampling::ENGINE;
    // A flow delivers in one round of every `flows / B` or more; one more sample's worth of slack.
    let flows = model.flows.len();
    let per_flow = (u64::from(sampling.one_in) + 1) * MIN_DRAWN_ROUNDS + sampling.floor_pkts;
    let rounds = per_flow * flows.div_ceil(model.batch_size.min(flows)) as u64;
    for _ in 0..rounds {
        graph.next_round();
    }
    graph.read_counters(&mut Counters::for_model(model, 1));
}

/// Workload `case`, as it starts, and its model.
fn build(case: &str, batch: usize, timing: bool) -> Result<(WorkerGraph, Model)> {
    let (head, branches) = shape(case)?;
    let mut builder = ModelBuilder::default();
    let mut instances = Vec::new();
    builder.module(ModuleDecl::new("src", Role::Source, 0, 1));
    // Flow i goes the branch its destination /24 routes to (see `lpm`).
    let flow_of = |i: usize| (i % ROUTES % branches.len()) as u16;
    let streams = frames()?.into_iter().enumerate().map(|(i, frame)| Stream { frame, flow: Some(flow_of(i)), rate_pps: f64::INFINITY, burst_pkts: 1 }).collect();
    instances.push(Some(ModuleCode::Source(Box::new(SyntheticSource::new(streams, 1)?))));
    let mut last = "src".to_string();
    let add = |builder: &mut ModelBuilder, instances: &mut Vec<_>, name: String, nf: &NfSpec, from: &str, gate: usize| -> Result<String> {
        builder.module(ModuleDecl::new(&name, Role::Function, 1, nf.outgates()));
        builder.connect(from, gate, &name, 0);
        instances.push(Some(ModuleCode::Function(nf.build().map_err(Error::Spec)?)));
        Ok(name)
    };
    for (i, nf) in head.iter().enumerate() {
        last = add(&mut builder, &mut instances, format!("head{i}"), nf, &last, 0)?;
    }
    let head_path: Vec<String> = std::iter::once("src".to_string()).chain((0..head.len()).map(|i| format!("head{i}"))).collect();
    for (b, nfs) in branches.iter().enumerate() {
        let mut path = head_path.clone();
        let mut at = (last.clone(), b);
        for (i, nf) in nfs.iter().enumerate() {
            at = (add(&mut builder, &mut instances, format!("b{b}_{i}"), nf, &at.0, at.1)?, 0);
            path.push(at.0.clone());
        }
        let sink = format!("out{b}");
        builder.module(ModuleDecl::new(&sink, Role::Sink, 1, 0));
        builder.connect(&at.0, at.1, &sink, 0);
        instances.push(Some(ModuleCode::Egress));
        path.push(sink);
        // A flow per branch, best effort: its egress records delays.
        builder.flow(&format!("flow{b}"), &path.iter().map(String::as_str).collect::<Vec<_>>(), None);
    }
    // `instances` follows the declaration order, which is the model's.
    let model = builder.build(batch)?;
    let config = WalkerConfig { timing, ..WalkerConfig::default() };
    let wiring = wire(&model, config.schedule, None).pop().expect("one worker");
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    let graph = WorkerGraph::new(&model, 0, &mut instances, &Knobs::new(&model), clock, origin, config, wiring)?;
    Ok((graph, model))
}

/// Samples timed per measurement; the lower quartile is taken (on a
/// shared machine noise only ever adds time).
const SAMPLES: usize = 41;
/// Least time one sample runs (ns), so that the two clock reads around it
/// are a small part of it.
const SAMPLE_NS: u64 = 200_000;

/// Time of one round of `graph` (ns): the lower quartile over samples of
/// back-to-back rounds, as a busy worker runs them. Every round must move packets (the workloads' sources
/// are unlimited).
pub fn round_ns(graph: &mut WorkerGraph) -> f64 {
    let clock = quanta::Clock::new();
    // Rounds per sample, from a first sample of 64 rounds.
    let time = |graph: &mut WorkerGraph, rounds: u64| {
        let start = clock.raw();
        for _ in 0..rounds {
            std::hint::black_box(graph.next_round());
        }
        clock.delta_as_nanos(start, clock.raw())
    };
    let probe = time(graph, 64).max(1);
    let rounds = (64 * SAMPLE_NS / probe).max(16);
    let mut samples: Vec<f64> = (0..SAMPLES).map(|_| time(graph, rounds) as f64 / rounds as f64).collect();
    samples.sort_by(f64::total_cmp);
    samples[SAMPLES / 4]
}

/// The line ns per round = T0 + T1·B through `points` (B, ns per round):
/// (T0 ns, T1 ns/pkt), least squares of the relative error, so that a
/// round at B = 256, a hundred times one at B = 1, does not decide T0 by
/// its noise alone.
pub fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let weights: Vec<f64> = points.iter().map(|&(_, t)| 1.0 / (t * t)).collect();
    let sum: f64 = weights.iter().sum();
    let mean = |f: fn(&(f64, f64)) -> f64| points.iter().zip(&weights).map(|(p, w)| w * f(p)).sum::<f64>() / sum;
    let (mb, mt) = (mean(|p| p.0), mean(|p| p.1));
    let sbb: f64 = points.iter().zip(&weights).map(|((b, _), w)| w * (b - mb) * (b - mb)).sum();
    let sbt: f64 = points.iter().zip(&weights).map(|((b, t), w)| w * (b - mb) * (t - mt)).sum();
    let t1 = if sbb > 0.0 { sbt / sbb } else { 0.0 };
    (mt - t1 * mb, t1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_moves_a_batch_a_round_and_delivers_it_all() {
        for case in CASES {
            for batch in [1, 4, 32] {
                let mut g = build(case, batch, true).unwrap().0;
                // Up to 960 packets a flow: under the delay sampling's floor, each is timed.
                let rounds: u64 = 30;
                for i in 0..rounds {
                    let moved = if i % 2 == 0 { g.round() } else { g.next_round() };
                    assert_eq!(moved, batch, "{case} at B = {batch}");
                }
                g.drain();
                assert_eq!(g.in_flight(), 0, "{case}: nothing dropped or left behind");
                let mut c = sluice_core::Counters { flows: vec![Default::default(); 4], workers: vec![Default::default()], ..Default::default() };
                c.modules = vec![Default::default(); 20];
                g.read_counters(&mut c);
                let delivered: u64 = c.flows.iter().map(|f| f.delivered).sum();
                let timed: u64 = c.flows.iter().map(|f| f.delays.len()).sum();
                let sent = rounds * batch as u64;
                assert_eq!((delivered, timed), (sent, sent), "{case}: every packet delivered to its flow, its delay recorded");
            }
        }
    }

    #[test]
    fn a_settled_workload_times_one_round_in_16_as_a_busy_engine_flow() {
        for case in ["replay", "branch4"] {
            let (mut g, model) = build(case, 1, true).unwrap();
            settle(&mut g, &model);
            for _ in 0..64 {
                g.next_round();
            }
            let mut c = Counters::for_model(&model, 1);
            g.read_counters(&mut c);
            let one_in: Vec<u32> = c.flows.iter().map(|f| f.sample.one_in).collect();
            assert!(one_in.iter().all(|&n| n == DelaySampling::ENGINE.one_in), "{case}: {one_in:?}");
        }
    }

    #[test]
    fn the_fit_recovers_a_line_and_weighs_each_point_by_its_size() {
        let (t0, t1) = fit(&[(1.0, 40.0), (4.0, 70.0), (32.0, 350.0), (256.0, 2590.0)]);
        assert!((t0 - 30.0).abs() < 1e-9 && (t1 - 10.0).abs() < 1e-9, "{t0} {t1}");
        // 10% off at B = 256 moves T0 far less than 10% off at B = 1 does.
        let (off_large, _) = fit(&[(1.0, 40.0), (4.0, 70.0), (32.0, 350.0), (256.0, 2849.0)]);
        let (off_small, _) = fit(&[(1.0, 44.0), (4.0, 70.0), (32.0, 350.0), (256.0, 2590.0)]);
        assert!((off_large - 30.0).abs() < (off_small - 30.0).abs(), "{off_large} {off_small}");
        assert_eq!(fit(&[(8.0, 80.0)]), (80.0, 0.0), "one point: no slope");
    }

    #[test]
    fn branch4_splits_the_batch_four_ways() {
        let mut g = build("branch4", 32, true).unwrap().0;
        for _ in 0..10 {
            g.round();
        }
        let model_modules = 1 + 1 + 4 * 3 + 4;
        let mut c = sluice_core::Counters {
            modules: vec![Default::default(); model_modules],
            flows: vec![Default::default(); 4],
            workers: vec![Default::default()],
            ..Default::default()
        };
        g.read_counters(&mut c);
        // Module order: src, head0 (lpm), then per branch its three NFs and its egress.
        let per_branch: Vec<u64> = (0..4).map(|b| c.modules[2 + b * 4].arrived_pkts).collect();
        assert!(per_branch.iter().all(|&n| n == 80), "each branch gets a quarter of 320 packets: {per_branch:?}");
    }
}
