//! The simulator: a run is a function of the pipeline alone, time is the
//! cost model's, and every packet is accounted for.

use sluice_core::{Backend, Instance, ModelBuilder, ModuleDecl, Profile, Role, Schedule, Telemetry};
use sluice_nf::Bypass;
use sluice_sim::Simulator;
use sluice_traffic::{Stream, SyntheticSource, TemplateSpec};

/// The modelled cost of the one NF (ns): 1 µs a batch, 100 ns a packet.
const COST: Profile = Profile { t0_ns: 1000.0, t1_ns: 100.0 };

/// source (`rate_pps`, one flow) → a free NF that costs [`COST`] → egress, on the simulator.
fn simulator(rate_pps: f64) -> Simulator {
    let mut b = ModelBuilder::default();
    b.module(ModuleDecl::new("src", Role::Source, 0, 1))
        .module(ModuleDecl { profile: Some(COST), ..ModuleDecl::new("nf", Role::Function, 1, 1) })
        .module(ModuleDecl::new("out", Role::Sink, 1, 0));
    b.connect("src", 0, "nf", 0).connect("nf", 0, "out", 0);
    b.flow("f", &["src", "nf", "out"], Some(100.0));
    let model = b.build(32).unwrap();
    let frame = TemplateSpec::default().build().unwrap();
    let source = SyntheticSource::new(vec![Stream { frame, flow: Some(0), rate_pps, burst_pkts: 1 }], 1).unwrap();
    let instances = vec![Instance::Source(Box::new(source)), Instance::Function(Box::new(Bypass::new(0, 0))), Instance::Egress];
    Simulator::new(model, instances, Schedule::RunToCompletion).unwrap()
}

/// Three 10 ms periods and the finish.
fn run(sim: &mut Simulator) -> Vec<Telemetry> {
    let mut periods: Vec<Telemetry> = (0..3).map(|_| sim.run_period(10_000_000, &|| false)).collect();
    periods.push(sim.finish());
    periods
}

#[test]
fn a_run_is_the_same_every_time() {
    let summary = |t: &[Telemetry]| t.iter().map(|p| (p.flows[0].generated, p.flows[0].delivered, p.flows[0].p99_ns, p.flows[0].mean_ns)).collect::<Vec<_>>();
    let first = summary(&run(&mut simulator(200e3)));
    assert_eq!(first, summary(&run(&mut simulator(200e3))));
    assert!(first[..3].iter().all(|p| p.1 > 0));
}

#[test]
fn a_lone_packet_takes_its_paths_modelled_cost() {
    // 10 kpps: 100 µs between packets, each alone in its batch through a
    // pass-through buffer: T0 + T1 = 1.1 µs from source to egress, after
    // waiting for the idle worker's next poll (it polls every µs of
    // virtual time): 1.1 to 2.1 µs, 1.6 on average. Virtual time: the same
    // figures on every machine (see a_run_is_the_same_every_time).
    let periods = run(&mut simulator(10e3));
    for p in &periods[..3] {
        let f = &p.flows[0];
        assert_eq!(f.delivered, 100, "10 kpps for 10 ms");
        assert!((1500..=1700).contains(&f.mean_ns) && f.max_ns <= 2100, "{f:?}");
    }
}

#[test]
fn under_heavy_load_every_packet_is_delivered() {
    // 2 Mpps into an NF that takes 1.1 µs for a lone packet (0.9 Mpps) and
    // 4.2 µs for a full batch (7.6 Mpps): packets queue until the batches
    // grow; the finish drains what is left.
    let periods = run(&mut simulator(2e6));
    let total = |count: fn(&sluice_core::FlowTelemetry) -> u64| periods.iter().map(|p| count(&p.flows[0])).sum::<u64>();
    assert_eq!(total(|f| f.generated), 60_000, "2 Mpps for 30 ms");
    assert_eq!((total(|f| f.delivered), total(|f| f.dropped)), (60_000, 0));
}
