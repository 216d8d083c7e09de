//! How long each worker may sleep when idle without putting a flow over
//! its SLO (SLO-aware and learned polling): per flow with an SLO, its
//! slack (SLO less its measured statistic; before anything is measured,
//! the whole SLO) is shared among the workers on its path, half of each
//! share kept as margin; a worker takes the least of its flows'.

use sluice_core::{Model, Telemetry};

use crate::slo_statistic::SloStatistic;

/// Per worker, its sleep bound before anything is measured (ns): a share
/// of the SLOs of the flows it carries, `u64::MAX` where it carries no
/// flow with an SLO.
pub fn first_sleep_bounds(model: &Model) -> Vec<(usize, u64)> {
    shares(model, |_, slo| Some(slo))
}

/// Per worker, its sleep bound (ns): 0 where a flow it carries is at or
/// over its SLO, `u64::MAX` where it carries no flow with an SLO that
/// delivered this period.
pub fn sleep_bounds(model: &Model, telemetry: &Telemetry, statistic: SloStatistic) -> Vec<(usize, u64)> {
    shares(model, |f, slo| {
        let t = telemetry.flows.get(f).filter(|t| t.delivered > 0)?;
        Some(slo.saturating_sub(statistic.of(t)))
    })
}

/// Per worker, the least share of its flows' slack, `slack(flow, slo_ns)`
/// (ns; `None`: the flow bounds nothing).
fn shares(model: &Model, slack: impl Fn(usize, u64) -> Option<u64>) -> Vec<(usize, u64)> {
    let mut bound = vec![u64::MAX; model.workers()];
    for (f, flow) in model.flows.iter().enumerate() {
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
