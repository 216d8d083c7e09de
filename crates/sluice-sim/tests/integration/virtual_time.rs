//! The simulator's time is the cost model's: the same figures on every
//! run and every machine, and every packet accounted for.

use crate::common::{run, simulator};
use sluice_core::Telemetry;

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
