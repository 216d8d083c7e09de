//! The pipeline the simulator's tests run: one flow through one costed NF.

use sluice_core::{Backend, ModuleCode, ModelBuilder, ModuleDecl, Profile, Role, Schedule, Telemetry};
use sluice_nf::Bypass;
use sluice_sim::Simulator;
use sluice_traffic::{Stream, SyntheticSource, TemplateSpec};

/// The modelled cost of the one NF (ns): 1 µs a batch, 100 ns a packet.
pub const COST: Profile = Profile { t0_ns: 1000.0, t1_ns: 100.0 };

/// Length of a test period (ns).
pub const PERIOD_NS: u64 = 10_000_000;

/// source (`rate_pps`, one flow) → a free NF that costs [`COST`] → egress,
/// all on one worker.
pub fn simulator(rate_pps: f64) -> Simulator {
    placed(rate_pps, [0, 0, 0])
}

/// [`simulator`] with the source, the NF and the egress on the workers `on`.
pub fn placed(rate_pps: f64, on: [usize; 3]) -> Simulator {
    let mut b = ModelBuilder::default();
    b.module(ModuleDecl::new("src", Role::Source, 0, 1))
        .module(ModuleDecl { profile: Some(COST), ..ModuleDecl::new("nf", Role::Function, 1, 1) })
        .module(ModuleDecl::new("out", Role::Sink, 1, 0));
    b.connect("src", 0, "nf", 0).connect("nf", 0, "out", 0);
    b.place("src", on[0]).place("nf", on[1]).place("out", on[2]);
    b.flow("f", &["src", "nf", "out"], Some(100.0));
    let model = b.build(32).unwrap();
    let frame = TemplateSpec::default().build().unwrap();
    let source = SyntheticSource::new(vec![Stream { frame, flow: Some(0), rate_pps, burst_pkts: 1 }], 1).unwrap();
    let instances = vec![ModuleCode::Source(Box::new(source)), ModuleCode::Function(Box::new(Bypass::new(0, 0))), ModuleCode::Egress];
    Simulator::new(model, instances, Schedule::RunToCompletion).unwrap()
}

/// Three [`PERIOD_NS`] periods and the finish.
pub fn run(sim: &mut Simulator) -> Vec<Telemetry> {
    let mut periods: Vec<Telemetry> = (0..3).map(|_| sim.run_period(PERIOD_NS, &|| false)).collect();
    periods.push(sim.finish());
    periods
}
