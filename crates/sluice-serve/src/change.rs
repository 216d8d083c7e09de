//! The changes the control API makes, and how each is made at a period
//! boundary: checked whole against the pipeline as it runs, then made, or
//! refused with nothing changed.

use std::sync::Arc;

use sluice_control::{Boundary, RunPlan};
use sluice_core::wire::IpPrefix;
use sluice_core::{Actions, EgressChange, ModuleId, PollPolicy, Schedule};
use sluice_nf::lpm::LiveLpm;
use sluice_nf::NfSpec;
use sluice_pipeline::spec::{FlowRuleSpec, PollSpec};
use sluice_pipeline::Pipeline;
use sluice_traffic::{FlowRule, FlowRules};

use crate::error::ApiError;
use crate::routes::{Next, RouteEdit, RouteTable};
use crate::status::{us, Status};
use crate::watch::WatchChange;

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
    /// An NF's configuration replaced whole (its tables rebuilt and swapped
    /// in): the fields of its `kind` as the request gave them, read when it is built.
    Config { module: ModuleId, kind: &'static str, fields: serde_json::Value },
    /// Routes of an LPM added (or replaced, by prefix) and deleted.
    Routes { module: ModuleId, edit: RouteEdit },
    /// The scheduled egress's class weights, link rate or parents' rates.
    Egress(EgressChange),
    /// A worker taken down or brought back.
    Down { worker: usize, down: bool },
    /// A worker's poll policy, as the description writes it and as it runs.
    Poll { worker: usize, spec: PollSpec, policy: PollPolicy },
    /// A flow added along `path` (modules) under `slo_ns`, with the rules
    /// (source module, rule; the rule's flow id is the new flow's) that
    /// sort packets into it.
    AddFlow { name: String, path: Vec<ModuleId>, slo_ns: Option<u64>, rules: Vec<(ModuleId, FlowRule, FlowRuleSpec)> },
    /// A flow removed: its rules first, so that no packet becomes its any more.
    RemoveFlow { flow: usize },
    /// A static neighbour of an interface set (a MAC) or any entry of an address removed (`None`).
    Neighbor { interface: u16, address: u128, mac: Option<sluice_core::wire::ethernet::Mac> },
    /// Changes made at one boundary, all or none (see `transaction.rs`).
    Transaction(Vec<Change>),
    /// A trace or capture attached or ended, or a trace's records read (see `watch.rs`).
    Watch(WatchChange),
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
            Change::Neighbor { interface, address, mac } => {
                let iface = status.interfaces.get(interface).expect("checked when parsed");
                let shown = crate::status::show_address(address);
                let writer = iface.neighbors.write();
                match mac {
                    Some(mac) if writer.set_static(address, mac) => Ok(format!("interface '{}' neighbour {shown} at {} (static)", iface.name, crate::status::show_mac(mac))),
                    Some(_) => Err(ApiError::conflict(format!("interface '{}': no room for {shown} among the static neighbours near it", iface.name))),
                    None if writer.remove(address) => Ok(format!("interface '{}' neighbour {shown} removed", iface.name)),
                    None => Err(ApiError::not_found(format!("interface '{}' has no neighbour {shown}", iface.name))),
                }
            }
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
                status.served.rates.insert((module, stream), rate_pps);
                Ok(format!("module '{}' stream {stream} rate {rate_pps} pkt/s", module_name(module)))
            }
            Change::Config { .. } | Change::Routes { .. } => unreachable!("built off the lock (see `Change::to_build`), then swapped in"),
            Change::Transaction(_) => unreachable!("made change by change by the control thread (see `transaction.rs`)"),
            Change::Watch(_) => unreachable!("made by the control thread, which logs it (see `Steer::make`)"),
            Change::Egress(egress) => {
                let actions = Actions { egress, ..Actions::default() };
                at.apply(&actions).map_err(refused)?;
                let plan = status.egress.as_mut().expect("checked when parsed");
                let mut said = Vec::new();
                for &(class, weight) in &actions.egress.weights {
                    plan.config.weights[class] = weight;
                    said.push(format!("class '{}' weight {weight}", plan.class_names[class]));
                }
                if let Some(rate) = actions.egress.link_bits_per_s {
                    plan.config.link.bits_per_s = rate;
                    said.push(format!("link {rate} bit/s"));
                }
                for &(p, rate, ceil) in &actions.egress.parents {
                    plan.config.parents[p] = sluice_pipeline::egress_plan::Shape { rate_bits_per_s: rate, ceil_bits_per_s: ceil };
                    said.push(format!("parent '{}' rate {rate} ceiling {ceil} bit/s", plan.parent_names[p]));
                }
                for &(class, c) in &actions.egress.codel {
                    plan.config.aqm[class].set_codel(c);
                    said.push(format!("class '{}' codel target {} µs interval {} µs ecn {}", plan.class_names[class], c.target_us, c.interval_us, c.ecn));
                }
                Ok(format!("egress {}", said.join(", ")))
            }
            Change::Poll { worker, spec, policy } => {
                at.backend().set_poll(worker, policy).map_err(refused)?;
                let line = format!("worker {worker} poll policy {}", serde_json::to_string(&spec.policy).unwrap_or_default().trim_matches('"'));
                status.polls[worker] = spec;
                Ok(line)
            }
            Change::Down { worker, down } => {
                at.apply(&Actions { halted: vec![(worker, down)], ..Actions::default() }).map_err(refused)?;
                status.down[worker] = down;
                Ok(format!("worker {worker} {}", if down { "taken down" } else { "brought back" }))
            }
            Change::AddFlow { name, path, slo_ns, rules } => {
                let written: Vec<(ModuleId, FlowRuleSpec)> = rules.iter().map(|(s, _, spec)| (*s, spec.clone())).collect();
                // Every source's rules with the new flow's, made before anything changes: a rule
                // that does not fit refuses the change whole, and what follows cannot fail.
                at.model().with_flow_added(&name, &path, slo_ns).map_err(refused)?;
                let flow = at.model().flows.len() as u16;
                let mut sources: Vec<ModuleId> = rules.iter().map(|&(s, _, _)| s).collect();
                sources.sort_unstable();
                sources.dedup();
                let mut edited = Vec::with_capacity(sources.len());
                for s in sources {
                    let theirs: Vec<FlowRule> = rules.iter().filter(|&&(r, _, _)| r == s).map(|&(_, rule, _)| FlowRule { flow, ..rule }).collect();
                    let mut with = None;
                    edit_rules(at, s, |current| current.with(&theirs).map(|w| with = Some(w)).map(|()| None)).map_err(refused)?;
                    edited.push((s, with.expect("made when the edit succeeded")));
                }
                at.add_flow(&name, &path, slo_ns).map_err(refused)?;
                for (s, with) in edited {
                    let mut with = Some(with);
                    edit_rules(at, s, |_| Ok(with.take())).map_err(refused)?;
                }
                restart_controller(at, cx.plan)?;
                status.served.rules.extend(written);
                let slo = slo_ns.map_or("no SLO".to_owned(), |ns| format!("SLO {} µs", us(ns)));
                Ok(format!("flow '{name}' added along {}, {slo}, {} rule(s)", path.iter().map(|&m| module_name(m)).collect::<Vec<_>>().join(" > "), rules.len()))
            }
            Change::RemoveFlow { flow } => {
                at.model().with_flow_removed(flow).map_err(refused)?;
                let sources: Vec<ModuleId> = (0..at.model().modules.len()).filter(|&m| status.sorts_by_rules(m)).collect();
                let mut removed_rules = 0;
                for m in sources {
                    edit_rules(at, m, |current| {
                        let kept = current.without_flow(flow as u16);
                        removed_rules += current.rules().len() - kept.as_ref().map_or(current.rules().len(), |k| k.rules().len());
                        Ok(kept)
                    })
                    .map_err(refused)?;
                }
                let name = at.model().flows[flow].name.clone();
                at.remove_flow(flow).map_err(refused)?;
                restart_controller(at, cx.plan)?;
                Ok(format!("flow '{name}' removed ({removed_rules} rule(s)); its packets in flight are counted where they end"))
            }
        }
    }
}

/// Replaces source `m`'s flow rules by what `edit` makes of them (`None`: they stay).
fn edit_rules(at: &mut Boundary<'_>, m: ModuleId, mut edit: impl FnMut(&FlowRules) -> Result<Option<FlowRules>, String>) -> sluice_core::Result<()> {
    at.backend().edit_source(m, &mut |source| {
        let current = source.flow_rules().and_then(|r| r.downcast_ref::<FlowRules>()).ok_or("it sorts no packets into flows by rules")?;
        match edit(current)? {
            Some(edited) => source.set_flow_rules(Box::new(edited)),
            None => Ok(()),
        }
    })
}

/// Starts the controller in force afresh: its view of the flows is the
/// model's, which changed.
fn restart_controller(at: &mut Boundary<'_>, plan: &RunPlan) -> Result<(), ApiError> {
    let controller = sluice_pipeline::controller(at.controller(), plan).map_err(|e| ApiError::conflict(e.to_string()))?;
    at.switch(controller).map_err(|e| ApiError::conflict(e.to_string()))
}

/// What a change that replaces an NF (a configuration, a rebuild of an
/// LPM's routes) builds from, read from the status under its lock; the
/// reading of the configuration and the build, which may take seconds for
/// a large table, are made with the lock free (see [`ToBuild::build`]), so
/// that no read and no other change waits for them.
pub struct ToBuild<'a> {
    module: ModuleId,
    source: Source<'a>,
    /// The module's name and its outgates, which the configuration must keep.
    name: String,
    outgates: usize,
    /// The status's route edits when it was read.
    route_edits: u64,
    interfaces: Arc<sluice_nf::Interfaces>,
}

/// Where a new configuration comes from.
enum Source<'a> {
    /// The fields of an NF of this kind, as the request gave them.
    Fields(&'static str, &'a serde_json::Value),
    /// An LPM's routes in force, edited; its other settings as they are.
    Routes { table: Arc<RouteTable>, edit: &'a RouteEdit, settings: sluice_nf::lpm::LpmSpec },
}

/// An NF built for a change, to be swapped in (see [`Built::swap`]).
pub struct Built {
    module: ModuleId,
    spec: NfSpec,
    nf: Box<dyn sluice_core::NetworkFunction>,
    /// The routes in force once it is in (an LPM's).
    routes: Option<RouteTable>,
    route_edits: u64,
    /// Whether it edits the routes it was read with (which an edit made
    /// meanwhile would be lost from), rather than replacing them whole.
    edits_routes: bool,
    line: String,
}

impl Change {
    /// What this change builds from, if it replaces an NF, read from
    /// `status` (its lock held: nothing large is copied).
    pub fn to_build(&self, status: &Status) -> Option<ToBuild<'_>> {
        let (module, source) = match self {
            Change::Config { module, kind, fields } => (*module, Source::Fields(kind, fields)),
            Change::Routes { module, edit } => {
                let Some(table) = &status.routes[*module] else { unreachable!("checked when parsed") };
                (*module, Source::Routes { table: table.clone(), edit, settings: status.lpm_with(*module, &RouteTable::default()) })
            }
            _ => return None,
        };
        let (name, outgates) = (status.model.modules[module].name.clone(), status.model.modules[module].outgates);
        Some(ToBuild { module, source, name, outgates, route_edits: status.route_edits, interfaces: status.interfaces.clone() })
    }
}

impl ToBuild<'_> {
    /// Reads the configuration (the routes edited) and builds the NF, off
    /// the data path and with no lock held; refused here, with nothing
    /// changed, if it cannot be made.
    pub fn build(self) -> Result<Built, ApiError> {
        let (spec, edited, line) = match self.source {
            Source::Fields(kind, fields) => (NfSpec::from_fields(kind, fields).map_err(ApiError::bad)?, None, format!("module '{}' configuration replaced", self.name)),
            Source::Routes { table, edit, settings } => {
                table.check(edit)?;
                let mut edited = RouteTable::clone(&table);
                edited.apply(edit);
                let line = routes_line(&self.name, edit, edited.len());
                (NfSpec::Lpm(sluice_nf::lpm::LpmSpec { routes: edited.list(), multipath: edited.multipath_list(), ..settings }), Some(edited), line)
            }
        };
        if spec.outgates() != self.outgates {
            return Err(ApiError::bad(format!("the configuration has {} outgates; module '{}' is wired with {}", spec.outgates(), self.name, self.outgates)));
        }
        let nf = spec.build_on(&self.interfaces).map_err(ApiError::bad)?;
        let edits_routes = edited.is_some();
        // A whole new configuration of an LPM brings routes of its own.
        let routes = edited.or_else(|| if let NfSpec::Lpm(lpm) = &spec { Some(RouteTable::of(lpm)) } else { None });
        Ok(Built { module: self.module, spec, nf, routes, route_edits: self.route_edits, edits_routes, line })
    }
}

impl Built {
    /// Swaps the NF in at `at`, the status kept in step; returns the line
    /// that says what changed and the NF it replaced, with what the status
    /// said of it (freed where the caller drops it). `None`: routes were
    /// edited while it was built, and it edits routes; nothing was
    /// changed, and it is to be built again from the status as it is now.
    pub fn swap(self, at: &mut Boundary<'_>, status: &mut Status) -> Option<Result<(String, Restore), ApiError>> {
        if self.edits_routes && status.route_edits != self.route_edits {
            return None;
        }
        let m = self.module;
        let old = match at.backend().replace_function(m, self.nf) {
            Ok(old) => old,
            Err(e) => return Some(Err(ApiError::conflict(e.to_string()))),
        };
        let restore = Restore { module: m, nf: old, config: status.configs[m].clone(), routes: status.routes[m].clone() };
        status.live[m] = at.backend().live(m);
        if let Some(routes) = self.routes {
            status.routes[m] = Some(Arc::new(routes));
            status.route_edits += 1;
        }
        status.configs[m] = Some(self.spec);
        Some(Ok((self.line, restore)))
    }
}

/// An NF a change replaced, with what the status said of it.
pub struct Restore {
    /// The module.
    pub module: usize,
    /// The NF that ran there.
    pub nf: Box<dyn sluice_core::NetworkFunction>,
    /// Its configuration and routes as the status had them.
    pub config: Option<NfSpec>,
    pub routes: Option<Arc<RouteTable>>,
}

impl Restore {
    /// Swaps the NF back in at `at` and the status with it.
    pub fn make(self, at: &mut Boundary<'_>, status: &mut Status) -> Result<(), ApiError> {
        let replaced = at.backend().replace_function(self.module, self.nf).map_err(|e| ApiError::conflict(e.to_string()))?;
        drop(replaced);
        status.live[self.module] = at.backend().live(self.module);
        status.configs[self.module] = self.config;
        status.routes[self.module] = self.routes;
        status.route_edits += 1;
        Ok(())
    }
}

/// The most routes a change makes in place, on the running table (more are
/// rebuilt and swapped in whole, so that a packet meets either all of them or none).
const IN_PLACE_ROUTES: usize = 64;

/// Makes a small change of one family's routes at once, in place on the
/// running table (see `sluice_nf::lpm4` and `lpm6`), without waiting for a
/// period boundary; returns the line that says what changed. `None`: the
/// change is not one for this path (both families, many routes, a family
/// the LPM has no routes of, or no room in its table), and the control
/// thread makes it by a rebuild.
pub fn routes_in_place(status: &mut Status, module: ModuleId, delta: &RouteEdit) -> Option<Result<String, ApiError>> {
    if status.stopping {
        return Some(Err(ApiError { status: 503, message: "the pipeline is stopping: no changes are made".into() }));
    }
    if delta.len() > IN_PLACE_ROUTES {
        return None;
    }
    let live = status.live[module].clone()?.downcast::<LiveLpm>().ok()?;
    let table = status.routes[module].as_ref()?;
    if let Err(e) = table.check(delta) {
        return Some(Err(e));
    }
    if table.is_multipath(delta) {
        return None;
    }
    let outgates = status.model.modules[module].outgates;
    let gate = |next: &Next| if let Next::Gate(gate) = *next { gate } else { unreachable!("no multipath route: checked above") };
    if let Some((i, gate)) = delta.add.iter().map(|r| gate(&r.2)).enumerate().find(|&(_, g)| usize::from(g) >= outgates) {
        return Some(Err(ApiError::bad(format!("add[{i}]: gate {gate}: module '{}' has {outgates} outgates", status.model.modules[module].name))));
    }
    // Each family's share of the change.
    let (mut add4, mut add6, mut delete4, mut delete6) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &(p, _) in &delta.delete {
        match p {
            IpPrefix::V4(net, len) => delete4.push((net, len)),
            IpPrefix::V6(net, len) => delete6.push((net, len)),
        }
    }
    for (p, _, next) in &delta.add {
        let gate = gate(next);
        match *p {
            IpPrefix::V4(net, len) => add4.push((net, len, gate)),
            IpPrefix::V6(net, len) => add6.push((net, len, gate)),
        }
    }
    // One family's (no room for a group: rebuilt by the control thread instead).
    match (add6.is_empty() && delete6.is_empty(), add4.is_empty() && delete4.is_empty()) {
        (true, _) => live.v4.as_ref()?.apply(&add4, &delete4).ok()?,
        (false, true) => live.v6.as_ref()?.apply(&add6, &delete6).ok()?,
        (false, false) => return None,
    }
    // A copy, where a build off the lock still reads the table.
    let table = Arc::make_mut(status.routes[module].as_mut().expect("checked above"));
    table.apply(delta);
    status.route_edits += 1;
    Some(Ok(routes_line(&status.model.modules[module].name, delta, table.len())))
}

fn routes_line(module: &str, delta: &RouteEdit, total: usize) -> String {
    format!("module '{module}' routes: {} added or replaced, {} deleted ({total} in all)", delta.add.len(), delta.delete.len())
}

