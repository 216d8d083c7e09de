//! A worker taken down (a failed core, `Actions::halted`) on the
//! simulator: what reaches it is dropped and counted, it resumes when
//! back, and the run is as repeatable as one without an outage.

use crate::common::{placed, PERIOD_NS};
use sluice_core::{Actions, Backend, FlowTelemetry, Telemetry};
use sluice_sim::Simulator;
use sluice_traffic::pacer::RX_QUEUE;

/// Three periods with `worker` down through the second, and the finish.
fn down_in_the_middle(sim: &mut Simulator, worker: usize) -> Vec<Telemetry> {
    let mut periods = Vec::new();
    for down in [None, Some(true), Some(false)] {
        if let Some(down) = down {
            sim.apply(&Actions { halted: vec![(worker, down)], ..Actions::default() }).unwrap();
        }
        periods.push(sim.run_period(PERIOD_NS, &|| false));
    }
    periods.push(sim.finish());
    periods
}

fn flow(t: &Telemetry) -> &FlowTelemetry {
    &t.flows[0]
}

/// Over the run and its finish, every packet generated is delivered or dropped.
fn accounted(periods: &[Telemetry]) -> bool {
    let sum = |count: fn(&FlowTelemetry) -> u64| periods.iter().map(|p| count(flow(p))).sum::<u64>();
    sum(|f| f.generated) == sum(|f| f.delivered) + sum(|f| f.dropped)
}

#[test]
fn packets_reaching_a_down_worker_are_dropped_and_counted_and_it_resumes_when_back() {
    // The source on worker 0 keeps sending at 200 kpps; the NF and the
    // egress sit on worker 1, down through the second period.
    let periods = down_in_the_middle(&mut placed(200e3, [0, 1, 1]), 1);
    let (before, down, after) = (flow(&periods[0]), flow(&periods[1]), flow(&periods[2]));
    assert_eq!((before.generated, before.dropped), (2000, 0), "{before:?}");
    assert!(before.delivered > 0, "{before:?}");
    assert_eq!(down.generated, 2000, "the source's worker is up: {down:?}");
    assert_eq!(down.delivered, 0, "nothing leaves a down worker: {down:?}");
    assert!(down.dropped > 0, "what reached the down worker is counted: {down:?}");
    assert_eq!(after.generated, 2000, "{after:?}");
    assert!(after.delivered > 0 && after.dropped == 0, "back up, it delivers again: {after:?}");
    assert!(accounted(&periods), "{periods:?}");
}

#[test]
fn a_down_source_worker_sends_nothing_and_its_receive_queue_holds_what_it_can() {
    // 200 kpps: the 2000 arrivals of the outage fit the receive queue and
    // leave once the worker is back.
    let periods = down_in_the_middle(&mut placed(200e3, [0, 1, 1]), 0);
    let (down, after) = (flow(&periods[1]), flow(&periods[2]));
    assert_eq!((down.generated, down.delivered), (0, 0), "{down:?}");
    assert_eq!((after.generated, after.delivered, periods[3].totals.missed), (4000, 4000, 0), "{after:?}");
    assert!(accounted(&periods), "{periods:?}");
    // 1 Mpps: the queue holds RX_QUEUE of the outage's 10 000 arrivals;
    // the rest are missed, counted and never generated.
    let periods = down_in_the_middle(&mut placed(1e6, [0, 1, 1]), 0);
    let missed = periods[3].totals.missed;
    assert!(missed.abs_diff(10_000 - RX_QUEUE as u64) <= 1, "{missed} missed");
    let generated: u64 = periods.iter().map(|p| flow(p).generated).sum();
    assert_eq!(generated + missed, 30_000, "every arrival of 30 ms at 1 Mpps is generated or missed");
    assert!(accounted(&periods), "{periods:?}");
}

#[test]
fn a_run_with_an_outage_is_the_same_every_time() {
    let summary = |t: &[Telemetry]| t.iter().map(|p| (flow(p).generated, flow(p).delivered, flow(p).dropped, flow(p).p99_ns)).collect::<Vec<_>>();
    let first = summary(&down_in_the_middle(&mut placed(200e3, [0, 1, 1]), 1));
    assert_eq!(first, summary(&down_in_the_middle(&mut placed(200e3, [0, 1, 1]), 1)));
}

#[test]
fn taking_down_a_worker_that_does_not_exist_is_refused() {
    let mut sim = placed(200e3, [0, 1, 1]);
    let err = sim.apply(&Actions { halted: vec![(2, true)], ..Actions::default() }).unwrap_err();
    assert!(err.to_string().contains("cannot take down worker 2: there are 2 workers"), "{err}");
}
