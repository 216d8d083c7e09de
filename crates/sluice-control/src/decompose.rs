//! Pipeline decomposition (Batchy §4.4): when a flow misses its SLO on a
//! worker whose modules, each at a full batch, take longer than that SLO
//! (an *inherent* violation: no trigger setting can help), split the worker.
//! Flows are visited in ascending SLO; a flow stays if the worker's
//! worst-case turnaround over the flows kept so far plus its own modules
//! still fits every kept SLO; the modules of the others that no kept flow
//! uses move to a spare worker behind rings. The engine moves them while
//! running, buffered packets included.

use sluice_core::{FlowId, Model, ModuleId, Telemetry};

use crate::slo_statistic::SloStatistic;

/// Worst-case time of one round over `modules`: Σ (T0 + T1·B) (ns).
fn turnaround_ns(model: &Model, modules: impl Iterator<Item = ModuleId>) -> f64 {
    let b = model.batch_size as f64;
    modules.filter_map(|v| model.modules[v].profile).map(|p| p.cost_ns(b)).sum()
}

/// The moves that split a worker in inherent violation, when a flow
/// violates its SLO this period and a spare worker is free; none otherwise.
pub fn decompose(model: &Model, t: &Telemetry, statistic: SloStatistic) -> Vec<(ModuleId, usize)> {
    let Some(&spare) = model.idle_workers().first() else { return Vec::new() };
    let mut violating: Vec<(u64, FlowId)> = (0..model.flows.len())
        .filter(|&f| statistic.over(&t.flows[f], model.flows[f].slo_ns))
        .filter_map(|f| Some((model.flows[f].slo_ns?, f)))
        .collect();
    violating.sort_unstable();
    for (slo, f) in violating {
        let mut workers: Vec<usize> = model.flows[f].path.iter().map(|&v| model.worker_of[v]).collect();
        workers.dedup();
        for w in workers {
            let on_w = (0..model.modules.len()).filter(|&v| model.worker_of[v] == w);
            if turnaround_ns(model, on_w) >= slo as f64 {
                return split(model, w, spare);
            }
        }
    }
    Vec::new()
}

/// Splits worker `w`: the flows that fit stay, the rest of its flow
/// modules go to `spare`.
fn split(model: &Model, w: usize, spare: usize) -> Vec<(ModuleId, usize)> {
    let mut flows: Vec<FlowId> = (0..model.flows.len()).filter(|&f| model.flows[f].path.iter().any(|&v| model.worker_of[v] == w)).collect();
    flows.sort_by_key(|&f| (model.flows[f].slo_ns.unwrap_or(u64::MAX), f));
    let n = model.modules.len();
    let (mut kept, mut leaving) = (vec![false; n], vec![false; n]);
    let (mut kept_ns, mut bound_ns, mut any_kept) = (0.0, f64::INFINITY, false);
    for f in flows {
        let own: Vec<ModuleId> = model.flows[f].path.iter().copied().filter(|&v| model.worker_of[v] == w && !kept[v]).collect();
        let cost = kept_ns + turnaround_ns(model, own.iter().copied());
        let bound = bound_ns.min(model.flows[f].slo_ns.map_or(f64::INFINITY, |s| s as f64));
        if !any_kept || cost < bound {
            // The tightest flow stays whatever it costs: it has to run somewhere.
            own.iter().for_each(|&v| kept[v] = true);
            (kept_ns, bound_ns, any_kept) = (cost, bound, true);
        } else {
            own.iter().for_each(|&v| leaving[v] = true);
        }
    }
    (0..n).filter(|&v| leaving[v] && !kept[v]).map(|v| (v, spare)).collect()
}
