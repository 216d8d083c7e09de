//! The control API's requests: a method, a path and a JSON body read into
//! what they ask for, names resolved and bodies checked field by field,
//! before anything is changed. `docs/api/openapi.json` describes the same.

use serde::Deserialize;
use serde_json::Value;
use sluice_core::{EgressChange, ModuleId};

use crate::change::Change;
use crate::error::ApiError;
use crate::routes::RouteEdit;
use crate::status::Status;
use crate::watch::WatchChange;

/// The largest body most endpoints take (bytes).
pub const MAX_BODY: usize = 1 << 20;

/// The largest body of a route change or an NF's configuration (bytes):
/// a million routes in one request fit.
pub const MAX_BULK_BODY: usize = 64 << 20;

/// The largest body the endpoint `method` `target` takes (bytes).
pub fn body_limit(method: &str, target: &str) -> usize {
    match (method, split(target).as_slice()) {
        ("POST", ["v1", "modules", _, "routes"]) | ("PUT", ["v1", "modules", _, "config"]) | ("POST", ["v1", "transactions"]) => MAX_BULK_BODY,
        _ => MAX_BODY,
    }
}

/// A request target's path, split at '/' (its query left out).
fn split(target: &str) -> Vec<&str> {
    let path = target.split('?').next().unwrap_or(target);
    path.trim_matches('/').split('/').collect()
}

/// A request's body, decoded before the status is looked at (so that no
/// lock is held while a large one is read): its JSON, and a route
/// change's routes, prefixes parsed.
#[derive(Default)]
pub struct Body {
    /// `None`: no body.
    json: Option<Result<Value, String>>,
    routes: Option<Result<RouteEdit, ApiError>>,
}

impl Body {
    /// Decodes `text`, the body of `method` `target`.
    pub fn decode(method: &str, target: &str, text: &str) -> Self {
        let json = (!text.trim().is_empty()).then(|| serde_json::from_str(text).map_err(|e| format!("the body is not JSON: {e}")));
        let mut body = Self { json, routes: None };
        if matches!((method, split(target).as_slice()), ("POST", ["v1", "modules", _, "routes"])) {
            body.routes = Some(typed::<RoutesBody>(&mut body).and_then(|b| RouteEdit::parse(b.add, &b.delete)));
        }
        body
    }

    /// The JSON value, taken.
    fn value(&mut self) -> Result<Value, ApiError> {
        match self.json.take() {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(ApiError::bad(e)),
            None => Err(ApiError::bad("the body is not JSON: the request has none")),
        }
    }
}

/// What a request asks for.
#[derive(Debug)]
pub enum Request {
    /// A read, answered from the status.
    Read(Read),
    /// A change, made at the next period boundary.
    Change(Change),
}

/// The reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Read {
    /// `GET /v1/pipeline`: the description and its model.
    Pipeline,
    /// `GET /v1/flows`.
    Flows,
    /// `GET /v1/modules`.
    Modules,
    /// `GET /v1/modules/{module}/config`: an NF's configuration in force.
    Config(ModuleId),
    /// `GET /v1/workers`.
    Workers,
    /// `GET /v1/controller`.
    Controller,
    /// `GET /v1/changes`: the most recent changes.
    Changes,
    /// `GET /v1/egress`: the scheduled egress's classes and link.
    Egress,
    /// `GET /metrics`: the Prometheus exposition.
    Metrics,
    /// `GET /v1/openapi.json`: this API's description.
    OpenApi,
    /// `GET /v1/neighbors`: each interface's neighbours and resolution counters.
    Neighbors,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SloBody {
    /// µs > 0; null: no SLO.
    slo_us: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ControllerBody {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TriggerBody {
    /// pkt; null: back to the controller.
    trigger: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkerBody {
    worker: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WeightBody {
    weight: u32,
}

/// New CoDel settings of a class; a field absent stays as it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CoDelBody {
    /// µs.
    target_us: Option<u64>,
    /// µs.
    interval_us: Option<u64>,
    ecn: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkBody {
    /// bit/s.
    link_bits_per_s: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParentBody {
    /// bit/s.
    rate_bits_per_s: f64,
    /// bit/s; absent: the link's.
    #[serde(default)]
    ceil_bits_per_s: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateBody {
    #[serde(default)]
    stream: usize,
    /// pkt/s; null: unlimited (as fast as the worker takes packets).
    rate_pps: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoutesBody {
    #[serde(default)]
    add: Vec<(String, crate::routes::NextAsWritten)>,
    #[serde(default)]
    delete: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DownBody {
    down: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NeighborBody {
    /// The interface, by name.
    interface: String,
    /// An IPv4 or IPv6 address.
    address: String,
    mac: String,
}

/// The interface named `name`, by index, or why not: a pipeline without
/// interfaces refuses (409, as one without a scheduled egress refuses its
/// requests), one with others does not know it (404).
fn interface_named(name: &str, status: &Status) -> Result<u16, ApiError> {
    if status.interfaces.all().is_empty() {
        return Err(ApiError::conflict("the pipeline has no interfaces (its description has no \"interfaces\"): it has no neighbours"));
    }
    status.interfaces.named(name).map(|i| i.index).map_err(ApiError::not_found)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowBody {
    name: String,
    /// Module names, from a source to a sink.
    path: Vec<String>,
    /// µs > 0; absent or null: none.
    #[serde(default)]
    slo_us: Option<f64>,
    /// Where its packets are told apart: a source (a port or a capture) and a rule.
    #[serde(default)]
    rules: Vec<RuleBody>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransactionBody {
    changes: Vec<TransactionChange>,
}

/// One change of a transaction: a request as the API takes it alone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransactionChange {
    method: String,
    path: String,
    #[serde(default)]
    body: Option<Value>,
}

/// The changes of a transaction, each read as the API reads it alone;
/// the error names the change (its index, method and path).
fn transaction(b: TransactionBody, status: &Status) -> Result<Change, ApiError> {
    if b.changes.is_empty() || b.changes.len() > crate::transaction::MAX_CHANGES {
        return Err(ApiError::bad(format!("changes: {} changes; a transaction makes 1 to {}", b.changes.len(), crate::transaction::MAX_CHANGES)));
    }
    let mut changes = Vec::with_capacity(b.changes.len());
    for (i, c) in b.changes.into_iter().enumerate() {
        let named = |e: ApiError| ApiError { status: e.status, message: format!("changes[{i}] ({} {}): {}", c.method, c.path, e.message) };
        let text = c.body.as_ref().map(Value::to_string).unwrap_or_default();
        let mut body = Body::decode(&c.method, &c.path, &text);
        match route(&c.method, &split(&c.path), &mut body, status) {
            Ok(Request::Change(Change::AddFlow { .. } | Change::RemoveFlow { .. })) => {
                return Err(named(ApiError::bad("flows are added and removed alone, not in a transaction (a removed flow keeps its name: an added one could not be undone)")))
            }
            Ok(Request::Change(Change::Transaction(_))) => return Err(named(ApiError::bad("a transaction holds no transaction"))),
            Ok(Request::Change(Change::Watch(_))) => return Err(named(ApiError::bad("traces and captures watch the pipeline; they are not changes a transaction makes"))),
            Ok(Request::Change(change)) => changes.push(change),
            Ok(Request::Read(_)) => return Err(named(ApiError::bad("a read, not a change"))),
            Err(e) if e.status == NO_ROUTE => return Err(named(ApiError::not_found("no such change"))),
            Err(e) => return Err(named(e)),
        }
    }
    Ok(Change::Transaction(changes))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleBody {
    /// The source module whose packets it sorts.
    source: String,
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    five_tuple: Option<sluice_pipeline::spec::FiveTupleSpec>,
}

/// An SLO as the API takes it (µs; `None`: none), in ns.
fn slo_ns(slo_us: Option<f64>) -> Result<Option<u64>, ApiError> {
    match slo_us {
        None => Ok(None),
        Some(us) if us > 0.0 && us.is_finite() && us <= 3.6e9 => Ok(Some((us * 1e3).round().max(1.0) as u64)),
        Some(us) => Err(ApiError::bad(format!("slo_us: {us} µs must be > 0 and at most an hour"))),
    }
}

/// A flow to add, read whole: its name is free, its path follows the
/// graph, each rule parses and names a source that sorts by rules.
fn flow_to_add(b: FlowBody, status: &Status) -> Result<Change, ApiError> {
    if let Some(f) = status.flow(&b.name) {
        let why = if status.model.flows[f].removed { "was removed earlier in this run (a name stays with its flow)" } else { "exists" };
        return Err(ApiError::conflict(format!("name: a flow named '{}' {why}", b.name)));
    }
    let path = b.path.iter().enumerate().map(|(i, m)| status.module(m).ok_or_else(|| ApiError::bad(format!("path[{i}]: no module '{m}'")))).collect::<Result<Vec<_>, _>>()?;
    let slo_ns = slo_ns(b.slo_us)?;
    status.model.with_flow_added(&b.name, &path, slo_ns).map_err(|e| ApiError::bad(format!("path: {e}")))?;
    let mut rules = Vec::with_capacity(b.rules.len());
    for (i, r) in b.rules.into_iter().enumerate() {
        let source = status.module(&r.source).ok_or_else(|| ApiError::bad(format!("rules[{i}].source: no module '{}'", r.source)))?;
        if !status.sorts_by_rules(source) {
            return Err(ApiError::bad(format!("rules[{i}].source: '{}' is a '{}', not a port or capture source that sorts packets into flows by rules", r.source, status.kinds[source])));
        }
        let spec = sluice_pipeline::spec::FlowRuleSpec { flow: b.name.clone(), prefix: r.prefix, five_tuple: r.five_tuple };
        let rule = sluice_pipeline::source_rules::rule(&spec, 0, &format!("rules[{i}]")).map_err(|e| ApiError::bad(e.to_string()))?;
        rules.push((source, rule, spec));
    }
    Ok(Change::AddFlow { name: b.name, path, slo_ns, rules })
}

/// Reads `body` as `T`; the error names the field.
fn typed<T: serde::de::DeserializeOwned>(body: &mut Body) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(body.value()?).map_err(|e| ApiError::bad(sluice_pipeline::spec_error::describe(&e)))
}

/// Reads a request, its body decoded, resolving the names in its path against `status`.
pub fn parse(method: &str, target: &str, mut body: Body, status: &Status) -> Result<Request, ApiError> {
    let parts = split(target);
    match route(method, &parts, &mut body, status) {
        Err(e) if e.status == NO_ROUTE => {
            // A path another method answers is there, just not for this method.
            let path = target.split('?').next().unwrap_or(target);
            let elsewhere = ["GET", "PUT", "POST", "DELETE"].iter().filter(|&&m| m != method).any(|m| route(m, &parts, &mut Body::default(), status).map_or_else(|e| e.status != NO_ROUTE, |_| true));
            Err(if elsewhere { ApiError { status: 405, message: format!("{method} is not allowed on {path}") } } else { ApiError::not_found(format!("no endpoint {path}")) })
        }
        answered => answered,
    }
}

/// The status `route` refuses a method and path with when no endpoint takes them.
const NO_ROUTE: u16 = 0;

/// What `method` on `parts` asks for, or `NO_ROUTE`.
fn route(method: &str, parts: &[&str], body: &mut Body, status: &Status) -> Result<Request, ApiError> {
    let module = |name: &str| status.module(name).ok_or_else(|| ApiError::not_found(format!("no module '{name}'")));
    let flow = |name: &str| status.flow(name).ok_or_else(|| ApiError::not_found(format!("no flow '{name}'")));
    let live_flow = |name: &str| match flow(name)? {
        f if status.model.flows[f].removed => Err(ApiError::conflict(format!("flow '{name}' was removed"))),
        f => Ok(f),
    };
    let read = |r: Read| Ok(Request::Read(r));
    let change = |c: Change| Ok(Request::Change(c));
    match (method, parts) {
        ("GET", ["metrics"]) => read(Read::Metrics),
        ("GET", ["v1", "openapi.json"]) => read(Read::OpenApi),
        ("GET", ["v1", "pipeline"]) => read(Read::Pipeline),
        ("GET", ["v1", "flows"]) => read(Read::Flows),
        ("GET", ["v1", "modules"]) => read(Read::Modules),
        ("GET", ["v1", "workers"]) => read(Read::Workers),
        ("GET", ["v1", "controller"]) => read(Read::Controller),
        ("GET", ["v1", "changes"]) => read(Read::Changes),
        ("GET", ["v1", "neighbors"]) => read(Read::Neighbors),
        ("POST", ["v1", "trace"]) => change(Change::Watch(WatchChange::trace(typed(body)?, status)?)),
        ("GET", ["v1", "trace"]) => change(Change::Watch(WatchChange::Show)),
        ("DELETE", ["v1", "trace"]) => change(Change::Watch(WatchChange::EndTrace)),
        ("POST", ["v1", "captures"]) => change(Change::Watch(WatchChange::capture(typed(body)?, status)?)),
        ("DELETE", ["v1", "captures"]) => change(Change::Watch(WatchChange::EndCaptures)),
        ("POST", ["v1", "neighbors"]) => {
            let b: NeighborBody = typed(body)?;
            let interface = interface_named(&b.interface, status).map_err(|e| if e.status == 404 { ApiError::bad(format!("interface: {}", e.message)) } else { e })?;
            let address = sluice_nf::interfaces::neighbor_key(&b.address).map_err(|e| ApiError::bad(format!("address: {e}")))?;
            let mac = sluice_core::wire::ethernet::parse_mac(&b.mac).map_err(|e| ApiError::bad(format!("mac: {e}")))?;
            change(Change::Neighbor { interface, address, mac: Some(mac) })
        }
        ("DELETE", ["v1", "neighbors", i, a]) => {
            let interface = interface_named(i, status)?;
            let address = sluice_nf::interfaces::neighbor_key(a).map_err(ApiError::not_found)?;
            change(Change::Neighbor { interface, address, mac: None })
        }
        ("GET", ["v1", "egress"]) => {
            egress(status)?;
            read(Read::Egress)
        }
        ("GET", ["v1", "modules", m, "config"]) => {
            let m = module(m)?;
            status.configs[m].as_ref().ok_or_else(|| ApiError::not_found(format!("module '{}' is not a network function: it has no configuration", status.model.modules[m].name)))?;
            read(Read::Config(m))
        }
        ("PUT", ["v1", "flows", f, "slo"]) => {
            let flow = live_flow(f)?;
            let b: SloBody = typed(body)?;
            change(Change::Slo { flow, slo_ns: slo_ns(b.slo_us)? })
        }
        ("POST", ["v1", "flows"]) => change(flow_to_add(typed(body)?, status)?),
        ("POST", ["v1", "transactions"]) => change(transaction(typed(body)?, status)?),
        ("DELETE", ["v1", "flows", f]) => {
            let flow = live_flow(f)?;
            if let Some(source) = status.streamed_by.get(flow).copied().flatten() {
                let source = &status.model.modules[source].name;
                return Err(ApiError::conflict(format!("flow '{f}' is made by the streams of source '{source}', which no rule sorts into it: it cannot be removed while they run")));
            }
            change(Change::RemoveFlow { flow })
        }
        ("PUT", ["v1", "controller"]) => {
            let b: ControllerBody = typed(body)?;
            if !sluice_control::CONTROLLERS.contains(&b.name.as_str()) {
                return Err(ApiError::bad(format!("name: unknown controller '{}' (known: {})", b.name, sluice_control::CONTROLLERS.join(", "))));
            }
            change(Change::Controller { name: b.name })
        }
        ("PUT", ["v1", "modules", m, "trigger"]) => {
            let module = module(m)?;
            let b: TriggerBody = typed(body)?;
            let batch = status.model.batch_size;
            if let Some(t) = b.trigger.filter(|&t| t as usize > batch) {
                return Err(ApiError::bad(format!("trigger: {t} pkt is over the batch size {batch}")));
            }
            change(Change::Trigger { module, trigger: b.trigger })
        }
        ("PUT", ["v1", "modules", m, "worker"]) => {
            let module = module(m)?;
            let b: WorkerBody = typed(body)?;
            if b.worker >= status.model.workers() {
                return Err(ApiError::bad(format!("worker: {} does not exist (the pipeline has workers 0..={})", b.worker, status.model.workers() - 1)));
            }
            change(Change::Move { module, worker: b.worker })
        }
        ("PUT", ["v1", "modules", m, "weight"]) => {
            let module = module(m)?;
            let b: WeightBody = typed(body)?;
            if b.weight == 0 {
                return Err(ApiError::bad("weight: must be ≥ 1"));
            }
            change(Change::Weight { module, weight: b.weight })
        }
        ("PUT", ["v1", "modules", m, "rate"]) => {
            let module = module(m)?;
            let b: RateBody = typed(body)?;
            let rate_pps = b.rate_pps.unwrap_or(f64::INFINITY);
            if !(rate_pps > 0.0 && rate_pps <= sluice_core::limits::MAX_RATE_PPS) && rate_pps.is_finite() {
                return Err(ApiError::bad(format!("rate_pps: {rate_pps} pkt/s must be > 0 and at most {} (null: unlimited)", sluice_core::limits::MAX_RATE_PPS)));
            }
            change(Change::Rate { module, stream: b.stream, rate_pps })
        }
        ("PUT", ["v1", "modules", m, "config"]) => {
            let module = module(m)?;
            let Some(running) = &status.configs[module] else {
                return Err(ApiError::conflict(format!("module '{m}' is not a network function: it has no configuration")));
            };
            // Read into the NF's configuration when it is built, with no lock held.
            change(Change::Config { module, kind: running.kind(), fields: body.value()? })
        }
        ("POST", ["v1", "modules", m, "routes"]) => {
            let module = module(m)?;
            let mut edit = body.routes.take().unwrap_or_else(|| Ok(RouteEdit::default()))?;
            if status.routes[module].is_none() {
                return Err(ApiError::conflict(format!("module '{m}' is a '{}', not an 'lpm': it has no routes", status.kinds[module])));
            }
            edit.name_gates(m, &status.gates[module])?;
            // Checked against the table once, where the change is made (in place or at the boundary).
            change(Change::Routes { module, edit })
        }
        ("PUT", ["v1", "egress", "classes", c, "weight"]) => {
            let b: WeightBody = typed(body)?;
            let plan = egress(status)?;
            let class = status.egress_class(c).ok_or_else(|| ApiError::not_found(format!("no egress class '{c}'")))?;
            let (algorithm, most) = (plan.config.algorithm, plan.config.algorithm.max_weight());
            if b.weight == 0 {
                return Err(ApiError::bad("weight: must be ≥ 1"));
            }
            if b.weight > most {
                return Err(ApiError::bad(format!("weight: {} is over {most}, the most {} takes", b.weight, algorithm.name())));
            }
            change(Change::Egress(EgressChange { weights: vec![(class, b.weight)], ..EgressChange::default() }))
        }
        ("PUT", ["v1", "egress", "classes", c, "codel"]) => {
            let b: CoDelBody = typed(body)?;
            let plan = egress(status)?;
            let class = status.egress_class(c).ok_or_else(|| ApiError::not_found(format!("no egress class '{c}'")))?;
            let now = plan.config.aqm.get(class).and_then(|m| m.codel()).ok_or_else(|| {
                ApiError::conflict(format!("egress class '{c}' has no CoDel to change: tail drop (codel or fq_codel are chosen in the description)"))
            })?;
            let codel = sluice_core::CoDelConfig { target_us: b.target_us.unwrap_or(now.target_us), interval_us: b.interval_us.unwrap_or(now.interval_us), ecn: b.ecn.unwrap_or(now.ecn) };
            codel.check().map_err(ApiError::bad)?;
            change(Change::Egress(EgressChange { codel: vec![(class, codel)], ..EgressChange::default() }))
        }
        ("PUT", ["v1", "egress", "link"]) => {
            let b: LinkBody = typed(body)?;
            egress(status)?;
            sluice_pipeline::egress_plan::check_link_rate(b.link_bits_per_s).map_err(ApiError::bad)?;
            change(Change::Egress(EgressChange { link_bits_per_s: Some(b.link_bits_per_s), ..EgressChange::default() }))
        }
        ("PUT", ["v1", "egress", "parents", p]) => {
            let b: ParentBody = typed(body)?;
            let plan = egress(status)?;
            let parent = plan.parent_names.iter().position(|n| n == p).ok_or_else(|| ApiError::not_found(format!("no egress parent '{p}'")))?;
            let shape = sluice_pipeline::egress_plan::Shape { rate_bits_per_s: b.rate_bits_per_s, ceil_bits_per_s: b.ceil_bits_per_s.unwrap_or(plan.config.link.bits_per_s) };
            shape.check().map_err(ApiError::bad)?;
            change(Change::Egress(EgressChange { parents: vec![(parent, shape.rate_bits_per_s, shape.ceil_bits_per_s)], ..EgressChange::default() }))
        }
        ("PUT", ["v1", "workers", w, "poll"]) => {
            let worker = worker_named(w, status)?;
            let spec: sluice_pipeline::spec::PollSpec = typed(body)?;
            let policy = spec.policy().map_err(ApiError::bad)?;
            change(Change::Poll { worker, spec, policy })
        }
        ("PUT", ["v1", "workers", w]) => {
            let worker = worker_named(w, status)?;
            let b: DownBody = typed(body)?;
            change(Change::Down { worker, down: b.down })
        }
        _ => Err(ApiError { status: NO_ROUTE, message: String::new() }),
    }
}

/// The scheduled egress, or why a request about it is refused.
fn egress(status: &Status) -> Result<&sluice_pipeline::egress_plan::EgressPlan, ApiError> {
    status.egress.as_ref().ok_or_else(|| ApiError::conflict("the pipeline has no scheduled egress (its description has no egress_scheduler)"))
}

/// The worker numbered `w` in a path.
fn worker_named(w: &str, status: &Status) -> Result<usize, ApiError> {
    let worker: usize = w.parse().map_err(|_| ApiError::not_found(format!("no worker '{w}'")))?;
    if worker >= status.model.workers() {
        return Err(ApiError::not_found(format!("no worker {worker} (the pipeline has workers 0..={})", status.model.workers() - 1)));
    }
    Ok(worker)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source, an LPM with two gates, two sinks; flows `a` and `b`.
    const ROUTER: &str = r#"{"name": "r", "modules": [
        {"name": "src", "source": {"synthetic": {"streams": [{"template": {"dst_ip": "20.0.1.1"}, "flow": "a"}, {"template": {"dst_ip": "20.0.2.1"}, "flow": "b"}]}}},
        {"name": "lpm", "nf": {"type": "lpm", "routes": [["20.0.1.0/24", 0], ["20.0.2.0/24", 1]]}},
        {"name": "out0", "sink": {}}, {"name": "out1", "sink": {}}],
      "edges": [{"from": "src", "to": "lpm"}, {"from": "lpm", "outgate": 0, "to": "out0"}, {"from": "lpm", "outgate": 1, "to": "out1"}],
      "flows": [{"name": "a", "path": ["src", "lpm", "out0"], "slo_us": 100}, {"name": "b", "path": ["src", "lpm", "out1"]}]}"#;

    fn request(method: &str, path: &str, body: &str) -> Result<Request, ApiError> {
        request_of(ROUTER, method, path, body)
    }

    fn request_of(description: &str, method: &str, path: &str, body: &str) -> Result<Request, ApiError> {
        let pipeline = Pipeline::from_json(description).expect("a valid description");
        parse(method, path, Body::decode(method, path, body), &Status::new(&pipeline, "null"))
    }

    /// [`ROUTER`] with its flows in two classes of a QFQ egress.
    fn scheduled() -> String {
        ROUTER.trim_end().trim_end_matches('}').to_owned()
            + r#", "egress_scheduler": {"algorithm": "qfq", "link_bits_per_s": 1e9, "classes": [{"name": "ca", "weight": 1, "flows": ["a"]}, {"name": "cb", "weight": 2, "flows": ["b"]}]}}"#
    }

    use sluice_pipeline::Pipeline;

    fn refusal(method: &str, path: &str, body: &str) -> (u16, String) {
        let e = request(method, path, body).expect_err("refused");
        (e.status, e.message)
    }

    #[test]
    fn names_resolve_and_bodies_become_changes() {
        assert!(matches!(request("GET", "/v1/flows?x=1", ""), Ok(Request::Read(Read::Flows))));
        assert!(matches!(request("GET", "/v1/modules/lpm/config", ""), Ok(Request::Read(Read::Config(1)))));
        assert!(matches!(request("PUT", "/v1/flows/b/slo", r#"{"slo_us": 2.5}"#), Ok(Request::Change(Change::Slo { flow: 1, slo_ns: Some(2500) }))));
        assert!(matches!(request("PUT", "/v1/modules/lpm/trigger", r#"{"trigger": null}"#), Ok(Request::Change(Change::Trigger { module: 1, trigger: None }))));
        let Ok(Request::Change(Change::Config { module: 1, kind, .. })) = request("PUT", "/v1/modules/lpm/config", r#"{"routes": [["0.0.0.0/0", 1]]}"#) else { panic!("a config change") };
        assert_eq!(kind, "lpm");
    }

    /// What building `body` as the LPM's configuration answers (it is read when it is built, off the status lock).
    fn config_built(body: &str) -> Result<String, ApiError> {
        let status = Status::new(&Pipeline::from_json(ROUTER).expect("a valid description"), "null");
        let Ok(Request::Change(change)) = request("PUT", "/v1/modules/lpm/config", body) else { panic!("a config change") };
        change.to_build(&status).expect("it builds an NF").build().map(|_| "built".into())
    }

    #[test]
    fn a_configuration_is_read_and_checked_when_it_is_built() {
        assert_eq!(config_built(r#"{"routes": [["0.0.0.0/0", 1]]}"#).unwrap(), "built");
        let unknown = config_built(r#"{"route": []}"#).unwrap_err();
        assert_eq!(unknown.status, 400);
        assert!(unknown.message.contains("unknown field `route`"), "{}", unknown.message);
        let narrower = config_built(r#"{"routes": [["0.0.0.0/0", 0]]}"#).unwrap_err();
        assert_eq!(narrower.message, "the configuration has 1 outgates; module 'lpm' is wired with 2");
    }

    #[test]
    fn a_refusal_names_the_field_or_the_name() {
        assert_eq!(refusal("PUT", "/v1/flows/a/slo", r#"{"slo_us": -1}"#), (400, "slo_us: -1 µs must be > 0 and at most an hour".into()));
        assert_eq!(refusal("PUT", "/v1/flows/a/slo", r#"{"slo_us": "x"}"#).1, "slo_us: invalid type: string \"x\", expected f64");
        assert_eq!(refusal("PUT", "/v1/flows/a/slo", r#"{"slo_ms": 1}"#).1, "unknown key `slo_ms` (did you mean `slo_us`?)");
        assert_eq!(refusal("PUT", "/v1/flows/c/slo", r#"{"slo_us": 1}"#), (404, "no flow 'c'".into()));
        assert_eq!(refusal("PUT", "/v1/modules/lpm/trigger", r#"{"trigger": 33}"#).1, "trigger: 33 pkt is over the batch size 32");
        assert_eq!(refusal("POST", "/v1/modules/out0/routes", "{}"), (409, "module 'out0' is a 'sink', not an 'lpm': it has no routes".into()));
        assert_eq!(refusal("DELETE", "/v1/flows", "").0, 405);
        assert_eq!(refusal("PUT", "/v1/flows/a", "").0, 405);
        assert_eq!(refusal("GET", "/v2/flows", ""), (404, "no endpoint /v2/flows".into()));
        assert_eq!(refusal("PUT", "/v1/workers/x", r#"{"down": true}"#), (404, "no worker 'x'".into()));
    }

    #[test]
    fn a_flow_to_add_is_read_whole_and_one_made_by_streams_is_not_removed() {
        let Ok(Request::Change(Change::AddFlow { name, path, slo_ns, rules })) = request("POST", "/v1/flows", r#"{"name": "c", "path": ["src", "lpm", "out0"], "slo_us": 50}"#) else {
            panic!("a flow to add")
        };
        assert_eq!((name.as_str(), path, slo_ns, rules.len()), ("c", vec![0, 1, 2], Some(50_000), 0));
        let add = |body: &str| refusal("POST", "/v1/flows", body);
        assert_eq!(add(r#"{"name": "a", "path": ["src", "lpm", "out0"]}"#), (409, "name: a flow named 'a' exists".into()));
        assert_eq!(add(r#"{"name": "c", "path": ["src", "nope"]}"#), (400, "path[1]: no module 'nope'".into()));
        assert_eq!(add(r#"{"name": "c", "path": ["src", "out0"]}"#).1, "path: flow 'c': path does not follow the graph: no edge from 'src' to 'out0'");
        assert_eq!(add(r#"{"name": "c", "path": ["src", "lpm", "out0"], "slo_us": 0}"#).1, "slo_us: 0 µs must be > 0 and at most an hour");
        let rule = |r: &str| add(&format!(r#"{{"name": "c", "path": ["src", "lpm", "out0"], "rules": [{r}]}}"#)).1;
        assert_eq!(rule(r#"{"source": "src", "prefix": "20.0.9.0/24"}"#), "rules[0].source: 'src' is a 'source', not a port or capture source that sorts packets into flows by rules");
        assert_eq!(rule(r#"{"source": "x", "prefix": "20.0.9.0/24"}"#), "rules[0].source: no module 'x'");
        assert_eq!(refusal("DELETE", "/v1/flows/a", ""), (409, "flow 'a' is made by the streams of source 'src', which no rule sorts into it: it cannot be removed while they run".into()));
        assert_eq!(refusal("DELETE", "/v1/flows/z", ""), (404, "no flow 'z'".into()));
    }

    #[test]
    fn egress_requests_name_the_class_and_the_field() {
        let egress = scheduled();
        let request = |method: &str, path: &str, body: &str| request_of(&egress, method, path, body);
        assert!(matches!(request("GET", "/v1/egress", ""), Ok(Request::Read(Read::Egress))));
        let Ok(Request::Change(Change::Egress(EgressChange { weights, link_bits_per_s: None, .. }))) = request("PUT", "/v1/egress/classes/cb/weight", r#"{"weight": 5}"#) else { panic!("a weight change") };
        assert_eq!(weights, [(1, 5)]);
        assert!(matches!(request("PUT", "/v1/egress/link", r#"{"link_bits_per_s": 2e9}"#), Ok(Request::Change(Change::Egress(EgressChange { link_bits_per_s: Some(r), .. }))) if r == 2e9));
        let refused = |method: &str, path: &str, body: &str| request(method, path, body).expect_err("refused");
        assert_eq!(refused("PUT", "/v1/egress/classes/cc/weight", r#"{"weight": 5}"#).message, "no egress class 'cc'");
        assert_eq!(refused("PUT", "/v1/egress/classes/ca/weight", r#"{"weight": 0}"#).message, "weight: must be ≥ 1");
        assert_eq!(refused("PUT", "/v1/egress/classes/ca/weight", r#"{"weight": 5000}"#).message, "weight: 5000 is over 1024, the most qfq takes");
        assert_eq!(refused("PUT", "/v1/egress/link", r#"{"link_bits_per_s": 0}"#).message, "link_bits_per_s 0 must be in (0, 1e13]");
        assert_eq!(refusal("PUT", "/v1/egress/link", r#"{"link_bits_per_s": 1e9}"#), (409, "the pipeline has no scheduled egress (its description has no egress_scheduler)".into()));
    }
}
