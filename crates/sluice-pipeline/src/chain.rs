//! Linear chains on one worker, outside the control loop: the profiler's
//! and the benchmarks' fixed workloads.

use sluice_core::{wire, ModuleCode, Knobs, ModelBuilder, ModuleDecl, Role, WalkerConfig, WorkerGraph};
use sluice_nf::NfSpec;
use sluice_traffic::{Stream, SyntheticSource, TemplateSpec};

use crate::error::{Error, Result};

/// Flow i of the reference traffic: 10.0.0.1 → 20.h.l.1 with h = i / 254,
/// l = i % 254 + 1 (so 20.0.(i+1).1 for the first 254), UDP, 60 bytes.
pub fn reference_frames(flows: usize) -> Result<Vec<Vec<u8>>> {
    (0..flows)
        .map(|i| {
            let dst_ip = format!("20.{}.{}.1", i / 254, i % 254 + 1);
            let t = TemplateSpec { dst_ip, src_port: 1000 + (i % 60000) as u16, ..TemplateSpec::default() };
            Ok(t.build()?)
        })
        .collect()
}

/// source (the reference traffic of `flows` interleaved flows, unlimited)
/// → `nfs` in a row (gate 0 each) → egress, at batch size `batch`.
pub fn chain(nfs: &[NfSpec], flows: usize, batch: usize, timing: bool) -> Result<WorkerGraph> {
    chain_on(nfs, &sluice_nf::Interfaces::none(), flows, batch, timing)
}

/// [`chain`] of NFs built on `interfaces` (a router's: see `sluice_nf::interfaces`).
pub fn chain_on(nfs: &[NfSpec], interfaces: &std::sync::Arc<sluice_nf::Interfaces>, flows: usize, batch: usize, timing: bool) -> Result<WorkerGraph> {
    let built = nfs.iter().map(|nf| nf.build_on(interfaces).map_err(Error::Spec)).collect::<Result<Vec<_>>>()?;
    let mut builder = ModelBuilder::default();
    let names: Vec<String> = (0..nfs.len()).map(|i| format!("nf{i}")).collect();
    builder.module(ModuleDecl::new("src", Role::Source, 0, 1));
    for (name, nf) in names.iter().zip(&built) {
        builder.module(ModuleDecl::new(name, Role::Function, 1, nf.outgates()));
    }
    builder.module(ModuleDecl::new("out", Role::Sink, 1, 0));
    let path: Vec<&str> = std::iter::once("src").chain(names.iter().map(String::as_str)).chain(["out"]).collect();
    for w in path.windows(2) {
        builder.connect(w[0], 0, w[1], 0);
    }
    // An NF's other gates (a router's requests and ICMP errors) each end at a sink of their own.
    let mut aside = 0;
    for (name, nf) in names.iter().zip(&built) {
        for gate in 1..nf.outgates() {
            let sink = format!("aside{name}_{gate}");
            builder.module(ModuleDecl::new(&sink, Role::Sink, 1, 0)).connect(name, gate, &sink, 0);
            aside += 1;
        }
    }
    let model = builder.build(batch)?;
    let streams = reference_frames(flows)?.into_iter().map(|frame| Stream { frame, flow: None, rate_pps: f64::INFINITY, burst_pkts: 1 }).collect();
    let mut instances = vec![Some(ModuleCode::Source(Box::new(SyntheticSource::new(streams, 1)?)))];
    instances.extend(built.into_iter().map(|nf| Some(ModuleCode::Function(nf))));
    instances.extend((0..=aside).map(|_| Some(ModuleCode::Egress)));
    // `instances` follows the declaration order, which is the model's.
    let config = WalkerConfig { timing, ..WalkerConfig::default() };
    let wiring = wire(&model, config.schedule, None).pop().expect("one worker");
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    Ok(WorkerGraph::new(&model, 0, &mut instances, &Knobs::new(&model), clock, origin, config, wiring)?)
}
