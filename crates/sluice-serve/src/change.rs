//! The changes the control API makes, and how each is made at a period
//! boundary: checked whole against the pipeline as it runs, then made, or
//! refused with nothing changed.

use std::collections::HashMap;

use sluice_control::{Boundary, RunPlan};
use sluice_core::wire::IpPrefix;
use sluice_core::{Actions, ModuleId, Schedule};
use sluice_nf::NfSpec;
use sluice_pipeline::Pipeline;

use crate::api::ApiError;
use crate::status::{us, Status};

/// A change asked for, its names resolved.
#[derive(Debug)]
pub enum Change {
    /// A flow's SLO (ns; `None`: none).
    Slo { flow: usize, slo_ns: Option<u64> },
    /// The controller in force.
    Controller { name: String },
    /// A module's trigger pinned (pkt) or handed back to the controller (`None`).
    Trigger { module: ModuleId, trigger: Option<u32> },
    /// A module moved to another worker.
    Move { module: ModuleId, worker: usize },
    /// A module's weighted-fair weight.
    Weight { module: ModuleId, weight: u32 },
    /// A source stream's rate limit (pkt/s).
    Rate { module: ModuleId, stream: usize, rate_pps: f64 },
    /// An NF's configuration replaced whole (its tables rebuilt and swapped in).
    Config { module: ModuleId, spec: NfSpec },
    /// Routes of an LPM added (or replaced, by prefix) and deleted.
    Routes { module: ModuleId, add: Vec<(String, u16)>, delete: Vec<String> },
    /// A worker taken down or brought back.
    Down { worker: usize, down: bool },
}

/// What a change needs besides the boundary.
pub struct Context<'a> {
    /// The pipeline served.
    pub pipeline: &'a Pipeline,
    /// Its run plan (the controllers' parameters).
    pub plan: &'a RunPlan,
    /// The scheduling model it runs under.
    pub schedule: Schedule,
    /// The status the API shows, kept in step with each change.
    pub status: &'a mut Status,
}

impl Change {
    /// Makes the change at `at`, or refuses it with nothing changed;
    /// returns the line that says what changed.
    pub fn make(self, at: &mut Boundary<'_>, cx: Context<'_>) -> Result<String, ApiError> {
        let refused = |e: sluice_core::Error| ApiError::conflict(e.to_string());
        let status = cx.status;
        let module_name = |m: ModuleId| status.model.modules[m].name.clone();
        match self {
            Change::Slo { flow, slo_ns } => {
                let before = at.model().flows[flow].slo_ns;
                at.set_slo(flow, slo_ns).map_err(refused)?;
                let show = |s: Option<u64>| s.map_or("none".to_owned(), |ns| format!("{} µs", us(ns)));
                Ok(format!("flow '{}' SLO {} -> {}", at.model().flows[flow].name, show(before), show(slo_ns)))
            }
            Change::Controller { name } => {
                let controller = sluice_pipeline::controller(&name, cx.plan).map_err(|e| ApiError::bad(format!("name: {e}")))?;
                if controller.schedule(at.model(), cx.pipeline.schedule()) != cx.schedule {
                    return Err(ApiError::conflict(format!("controller '{name}' runs the pipeline under another scheduling model than the one it runs under: start it with '{name}' instead")));
                }
                let before = at.controller().to_owned();
                at.switch(controller).map_err(refused)?;
                status.controller.clone_from(&name);
                Ok(format!("controller {before} -> {name}"))
            }
            Change::Trigger { module, trigger: Some(t) } => {
                at.pin(module, t).map_err(refused)?;
                status.pins = at.pins().to_vec();
                Ok(format!("module '{}' trigger pinned at {t} pkt", module_name(module)))
            }
            Change::Trigger { module, trigger: None } => {
                at.unpin(module);
                status.pins = at.pins().to_vec();
                Ok(format!("module '{}' trigger back to the controller", module_name(module)))
            }
            Change::Move { module, worker } => {
                let from = at.model().worker_of[module];
                at.apply(&Actions { moves: vec![(module, worker)], ..Actions::default() }).map_err(refused)?;
                Ok(format!("module '{}' moved from worker {from} to worker {worker}", module_name(module)))
            }
            Change::Weight { module, weight } => {
                at.apply(&Actions { weights: vec![(module, weight)], ..Actions::default() }).map_err(refused)?;
                status.weights[module] = weight;
                Ok(format!("module '{}' weight {weight}", module_name(module)))
            }
            Change::Rate { module, stream, rate_pps } => {
                at.apply(&Actions { rates: vec![(module, stream, rate_pps)], ..Actions::default() }).map_err(refused)?;
                Ok(format!("module '{}' stream {stream} rate {rate_pps} pkt/s", module_name(module)))
            }
            Change::Config { module, spec } => {
                let line = format!("module '{}' configuration replaced", module_name(module));
                replace(at, status, module, spec)?;
                Ok(line)
            }
            Change::Routes { module, add, delete } => {
                let Some(NfSpec::Lpm(running)) = &status.configs[module] else { unreachable!("checked when parsed") };
                let routes = edit_routes(&running.routes, &add, &delete)?;
                let line = format!("module '{}' routes: {} added or replaced, {} deleted ({} in all)", module_name(module), add.len(), delete.len(), routes.len());
                replace(at, status, module, NfSpec::Lpm(sluice_nf::lpm::LpmSpec { routes }))?;
                Ok(line)
            }
            Change::Down { worker, down } => {
                at.apply(&Actions { halted: vec![(worker, down)], ..Actions::default() }).map_err(refused)?;
                status.down[worker] = down;
                Ok(format!("worker {worker} {}", if down { "taken down" } else { "brought back" }))
            }
        }
    }
}

/// Builds module `m`'s NF from `spec` here, off the data path, and swaps
/// it in; the old one is freed here too.
fn replace(at: &mut Boundary<'_>, status: &mut Status, m: ModuleId, spec: NfSpec) -> Result<(), ApiError> {
    let declared = at.model().modules[m].outgates;
    if spec.outgates() != declared {
        return Err(ApiError::bad(format!("the configuration has {} outgates; module '{}' is wired with {declared}", spec.outgates(), at.model().modules[m].name)));
    }
    let nf = spec.build().map_err(ApiError::bad)?;
    let old = at.backend().replace_function(m, nf).map_err(|e| ApiError::conflict(e.to_string()))?;
    drop(old);
    status.configs[m] = Some(spec);
    Ok(())
}

/// `routes` with the routes of `delete` removed (each must exist) and
/// those of `add` added, or replacing the route of the same prefix
/// however written ("10.0.0.1/8" is "10.0.0.0/8").
fn edit_routes(routes: &[(String, u16)], add: &[(String, u16)], delete: &[String]) -> Result<Vec<(String, u16)>, ApiError> {
    let mut routes: Vec<Option<(String, u16)>> = routes.iter().cloned().map(Some).collect();
    let mut index: HashMap<IpPrefix, usize> = HashMap::with_capacity(routes.len() + add.len());
    for (i, r) in routes.iter().enumerate() {
        let (prefix, _) = r.as_ref().expect("all present");
        index.insert(IpPrefix::parse(prefix).map_err(ApiError::conflict)?, i);
    }
    for (i, prefix) in delete.iter().enumerate() {
        let parsed = IpPrefix::parse(prefix).map_err(|e| ApiError::bad(format!("delete[{i}]: {e}")))?;
        let found = index.remove(&parsed).ok_or_else(|| ApiError::bad(format!("delete[{i}]: no route '{prefix}' to delete")))?;
        routes[found] = None;
    }
    for (i, (prefix, gate)) in add.iter().enumerate() {
        let parsed = IpPrefix::parse(prefix).map_err(|e| ApiError::bad(format!("add[{i}]: {e}")))?;
        match index.get(&parsed) {
            Some(&at) => routes[at] = Some((prefix.clone(), *gate)),
            None => {
                index.insert(parsed, routes.len());
                routes.push(Some((prefix.clone(), *gate)));
            }
        }
    }
    Ok(routes.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(r: &[(&str, u16)]) -> Vec<(String, u16)> {
        r.iter().map(|&(p, g)| (p.to_owned(), g)).collect()
    }

    #[test]
    fn routes_are_added_replaced_by_prefix_and_deleted() {
        let running = routes(&[("10.0.0.0/8", 0), ("2001:db8::/32", 1), ("20.0.1.0/24", 1)]);
        let edited = edit_routes(&running, &routes(&[("10.1.2.3/8", 2), ("30.0.0.0/8", 0)]), &["2001:db8:0::/32".into()]).unwrap();
        assert_eq!(edited, routes(&[("10.1.2.3/8", 2), ("20.0.1.0/24", 1), ("30.0.0.0/8", 0)]));
    }

    #[test]
    fn a_missing_or_malformed_route_names_its_place() {
        let running = routes(&[("10.0.0.0/8", 0)]);
        assert_eq!(edit_routes(&running, &[], &["10.0.0.0/8".into(), "10.0.0.0/8".into()]).unwrap_err().message, "delete[1]: no route '10.0.0.0/8' to delete");
        assert!(edit_routes(&running, &routes(&[("10.0.0.0/33", 0)]), &[]).unwrap_err().message.starts_with("add[0]: "));
    }
}
