//! The serialisable pipeline description (what the Python front sends).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_nf::icmp_limit::IcmpSettings;
use sluice_nf::{InterfaceSpec, NfSpec};
use sluice_traffic::TemplateSpec;

/// A whole pipeline.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    /// Human-readable name, e.g. "rc(16)".
    #[serde(default)]
    pub name: String,
    /// Batch size B (pkt, 1..=256).
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// Modules, in any order.
    pub modules: Vec<ModuleSpec>,
    /// Connections.
    #[serde(default)]
    pub edges: Vec<EdgeSpec>,
    /// Flows.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// How every worker orders its work.
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    /// What the workers do after a round that drains their input.
    #[serde(default)]
    pub poll: PollSpec,
    /// What one worker does instead, by worker number (`{"1": {"policy": "learned"}}`).
    #[serde(default)]
    pub worker_poll: std::collections::BTreeMap<usize, PollSpec>,
    /// Workers taken down during the run (a core failure), checked when the run starts.
    #[serde(default)]
    pub outages: Vec<OutageSpec>,
    /// Idle workers kept beside the placed ones: when a worker is in
    /// inherent violation, pipeline decomposition moves flows to one.
    #[serde(default)]
    pub spare_workers: usize,
    /// A scheduler sharing the output link among classes of flows (absent: none).
    #[serde(default)]
    pub egress_scheduler: Option<crate::egress_plan::EgressSchedulerSpec>,
    /// The router's interfaces (addresses, MAC, MTU, neighbours), which
    /// the router's NFs name (`interface_input`, `next_hop`…) and whose
    /// ports stamp their packets with them.
    #[serde(default)]
    pub interfaces: Vec<InterfaceSpec>,
    /// How many ICMP errors the router sends (Linux's limits by default).
    #[serde(default)]
    pub icmp: IcmpSettings,
    /// Keep the queues on the rings between workers short with CoDel
    /// (RFC 8289): a packet leaving a ring is judged by how long it has
    /// been in the pipeline, and dropped (counted, reason `aqm`) or, where
    /// it is ECN-capable and `ecn` is on, marked. Absent: a full ring
    /// pushes back on what feeds it and drops nothing. On the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_codel: Option<sluice_core::CoDelConfig>,
}

/// A worker down from the start of period `from` until the start of period `until`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    /// The worker.
    pub worker: usize,
    /// First period down (over all periods, warm-up included).
    pub from: usize,
    /// First period back up.
    pub until: usize,
}

/// How every worker orders its work.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Scheduler")]
pub struct SchedulerSpec {
    /// The scheduling model.
    pub mode: SchedulerMode,
    /// wfq: sources pause while the queues hold this many packets (pkt,
    /// ≥ 1); absent: no backpressure.
    pub backpressure_pkts: Option<usize>,
}

/// A worker's scheduling model.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerMode {
    /// Run-to-completion (BESS's and Batchy's default).
    #[default]
    Rtc,
    /// Weighted-fair queueing: a queue per controlled module, stride scheduling by weight.
    Wfq,
}

impl SchedulerSpec {
    /// Refuses settings that cannot work together, naming the field.
    pub fn check(&self) -> Result<(), String> {
        match (self.mode, self.backpressure_pkts) {
            (SchedulerMode::Rtc, Some(_)) => Err("backpressure_pkts: applies to mode \"wfq\" only (run-to-completion has no queues to bound)".into()),
            (SchedulerMode::Wfq, Some(0)) => Err("backpressure_pkts: 0 would stop every source for good; give at least 1 packet or leave it out".into()),
            _ => Ok(()),
        }
    }
}

/// What a worker does after a round that drained its input: `busy` polls again at
/// once (a whole core at any load); `empty-poll` sleeps after `empty_polls`
/// empty rounds, `min_sleep_us` first, doubling while idle up to
/// `max_sleep_us` (the most a packet arriving at an idle worker waits);
/// `slo-aware` as empty-poll, each sleep also bounded by a share of the
/// delay slack of the worker's flows, measured each period;
/// `slo-batching` sleeps after every round short of a full batch, under
/// load too, so that the next batches fill: as long as the flows' slack,
/// half the emptiest receive queue's room at the measured arrival rate and
/// `max_sleep_us` allow, and not at all below `min_sleep_us`;
/// `vpp-adaptive` waits for the next packet (an interrupt, at most
/// `max_sleep_us`) while rounds bring fewer than `threshold_pkts` on
/// average, and polls above; `metronome` sleeps `vacation_us` whenever its
/// input is drained; `learned` sleeps what a trained `model` (a file
/// `sluice train polling` writes; default: the one shipped) predicts from
/// the last rounds' sizes, the idle time and the arrival rate after every
/// round short of a full batch, bounded as slo-batching's sleeps are and by
/// `max_sleep_us`. The sleep settings apply to the policies that sleep.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "PollSettings")]
pub struct PollSpec {
    /// Which policy.
    pub policy: PollKind,
    /// Rounds without work before the first sleep.
    pub empty_polls: u32,
    /// The first sleep (µs); slo-batching's shortest.
    pub min_sleep_us: f64,
    /// The longest sleep (µs); vpp-adaptive's longest wait for an interrupt.
    pub max_sleep_us: f64,
    /// vpp-adaptive: packets a round below which the worker waits for interrupts.
    pub threshold_pkts: u32,
    /// metronome: the vacation after the input is drained (µs).
    pub vacation_us: f64,
    /// learned: the model file (JSON, as `sluice train polling` writes it).
    pub model: Option<String>,
    /// Workers log what the learned policy reads at each round short of a
    /// full batch, under any policy, into each period's report (`poll_features`;
    /// for training).
    pub log_features: bool,
}

/// The poll policies.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PollKind {
    /// Poll again at once.
    #[default]
    Busy,
    /// Sleep after a number of empty rounds, doubling the sleep while idle.
    EmptyPoll,
    /// As empty-poll, each sleep also bounded by the delay slack of the worker's flows.
    SloAware,
    /// Sleeps after every round short of a full batch, as long as the flows' slack and the receive queues allow.
    SloBatching,
    /// VPP's adaptive mode: interrupts while vectors are small, polling above.
    VppAdaptive,
    /// Metronome: a fixed vacation after the input is drained.
    Metronome,
    /// A trained model predicts the sleep from the last rounds' sizes.
    Learned,
}

// A sleep costs a thread 25-40 µs of CPU on a VM like the development
// machine's, whatever its length: shorter sleeps give little back.
impl Default for PollSpec {
    fn default() -> Self {
        Self { policy: PollKind::Busy, empty_polls: 64, min_sleep_us: 50.0, max_sleep_us: 500.0, threshold_pkts: 8, vacation_us: 50.0, model: None, log_features: false }
    }
}

impl PollSpec {
    /// The policy, its settings checked.
    pub fn policy(&self) -> Result<sluice_core::PollPolicy, String> {
        let ns = |us: f64| if us.is_finite() && us >= 0.0 { (us * 1e3).round() as u64 } else { u64::MAX };
        let within = |what: &str, ns: u64| if (1_000..=1_000_000_000).contains(&ns) { Ok(ns) } else { Err(format!("{what} must be 1 µs..=1 s")) };
        match self.policy {
            PollKind::Busy => Ok(sluice_core::PollPolicy::Busy),
            PollKind::VppAdaptive => {
                if !(1..=sluice_core::MAX_BURST as u32).contains(&self.threshold_pkts) {
                    return Err(format!("threshold_pkts {} must be 1..={}", self.threshold_pkts, sluice_core::MAX_BURST));
                }
                Ok(sluice_core::PollPolicy::VppAdaptive { threshold_pkts: self.threshold_pkts, max_wait_ns: within("max_sleep_us", ns(self.max_sleep_us))? })
            }
            PollKind::Metronome => Ok(sluice_core::PollPolicy::Metronome { vacation_ns: within("vacation_us", ns(self.vacation_us))? }),
            PollKind::Learned => {
                let path = self.model.as_deref().ok_or("the learned policy needs a model file (\"model\")")?;
                let model = crate::poll_model_file::read(path, within("max_sleep_us", ns(self.max_sleep_us))?)?;
                Ok(sluice_core::PollPolicy::Learned(std::sync::Arc::new(model)))
            }
            // The sleeping kinds: empty-poll, slo-aware, slo-batching.
            kind => {
                let (min, max) = (within("min_sleep_us", ns(self.min_sleep_us))?, within("max_sleep_us", ns(self.max_sleep_us))?);
                if min > max {
                    return Err(format!("min_sleep_us {} must be ≤ max_sleep_us {}", self.min_sleep_us, self.max_sleep_us));
                }
                if kind == PollKind::SloBatching {
                    return sluice_core::PollPolicy::slo_batching(min, max);
                }
                if self.empty_polls == 0 {
                    return Err("empty_polls must be ≥ 1".into());
                }
                sluice_core::PollPolicy::sleeping(kind == PollKind::SloAware, self.empty_polls, min, max)
            }
        }
    }
}

fn default_batch_size() -> usize {
    32
}

/// One module.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModuleSpec {
    /// Unique name.
    pub name: String,
    /// What it is.
    #[serde(flatten)]
    pub kind: KindSpec,
    /// Cost per batch (ns), overriding the NF's own or profiled value.
    #[serde(default)]
    pub t0_ns: Option<f64>,
    /// Cost per packet (ns).
    #[serde(default)]
    pub t1_ns: Option<f64>,
    /// Whether it gets a controlled fractional buffer (default: when its
    /// profile is known and its batchiness is ≤ 0.5).
    #[serde(default)]
    pub controlled: Option<bool>,
    /// Age bound of the module's fractional buffer (µs): it flushes when its
    /// oldest packet entered the pipeline longer ago. Absent: no bound.
    #[serde(default)]
    pub max_age_us: Option<f64>,
    /// Worker that runs the module (default: a source's is 0, any other's
    /// its upstream's); an edge between workers runs through a ring.
    #[serde(default)]
    pub worker: Option<usize>,
    /// Names of its outgates, gate 0's first (as VPP names a node's next
    /// nodes): an edge may give a gate by its name, and an error about a
    /// named gate says its name beside its number.
    #[serde(default)]
    pub gates: Vec<String>,
}

/// The kinds of module.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KindSpec {
    /// A task ingress.
    Source(SourceSpec),
    /// A network function.
    Nf(NfSpec),
    /// A pass-through that writes every packet to a pcap file.
    PcapTap {
        /// Output file.
        path: String,
    },
    /// An egress.
    Sink {
        /// A port it transmits on first, `BACKEND:INTERFACE` (absent: none).
        #[serde(default)]
        port: Option<String>,
        /// The port's transmit ring.
        #[serde(default)]
        ring: RingSpec,
    },
}

/// The shape of a port's ring (see `sluice_port::RingConfig`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RingSpec {
    /// Bytes per block (a multiple of the page size).
    pub block_size: u32,
    /// Blocks in the ring.
    pub blocks: u32,
    /// Bytes per frame slot (a multiple of 16).
    pub frame_size: u32,
    /// AF_XDP: descriptors per ring (a power of two).
    pub descriptors: u32,
}

impl Default for RingSpec {
    fn default() -> Self {
        let c = sluice_port::RingConfig::default();
        Self { block_size: c.block_size, blocks: c.blocks, frame_size: c.frame_size, descriptors: c.descriptors }
    }
}

impl RingSpec {
    /// The ring this describes.
    pub fn config(&self) -> sluice_port::RingConfig {
        sluice_port::RingConfig { block_size: self.block_size, blocks: self.blocks, frame_size: self.frame_size, descriptors: self.descriptors }
    }
}

/// Where a source's packets come from.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SourceSpec {
    /// Template packets, one stream per template, interleaved.
    Synthetic {
        /// Streams.
        streams: Vec<StreamSpec>,
        /// Packets of one stream in a row (≥ 1).
        #[serde(default = "one")]
        burstiness: usize,
    },
    /// A classic pcap file replayed from memory in a loop.
    Pcap {
        /// The file.
        path: String,
        /// Flows by IPv4 or IPv6 destination prefix, first match wins.
        #[serde(default)]
        flows: Vec<FlowRuleSpec>,
        /// Replay rate (pkt/s; absent: as fast as taken).
        #[serde(default)]
        rate_pps: Option<f64>,
        /// Rate steps over periods.
        #[serde(default)]
        rate_schedule: Vec<(usize, f64)>,
    },
    /// Frames received on a network interface (the engine only).
    Port {
        /// `BACKEND:INTERFACE`, e.g. `af_packet:veth1`.
        port: String,
        /// Flows by IPv4 or IPv6 destination prefix, first match wins (no match:
        /// decided downstream, by a splitter).
        #[serde(default)]
        flows: Vec<FlowRuleSpec>,
        /// The receive ring.
        #[serde(default)]
        ring: RingSpec,
        /// A fanout group to join: the kernel spreads flows (by hash) over
        /// the ports in it, one per worker.
        #[serde(default)]
        fanout: Option<u16>,
    },
}

fn one() -> usize {
    1
}

/// One synthetic stream.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// Flow whose packets these are (absent: decided downstream, e.g. by a random split).
    #[serde(default)]
    pub flow: Option<String>,
    /// Offered rate (pkt/s; absent: as fast as the worker takes them).
    #[serde(default)]
    pub rate_pps: Option<f64>,
    /// Rate steps over periods (period, pkt/s).
    #[serde(default)]
    pub rate_schedule: Vec<(usize, f64)>,
    /// Packets that arrive together, in bursts at the same mean rate (1:
    /// evenly spaced; at most a receive queue, 4096).
    #[serde(default = "one")]
    pub burst_pkts: usize,
    /// The frame.
    #[serde(default)]
    pub template: TemplateSpec,
}

/// A rule that marks a received or replayed packet as a flow's: by its
/// destination's prefix, or by its exact 5-tuple (which goes first).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowRuleSpec {
    /// Flow name.
    pub flow: String,
    /// "20.0.1.0/24" or "2001:db8:1::/48".
    #[serde(default)]
    pub prefix: Option<String>,
    /// Or the 5-tuple.
    #[serde(default)]
    pub five_tuple: Option<FiveTupleSpec>,
}

/// An exact 5-tuple: addresses of one family, protocol, ports.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FiveTupleSpec {
    /// Source address ("10.0.0.1", "2001:db8::1").
    pub src: String,
    /// Destination address, of the source's family.
    pub dst: String,
    /// Protocol: "udp", "tcp", "icmp", "icmpv6" or its number.
    pub proto: ProtoSpec,
    /// Source port (0 for a protocol without ports).
    #[serde(default)]
    pub sport: u16,
    /// Destination port.
    #[serde(default)]
    pub dport: u16,
}

/// An IP protocol by name or number.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProtoSpec {
    /// Its number (17: UDP).
    Number(u8),
    /// "udp", "tcp", "icmp", "icmpv6".
    Name(String),
}

/// A connection `from:outgate -> to:ingate`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    /// Upstream module.
    pub from: String,
    /// Its outgate: a number, or a name of its `gates`.
    #[serde(default)]
    pub outgate: GateRef,
    /// Downstream module.
    pub to: String,
    /// Its ingate.
    #[serde(default)]
    pub ingate: usize,
}

/// An outgate by its number or by its name (see [`ModuleSpec::gates`]).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum GateRef {
    /// Its number.
    Number(usize),
    /// Its name.
    Name(String),
}

impl GateRef {
    /// Its number among the outgates of module `module`, named `names`;
    /// the error names the gates there are where it is a name they lack.
    pub fn number(&self, module: &str, names: &[String]) -> Result<usize, String> {
        let name = match self {
            Self::Number(n) => return Ok(*n),
            Self::Name(name) => name,
        };
        names.iter().position(|n| n == name).ok_or_else(|| {
            let known: Vec<String> = names.iter().enumerate().map(|(i, n)| format!("{i} '{n}'")).collect();
            match known.is_empty() {
                true => format!("module '{module}' names no gates, so it has no gate '{name}': give its number"),
                false => format!("module '{module}' has no gate '{name}' (its gates: {})", known.join(", ")),
            }
        })
    }
}

impl Default for GateRef {
    fn default() -> Self {
        Self::Number(0)
    }
}

/// A flow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Unique name.
    pub name: String,
    /// Module names from source to sink.
    pub path: Vec<String>,
    /// Delay SLO (µs; absent: best effort).
    #[serde(default)]
    pub slo_us: Option<f64>,
    /// SLO steps over periods (period, µs).
    #[serde(default)]
    pub slo_schedule: Vec<(usize, f64)>,
}

/// The most a module may cost a batch or a packet in a description (ns: a second).
pub const MAX_COST_NS: f64 = 1e9;

impl PipelineSpec {
    /// Refuses numbers beyond the bounds of [`sluice_core::limits`] and values
    /// that would make a run meaningless, naming the field by its path.
    pub fn check_bounds(&self) -> Result<(), String> {
        use sluice_core::limits::{check_count, check_rate, MAX_FLOWS, MAX_MODULES, MAX_PERIODS, MAX_WORKERS};
        check_count("modules", self.modules.len(), false, MAX_MODULES)?;
        check_count("flows", self.flows.len(), true, MAX_FLOWS)?;
        check_count("spare_workers", self.spare_workers, true, MAX_WORKERS - 1)?;
        let schedule = |field: &str, steps: &[(usize, f64)], value: &dyn Fn(&str, f64) -> Result<f64, String>| {
            for (k, &(period, v)) in steps.iter().enumerate() {
                check_count(&format!("{field}[{k}] period"), period, true, MAX_PERIODS)?;
                value(&format!("{field}[{k}]"), v)?;
            }
            Ok::<(), String>(())
        };
        for (i, m) in self.modules.iter().enumerate() {
            let at = |field: &str| format!("modules[{i}].{field}");
            if let Some(w) = m.worker {
                check_count(&at("worker"), w, true, MAX_WORKERS - 1)?;
            }
            for (name, cost) in [("t0_ns", m.t0_ns), ("t1_ns", m.t1_ns)] {
                if let Some(ns) = cost.filter(|ns| !(*ns >= 0.0 && *ns <= MAX_COST_NS)) {
                    return Err(format!("{}: cost {ns} ns must be in 0..={MAX_COST_NS:e}", at(name)));
                }
            }
            match &m.kind {
                KindSpec::Source(SourceSpec::Synthetic { streams, burstiness }) => {
                    check_count(&at("source.synthetic.burstiness"), *burstiness, false, usize::MAX)?;
                    for (j, s) in streams.iter().enumerate() {
                        let field = at(&format!("source.synthetic.streams[{j}]"));
                        if let Some(pps) = s.rate_pps {
                            check_rate(&format!("{field}.rate_pps"), pps)?;
                        }
                        schedule(&format!("{field}.rate_schedule"), &s.rate_schedule, &check_rate)?;
                    }
                }
                KindSpec::Source(SourceSpec::Pcap { rate_pps, rate_schedule, .. }) => {
                    if let Some(pps) = rate_pps {
                        check_rate(&at("source.pcap.rate_pps"), *pps)?;
                    }
                    schedule(&at("source.pcap.rate_schedule"), rate_schedule, &check_rate)?;
                }
                _ => {}
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let slo = |field: &str, us: f64| if us.is_finite() && us > 0.0 { Ok(us) } else { Err(format!("{field}: SLO {us} µs must be > 0")) };
            schedule(&format!("flows[{i}].slo_schedule"), &f.slo_schedule, &slo)?;
        }
        self.scheduler.check().map_err(|e| format!("scheduler.{e}"))
    }

    /// The path of the module called `name` (`modules[3]`), if there is one.
    pub fn module_path(&self, name: &str) -> Option<String> {
        self.modules.iter().position(|m| m.name == name).map(|i| format!("modules[{i}]"))
    }

    /// The name of module `module`'s outgate `gate`, if it has one.
    pub fn gate_name(&self, module: &str, gate: usize) -> Option<&str> {
        self.modules.iter().find(|m| m.name == module)?.gates.get(gate).map(String::as_str)
    }

    /// The path of the flow called `name` (`flows[2]`), if there is one.
    pub fn flow_path(&self, name: &str) -> Option<String> {
        self.flows.iter().position(|f| f.name == name).map(|i| format!("flows[{i}]"))
    }
}
