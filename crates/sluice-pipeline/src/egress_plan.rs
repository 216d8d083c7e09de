//! A pipeline's scheduled egress, as its description gives it: every flow
//! ends in a class of one scheduler (DRR or WF²Q+) that shares an emulated
//! output link by the classes' weights (see `sluice_pspat::egress`).
//! Runs on the engine, and on the simulator with one worker (whose
//! virtual clock the link then runs on).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_core::Model;
use sluice_pspat::aqm::QueueManagement;
pub use sluice_pspat::sched::Shape;
use sluice_pspat::sched::Algorithm;
use sluice_pspat::{EgressConfig, Link};

use crate::error::{Error, Result};

/// `egress_scheduler` in a pipeline description.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "EgressScheduler")]
pub struct EgressSchedulerSpec {
    /// The scheduling algorithm (`priority`: a class's weight is its
    /// priority, the largest first).
    pub algorithm: Algorithm,
    /// The link's rate (bit/s).
    pub link_bits_per_s: f64,
    /// Framing bytes charged per packet on the link (Ethernet: 24).
    #[serde(default = "default_overhead")]
    pub overhead_bytes: u32,
    /// Packets each class's queue holds; arrivals beyond are dropped, counted.
    #[serde(default = "default_queue")]
    pub queue_pkts: usize,
    /// What a full class does.
    #[serde(default)]
    pub on_full: OnFull,
    /// Δ_A: the least time between two of the arbiter's scans (µs; 0:
    /// back to back): the mailboxes' cache lines move between the workers'
    /// cores and the arbiter's at most that often, and a packet may wait
    /// that much more.
    #[serde(default)]
    pub scan_gap_us: f64,
    /// Shaped parents the classes may be put under (HTB-like: each is
    /// given its rate and may borrow up to its ceiling); with parents,
    /// every class names one, and the algorithm shares each parent among
    /// its classes (empty: the classes share the link directly).
    #[serde(default)]
    pub parents: Vec<ParentSpec>,
    /// The classes, in order.
    pub classes: Vec<ClassSpec>,
}

/// A shaped parent of classes of the scheduled egress.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "EgressParent")]
pub struct ParentSpec {
    /// Unique name.
    pub name: String,
    /// The rate it is given (bit/s).
    pub rate_bits_per_s: f64,
    /// The rate it may reach by borrowing what the others leave (bit/s;
    /// absent: the link's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceil_bits_per_s: Option<f64>,
}

/// What a full class of the scheduled egress does.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnFull {
    /// Drops its arrivals, counted.
    #[default]
    Drop,
    /// Has the sources whose packets reach it wait: each worker takes no
    /// packets in while a class it feeds has less than a batch of its
    /// share of the queue left.
    Wait,
}

/// One class of the scheduled egress.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "EgressClass")]
pub struct ClassSpec {
    /// Unique name.
    pub name: String,
    /// Its share of the link against the others' (≥ 1).
    pub weight: u32,
    /// The flows it carries: names, or a prefix ending in `*` for the
    /// flows no class names.
    pub flows: Vec<String>,
    /// Keep its queue short with CoDel (RFC 8289): drop packets that
    /// waited too long, ever more often while they do (absent: tail drop at
    /// `queue_pkts` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel: Option<sluice_core::codel::CoDelConfig>,
    /// Queue its flows apart, in deficit round robin, each kept short with
    /// its own CoDel (FQ-CoDel, RFC 8290): a sparse flow waits behind no
    /// bulk one (absent: one queue; not with `codel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_codel: Option<sluice_pspat::fq_codel::FqCoDelConfig>,
    /// The parent it is under (one of `parents`; absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

impl ClassSpec {
    /// How its queue is managed; the error names the problem.
    fn queue_management(&self) -> Result<QueueManagement, String> {
        let management = match (self.codel, self.fq_codel) {
            (None, None) => QueueManagement::TailDrop,
            (Some(codel), None) => QueueManagement::CoDel(codel),
            (None, Some(fq)) => QueueManagement::FqCoDel(fq),
            (Some(_), Some(_)) => return Err("codel and fq_codel: a class has one of them, not both".into()),
        };
        management.check()?;
        Ok(management)
    }
}

fn default_overhead() -> u32 {
    24
}

fn default_queue() -> usize {
    1024
}

/// The fastest link an egress emulates (bit/s).
const MAX_LINK_BITS_PER_S: f64 = 1e13;

/// Whether a link may run at `bits_per_s`; the error names the field.
pub fn check_link_rate(bits_per_s: f64) -> std::result::Result<(), String> {
    if bits_per_s > 0.0 && bits_per_s <= MAX_LINK_BITS_PER_S {
        Ok(())
    } else {
        Err(format!("link_bits_per_s {bits_per_s} must be in (0, {MAX_LINK_BITS_PER_S:e}]"))
    }
}

/// The longest scan gap (µs): beyond a millisecond the arbiter is no longer a scheduler of µs.
const MAX_SCAN_GAP_US: f64 = 1000.0;

/// Most packets a class's queue may hold.
const MAX_CLASS_QUEUE: usize = 1 << 20;

/// The validated scheduled egress: its settings and each flow's class.
#[derive(Clone, Debug)]
pub struct EgressPlan {
    /// What the arbiter runs.
    pub config: EgressConfig,
    /// Class names, by index.
    pub class_names: Vec<String>,
    /// The class tree's parents' names, by index.
    pub parent_names: Vec<String>,
    /// Per flow of the model, its class.
    pub class_of_flow: Vec<u16>,
}

impl EgressPlan {
    /// Flow `f`'s class in `model`, the pipeline as it runs: a flow added
    /// while it runs is in the class of the egress it ends at (`None`: one no
    /// flow ended at, which delivers unscheduled).
    pub fn class_of(&self, model: &Model, f: usize) -> Option<u16> {
        let first = |f: usize| model.sink_flows[*model.flows[f].path.last()?].first().copied();
        self.class_of_flow.get(f).or_else(|| self.class_of_flow.get(first(f)?)).copied()
    }

    /// The flows (model indices) class `class` carries in `model`.
    pub fn flows_of<'a>(&'a self, model: &'a Model, class: usize) -> impl Iterator<Item = usize> + 'a {
        (0..model.flows.len()).filter(move |&f| self.class_of(model, f).map(usize::from) == Some(class))
    }
}

impl EgressSchedulerSpec {
    /// The shape of parent `p`; the error names the field.
    fn shape(&self, p: &ParentSpec) -> std::result::Result<Shape, String> {
        if self.parents.iter().filter(|q| q.name == p.name).count() > 1 {
            return Err("named twice".into());
        }
        let shape = Shape { rate_bits_per_s: p.rate_bits_per_s, ceil_bits_per_s: p.ceil_bits_per_s.unwrap_or(self.link_bits_per_s) };
        shape.check()?;
        Ok(shape)
    }

    /// Checks the settings and puts every flow of `model` in exactly one class.
    pub fn plan(&self, model: &Model) -> Result<EgressPlan> {
        let bad = |reason: String| Error::Spec(format!("egress_scheduler: {reason}"));
        let algorithm = self.algorithm;
        check_link_rate(self.link_bits_per_s).map_err(bad)?;
        if self.overhead_bytes > u32::from(u16::MAX) {
            return Err(bad(format!("overhead_bytes {} must be ≤ {}", self.overhead_bytes, u16::MAX)));
        }
        if !(0.0..=MAX_SCAN_GAP_US).contains(&self.scan_gap_us) {
            return Err(bad(format!("scan_gap_us {} must be in [0, {MAX_SCAN_GAP_US}]", self.scan_gap_us)));
        }
        if self.queue_pkts == 0 || self.queue_pkts > MAX_CLASS_QUEUE {
            return Err(bad(format!("queue_pkts {} must be 1..={MAX_CLASS_QUEUE}", self.queue_pkts)));
        }
        if self.classes.is_empty() || self.classes.len() > usize::from(u16::MAX) {
            return Err(bad(format!("{} classes: needs 1..={}", self.classes.len(), u16::MAX)));
        }
        let parents = self.parents.iter().map(|p| self.shape(p).map_err(|e| bad(format!("parent '{}': {e}", p.name)))).collect::<Result<Vec<_>>>()?;
        let (mut aqm, mut parent_of) = (Vec::with_capacity(self.classes.len()), Vec::new());
        for (c, class) in self.classes.iter().enumerate() {
            if self.classes[..c].iter().any(|other| other.name == class.name) {
                return Err(bad(format!("class '{}' is named twice", class.name)));
            }
            algorithm.check(&[class.weight]).map_err(|e| bad(format!("class '{}': {e}", class.name)))?;
            aqm.push(class.queue_management().map_err(|e| bad(format!("class '{}': {e}", class.name)))?);
            match (&class.parent, self.parents.is_empty()) {
                (None, true) => {}
                (Some(name), false) => parent_of.push(
                    self.parents.iter().position(|p| &p.name == name).ok_or_else(|| bad(format!("class '{}': no parent named '{name}'", class.name)))?,
                ),
                (None, false) => return Err(bad(format!("class '{}' names no parent: with parents, every class is under one", class.name))),
                (Some(name), true) => return Err(bad(format!("class '{}': parent '{name}', but the egress has no parents", class.name))),
            }
        }
        // Names first, then prefixes for the flows no class names.
        let mut class_of_flow: Vec<Option<u16>> = vec![None; model.flows.len()];
        for prefixes in [false, true] {
            let claimed = class_of_flow.clone();
            for (c, class) in self.classes.iter().enumerate() {
                for pattern in class.flows.iter().filter(|p| p.ends_with('*') == prefixes) {
                    let matches = |name: &str| pattern.strip_suffix('*').map_or(name == pattern, |prefix| name.starts_with(prefix));
                    let mut any = false;
                    for (f, flow) in model.flows.iter().enumerate().filter(|(_, flow)| matches(&flow.name)) {
                        any = true;
                        if claimed[f].is_some() {
                            continue;
                        }
                        if let Some(other) = class_of_flow[f].filter(|&o| usize::from(o) != c) {
                            return Err(bad(format!("flow '{}' is in class '{}' and in class '{}'", flow.name, self.classes[usize::from(other)].name, class.name)));
                        }
                        class_of_flow[f] = Some(c as u16);
                    }
                    if !any {
                        return Err(bad(format!("class '{}': no flow matches '{pattern}'", class.name)));
                    }
                }
            }
        }
        let class_of_flow = class_of_flow
            .iter()
            .enumerate()
            .map(|(f, c)| c.ok_or_else(|| bad(format!("flow '{}' is in no class", model.flows[f].name))))
            .collect::<Result<Vec<_>>>()?;
        // An egress queues into one class: the flows that end at it share it.
        for (sink, flows) in model.sink_flows.iter().enumerate() {
            if let Some(&g) = flows.iter().find(|&&g| class_of_flow[g] != class_of_flow[flows[0]]) {
                let (f, class) = (flows[0], |f: usize| &self.classes[usize::from(class_of_flow[f])].name);
                return Err(bad(format!(
                    "flows '{}' and '{}' both end at '{}' but are in classes '{}' and '{}': the flows of one egress share its class",
                    model.flows[f].name, model.flows[g].name, model.modules[sink].name, class(f), class(g)
                )));
            }
        }
        let config = EgressConfig {
            algorithm,
            link: Link { bits_per_s: self.link_bits_per_s, overhead: self.overhead_bytes },
            weights: self.classes.iter().map(|c| c.weight).collect(),
            queue_pkts: self.queue_pkts,
            wait: self.on_full == OnFull::Wait,
            scan_gap: std::time::Duration::from_secs_f64(self.scan_gap_us * 1e-6),
            aqm,
            parents,
            parent_of,
        };
        config.check_tree().map_err(|e| bad(e.replace("parent ", "parent #")))?;
        // Each worker's pool makes room for what can wait in the egress (see `EgressConfig::most_held`).
        let room = sluice_core::limits::MAX_POOL_BUFFERS / 2;
        if config.most_held() > room {
            return Err(bad(format!("{} classes of {} packets and a mailbox can hold {} packets, more than a worker's pool makes room for ({room})", self.classes.len(), self.queue_pkts, config.most_held())));
        }
        Ok(EgressPlan { config, class_names: self.classes.iter().map(|c| c.name.clone()).collect(), parent_names: self.parents.iter().map(|p| p.name.clone()).collect(), class_of_flow })
    }
}
