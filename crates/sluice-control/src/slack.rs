//! How long each worker may sleep when idle without putting a flow over
//! its SLO (SLO-aware and learned polling): per flow with an SLO, its
//! slack (SLO less its measured statistic; in a period it delivered
//! nothing in, and before anything is measured, the whole SLO: its next
//! packet may come at any time) is shared among the workers on its path,
//! half of each share kept as margin; a worker takes the least of its flows'.

use sluice_core::{Model, Telemetry};

use crate::slo_statistic::SloStatistic;

/// Per worker, its sleep bound before anything is measured (ns): a share
/// of the SLOs of the flows it carries, `u64::MAX` where it carries no
/// flow with an SLO.
pub fn first_sleep_bounds(model: &Model) -> Vec<(usize, u64)> {
    shares(model, |_, slo| Some(slo))
}

/// Per worker, its sleep bound (ns): 0 where a flow it carries is at or
/// over its SLO, a share of the whole SLO where such a flow delivered
/// nothing this period (sparse, or all dropped), `u64::MAX` where it
/// carries no flow with an SLO.
pub fn sleep_bounds(model: &Model, telemetry: &Telemetry, statistic: SloStatistic) -> Vec<(usize, u64)> {
    shares(model, |f, slo| match telemetry.flows.get(f).filter(|t| t.delivered > 0) {
        Some(t) => Some(slo.saturating_sub(statistic.of(t))),
        None => Some(slo),
    })
}

/// Per worker, the least share of its flows' slack, `slack(flow, slo_ns)`
/// (ns; `None`: the flow bounds nothing).
fn shares(model: &Model, slack: impl Fn(usize, u64) -> Option<u64>) -> Vec<(usize, u64)> {
    let mut bound = vec![u64::MAX; model.workers()];
    for (f, flow) in model.flows.iter().enumerate().filter(|(_, flow)| !flow.removed) {
        let Some(slack) = flow.slo_ns.and_then(|slo| slack(f, slo)) else { continue };
        let mut workers: Vec<usize> = flow.path.iter().map(|&v| model.worker_of[v]).collect();
        workers.sort_unstable();
        workers.dedup();
        let share = slack / (2 * workers.len() as u64);
        for w in workers {
            bound[w] = bound[w].min(share);
        }
    }
    bound.into_iter().enumerate().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::{FlowTelemetry, ModelBuilder, ModuleDecl, Role};

    /// Flow `tight` (SLO 100 µs) over workers 0 and 1, `loose` (10 ms) on worker 0 alone.
    fn two_flows() -> Model {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1))
            .module(ModuleDecl::new("split", Role::Function, 1, 2))
            .module(ModuleDecl::new("far", Role::Function, 1, 1))
            .module(ModuleDecl::new("out_a", Role::Sink, 1, 0))
            .module(ModuleDecl::new("out_b", Role::Sink, 1, 0))
            .connect("src", 0, "split", 0)
            .connect("split", 0, "far", 0)
            .connect("far", 0, "out_a", 0)
            .connect("split", 1, "out_b", 0)
            .place("far", 1)
            .place("out_a", 1)
            .flow("tight", &["src", "split", "far", "out_a"], Some(100.0))
            .flow("loose", &["src", "split", "out_b"], Some(10_000.0));
        b.build(32).expect("a valid model")
    }

    fn delivered(p95_us: u64, n: u64) -> FlowTelemetry {
        FlowTelemetry { delivered: n, p95_ns: p95_us * 1_000, ..FlowTelemetry::default() }
    }

    #[test]
    fn a_tight_flow_bounds_its_workers_sleeps_whether_or_not_it_delivered() {
        let model = two_flows();
        let t = |tight: FlowTelemetry| Telemetry { flows: vec![tight, delivered(1_000, 500)], ..Telemetry::default() };
        // 100 µs less 40 measured, over 2 workers, half kept: 15 µs each.
        assert_eq!(sleep_bounds(&model, &t(delivered(40, 50)), SloStatistic::P95), [(0, 15_000), (1, 15_000)]);
        // A sparse period (or all its packets dropped): its whole SLO bounds, not nothing.
        assert_eq!(sleep_bounds(&model, &t(delivered(0, 0)), SloStatistic::P95), [(0, 25_000), (1, 25_000)]);
        assert_eq!(first_sleep_bounds(&model), [(0, 25_000), (1, 25_000)]);
        let removed = model.with_flow_removed(0).unwrap();
        assert_eq!(sleep_bounds(&removed, &t(delivered(0, 0)), SloStatistic::P95), [(0, (10_000_000 - 1_000_000) / 2), (1, u64::MAX)]);
    }
}
