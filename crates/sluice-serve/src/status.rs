//! What a served pipeline looks like now: the control thread writes it
//! once per period and after each change; the API's reads and the metrics
//! are answered from it, never from the data path.

use std::collections::VecDeque;

use serde_json::{json, Value};
use sluice_control::PeriodRecord;
use sluice_core::{FlowTotals, LiveHandle, Model, ModuleCounters, ModuleId, Role, Telemetry, Totals};
use sluice_nf::NfSpec;
use sluice_pipeline::spec::{KindSpec, PollSpec, SourceSpec};
use sluice_pipeline::egress_plan::EgressPlan;
use sluice_pipeline::Pipeline;

use crate::routes::RouteTable;

/// Change lines kept for `GET /v1/changes`.
const KEPT_CHANGES: usize = 100;

/// What the status keeps of the description it started from, to write
/// the changes into.
#[derive(Clone, Debug)]
pub struct Served {
    /// The description served from, its LPMs' routes left out (see `Status::config`).
    pub spec: sluice_pipeline::spec::PipelineSpec,
    /// Each module's worker at the start.
    pub placed: Vec<usize>,
    /// Stream rates set since (source module, stream) → pkt/s.
    pub rates: std::collections::BTreeMap<(ModuleId, usize), f64>,
    /// Rules added with flows since (source module, rule).
    pub rules: Vec<(ModuleId, sluice_pipeline::spec::FlowRuleSpec)>,
}

/// `spec` without its LPMs' routes, which `Status::routes` keeps (a
/// million of them are tens of MB a copy).
fn without_routes(spec: &sluice_pipeline::spec::PipelineSpec) -> sluice_pipeline::spec::PipelineSpec {
    let mut spec = spec.clone();
    for module in &mut spec.modules {
        if let KindSpec::Nf(NfSpec::Lpm(lpm)) = &mut module.kind {
            (lpm.routes, lpm.multipath) = (Vec::new(), Vec::new());
        }
    }
    spec
}

/// The served pipeline's state as the API shows it.
pub struct Status {
    /// The model in force: SLOs and placement as changed.
    pub model: Model,
    /// Per module, its kind as the API names it ("lpm", "source", "sink", …).
    pub kinds: Vec<String>,
    /// Per module, the NF configuration in force (NFs only; an LPM's
    /// routes are in `routes`).
    pub configs: Vec<Option<NfSpec>>,
    /// Per LPM module, its routes in force.
    pub routes: Vec<Option<std::sync::Arc<RouteTable>>>,
    /// Edits of any module's routes so far: an NF built from a table
    /// off the lock is swapped in only if none came in the meantime.
    pub route_edits: u64,
    /// Per module, the names of its outgates (see `ModuleSpec::gates`).
    pub gates: Vec<Vec<String>>,
    /// The interfaces the engine runs with (their neighbour tables live);
    /// none until it starts. NFs rebuilt by a change are built on them.
    pub interfaces: std::sync::Arc<sluice_nf::Interfaces>,
    /// Per module, its NF's live handle (see `NetworkFunction::live`).
    pub live: Vec<Option<LiveHandle>>,
    /// Lines of changes made between boundaries, for the next period's record.
    pub unrecorded: Vec<String>,
    /// Per module, what its own counters count and the key they go under.
    pub own_counters: Vec<(&'static str, &'static [&'static str])>,
    /// Name of the controller in force.
    pub controller: String,
    /// Why the controller's last settings are a fallback, if they are.
    pub fallback: Option<String>,
    /// Periods whose settings were a fallback.
    pub fallbacks: u64,
    /// Triggers pinned by hand (module, pkt).
    pub pins: Vec<(ModuleId, u32)>,
    /// Per worker, whether it is down.
    pub down: Vec<bool>,
    /// Per worker, its poll policy.
    pub polls: Vec<PollSpec>,
    /// Per module, its weighted-fair weight.
    pub weights: Vec<u32>,
    /// The scheduled egress, if the pipeline has one: its classes' weights
    /// and its link's rate as changed.
    pub egress: Option<EgressPlan>,
    /// Periods run.
    pub periods: u64,
    /// Per flow, periods whose SLO statistic was over its SLO.
    pub periods_over: Vec<u64>,
    /// The last period's telemetry (none before the first period ends).
    pub last: Option<Telemetry>,
    /// Since the start: per flow, per module, and over the pipeline.
    pub flow_totals: Vec<FlowTotals>,
    pub module_totals: Vec<ModuleCounters>,
    pub totals: Totals,
    /// The most recent changes, one line each, oldest first.
    pub changes: VecDeque<String>,
    /// Whether the pipeline is draining to stop: changes are refused.
    pub stopping: bool,
    /// Per flow of the description, the synthetic source whose streams make
    /// its packets, if one does (such a flow cannot be removed: no rule
    /// sorts packets into it that could be taken away).
    pub streamed_by: Vec<Option<ModuleId>>,
    /// The description served from and what changes set that it writes (see `in_force.rs`).
    pub served: Served,
    /// What the trace attached follows, if one is (see `watch.rs`).
    pub trace: Option<String>,
    /// The run directory, where captures are written.
    pub run_dir: std::path::PathBuf,
    /// Told of every change applied (a state file's writer), if anyone listens.
    pub on_change: Option<std::sync::mpsc::SyncSender<()>>,
}

impl Status {
    /// The status of `pipeline` before it starts, under `controller`.
    pub fn new(pipeline: &Pipeline, controller: &str) -> Self {
        let model = pipeline.model().clone();
        let kinds = pipeline.spec().modules.iter().map(|m| kind_name(&m.kind).to_owned()).collect();
        let configs = pipeline.spec().modules.iter().map(|m| if let KindSpec::Nf(nf) = &m.kind { Some(nf.clone()) } else { None }).collect();
        let own_counters = (0..model.modules.len()).map(|m| pipeline.own_counters(m)).collect();
        let routes = pipeline.spec().modules.iter().map(|m| if let KindSpec::Nf(NfSpec::Lpm(lpm)) = &m.kind { Some(std::sync::Arc::new(RouteTable::of(lpm))) } else { None }).collect();
        Self {
            kinds,
            configs,
            routes,
            route_edits: 0,
            gates: pipeline.spec().modules.iter().map(|m| m.gates.clone()).collect(),
            interfaces: sluice_nf::Interfaces::none(),
            live: vec![None; model.modules.len()],
            unrecorded: Vec::new(),
            own_counters,
            controller: controller.to_owned(),
            fallback: None,
            fallbacks: 0,
            pins: Vec::new(),
            down: vec![false; model.workers()],
            polls: (0..model.workers()).map(|w| pipeline.spec().worker_poll.get(&w).unwrap_or(&pipeline.spec().poll).clone()).collect(),
            weights: vec![1; model.modules.len()],
            egress: pipeline.egress().cloned(),
            periods: 0,
            periods_over: vec![0; model.flows.len()],
            last: None,
            flow_totals: vec![FlowTotals::default(); model.flows.len()],
            module_totals: vec![ModuleCounters::default(); model.modules.len()],
            totals: Totals::default(),
            changes: VecDeque::new(),
            stopping: false,
            streamed_by: streamed_by(pipeline),
            served: Served { spec: without_routes(pipeline.spec()), placed: model.worker_of.clone(), rates: Default::default(), rules: Vec::new() },
            trace: None,
            run_dir: std::path::PathBuf::new(),
            on_change: None,
            model,
        }
    }

    /// Takes in a finished period.
    pub fn record(&mut self, p: &PeriodRecord, statistic: sluice_control::SloStatistic) {
        let t = &p.telemetry;
        self.periods += 1;
        // Flows added since the last period start at none over.
        if self.periods_over.len() < t.flows.len() {
            self.periods_over.resize(t.flows.len(), 0);
        }
        for ((over, f), slo) in self.periods_over.iter_mut().zip(&t.flows).zip(&p.slo_ns) {
            *over += u64::from(statistic.over(f, *slo));
        }
        self.fallback.clone_from(&p.fallback);
        self.fallbacks += u64::from(p.fallback.is_some());
        self.totals = t.totals;
        // One copy of the period: its running totals move into their own fields.
        let mut last = t.clone();
        self.flow_totals = std::mem::take(&mut last.flow_totals);
        if !last.module_totals.is_empty() {
            self.module_totals = std::mem::take(&mut last.module_totals);
        }
        self.last = Some(last);
    }

    /// Keeps the line of a change applied, and tells whoever listens for changes.
    pub fn log(&mut self, line: String) {
        if self.changes.len() == KEPT_CHANGES {
            self.changes.pop_front();
        }
        self.changes.push_back(line);
        if let Some(listener) = &self.on_change {
            // Full: a change is already waiting to be written, and the write takes this one too.
            let _ = listener.try_send(());
        }
    }

    /// Each interface: its addresses, MAC, MTU, the counters of its
    /// neighbour table and its entries, their states as of the end of the
    /// last period.
    pub fn neighbors_json(&self) -> Value {
        let now_ns = self.last.as_ref().map_or(0, |t| (t.t_s * 1e9) as u64);
        let interfaces: Vec<Value> = self
            .interfaces
            .all()
            .iter()
            .map(|i| {
                let c = &i.neighbors.counters;
                let count = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
                let mut entries: Vec<Value> = i
                    .neighbors
                    .entries(now_ns)
                    .into_iter()
                    .map(|e| json!({"address": show_address(e.address), "mac": show_mac(e.mac), "state": e.state.name(), "probes": e.probes}))
                    .collect();
                entries.sort_by(|a, b| a["address"].as_str().cmp(&b["address"].as_str()));
                let addresses: Vec<String> = i.v4.iter().map(|&(a, l)| format!("{}/{l}", std::net::Ipv4Addr::from(a))).chain(i.v6.iter().map(|&(a, l)| format!("{}/{l}", std::net::Ipv6Addr::from(a)))).collect();
                json!({
                    "interface": i.name, "mac": show_mac(i.mac), "mtu": i.mtu, "addresses": addresses, "entries": entries,
                    "counters": {"requests": count(&c.requests), "resolved": count(&c.resolved), "learned": count(&c.learned), "failed": count(&c.failed),
                                 "hold_dropped": count(&c.hold_dropped), "evicted": count(&c.evicted)},
                })
            })
            .collect();
        json!(interfaces)
    }

    /// Module `m`'s NF configuration in force (NFs only).
    pub fn config(&self, m: ModuleId) -> Option<NfSpec> {
        match &self.routes[m] {
            Some(routes) => Some(NfSpec::Lpm(self.lpm_with(m, routes))),
            None => self.configs[m].clone(),
        }
    }

    /// LPM module `m`'s configuration with the routes of `table` instead
    /// of its own (its other settings kept).
    pub fn lpm_with(&self, m: ModuleId, table: &RouteTable) -> sluice_nf::lpm::LpmSpec {
        let (hash_seed, unreachable, hash_flow_label) = match &self.configs[m] {
            Some(NfSpec::Lpm(sluice_nf::lpm::LpmSpec { routes: _, multipath: _, unreachable, hash_seed, hash_flow_label })) => (*hash_seed, *unreachable, *hash_flow_label),
            _ => (0, false, false),
        };
        sluice_nf::lpm::LpmSpec { routes: table.list(), multipath: table.multipath_list(), hash_seed, unreachable, hash_flow_label }
    }

    /// The module called `name`.
    pub fn module(&self, name: &str) -> Option<ModuleId> {
        self.model.module_id(name)
    }

    /// Whether module `m` is a source that sorts packets into flows by rules (a port's, a capture's).
    pub fn sorts_by_rules(&self, m: ModuleId) -> bool {
        matches!(self.kinds[m].as_str(), "port_source" | "pcap_source")
    }

    /// The flow called `name` (a removed one too).
    pub fn flow(&self, name: &str) -> Option<usize> {
        self.model.flows.iter().position(|f| f.name == name)
    }

    /// `GET /v1/flows`.
    pub fn flows_json(&self) -> Value {
        let model = &self.model;
        let flows: Vec<Value> = model
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let last = self.last.as_ref().and_then(|t| t.flows.get(i)).map(|ft| {
                    json!({"rate_pps": ft.rate_pps, "p50_us": us(ft.p50_ns), "p95_us": us(ft.p95_ns), "p99_us": us(ft.p99_ns), "max_us": us(ft.max_ns),
                           "generated": ft.generated, "delivered": ft.delivered, "dropped": ft.dropped,
                           "timed_one_in": ft.sample.one_in.max(1), "quantile_error_pct": ft.sample.error_pct()})
                });
                let totals = self.flow_totals.get(i).copied().unwrap_or_default();
                json!({
                    "name": f.name, "path": f.path.iter().map(|&m| &model.modules[m].name).collect::<Vec<_>>(),
                    "slo_us": f.slo_ns.map(us), "removed": f.removed, "periods_over": self.periods_over.get(i).copied().unwrap_or(0), "last_period": last,
                    "generated": totals.generated, "delivered": totals.delivered, "dropped": totals.dropped,
                })
            })
            .collect();
        json!(flows)
    }

    /// `GET /v1/modules`.
    pub fn modules_json(&self) -> Value {
        let modules: Vec<Value> = self
            .model
            .modules
            .iter()
            .enumerate()
            .map(|(m, d)| {
                let last = self.last.as_ref().map(|t| {
                    let mt = &t.modules[m];
                    json!({"trigger": mt.trigger, "mean_batch": mt.b, "runs_per_s": mt.x, "pkts_per_s": mt.r, "dropped": mt.dropped, "held": mt.held})
                });
                let c = &self.module_totals[m];
                let mut v = json!({
                    "name": d.name, "kind": self.kinds[m], "role": role_name(d.role), "worker": self.model.worker_of[m],
                    "controlled": d.controlled, "pinned_trigger": self.pins.iter().find(|(p, _)| *p == m).map(|(_, t)| t),
                    "weight": self.weights[m], "last_period": last,
                    "packets": c.arrived_pkts, "batches": c.runs, "run_packets": c.run_pkts, "dropped": c.dropped + c.queue_dropped + c.down_dropped + c.egress_dropped,
                    "drops": sluice_core::DropReason::counted(&c.nf_drops)
                        .chain(c.other_drops().into_iter().filter(|&(_, n)| n > 0))
                        .collect::<std::collections::BTreeMap<_, _>>(),
                });
                let (key, names) = self.own_counters[m];
                if !names.is_empty() {
                    v[key] = names.iter().zip(&c.nf).map(|(&n, &x)| (n.to_owned(), json!(x))).collect::<serde_json::Map<_, _>>().into();
                }
                v
            })
            .collect();
        json!(modules)
    }

    /// `GET /v1/workers`.
    pub fn workers_json(&self) -> Value {
        let workers: Vec<Value> = (0..self.model.workers())
            .map(|w| {
                let modules: Vec<&str> = self.model.modules.iter().zip(&self.model.worker_of).filter(|(_, &o)| o == w).map(|(m, _)| m.name.as_str()).collect();
                let last = self.last.as_ref().and_then(|t| t.workers.get(w)).map(|wt| json!({"cpu_share": wt.cpu_fraction, "busy_share": wt.busy_fraction, "polls": wt.polls, "empty_polls": wt.empty_polls, "waits": wt.waits}));
                json!({"worker": w, "modules": modules, "down": self.down[w], "poll": self.polls[w], "last_period": last})
            })
            .collect();
        json!(workers)
    }

    /// `GET /v1/egress` (`None`: the pipeline has no scheduled egress).
    pub fn egress_json(&self) -> Option<Value> {
        let plan = self.egress.as_ref()?;
        let c = &plan.config;
        let classes: Vec<Value> = (0..c.weights.len())
            .map(|k| {
                let flows: Vec<&str> = plan.flows_of(&self.model, k).map(|f| self.model.flows[f].name.as_str()).collect();
                let management = c.aqm.get(k).copied().unwrap_or_default();
                json!({"name": plan.class_names[k], "weight": c.weights[k], "flows": flows, "queue_management": management.name(), "codel": management.codel()})
            })
            .collect();
        let parents: Vec<Value> = plan.parent_names.iter().zip(&c.parents).map(|(name, s)| json!({"name": name, "rate_bits_per_s": s.rate_bits_per_s, "ceil_bits_per_s": s.ceil_bits_per_s})).collect();
        Some(json!({"algorithm": c.algorithm.name(), "link_bits_per_s": c.link.bits_per_s, "queue_pkts": c.queue_pkts, "parents": parents, "classes": classes}))
    }

    /// The class of the scheduled egress called `name`.
    pub fn egress_class(&self, name: &str) -> Option<usize> {
        self.egress.as_ref()?.class_names.iter().position(|c| c == name)
    }

    /// `GET /v1/controller`.
    pub fn controller_json(&self) -> Value {
        json!({"name": self.controller, "fallback": self.fallback, "fallbacks": self.fallbacks, "periods": self.periods, "known": sluice_control::CONTROLLERS})
    }
}

/// Per flow of `pipeline`, the synthetic source whose streams make its packets, if one does.
fn streamed_by(pipeline: &Pipeline) -> Vec<Option<ModuleId>> {
    let model = pipeline.model();
    let mut by = vec![None; model.flows.len()];
    for m in &pipeline.spec().modules {
        if let KindSpec::Source(SourceSpec::Synthetic { streams, .. }) = &m.kind {
            for flow in streams.iter().filter_map(|s| s.flow.as_deref()) {
                if let Some(f) = model.flows.iter().position(|f| f.name == flow) {
                    by[f] = model.module_id(&m.name);
                }
            }
        }
    }
    by
}

/// How the API names a module's kind.
fn kind_name(kind: &KindSpec) -> &'static str {
    match kind {
        KindSpec::Source(SourceSpec::Port { .. }) => "port_source",
        KindSpec::Source(SourceSpec::Pcap { .. }) => "pcap_source",
        KindSpec::Source(_) => "source",
        KindSpec::Nf(nf) => nf.kind(),
        KindSpec::PcapTap { .. } => "pcap_tap",
        KindSpec::Sink { .. } => "sink",
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Source => "source",
        Role::Function => "function",
        Role::Sink => "sink",
    }
}

/// ns → µs.
pub fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// A neighbour table's address as people write it (an IPv4 one in its dotted form).
pub fn show_address(key: u128) -> String {
    match std::net::Ipv6Addr::from(key).to_ipv4_mapped() {
        Some(v4) => v4.to_string(),
        None => std::net::Ipv6Addr::from(key).to_string(),
    }
}

/// A MAC as people write it.
pub fn show_mac(mac: sluice_core::wire::ethernet::Mac) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}
