//! The validated pipeline description: modules, gates, edges, flows, B.
//!
//! It is what both backends are built from and what controllers see
//! (Batchy's "model view"): graph, per-module profiles, flows with paths and
//! delay SLOs, and the batch size.

use std::collections::HashMap;

use crate::batch::MAX_BURST;
use crate::error::{Error, Result};
use crate::limits::{MAX_FLOWS, MAX_GATES, MAX_MODULES, MAX_WORKERS};

/// Index of a module in [`Model::modules`].
pub type ModuleId = usize;
/// Index of a flow in [`Model::flows`].
pub type FlowId = usize;

/// What a module does in the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Task ingress: makes packets, has no ingate.
    Source,
    /// Network function: ingates and outgates.
    Function,
    /// Egress: delivers packets, has no outgate.
    Sink,
}

/// Linear cost model of one NF run on a batch of b packets: T0 + T1·b (ns).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Profile {
    /// Cost per batch (ns).
    pub t0_ns: f64,
    /// Cost per packet (ns).
    pub t1_ns: f64,
}

impl Profile {
    /// Batchiness β = T1/(T0+T1): 0 gains most from batching, 1 not at all.
    pub fn batchiness(&self) -> f64 {
        self.t1_ns / (self.t0_ns + self.t1_ns)
    }

    /// Cost of one run on `b` packets (ns).
    pub fn cost_ns(&self, b: f64) -> f64 {
        self.t0_ns + self.t1_ns * b
    }
}

/// One module as the builder declares it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct ModuleDecl {
    /// Unique name.
    pub name: String,
    /// Source, function or sink.
    pub role: Role,
    /// Number of ingates.
    pub ingates: usize,
    /// Number of outgates (the drop gate is extra and always there).
    pub outgates: usize,
    /// Cost model, when known.
    pub profile: Option<Profile>,
    /// Whether the controller may set this module's fractional-buffer trigger.
    pub controlled: bool,
    /// Age bound of the fractional buffer (ns): it flushes when its oldest
    /// packet entered the pipeline longer ago. `None` (default): no bound.
    pub max_age_ns: Option<u64>,
    /// A queue of this many packets in front of the module (pkt): a task
    /// boundary, as BESS's Queue. Arrivals fill it (beyond it they are
    /// dropped and counted) and the worker serves it a batch at a time as a
    /// task of its own. `None` (default): packets run to completion.
    pub queue_pkts: Option<usize>,
    /// The most packets its NF keeps between runs (pkt; see
    /// [`crate::NetworkFunction::most_held`]): the worker's pool makes room for them.
    pub held_pkts: usize,
    /// For an NF that holds packets: the run's hold controller sets its
    /// hold time, up to this bound (ns; see [`crate::Actions::holds`]).
    /// `None` (default): the NF keeps the hold time it was built with.
    pub max_hold_ns: Option<u64>,
}

impl ModuleDecl {
    /// A module with no profile, not controlled, no age bound, no queue.
    pub fn new(name: &str, role: Role, ingates: usize, outgates: usize) -> Self {
        Self { name: name.to_owned(), role, ingates, outgates, profile: None, controlled: false, max_age_ns: None, queue_pkts: None, held_pkts: 0, max_hold_ns: None }
    }
}

/// A connection from an outgate to an ingate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Edge {
    /// Upstream module.
    pub from: ModuleId,
    /// Its outgate.
    pub outgate: usize,
    /// Downstream module.
    pub to: ModuleId,
    /// Its ingate.
    pub ingate: usize,
}

/// A flow: a source-to-sink path with an optional delay SLO.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Flow {
    /// Unique name (over a whole run: a removed flow keeps it).
    pub name: String,
    /// Modules from the source to the sink, following edges.
    pub path: Vec<ModuleId>,
    /// Delay SLO (ns), `None` for best effort.
    pub slo_ns: Option<u64>,
    /// Removed while the pipeline runs (see [`Model::with_flow_removed`]):
    /// no packet becomes its any more, those it has are counted where they
    /// end. Its id stays, as packets carry it.
    pub removed: bool,
}

/// A validated pipeline.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Model {
    /// Runtime batch size B (pkt).
    pub batch_size: usize,
    /// Modules, indexed by [`ModuleId`].
    pub modules: Vec<ModuleDecl>,
    /// Edges; `outgate_edge` indexes them by module and gate.
    pub edges: Vec<Edge>,
    /// Flows, indexed by [`FlowId`].
    pub flows: Vec<Flow>,
    /// Worker of every module: where it is placed, else its upstream's worker.
    pub worker_of: Vec<usize>,
    /// Workers the pipeline runs on: every worker a module is placed on, and
    /// spare ones that idle until modules are moved there at run time.
    pub n_workers: usize,
    /// Edges (indices into `edges`) between modules on different workers:
    /// each runs through a lock-free ring.
    pub crossings: Vec<usize>,
    /// For every module, the module behind each outgate.
    pub next: Vec<Vec<ModuleId>>,
    /// Modules in an order where every edge goes forward.
    pub topo_order: Vec<ModuleId>,
    /// For every sink, the flows that end there (removed ones too, whose
    /// packets in flight still arrive).
    pub sink_flows: Vec<Vec<FlowId>>,
}

impl Model {
    /// Number of workers the pipeline runs on, spare ones included.
    pub fn workers(&self) -> usize {
        self.n_workers
    }

    /// The module named `name`, if there is one.
    pub fn module_id(&self, name: &str) -> Option<ModuleId> {
        self.modules.iter().position(|m| m.name == name)
    }

    /// Workers no module is placed on (idle spares), in index order.
    pub fn idle_workers(&self) -> Vec<usize> {
        (0..self.n_workers).filter(|w| !self.worker_of.contains(w)).collect()
    }

    /// The same pipeline with `moves` (module, worker) applied to its
    /// placement and the crossings recomputed. Refuses a worker that does
    /// not exist and a move that would join a crossing edge on one worker
    /// (what its ring holds could overtake nothing, but the ring would be
    /// left without a sender; decomposition only ever splits).
    pub fn with_moves(&self, moves: &[(ModuleId, usize)]) -> Result<Model> {
        let mut moved = self.clone();
        for &(m, w) in moves {
            let Some(decl) = self.modules.get(m) else {
                return Err(Error::module(&format!("#{m}"), "cannot move a module that does not exist"));
            };
            if w >= self.n_workers {
                return Err(Error::module(&decl.name, format!("cannot move it to worker {w}: there are {} workers", self.n_workers)));
            }
            moved.worker_of[m] = w;
        }
        moved.crossings = crossings(&moved.edges, &moved.worker_of);
        if let Some(&e) = self.crossings.iter().find(|e| !moved.crossings.contains(e)) {
            let edge = self.edges[e];
            return Err(Error::module(
                &self.modules[edge.to].name,
                format!("moving it onto the worker of '{}' would fold a ring between workers; only splits are supported while running", self.modules[edge.from].name),
            ));
        }
        Ok(moved)
    }

    /// The model with one more flow, `name` along `path` under `slo_ns`
    /// (a flow added while the pipeline runs; its id is the next one).
    /// Refused by name: a name any flow of the run had, a path that does
    /// not follow the graph, an SLO of 0, one flow over [`MAX_FLOWS`].
    pub fn with_flow_added(&self, name: &str, path: &[ModuleId], slo_ns: Option<u64>) -> Result<Model> {
        if let Some(f) = self.flows.iter().find(|f| f.name == name) {
            let why = if f.removed { "was removed earlier in this run; a name stays with its flow for the whole run" } else { "exists" };
            return Err(Error::flow(name, format!("a flow named '{name}' {why}")));
        }
        if self.flows.len() >= MAX_FLOWS {
            return Err(Error::flow(name, format!("the pipeline has {} flows, removed ones included, the most it may have", self.flows.len())));
        }
        if path.iter().any(|&m| m >= self.modules.len()) {
            return Err(Error::flow(name, "its path names a module the pipeline does not have"));
        }
        check_path(name, path, &self.modules, &self.next)?;
        if slo_ns == Some(0) {
            return Err(Error::flow(name, "delay SLO must be > 0 µs, got 0"));
        }
        let mut added = self.clone();
        let sink = *path.last().expect("checked non-empty");
        added.sink_flows[sink].push(self.flows.len());
        added.flows.push(Flow { name: name.to_owned(), path: path.to_vec(), slo_ns, removed: false });
        Ok(added)
    }

    /// The model with flow `f` removed (see [`Flow::removed`]): its SLO
    /// gone with it; refused for a flow that does not exist or is removed.
    pub fn with_flow_removed(&self, f: FlowId) -> Result<Model> {
        match self.flows.get(f) {
            None => return Err(Error::flow(&format!("#{f}"), "no such flow")),
            Some(flow) if flow.removed => return Err(Error::flow(&flow.name, "it is removed already")),
            Some(_) => {}
        }
        let mut removed = self.clone();
        removed.flows[f].removed = true;
        removed.flows[f].slo_ns = None;
        Ok(removed)
    }

    /// This model with the flows of `of`, a model of the same pipeline whose
    /// flows were added or removed (placement and the rest stay this one's);
    /// refused where `of` is another pipeline or has dropped a flow.
    pub fn with_flows_of(&self, of: &Model) -> Result<Model> {
        if of.modules.len() != self.modules.len() || of.flows.len() < self.flows.len() {
            return Err(Error::Pipeline(format!(
                "cannot take the flows of another pipeline ({} modules, {} flows) into this one ({} modules, {} flows)",
                of.modules.len(), of.flows.len(), self.modules.len(), self.flows.len()
            )));
        }
        Ok(Model { flows: of.flows.clone(), sink_flows: of.sink_flows.clone(), ..self.clone() })
    }

    /// The flows that take packets (not removed), by id.
    pub fn live_flows(&self) -> impl Iterator<Item = FlowId> + '_ {
        (0..self.flows.len()).filter(|&f| !self.flows[f].removed)
    }
}

/// Edges (indices) between modules on different workers.
fn crossings(edges: &[Edge], worker_of: &[usize]) -> Vec<usize> {
    (0..edges.len()).filter(|&e| worker_of[edges[e].from] != worker_of[edges[e].to]).collect()
}

/// Collects modules, edges and flows by name, then validates them all at once.
#[derive(Default)]
pub struct ModelBuilder {
    modules: Vec<ModuleDecl>,
    edges: Vec<(String, usize, String, usize)>,
    flows: Vec<(String, Vec<String>, Option<f64>)>,
    placements: Vec<(String, usize)>,
    spare_workers: usize,
}

impl ModelBuilder {
    /// Declares a module.
    pub fn module(&mut self, decl: ModuleDecl) -> &mut Self {
        self.modules.push(decl);
        self
    }

    /// Connects `from`'s outgate to `to`'s ingate.
    pub fn connect(&mut self, from: &str, outgate: usize, to: &str, ingate: usize) -> &mut Self {
        self.edges.push((from.to_owned(), outgate, to.to_owned(), ingate));
        self
    }

    /// Declares a flow along `path` (module names) with a delay SLO in µs (`None`: best effort).
    pub fn flow(&mut self, name: &str, path: &[&str], slo_us: Option<f64>) -> &mut Self {
        self.flows.push((name.to_owned(), path.iter().map(|s| s.to_string()).collect(), slo_us));
        self
    }

    /// Places `module` on worker `worker`. Unplaced sources run on worker
    /// 0; other unplaced modules run where their upstream modules run.
    pub fn place(&mut self, module: &str, worker: usize) -> &mut Self {
        self.placements.push((module.to_owned(), worker));
        self
    }

    /// Keeps `n` more workers with no module: spares that pipeline
    /// decomposition may move modules to while the pipeline runs.
    pub fn spare_workers(&mut self, n: usize) -> &mut Self {
        self.spare_workers = n;
        self
    }

    /// Validates everything and returns the model, or the first problem found.
    pub fn build(&self, batch_size: usize) -> Result<Model> {
        if batch_size == 0 || batch_size > MAX_BURST {
            return Err(Error::BatchSize(batch_size));
        }
        let limit = |what: &str, value: usize, max: usize| {
            if value > max {
                return Err(Error::Pipeline(format!("{value} {what}, more than the {max} a pipeline may have")));
            }
            Ok(())
        };
        limit("modules", self.modules.len(), MAX_MODULES)?;
        limit("flows", self.flows.len(), MAX_FLOWS)?;
        if self.modules.is_empty() {
            return Err(Error::Pipeline("it has no modules: give it a source, a sink and a flow between them".into()));
        }
        if let Some((module, worker)) = self.placements.iter().find(|(_, w)| *w >= MAX_WORKERS) {
            return Err(Error::module(module, format!("worker {worker} is out of range 0..{MAX_WORKERS}")));
        }
        if self.spare_workers >= MAX_WORKERS {
            return Err(Error::Pipeline(format!("{} spare workers is out of range 0..{MAX_WORKERS}", self.spare_workers)));
        }
        let mut ids = HashMap::new();
        for (i, m) in self.modules.iter().enumerate() {
            if ids.insert(m.name.clone(), i).is_some() {
                return Err(Error::DuplicateModule(m.name.clone()));
            }
            check_gates(m)?;
        }
        let lookup = |name: &str, context: String| {
            ids.get(name).copied().ok_or_else(|| Error::UnknownModule { name: name.to_owned(), context })
        };
        let n = self.modules.len();
        let mut next: Vec<Vec<Option<ModuleId>>> =
            self.modules.iter().map(|m| vec![None; m.outgates]).collect();
        let mut entered = vec![false; n];
        let mut edges = Vec::with_capacity(self.edges.len());
        for (from, outgate, to, ingate) in &self.edges {
            let f = lookup(from, format!("edge {from}:{outgate} -> {to}:{ingate}"))?;
            let t = lookup(to, format!("edge {from}:{outgate} -> {to}:{ingate}"))?;
            let (fm, tm) = (&self.modules[f], &self.modules[t]);
            if *outgate >= fm.outgates {
                return Err(Error::NoSuchOutgate { module: from.clone(), gate: *outgate, count: fm.outgates });
            }
            if *ingate >= tm.ingates {
                return Err(Error::NoSuchIngate { module: to.clone(), gate: *ingate, count: tm.ingates });
            }
            if next[f][*outgate].replace(t).is_some() {
                return Err(Error::GateTaken { module: from.clone(), gate: *outgate });
            }
            entered[t] = true;
            edges.push(Edge { from: f, outgate: *outgate, to: t, ingate: *ingate });
        }
        for (i, m) in self.modules.iter().enumerate() {
            if let Some(gate) = next[i].iter().position(Option::is_none) {
                return Err(Error::DanglingGate { module: m.name.clone(), gate });
            }
            if m.role != Role::Source && !entered[i] {
                return Err(Error::Unconnected(m.name.clone()));
            }
        }
        let next: Vec<Vec<ModuleId>> = next.into_iter().map(|g| g.into_iter().flatten().collect()).collect();
        let topo_order = topological_order(&next).map_err(|m| Error::Cycle(self.modules[m].name.clone()))?;

        let mut placed = vec![None; n];
        for (module, worker) in &self.placements {
            placed[lookup(module, format!("placement on worker {worker}"))?] = Some(*worker);
        }
        let worker_of = assign_workers(&self.modules, &edges, &topo_order, &placed)?;
        let crossings = crossings(&edges, &worker_of);
        let n_workers = worker_of.iter().copied().max().map_or(1, |w| w + 1) + self.spare_workers;
        if n_workers > MAX_WORKERS {
            return Err(Error::Pipeline(format!("{n_workers} workers (spares included), more than {MAX_WORKERS}")));
        }

        let mut flows = Vec::with_capacity(self.flows.len());
        let mut sink_flows = vec![Vec::new(); n];
        let mut flow_names = HashMap::new();
        for (fi, (name, path, slo_us)) in self.flows.iter().enumerate() {
            if flow_names.insert(name.clone(), fi).is_some() {
                return Err(Error::DuplicateFlow(name.clone()));
            }
            let path = path
                .iter()
                .map(|p| lookup(p, format!("flow '{name}' path")))
                .collect::<Result<Vec<_>>>()?;
            check_path(name, &path, &self.modules, &next)?;
            let slo_ns = match slo_us {
                None => None,
                Some(us) if us.is_finite() && *us > 0.0 => Some((us * 1e3).round().max(1.0) as u64),
                Some(us) => return Err(Error::flow(name, format!("delay SLO must be > 0 µs, got {us}"))),
            };
            sink_flows[*path.last().expect("checked non-empty")].push(fi);
            flows.push(Flow { name: name.clone(), path, slo_ns, removed: false });
        }
        Ok(Model {
            batch_size,
            modules: self.modules.clone(),
            edges,
            flows,
            worker_of,
            n_workers,
            crossings,
            next,
            topo_order,
            sink_flows,
        })
    }
}

fn check_gates(m: &ModuleDecl) -> Result<()> {
    if m.ingates > MAX_GATES || m.outgates > MAX_GATES {
        return Err(Error::module(&m.name, format!("{} ingates and {} outgates: a module has at most {MAX_GATES} of each", m.ingates, m.outgates)));
    }
    let bad = match m.role {
        Role::Source => (m.ingates != 0).then_some("a source has no ingate"),
        Role::Sink => (m.outgates != 0).then_some("a sink has no outgate"),
        Role::Function => (m.ingates == 0).then_some("a network function needs an ingate"),
    };
    if let Some(reason) = bad {
        return Err(Error::module(&m.name, reason));
    }
    if m.max_age_ns == Some(0) {
        return Err(Error::module(&m.name, "an age bound must be > 0"));
    }
    if let Some(p) = m.profile {
        if !(p.t0_ns >= 0.0 && p.t1_ns >= 0.0 && p.t0_ns + p.t1_ns > 0.0) {
            return Err(Error::module(&m.name, format!("profile T0={} T1={} ns must be ≥ 0 and not both 0", p.t0_ns, p.t1_ns)));
        }
    }
    Ok(())
}

fn check_path(name: &str, path: &[ModuleId], modules: &[ModuleDecl], next: &[Vec<ModuleId>]) -> Result<()> {
    let (Some(&first), Some(&last)) = (path.first(), path.last()) else {
        return Err(Error::flow(name, "path is empty"));
    };
    if modules[first].role != Role::Source {
        return Err(Error::flow(name, format!("path starts at '{}', which is not a source", modules[first].name)));
    }
    if modules[last].role != Role::Sink {
        return Err(Error::flow(name, format!("path ends at '{}', which is not a sink", modules[last].name)));
    }
    for w in path.windows(2) {
        if !next[w[0]].contains(&w[1]) {
            return Err(Error::flow(
                name,
                format!("path does not follow the graph: no edge from '{}' to '{}'", modules[w[0]].name, modules[w[1]].name),
            ));
        }
    }
    Ok(())
}

/// Kahn's algorithm; on a cycle returns a module on it.
fn topological_order(next: &[Vec<ModuleId>]) -> std::result::Result<Vec<ModuleId>, ModuleId> {
    let mut indegree = vec![0usize; next.len()];
    for gates in next {
        for &t in gates {
            indegree[t] += 1;
        }
    }
    let mut ready: Vec<_> = (0..next.len()).filter(|&i| indegree[i] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(next.len());
    while let Some(v) = ready.pop() {
        order.push(v);
        for &t in next[v].iter().rev() {
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push(t);
            }
        }
    }
    match (0..next.len()).find(|&i| indegree[i] > 0) {
        Some(v) => Err(v),
        None => Ok(order),
    }
}

fn assign_workers(modules: &[ModuleDecl], edges: &[Edge], order: &[ModuleId], placed: &[Option<usize>]) -> Result<Vec<usize>> {
    let mut worker: Vec<Option<usize>> = placed.to_vec();
    let mut upstream_of: Vec<Vec<ModuleId>> = vec![Vec::new(); modules.len()];
    for e in edges {
        upstream_of[e.to].push(e.from);
    }
    for &v in order {
        if worker[v].is_some() {
            continue;
        }
        let mut upstream = upstream_of[v].iter().map(|&u| worker[u].expect("upstream comes first"));
        let first = upstream.next().unwrap_or(0);
        if let Some(other) = upstream.find(|&w| w != first) {
            return Err(Error::SharedAcrossWorkers { module: modules[v].name.clone(), a: first.min(other), b: first.max(other) });
        }
        worker[v] = Some(first);
    }
    Ok(worker.into_iter().map(|w| w.expect("every module visited")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, role: Role, ingates: usize, outgates: usize) -> ModuleDecl {
        ModuleDecl::new(name, role, ingates, outgates)
    }

    fn two_branch() -> ModelBuilder {
        let mut b = ModelBuilder::default();
        b.module(decl("src", Role::Source, 0, 1))
            .module(decl("split", Role::Function, 1, 2))
            .module(decl("a", Role::Function, 1, 1))
            .module(decl("b", Role::Function, 1, 1))
            .module(decl("out_a", Role::Sink, 1, 0))
            .module(decl("out_b", Role::Sink, 1, 0))
            .connect("src", 0, "split", 0)
            .connect("split", 0, "a", 0)
            .connect("split", 1, "b", 0)
            .connect("a", 0, "out_a", 0)
            .connect("b", 0, "out_b", 0)
            .flow("fa", &["src", "split", "a", "out_a"], Some(15.0))
            .flow("fb", &["src", "split", "b", "out_b"], Some(100.0));
        b
    }

    #[test]
    fn valid_graph_builds_in_topological_order() {
        let m = two_branch().build(32).unwrap();
        assert_eq!(m.flows[0].slo_ns, Some(15_000));
        let pos = |v| m.topo_order.iter().position(|&x| x == v).unwrap();
        for e in &m.edges {
            assert!(pos(e.from) < pos(e.to));
        }
        assert_eq!(m.sink_flows[4], [0]);
    }

    #[test]
    fn errors_name_the_culprit() {
        let err = |b: &ModelBuilder, bs| b.build(bs).unwrap_err().to_string();
        assert_eq!(err(&two_branch(), 0), "batch size 0 is out of range 1..=256");
        assert_eq!(err(&two_branch(), 257), "batch size 257 is out of range 1..=256");

        let mut b = two_branch();
        b.module(decl("c", Role::Function, 1, 1)).connect("c", 0, "out_a", 0);
        assert_eq!(err(&b, 32), "module 'c' is unconnected: no edge enters it");

        let mut b = ModelBuilder::default();
        b.module(decl("src", Role::Source, 0, 2)).module(decl("out", Role::Sink, 1, 0)).connect("src", 0, "out", 0);
        assert_eq!(err(&b, 32), "module 'src' outgate 1 is dangling: connect it to a module");

        let mut b = two_branch();
        b.connect("split", 2, "a", 0);
        assert_eq!(err(&b, 32), "module 'split' has no outgate 2 (it has 2)");

        let mut b = two_branch();
        b.flow("bad", &["src", "a", "out_a"], Some(10.0));
        assert_eq!(err(&b, 32), "flow 'bad': path does not follow the graph: no edge from 'src' to 'a'");

        let mut b = two_branch();
        b.flow("zero", &["src", "split", "a", "out_a"], Some(0.0));
        assert!(err(&b, 32).starts_with("flow 'zero': delay SLO must be > 0 µs"));

        let mut b = two_branch();
        b.flow("ghost", &["src", "nowhere"], None);
        assert_eq!(err(&b, 32), "flow 'ghost' path names unknown module 'nowhere'");
    }

    #[test]
    fn flows_are_added_and_removed_on_a_running_model_and_share_sinks() {
        let m = two_branch().build(32).unwrap();
        let path = |names: &[&str]| names.iter().map(|n| m.module_id(n).unwrap()).collect::<Vec<_>>();
        let added = m.with_flow_added("fc", &path(&["src", "split", "a", "out_a"]), Some(40_000)).unwrap();
        assert_eq!((added.flows.len(), &added.flows[2].name, added.flows[2].slo_ns), (3, &"fc".to_owned(), Some(40_000)));
        assert_eq!(added.sink_flows[m.module_id("out_a").unwrap()], [0, 2], "two flows end at out_a");
        let err = |r: Result<Model>| r.unwrap_err().to_string();
        assert_eq!(err(added.with_flow_added("fa", &path(&["src", "split", "b", "out_b"]), None)), "flow 'fa': a flow named 'fa' exists");
        assert_eq!(
            err(added.with_flow_added("fd", &path(&["src", "a", "out_a"]), None)),
            "flow 'fd': path does not follow the graph: no edge from 'src' to 'a'"
        );
        assert_eq!(err(added.with_flow_added("fd", &path(&["src", "split", "a", "out_a"]), Some(0))), "flow 'fd': delay SLO must be > 0 µs, got 0");
        let removed = added.with_flow_removed(0).unwrap();
        assert!(removed.flows[0].removed && removed.flows[0].slo_ns.is_none());
        assert_eq!(removed.live_flows().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(removed.sink_flows[m.module_id("out_a").unwrap()], [0, 2], "a removed flow's packets in flight still end there");
        assert_eq!(err(removed.with_flow_removed(0)), "flow 'fa': it is removed already");
        assert!(err(removed.with_flow_added("fa", &path(&["src", "split", "a", "out_a"]), None)).contains("was removed earlier in this run"));
        // A description may end several flows at one sink too.
        let mut b = two_branch();
        b.flow("fc", &["src", "split", "a", "out_a"], None);
        assert_eq!(b.build(32).unwrap().sink_flows[m.module_id("out_a").unwrap()], [0, 2]);
    }

    #[test]
    fn cycles_are_refused() {
        let mut b = ModelBuilder::default();
        b.module(decl("src", Role::Source, 0, 1))
            .module(decl("x", Role::Function, 2, 1))
            .module(decl("y", Role::Function, 1, 1))
            .connect("src", 0, "x", 0)
            .connect("x", 0, "y", 0)
            .connect("y", 0, "x", 1);
        assert!(b.build(32).unwrap_err().to_string().starts_with("cycle through module '"));
    }

    #[test]
    fn modules_shared_by_workers_are_refused() {
        let mut b = ModelBuilder::default();
        b.module(decl("s1", Role::Source, 0, 1))
            .module(decl("s2", Role::Source, 0, 1))
            .module(decl("out", Role::Sink, 2, 0))
            .connect("s1", 0, "out", 0)
            .connect("s2", 0, "out", 1)
            .place("s2", 1);
        assert_eq!(b.build(32).unwrap_err().to_string(), "module 'out' is reached from workers 0 and 1; place it on one of them");
        b.place("out", 1);
        let m = b.build(32).unwrap();
        assert_eq!(m.worker_of, vec![0, 1, 1]);
        assert_eq!(m.crossings, vec![0], "s1 -> out crosses from worker 0 to 1");
    }

    #[test]
    fn moves_split_workers_and_refuse_folds() {
        let m = two_branch().spare_workers(1).build(32).unwrap();
        assert_eq!((m.workers(), m.idle_workers()), (2, vec![1]));
        let (b, out_b) = (m.module_id("b").unwrap(), m.module_id("out_b").unwrap());
        let split = m.with_moves(&[(b, 1), (out_b, 1)]).unwrap();
        assert_eq!(split.crossings, vec![2], "split:1 -> b is the only crossing");
        assert!(split.idle_workers().is_empty());
        let err = split.with_moves(&[(b, 0)]).unwrap_err().to_string();
        assert_eq!(err, "module 'b': moving it onto the worker of 'split' would fold a ring between workers; only splits are supported while running");
        assert_eq!(m.with_moves(&[(b, 2)]).unwrap_err().to_string(), "module 'b': cannot move it to worker 2: there are 2 workers");
    }
}
