//! Linear chains on one worker, outside the control loop: the profiler's
//! and the benchmarks' fixed workloads.

use sluice_core::{wire, ModuleCode, Knobs, ModelBuilder, ModuleDecl, Role, WalkerConfig, WorkerGraph};
use sluice_nf::{IpChecksumSpec, LpmSpec, MacRewriteSpec, NextHopSpec, NfSpec, TtlDecrementSpec, TypeCheckSpec};
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

/// The next hops [`router_chain`] takes.
pub const ROUTER_HOPS: &[&str] = &["mac_rewrite", "next_hop"];

/// The L2L3(1) router chain, Ethernet check → LPM (499 filler routes and
/// the flows' 20.0.0.0/8) → TTL → next hop → checksum, over 4096
/// interleaved flows at batch size `batch`, timing on. Its next hop
/// (`hop`, one of [`ROUTER_HOPS`]) writes a fixed MAC (`mac_rewrite`) or
/// is a `next_hop` via a gateway whose MAC the neighbour table holds
/// (`next_hop`): the two side by side are what reading the table costs
/// the fast path.
pub fn router_chain(hop: &str, batch: usize) -> Result<WorkerGraph> {
    let hop = match hop {
        "mac_rewrite" => NfSpec::MacRewrite(MacRewriteSpec { src: "02:00:00:00:00:fe".into(), dst: "02:00:00:01:00:00".into() }),
        "next_hop" => NfSpec::NextHop(NextHopSpec { interface: "out".into(), via: Some("10.0.2.1".into()), hold_pkts: 64 }),
        other => return Err(Error::Spec(format!("unknown next hop '{other}' (known: {})", ROUTER_HOPS.join(", ")))),
    };
    let mut routes = sluice_nf::lpm::sample_routes(1, 499);
    routes.push(("20.0.0.0/8".into(), 0));
    let out = sluice_nf::InterfaceSpec {
        name: "out".into(),
        addresses: vec!["10.0.2.254/24".into()],
        mac: None,
        mtu: None,
        neighbors: vec![sluice_nf::interfaces::NeighborSpec { address: "10.0.2.1".into(), mac: "02:00:00:01:00:00".into() }],
        neighbor_table: Default::default(),
    };
    let interfaces = sluice_nf::Interfaces::build(&[out], &Default::default(), |_| None).map_err(Error::Spec)?;
    let nfs = [
        NfSpec::TypeCheck(TypeCheckSpec { ether_type: 0x0800, also: Vec::new() }),
        NfSpec::Lpm(LpmSpec { routes, ..LpmSpec::default() }),
        NfSpec::TtlDecrement(TtlDecrementSpec { icmp: false }),
        hop,
        NfSpec::IpChecksum(IpChecksumSpec {}),
    ];
    chain_on(&nfs, &interfaces, 4096, batch, true)
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

#[cfg(test)]
mod tests {
    use super::{router_chain, ROUTER_HOPS};

    #[test]
    fn the_router_chain_forwards_every_packet_with_either_hop_and_names_the_hops_it_knows() {
        for &hop in ROUTER_HOPS {
            let mut g = router_chain(hop, 32).expect("a valid chain");
            assert_eq!((0..4).map(|_| g.round()).sum::<usize>(), 128, "{hop}: four full batches");
            assert_eq!(g.in_flight(), 0, "{hop}: every packet left, none held for a neighbour");
        }
        let refused = router_chain("arp", 32).err().expect("no such hop").to_string();
        assert!(refused.contains("'arp'") && refused.contains("mac_rewrite, next_hop"), "{refused}");
    }
}
