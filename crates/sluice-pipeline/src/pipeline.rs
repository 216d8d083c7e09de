//! A validated pipeline description that can be instantiated on either backend.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sluice_control::{ControlParams, Outage, RunPlan, Steps};
use sluice_core::{Engine, EngineConfig, ModuleCode, Model, ModelBuilder, ModuleDecl, PacketSink, PollPolicy, Profile, Role, Schedule, WalkerConfig};
use sluice_nf::Interfaces;
use sluice_port::{PortName, RxPort, TxPort};
use sluice_sim::Simulator;
use sluice_traffic::{Capture, FlowRules, PcapReplay, PcapTap, Stream, SyntheticSource};

use sluice_pspat::{InlineEgress, ScheduledEgress};

use crate::egress_plan::EgressPlan;
use crate::error::{Error, Result};
use crate::spec_error::describe;
use crate::spread::{spread, Named, Spread};
use crate::spec::{KindSpec, ModuleSpec, PipelineSpec, FlowRuleSpec, RingSpec, SchedulerMode, SourceSpec};

/// Which way NFs are built.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Build {
    /// Real NFs for the engine.
    Real,
    /// NFs whose time the simulator charges by cost model.
    Modelled,
    /// As for the simulator, ports checked but not opened: validation only.
    Check,
}

/// A receive port that validation checked and did not open; never run.
struct Unopened;

impl sluice_core::PacketSource for Unopened {
    fn fill(&mut self, _: &mut sluice_core::PacketPool, _: u64, _: &mut sluice_core::Batch, _: usize) {}
}

/// A pipeline description checked against every rule, ready to run.
pub struct Pipeline {
    spec: PipelineSpec,
    model: Model,
    flow_ids: HashMap<String, usize>,
    /// Every capture a source replays, read once (a FIFO can be read only once).
    captures: HashMap<String, Arc<Capture>>,
    /// The workers' poll policy, and those of workers with one of their own.
    poll: PollPolicy,
    worker_poll: Vec<(usize, PollPolicy)>,
    /// Whether workers log the learned policy's features (see [`crate::spec::PollSpec::log_features`]).
    log_poll_features: bool,
    /// The scheduled egress, where the description has one.
    egress: Option<EgressPlan>,
    /// What each port module opens, spread over its interface (see `spread`).
    ports: Spread,
    /// The interfaces the engine last started with (their neighbour tables
    /// live), for the control plane; `None` before it starts.
    running: Mutex<Option<Arc<Interfaces>>>,
}

impl Pipeline {
    /// Parses and validates a JSON description; an error names the field by its path.
    pub fn from_json(json: &str) -> Result<Self> {
        Self::from_json_until(json, &|| false)
    }

    /// [`Self::from_json`], whose loading of captures is given up with an
    /// error once `stop` says so.
    pub fn from_json_until(json: &str, stop: &dyn Fn() -> bool) -> Result<Self> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| Error::Spec(format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(Error::Spec(format!("a description is a JSON object ({{\"modules\": …}}), not {}", json_kind(&value))));
        }
        let spec: PipelineSpec = serde_path_to_error::deserialize(value).map_err(|e| Error::Spec(describe(&e)))?;
        Self::new_until(spec, stop)
    }

    /// Validates a description: sizes and rates within bounds, graph,
    /// flows, SLOs, B, NF and traffic settings. An error about a module or
    /// a flow says where it is in the description (`modules[3]`).
    pub fn new(spec: PipelineSpec) -> Result<Self> {
        Self::new_until(spec, &|| false)
    }

    fn new_until(spec: PipelineSpec, stop: &dyn Fn() -> bool) -> Result<Self> {
        spec.check_bounds().map_err(Error::Spec)?;
        Self::build(spec.clone(), stop).map_err(|e| locate(&spec, e))
    }

    fn build(spec: PipelineSpec, stop: &dyn Fn() -> bool) -> Result<Self> {
        let mut builder = ModelBuilder::default();
        for m in &spec.modules {
            builder.module(declare(m)?);
            if let Some(w) = m.worker {
                builder.place(&m.name, w);
            }
        }
        let gate_names: HashMap<&str, &[String]> = spec.modules.iter().filter(|m| !m.gates.is_empty()).map(|m| (m.name.as_str(), &m.gates[..])).collect();
        for (i, e) in spec.edges.iter().enumerate() {
            let names = gate_names.get(e.from.as_str()).copied().unwrap_or_default();
            let outgate = e.outgate.number(&e.from, names).map_err(|why| Error::Spec(format!("edges[{i}].outgate: {why}")))?;
            builder.connect(&e.from, outgate, &e.to, e.ingate);
        }
        for f in &spec.flows {
            let path: Vec<&str> = f.path.iter().map(String::as_str).collect();
            builder.flow(&f.name, &path, f.slo_us);
        }
        let model = builder.spare_workers(spec.spare_workers).build(spec.batch_size)?;
        if let Some(o) = spec.outages.iter().find(|o| o.worker >= model.workers() || o.from >= o.until) {
            let workers = model.workers();
            return Err(Error::Spec(format!("outage of worker {} from period {} until {}: needs one of the {workers} workers and from < until", o.worker, o.from, o.until)));
        }
        let flow_ids = model.flows.iter().enumerate().map(|(i, f)| (f.name.clone(), i)).collect();
        let mut captures = HashMap::new();
        for m in &spec.modules {
            if let KindSpec::Source(SourceSpec::Pcap { path, .. }) = &m.kind {
                if !captures.contains_key(path) {
                    captures.insert(path.clone(), Arc::new(Capture::open_until(path, stop)?));
                }
            }
        }
        let poll = spec.poll.policy().map_err(|e| Error::Spec(format!("poll: {e}")))?;
        if let Some(codel) = &spec.ring_codel {
            codel.check().map_err(|e| Error::Spec(format!("ring_{e}")))?;
        }
        let worker_poll = spec
            .worker_poll
            .iter()
            .map(|(&w, p)| {
                let named = |e: String| Error::Spec(format!("worker_poll: worker {w}: {e}"));
                if w >= model.workers() {
                    return Err(named(format!("the pipeline has {} workers (0..={})", model.workers(), model.workers().saturating_sub(1))));
                }
                Ok((w, p.policy().map_err(named)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let egress = spec.egress_scheduler.as_ref().map(|e| e.plan(&model)).transpose()?;
        let log_poll_features = spec.poll.log_features || spec.worker_poll.values().any(|p| p.log_features);
        let ports = spread_ports(&spec, &model)?;
        let pipeline = Self { spec, model, flow_ids, captures, poll, worker_poll, log_poll_features, egress, ports, running: Mutex::new(None) };
        pipeline.instances(Build::Check)?;
        Ok(pipeline)
    }

    /// The validated model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// What the slots of module `m`'s own counters count, and the key they
    /// go under in a report: an NF's under "nf" (see
    /// [`sluice_nf::NfSpec::counter_names`]), a port's under "port" (see
    /// [`sluice_port::RX_COUNTERS`], [`sluice_port::TX_COUNTERS`]); no names for most modules.
    pub fn own_counters(&self, m: usize) -> (&'static str, &'static [&'static str]) {
        match &self.spec.modules[m].kind {
            KindSpec::Nf(nf) => ("nf", nf.counter_names()),
            KindSpec::Source(SourceSpec::Port { .. }) => ("port", sluice_port::RX_COUNTERS),
            KindSpec::Sink { port: Some(_), .. } => ("port", sluice_port::TX_COUNTERS),
            _ => ("nf", &[]),
        }
    }

    /// The network functions (or, where there are none, the sources) of
    /// the workers where no module has a cost (of its own, measured or
    /// given): the simulator charges such a worker nothing but its floor
    /// of [`sluice_sim::MIN_ROUND_NS`] a round, so a rate measured there is
    /// the model's bound, not one an engine reaches. Empty when every
    /// worker has a costed module.
    pub fn uncosted(&self) -> Vec<&str> {
        let model = &self.model;
        let placed = || model.modules.iter().zip(model.worker_of.iter().copied());
        let costed: std::collections::HashSet<usize> = placed().filter(|(m, _)| m.profile.is_some_and(|p| p.t0_ns + p.t1_ns > 0.0)).map(|(_, w)| w).collect();
        let free = || placed().filter(|(_, w)| !costed.contains(w)).map(|(m, _)| m);
        let role = if free().any(|m| m.role == Role::Function) { Role::Function } else { Role::Source };
        free().filter(|m| m.role == role).map(|m| m.name.as_str()).collect()
    }

    /// The description it was built from.
    pub fn spec(&self) -> &PipelineSpec {
        &self.spec
    }

    /// The pipeline's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Starts the pipeline on the engine (`timing`: delay histograms and
    /// busy time on) under its own scheduling model.
    pub fn engine(&self, timing: bool) -> Result<Engine> {
        self.engine_with(timing, self.schedule())
    }

    /// Starts the pipeline on the engine under `schedule`.
    pub fn engine_with(&self, timing: bool, schedule: Schedule) -> Result<Engine> {
        let walker = WalkerConfig { timing, schedule, ring_codel: self.spec.ring_codel, ..WalkerConfig::default() };
        let (instances, interfaces) = self.instances(Build::Real)?;
        *self.running.lock().expect("never poisoned: set whole") = Some(interfaces);
        let config = |walker| EngineConfig {
            walker,
            pin: true,
            poll: self.poll.clone(),
            worker_poll: self.worker_poll.clone(),
            log_poll_features: self.log_poll_features,
        };
        let Some(plan) = &self.egress else {
            return Ok(Engine::start(self.model.clone(), instances, config(walker))?);
        };
        // Packets wait in the scheduled egress in their worker's pool.
        let pool = sluice_core::wiring::pool_capacity(&self.model, schedule, plan.config.most_held());
        let walker = WalkerConfig { pool_capacity: Some(pool), ..walker };
        let config = config(walker);
        // One worker is its own arbiter; several are the clients of an
        // arbiter thread, every one of them (spares too: a sink may move).
        if self.model.workers() == 1 {
            let link: Box<dyn sluice_core::EgressLink> = Box::new(InlineEgress::new(&plan.config, quanta::Clock::new()));
            return Ok(Engine::start_linked(self.model.clone(), instances, config, vec![link], None)?);
        }
        let (arbiter, links) = ScheduledEgress::start(&plan.config, self.model.workers(), None).map_err(Error::Spec)?;
        let links = links.into_iter().map(|l| Box::new(l) as Box<dyn sluice_core::EgressLink>).collect();
        Ok(Engine::start_linked(self.model.clone(), instances, config, links, Some(Box::new(arbiter)))?)
    }

    /// The scheduled egress's plan (classes, weights, each flow's class), if it has one.
    pub fn egress(&self) -> Option<&EgressPlan> {
        self.egress.as_ref()
    }

    /// Builds the pipeline on the simulator under its own scheduling model.
    pub fn simulator(&self) -> Result<Simulator> {
        self.simulator_with(self.schedule())
    }

    /// Builds the pipeline on the simulator under `schedule`.
    pub fn simulator_with(&self, schedule: Schedule) -> Result<Simulator> {
        if self.spec.ring_codel.is_some() && self.model.workers() > 1 {
            // Each worker keeps a virtual clock of its own: a packet's stamp is no measure of its wait on another's.
            return Err(Error::Spec("ring_codel: runs on the engine; the simulator's workers keep clocks of their own".into()));
        }
        let (instances, _) = self.instances(Build::Modelled)?;
        let Some(plan) = &self.egress else {
            return Ok(Simulator::new(self.model.clone(), instances, schedule)?);
        };
        // The one worker runs the scheduler on its virtual clock (workers
        // on separate virtual clocks cannot share one link).
        let make = |clock: quanta::Clock| Box::new(InlineEgress::new(&plan.config, clock)) as Box<dyn sluice_core::EgressLink>;
        Ok(Simulator::new_linked(self.model.clone(), instances, schedule, Some(&make), plan.config.most_held())?)
    }

    /// The scheduling model the description asks for.
    pub fn schedule(&self) -> Schedule {
        match self.spec.scheduler.mode {
            SchedulerMode::Rtc => Schedule::RunToCompletion,
            SchedulerMode::Wfq => Schedule::WeightedFair { backpressure: self.spec.scheduler.backpressure_pkts, buffered_only: false },
        }
    }

    /// Sends what the pipeline's source makes (its streams at their rates,
    /// or its trace) on `port` for `seconds` or until `stop`: traffic for
    /// a pipeline that receives on a real port.
    pub fn send(&self, port: &str, seconds: f64, stop: &mut dyn FnMut() -> bool) -> Result<sluice_port::Sent> {
        let sources: Vec<&ModuleSpec> = self.spec.modules.iter().filter(|m| matches!(m.kind, KindSpec::Source(_))).collect();
        let [m] = sources[..] else {
            return Err(Error::Spec(format!("the sender sends one source's packets; '{}' has {} sources", self.spec.name, sources.len())));
        };
        let KindSpec::Source(spec) = &m.kind else { unreachable!("filtered to sources") };
        if let SourceSpec::Port { .. } = spec {
            return Err(Error::Spec(format!("source '{}' receives on a port: the sender needs templates or a trace", m.name)));
        }
        if !(seconds > 0.0 && seconds.is_finite()) {
            return Err(Error::Spec(format!("send for {seconds} s: must be > 0 and finite")));
        }
        let mut source = self.source(&m.name, spec, &Interfaces::none())?;
        Ok(sluice_port::send(&PortName::parse(port)?, sluice_port::RingConfig::default(), source.as_mut(), seconds, stop)?)
    }

    /// A run plan with the description's rate and SLO schedules and outages.
    pub fn plan(&self, periods: usize, warmup_periods: usize, period_ns: u64, control: ControlParams) -> RunPlan {
        let mut plan = RunPlan { periods, warmup_periods, period_ns, control, ..RunPlan::default() };
        plan.outages = self.spec.outages.iter().map(|o| Outage { worker: o.worker, from: o.from, until: o.until }).collect();
        for (f, spec) in self.spec.flows.iter().enumerate() {
            if !spec.slo_schedule.is_empty() {
                plan.slo_schedules.push((f, Steps(spec.slo_schedule.clone())));
            }
        }
        // Model modules are in description order.
        for (m, spec) in self.spec.modules.iter().enumerate() {
            match &spec.kind {
                KindSpec::Source(SourceSpec::Synthetic { streams, .. }) => {
                    for (i, s) in streams.iter().enumerate().filter(|(_, s)| !s.rate_schedule.is_empty()) {
                        plan.rate_schedules.push((m, i, Steps(s.rate_schedule.clone())));
                    }
                }
                KindSpec::Source(SourceSpec::Pcap { rate_schedule, .. }) if !rate_schedule.is_empty() => {
                    plan.rate_schedules.push((m, 0, Steps(rate_schedule.clone())));
                }
                _ => {}
            }
        }
        plan
    }

    fn flow_id(&self, name: &str, context: &str) -> Result<u16> {
        self.flow_ids
            .get(name)
            .map(|&f| f as u16)
            .ok_or_else(|| Error::Spec(format!("{context} names unknown flow '{name}'")))
    }

    /// The interfaces the engine runs with now (their neighbour tables
    /// live), once it has started; the control plane changes and reads them.
    pub fn interfaces(&self) -> Option<Arc<Interfaces>> {
        self.running.lock().expect("never poisoned: set whole").clone()
    }

    /// The description's interfaces, built for `build`: on the engine, the
    /// MAC and MTU of one a port opens read from its device where the
    /// description gives none.
    fn build_interfaces(&self, build: Build) -> Result<Arc<Interfaces>> {
        let opened: std::collections::HashSet<&str> = self.ports.values().map(|(p, _)| p.interface.as_str()).collect();
        let device = |name: &str| if build == Build::Real && opened.contains(name) { sluice_port::device(name) } else { None };
        let interfaces = Interfaces::build(&self.spec.interfaces, &self.spec.icmp, device).map_err(Error::Spec)?;
        // A port that cannot carry its interface's MTU is refused, naming both.
        for (i, iface) in interfaces.all().iter().enumerate() {
            if let Some((port, _)) = self.ports.values().filter(|(p, _)| p.interface == iface.name).min_by_key(|(p, _)| p.largest_mtu()) {
                if iface.mtu as usize > port.largest_mtu() {
                    let said = if self.spec.interfaces[i].mtu.is_some() { "" } else { " (the device's)" };
                    return Err(Error::Spec(format!(
                        "interfaces[{i}].mtu: {}{said} is more than port '{}' carries, {} bytes{}",
                        iface.mtu,
                        port.name,
                        port.largest_mtu(),
                        if port.backend == sluice_port::Backend::AfXdp { ": an AF_XDP frame is one pool buffer (no multi-buffer frames); use af_packet for jumbo frames" } else { "" }
                    )));
                }
            }
        }
        Ok(interfaces)
    }

    /// One implementation per model module, in model order, and the interfaces they were built on.
    fn instances(&self, build: Build) -> Result<(Vec<ModuleCode>, Arc<Interfaces>)> {
        let by_name: HashMap<&str, &ModuleSpec> = self.spec.modules.iter().map(|m| (m.name.as_str(), m)).collect();
        let interfaces = self.build_interfaces(build)?;
        let instances = self.model
            .modules
            .iter()
            .enumerate()
            .map(|(m, decl)| {
                let spec = by_name[decl.name.as_str()];
                let bad = |reason: String| Error::Core(sluice_core::Error::module(&spec.name, reason));
                Ok(match &spec.kind {
                    KindSpec::Source(SourceSpec::Port { port, flows, .. }) if build != Build::Real => {
                        self.flow_rules(flows, &format!("source '{}'", spec.name))?;
                        if build == Build::Modelled {
                            return Err(bad(format!("port '{port}': ports receive on the engine; the simulator has no interfaces")));
                        }
                        ModuleCode::Source(Box::new(Unopened))
                    }
                    KindSpec::Source(source) => ModuleCode::Source(self.source(&spec.name, source, &interfaces)?),
                    KindSpec::Nf(nf) => ModuleCode::Function(match build {
                        Build::Real => nf.build_on(&interfaces),
                        Build::Modelled | Build::Check => nf.build_modelled(&interfaces),
                    }
                    .map_err(bad)?),
                    // The simulator's packets are real frames too: its tap writes them, stamped in virtual time.
                    KindSpec::PcapTap { path } => match build {
                        Build::Real | Build::Modelled => ModuleCode::Function(Box::new(PcapTap::create(path)?)),
                        Build::Check => ModuleCode::Function(Box::new(sluice_nf::Bypass::new(0, 0))),
                    },
                    KindSpec::Sink { port, ring } => {
                        // The simulator models no wire: its egresses deliver.
                        let wire: Option<Box<dyn PacketSink>> = match (port, build) {
                            (Some(_), Build::Real) => Some(Box::new(TxPort::open(&self.ports[&spec.name].0, ring.config())?)),
                            _ => None,
                        };
                        // A sink no flow ends at has no class: it transmits or delivers unscheduled.
                        // (The flows ending at one share their class: see the plan.)
                        let class = self.egress.as_ref().zip(self.model.sink_flows[m].first()).map(|(plan, &f)| plan.class_of_flow[f]);
                        match (class, wire) {
                            (Some(_), _) if matches!(build, Build::Modelled) && self.model.workers() > 1 => {
                                return Err(bad("a scheduled egress across workers runs on the engine; the simulator's workers keep separate clocks".into()))
                            }
                            (Some(class), wire) if !matches!(build, Build::Check) => ModuleCode::Scheduled(class, wire),
                            (_, Some(wire)) => ModuleCode::Transmit(wire),
                            (_, None) => ModuleCode::Egress,
                        }
                    }
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((instances, interfaces))
    }

    fn flow_rules(&self, flows: &[FlowRuleSpec], context: &str) -> Result<FlowRules> {
        crate::source_rules::compile(flows, |f| self.flow_id(f, context), context)
    }

    fn source(&self, name: &str, spec: &SourceSpec, interfaces: &Interfaces) -> Result<Box<dyn sluice_core::PacketSource>> {
        let context = format!("source '{name}'");
        Ok(match spec {
            SourceSpec::Synthetic { streams, burstiness } => {
                let streams = streams
                    .iter()
                    .map(|s| {
                        Ok(Stream {
                            frame: s.template.build()?,
                            flow: s.flow.as_deref().map(|f| self.flow_id(f, &context)).transpose()?,
                            rate_pps: s.rate_pps.unwrap_or(f64::INFINITY),
                            burst_pkts: s.burst_pkts,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Box::new(SyntheticSource::new(streams, *burstiness).map_err(|e| Error::Spec(format!("{context}: {e}")))?)
            }
            SourceSpec::Pcap { path, flows, rate_pps, .. } => {
                let rules = self.flow_rules(flows, &context)?;
                Box::new(PcapReplay::new(self.captures[path].clone(), path, rules, rate_pps.unwrap_or(f64::INFINITY))?)
            }
            SourceSpec::Port { flows, ring, .. } => {
                let rules = self.flow_rules(flows, &context)?;
                let (port, fanout) = &self.ports[name];
                let arrived_on = interfaces.named(&port.interface).map_or(sluice_core::packet::NO_PORT, |i| i.index);
                Box::new(RxPort::open(port, ring.config(), rules, *fanout, arrived_on)?)
            }
        })
    }
}

/// The ports of `spec`'s modules, spread over their interfaces by the
/// workers of `model` (see `spread`).
fn spread_ports(spec: &PipelineSpec, model: &Model) -> Result<Spread> {
    let worker: HashMap<&str, usize> = model.modules.iter().zip(&model.worker_of).map(|(m, &w)| (m.name.as_str(), w)).collect();
    let named: Vec<Named> = spec
        .modules
        .iter()
        .filter_map(|m| {
            let (port, fanout, receives) = match &m.kind {
                KindSpec::Source(SourceSpec::Port { port, fanout, .. }) => (port, *fanout, true),
                KindSpec::Sink { port: Some(port), .. } => (port, None, false),
                _ => return None,
            };
            Some(Named { module: &m.name, worker: worker[m.name.as_str()], port, fanout, receives })
        })
        .collect();
    spread(&named)
}

/// What kind of JSON value `v` is, for an error.
fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

/// `e` with the path of the module or flow it is about in front
/// ("modules[3]: module 'x' …"), where it names one.
fn locate(spec: &PipelineSpec, e: Error) -> Error {
    use sluice_core::Error as Core;
    let path = match &e {
        Error::Core(Core::Module { module: m, .. } | Core::DanglingGate { module: m, .. } | Core::Unconnected(m) | Core::Cycle(m)
            | Core::SharedAcrossWorkers { module: m, .. } | Core::NoSuchOutgate { module: m, .. } | Core::GateTaken { module: m, .. }) => spec.module_path(m),
        Error::Core(Core::NoSuchIngate { module: m, .. }) => spec.module_path(m),
        Error::Core(Core::DuplicateModule(m)) => spec.modules.iter().rposition(|x| &x.name == m).map(|i| format!("modules[{i}]")),
        Error::Core(Core::Flow { flow: f, .. } | Core::DuplicateFlow(f)) => spec.flow_path(f),
        Error::Core(Core::BatchSize(_)) => Some("batch_size".into()),
        _ => None,
    };
    // An error about a named gate says its name too.
    let named = match &e {
        Error::Core(Core::DanglingGate { module, gate } | Core::GateTaken { module, gate }) => spec.gate_name(module, *gate).map(|n| format!(" (outgate {gate} is '{n}')")),
        _ => None,
    };
    match path {
        Some(path) => Error::Spec(format!("{path}: {e}{}", named.unwrap_or_default())),
        None => e,
    }
}

/// The model's view of one module: role, gates, profile, whether controlled.
fn declare(m: &ModuleSpec) -> Result<ModuleDecl> {
    let (role, ingates, outgates, intrinsic) = match &m.kind {
        KindSpec::Source(_) => (Role::Source, 0, 1, None),
        KindSpec::Nf(nf) => (Role::Function, nf.ingates(), nf.outgates(), nf.intrinsic_profile()),
        KindSpec::PcapTap { .. } => (Role::Function, 1, 1, None),
        KindSpec::Sink { .. } => (Role::Sink, 1, 0, None),
    };
    let profile = match (m.t0_ns, m.t1_ns) {
        (None, None) => intrinsic,
        (t0, t1) => Some(Profile { t0_ns: t0.unwrap_or(0.0), t1_ns: t1.unwrap_or(0.0) }),
    };
    if m.gates.len() > outgates {
        return Err(Error::Core(sluice_core::Error::module(&m.name, format!("{} gate names for {outgates} outgates", m.gates.len()))));
    }
    let mut seen = std::collections::HashSet::with_capacity(m.gates.len());
    if let Some(twice) = m.gates.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(Error::Core(sluice_core::Error::module(&m.name, format!("gate '{twice}' is named twice"))));
    }
    let controllable = role == Role::Function && profile.is_some_and(|p| p.batchiness() <= 0.5);
    let controlled = m.controlled.unwrap_or(controllable);
    if controlled && role != Role::Function {
        return Err(Error::Core(sluice_core::Error::module(&m.name, "only a network function can be controlled")));
    }
    let max_age_ns = match m.max_age_us {
        None => None,
        Some(us) if us > 0.0 && us.is_finite() => Some((us * 1e3).round().max(1.0) as u64),
        Some(us) => return Err(Error::Core(sluice_core::Error::module(&m.name, format!("age bound {us} µs must be > 0")))),
    };
    // A port that receives into or sends from the pool's buffers keeps some lent to its device.
    let lent = |port: &str, ring: &RingSpec| PortName::parse(port).map_or(0, |p| p.lends(&ring.config()));
    let (queue_pkts, held_pkts, max_hold_ns) = match &m.kind {
        KindSpec::Nf(nf) => (nf.queue_capacity(), nf.most_held(), nf.max_hold_ns()),
        KindSpec::Source(SourceSpec::Port { port, ring, .. }) | KindSpec::Sink { port: Some(port), ring } => (None, lent(port, ring), None),
        _ => (None, 0, None),
    };
    Ok(ModuleDecl { name: m.name.clone(), role, ingates, outgates, profile, controlled, max_age_ns, queue_pkts, held_pkts, max_hold_ns })
}
