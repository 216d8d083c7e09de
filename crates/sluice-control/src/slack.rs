//! How long each worker may sleep when idle without putting a flow over
//! its SLO (SLO-aware polling): per flow with an SLO, its slack (SLO less
//! its measured statistic) is shared among the workers on its path, half
//! of each share kept as margin; a worker takes the least of its flows'.

use sluice_core::{Model, Telemetry};

use crate::run::SloStatistic;

/// Per worker, its sleep bound before anything is measured (ns): 0 where
/// it carries a flow with an SLO (its slack is not known yet), `u64::MAX`
/// where it carries none.
pub fn first_sleep_bounds(model: &Model) -> Vec<(usize, u64)> {
    let mut bound = vec![u64::MAX; model.workers()];
    for flow in model.flows.iter().filter(|f| f.slo_ns.is_some()) {
        for &v in &flow.path {
            bound[model.worker_of[v]] = 0;
        }
    }
    bound.into_iter().enumerate().collect()
}

/// Per worker, its sleep bound (ns): 0 where a flow it carries is at or
/// over its SLO, `u64::MAX` where it carries no flow with an SLO that
/// delivered this period.
pub fn sleep_bounds(model: &Model, telemetry: &Telemetry, statistic: SloStatistic) -> Vec<(usize, u64)> {
    let mut bound = vec![u64::MAX; model.workers()];
    for (f, flow) in model.flows.iter().enumerate() {
        let (Some(slo), Some(t)) = (flow.slo_ns, telemetry.flows.get(f)) else { continue };
        if t.delivered == 0 {
            continue;
        }
        let mut workers: Vec<usize> = flow.path.iter().map(|&v| model.worker_of[v]).collect();
        workers.sort_unstable();
        workers.dedup();
        let share = slo.saturating_sub(statistic.of(t)) / (2 * workers.len() as u64);
        for w in workers {
            bound[w] = bound[w].min(share);
        }
    }
    bound.into_iter().enumerate().collect()
}
