//! The walker: one worker's share of the graph.
//!
//! Run-to-completion: a round pulls one batch from every task's source and
//! pushes it through the graph depth-first (`walk`): each module's
//! fractional buffer decides when its NF runs, the NF sorts packets into
//! per-gate batches, and each non-empty gate batch is handed to the next
//! module at once.
//!
//! Weighted-fair (`fair`): every controlled module gets a queue of its
//! own and becomes a unit of a stride scheduler beside the sources; a round
//! serves one unit, whose output runs to completion until it reaches the
//! next queue. Optional backpressure stops the sources while the queues
//! hold too many packets (NFVnice's scheduling model).
//!
//! An edge to a module on another worker ends in a lock-free ring; the
//! other worker polls its inbound rings every round (`round`), as it does
//! its sources.
//!
//! Where each step lives: `round` (a round, the sources, inbound rings,
//! the core probe), `walk` (buffer, NF, gates), `delivery` (an egress's
//! counting and delays, and the clock read it hands on), `gates` (the order a
//! splitter's gates are served in), `fair` (weighted-fair turns),
//! `triggers` (trigger hand-over), `age` (the age-bound flush), `held`
//! (packets NFs hold, sent when due), `drain` (stopping, and a worker that is down), `counters`
//! (telemetry hand-over), `moves` (modules moving between workers),
//! `replace` (an NF swapped for one rebuilt with a new table), `flows`
//! (flows added and removed while it runs).
//! Nothing here allocates after construction.

use crate::batch::{Batch, MAX_BURST};
use crate::buffer::FractionalBuffer;
use crate::codel::CoDelConfig;
use crate::error::{Error, Result};
use crate::knobs::Knobs;
use crate::model::{FlowId, Model, ModuleId, Role};
use crate::nf::{ModuleCode, NetworkFunction, NfTally, PacketSink, PacketSource};
use crate::pool::PacketPool;
use crate::schedule::Schedule;
use crate::telemetry::{DelaySampling, FlowRecorder, ModuleCounters, WorkerCounters};
use crate::watch::Watch;
use crate::wiring::{WorkerWiring, WFQ_QUEUE};

mod age;
mod claims;
mod clocking;
mod control_link;
mod counters;
mod delivery;
mod drain;
mod fair;
mod flows;
mod gates;
mod held;
mod hops;
mod links;
mod moves;
mod replace;
mod ring_aqm;
mod round;
mod triggers;
mod walk;
mod watch;

#[cfg(test)]
mod tests;

pub use moves::move_modules;

use clocking::Clocking;
use control_link::ControlLink;
use fair::FairTurns;
use links::{InRing, Links, OutRing};

/// Tagged explicitly (`repr(u8)`): the walker tests the tag of every node
/// it runs, and a tag byte is one compare where the niche of a field took five.
#[repr(u8)]
enum Kind {
    Source(Box<dyn PacketSource>),
    Function(Box<dyn NetworkFunction>),
    /// Delivers to the flows it ends, by way of `Output`.
    Egress(Ends, Output),
}

/// The flows an egress ends (see [`Model::sink_flows`]), which its
/// deliveries go to; set from the model at every link (`WorkerGraph::link`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ends {
    /// None: what arrives is released, nobody's.
    Nobody,
    /// One: every packet is delivered to it.
    One(FlowId),
    /// Several: each packet to its own (see `delivery::Recipient::Own`).
    Several,
}

impl Ends {
    fn of(flows: &[FlowId]) -> Self {
        match flows {
            [] => Self::Nobody,
            [f] => Self::One(*f),
            _ => Self::Several,
        }
    }
}

/// Where an egress's packets go before they are delivered.
enum Output {
    /// Nowhere: delivered at once.
    Deliver,
    /// Onto a port's wire; delivered once on it.
    Port(Box<dyn PacketSink>),
    /// Into this class of the worker's scheduled link; when its decision
    /// comes back, onto the port if there is one, and delivered (see `delivery`).
    Scheduled(u16, Option<Box<dyn PacketSink>>),
}

/// What the next runs of a node take from its buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Release {
    /// What its trigger releases of the packets that arrived (see [`FractionalBuffer::next_run`]).
    Arrivals,
    /// Up to `n` queued packets a run: once, or until the buffer is empty when `all`.
    Queued { n: usize, all: bool },
    /// None: the NF sends packets it held (see `held`).
    Held,
}

struct Node {
    module: ModuleId,
    kind: Kind,
    buffer: FractionalBuffer,
    /// The batch that arrived and is being admitted; empty between visits
    /// (a parent's gate batch is swapped in, see `walk`).
    inbox: Box<Batch>,
    /// A run the buffer releases of its queued packets is assembled here.
    scratch: Box<Batch>,
    out: Box<[Box<Batch>]>,
    next: Box<[Target]>,
    /// Per gate, the flow the packets become there (`NO_FLOW`: none;
    /// see `claims`).
    claims: Box<[u16]>,
    release: Release,
    /// Whether the packets the buffer holds waited there since an earlier
    /// arrival (they have left L1: the walker prefetches them).
    waited: bool,
    /// Whether its NF keeps packets between runs (see
    /// [`NetworkFunction::most_held`] and `held`).
    holds: bool,
    /// What its NF last said of the packets it keeps.
    held: crate::nf::Held,
    /// The most packets its NF keeps between runs (pkt).
    most_held: usize,
    counters: ModuleCounters,
    /// Whether its arrivals are counted by round too (the rounds that
    /// brought any, the square of what each brought): a controlled
    /// module's, whose trigger the controllers size by them.
    counts_rounds: bool,
    /// The last round in which a batch arrived (see [`WorkerGraph::rounds`]).
    last_arrival_round: u64,
    /// Packets that arrived in that round (pkt).
    last_round_pkts: u64,
    /// Whether the module queues between scheduler turns (weighted-fair
    /// mode, or a queue module).
    queued: bool,
    /// Whether it queues exactly while it is buffered (weighted-fair with
    /// `buffered_only`; see [`WorkerGraph::take_triggers`]).
    queued_when_buffered: bool,
    /// Age bound of the buffer (ns since the oldest packet's ingress).
    max_age_ns: Option<u64>,
    /// The trigger in force here (pkt; 0 = pass-through; see `triggers`).
    trigger: usize,
    /// Per gate, the rank of the tightest SLO of the flows through it
    /// (a splitter's only, and empty when all rank alike; see `gates`).
    gate_rank: Box<[u32]>,
    /// Room for the gates a run filled, in the order they are served
    /// (a splitter's only; see `gates`).
    filled: Box<[u32]>,
    /// Outbound rings (indices into `rings_out`) this node's packets can
    /// reach on this worker: a source or a ring's target stops taking
    /// packets in while one of them is short of room.
    reaches: Box<[u32]>,
    /// Classes of the scheduled link this node's packets can reach on this
    /// worker: likewise, while one of them has no room (see `EgressLink::room`);
    /// none where the link drops rather than makes sources wait, so that
    /// the entries never ask it.
    classes: Box<[u16]>,
    /// Whether, as an entry, it always may take packets in: it reaches no
    /// ring and no class that makes it wait, and the worker's queues have
    /// no bound (see `round::may_take_in`).
    takes_in_freely: bool,
}

impl Node {
    /// Whether what arrives runs as it is: no trigger to wait for, nothing
    /// buffered before it, no held packets being sent.
    #[inline(always)]
    fn nothing_waits(&self) -> bool {
        self.release == Release::Arrivals && self.trigger == 0 && self.buffer.is_empty()
    }

    /// Whether a batch that arrives runs as it is, at once: nothing waits
    /// and the module does not queue for turns of its own.
    #[inline(always)]
    fn runs_through(&self) -> bool {
        self.nothing_waits() && !self.queued
    }

    /// Whether its queue holds a run's worth: its trigger, at least a packet.
    fn queue_ready(&self) -> bool {
        self.buffer.len() >= self.trigger.max(1)
    }
}

/// Where an outgate leads.
#[derive(Clone, Copy)]
enum Target {
    /// A module on this worker (local index).
    Local(usize),
    /// A ring to another worker (index into `rings_out`).
    Ring(usize),
}

/// A step of the depth-first walk (see `walk`).
#[derive(Clone, Copy)]
struct Task {
    node: u32,
    /// An outgate of `node` whose batch is handed on, or [`Task::CONTINUE`] or [`Task::ARRIVED`].
    gate: u32,
}

impl Task {
    /// Run `node` again if its buffer has a run due.
    const CONTINUE: u32 = u32::MAX;
    /// A batch waits in `node`'s inbox: admit it, then run if a run is due.
    const ARRIVED: u32 = u32::MAX - 1;
}

/// Rounds per timed round on the engine (see [`WalkerConfig::busy_sampling`]).
/// A timed round reads the clock at every NF run (~9 ns a read here): one
/// round in 32 keeps those reads to a fifth of a read a round for a
/// five-NF chain, and still times thousands of rounds a control period.
const BUSY_SAMPLING: u32 = 32;

/// Run-time settings of the walker.
#[derive(Clone, Copy, Debug)]
pub struct WalkerConfig {
    /// Measure packet delays (see `delay_sampling`), NF busy times (sampled
    /// rounds) and the core probe (once a millisecond).
    pub timing: bool,
    /// Packet buffers in this worker's pool (pkt); `None` sizes it from the graph.
    pub pool_capacity: Option<usize>,
    /// Run-to-completion or weighted-fair.
    pub schedule: Schedule,
    /// One round in this many (a power of two; drawn at random, so that it
    /// cannot alias with periodic buffer flushes) times its NF runs, and
    /// busy times are scaled up by it. 1 times every round (the simulator,
    /// whose clock reads cost nothing).
    pub busy_sampling: u32,
    /// Which packets' delays are measured, when timing.
    pub delay_sampling: DelaySampling,
    /// CoDel on every ring between workers (`None`: a full ring pushes
    /// back on what feeds it and drops nothing).
    pub ring_codel: Option<CoDelConfig>,
}

impl Default for WalkerConfig {
    fn default() -> Self {
        Self { timing: true, pool_capacity: None, schedule: Schedule::RunToCompletion, busy_sampling: BUSY_SAMPLING, delay_sampling: DelaySampling::ENGINE, ring_codel: None }
    }
}

/// The modules of one worker and everything needed to run them.
pub struct WorkerGraph {
    /// This worker's modules, in topological order.
    nodes: Vec<Node>,
    /// The source nodes, each pulled once a run-to-completion round.
    sources: Vec<usize>,
    /// The walk's pending steps (see `walk`); its capacity is the deepest
    /// the walk can go, so it never grows while running.
    stack: Vec<Task>,
    /// This worker's packet buffers.
    pool: PacketPool,
    /// Per flow of the model, what this worker recorded of it.
    flows: Vec<FlowRecorder>,
    /// This worker's index.
    index: usize,
    /// Nodes with an age bound, in topological order.
    aged: Vec<usize>,
    /// Nodes whose NF keeps packets between runs, in topological order.
    holding: Vec<usize>,
    /// When the next packet they keep comes due (ns since the origin;
    /// `u64::MAX`: none kept): never later than it, at times earlier.
    wake_ns: u64,
    /// What the running NF counts (see `NfContext::tally`); zero between runs.
    tally: NfTally,
    /// The pipeline's batch size (pkt).
    batch_size: usize,
    /// This worker's own counters (rounds, busy and probe times).
    worker: WorkerCounters,
    /// Rounds started (the first is round 1).
    rounds: u64,
    /// The clock and what it times.
    clocking: Clocking,
    /// What the control thread sets.
    control: ControlLink,
    /// Whose turn it is.
    fair: FairTurns,
    /// Rings to and from other workers, and the scheduled link.
    links: Links,
    /// The trace and captures attached to this worker's modules, if any.
    watch: Option<Box<Watch>>,
}

impl WorkerGraph {
    /// Builds worker `worker`'s part of `model`. `instances` holds one entry
    /// per module of the model (taken for this worker's modules); `knobs`
    /// are the triggers and weights the control thread sets; `wiring` is
    /// this worker's pool and rings (see [`crate::wiring::wire`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        model: &Model,
        worker: usize,
        instances: &mut [Option<ModuleCode>],
        knobs: &Knobs,
        clock: quanta::Clock,
        origin: u64,
        config: WalkerConfig,
        wiring: WorkerWiring,
    ) -> Result<Self> {
        for (what, one_in) in [("busy", config.busy_sampling), ("delay", config.delay_sampling.one_in)] {
            if !one_in.is_power_of_two() {
                return Err(Error::Pipeline(format!("{what} sampling: one round in {one_in} must be a power of two")));
            }
        }
        let mine: Vec<ModuleId> = (0..model.modules.len()).filter(|&m| model.worker_of[m] == worker).collect();
        let mut nodes = Vec::with_capacity(mine.len());
        for &m in &mine {
            let decl = &model.modules[m];
            let instance = instances.get_mut(m).and_then(Option::take).ok_or_else(|| Error::module(&decl.name, "no implementation given"))?;
            let (kind, outgates) = match (decl.role, instance) {
                (Role::Source, ModuleCode::Source(s)) => (Kind::Source(s), 1),
                (Role::Function, ModuleCode::Function(nf)) => {
                    if nf.ingates() != decl.ingates {
                        return Err(Error::module(&decl.name, format!("declared {} ingates, its NF has {}", decl.ingates, nf.ingates())));
                    }
                    let n = nf.outgates();
                    (Kind::Function(nf), n)
                }
                (Role::Sink, ModuleCode::Egress) => (Kind::Egress(Ends::Nobody, Output::Deliver), 0),
                (Role::Sink, ModuleCode::Transmit(port)) => (Kind::Egress(Ends::Nobody, Output::Port(port)), 0),
                (Role::Sink, ModuleCode::Scheduled(class, port)) if wiring.egress.is_some() => (Kind::Egress(Ends::Nobody, Output::Scheduled(class, port)), 0),
                (Role::Sink, ModuleCode::Scheduled(..)) => return Err(Error::module(&decl.name, "a scheduled egress needs the pipeline's scheduled link")),
                (role, _) => return Err(Error::module(&decl.name, format!("implementation does not fit role {role:?}"))),
            };
            if outgates != decl.outgates {
                return Err(Error::module(&decl.name, format!("declared {} outgates, its NF has {outgates}", decl.outgates)));
            }
            let fair = match config.schedule {
                Schedule::WeightedFair { buffered_only, .. } if decl.controlled && decl.queue_pkts.is_none() => Some(buffered_only),
                _ => None,
            };
            let queued = decl.queue_pkts.is_some() || fair == Some(false);
            let queued_when_buffered = fair == Some(true);
            let most_held = match &kind {
                Kind::Function(nf) => nf.most_held(),
                _ => 0,
            };
            nodes.push(Node {
                module: m,
                kind,
                queued,
                queued_when_buffered,
                max_age_ns: decl.max_age_ns,
                buffer: if queued || queued_when_buffered { FractionalBuffer::with_capacity(decl.queue_pkts.unwrap_or(WFQ_QUEUE)) } else { FractionalBuffer::default() },
                inbox: Batch::boxed(),
                scratch: Batch::boxed(),
                out: (0..outgates).map(|_| Batch::boxed()).collect(),
                next: Box::default(),
                claims: Box::default(),
                release: Release::Arrivals,
                waited: false,
                holds: most_held > 0,
                held: crate::nf::Held::NONE,
                most_held,
                counters: ModuleCounters::default(),
                counts_rounds: decl.controlled,
                last_arrival_round: 0,
                last_round_pkts: 0,
                trigger: 0,
                gate_rank: Box::default(),
                filled: if outgates > 1 { vec![0; outgates].into() } else { Box::default() },
                reaches: Box::default(),
                classes: Box::default(),
                takes_in_freely: false,
            });
        }
        let mut graph = Self {
            stack: Vec::new(),
            nodes,
            sources: Vec::new(),
            pool: wiring.pool,
            flows: vec![FlowRecorder::default(); model.flows.len()],
            index: worker,
            aged: Vec::new(),
            holding: Vec::new(),
            wake_ns: u64::MAX,
            tally: NfTally::default(),
            batch_size: model.batch_size,
            worker: WorkerCounters::default(),
            rounds: 0,
            clocking: Clocking::new(clock, origin, &config, worker),
            control: ControlLink::new(knobs),
            fair: FairTurns::new(config.schedule),
            links: Links::new(wiring.outbound, wiring.inbound, wiring.egress, config.ring_codel),
            watch: None,
        };
        graph.link(model);
        graph.attach_ports(model)?;
        Ok(graph)
    }

    /// Runs `edit` on the trace and captures attached to this worker's
    /// modules (made empty if there were none); drops them once empty.
    /// Called between two rounds (see [`crate::Backend::watch`]).
    pub fn edit_watch(&mut self, edit: impl FnOnce(&mut Watch)) {
        let watch = self.watch.get_or_insert_with(Box::default);
        watch.worker = self.index as u16;
        edit(watch);
        if watch.is_empty() {
            self.watch = None;
        }
    }

    /// Packet handles of the arena its pool is a part of (see [`PacketPool::handles`]).
    pub fn pool_handles(&self) -> usize {
        self.pool.handles()
    }

    /// Lets each source and port egress meet the worker's pool (see
    /// [`PacketSource::attach`](crate::nf::PacketSource::attach)).
    fn attach_ports(&mut self, model: &Model) -> Result<()> {
        for node in &mut self.nodes {
            let attached = match &mut node.kind {
                Kind::Source(source) => source.attach(&mut self.pool),
                Kind::Egress(_, Output::Port(port) | Output::Scheduled(_, Some(port))) => port.attach(&mut self.pool),
                _ => Ok(()),
            };
            attached.map_err(|reason| Error::module(&model.modules[node.module].name, reason))?;
        }
        Ok(())
    }

    /// Derives from the nodes and ring ends this worker holds everything
    /// the walker looks up: node order, where each gate leads and which
    /// flow it claims, which node each inbound ring feeds, which rings each
    /// entry reaches, the scheduler's units. Runs at construction and after
    /// modules move (the only time it allocates).
    fn link(&mut self, model: &Model) {
        // Modules that moved in bring the triggers their old worker had taken.
        self.control.retake();
        let mut rank = vec![0; model.modules.len()];
        for (i, &m) in model.topo_order.iter().enumerate() {
            rank[m] = i;
        }
        self.nodes.sort_by_key(|n| rank[n.module]);
        let mut local = vec![usize::MAX; model.modules.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            local[n.module] = i;
        }
        for node in &mut self.nodes {
            if let Kind::Egress(ends, _) = &mut node.kind {
                *ends = Ends::of(&model.sink_flows[node.module]);
            }
        }
        let hops = hops::hops(model);
        let mut claims = claims::claim_hops(model, &hops);
        claims::skip_stamped(model, &mut claims, &self.stamped_modules(model, &local));
        for node in &mut self.nodes {
            let m = node.module;
            if node.out.len() > 1 {
                node.gate_rank = gates::gate_rank(model, &hops, m);
            }
            let rings_out = &self.links.rings_out;
            node.next = (0..node.out.len())
                .map(|g| match rings_out.iter().position(|r| model.edges[r.edge].from == m && model.edges[r.edge].outgate == g) {
                    Some(r) => Target::Ring(r),
                    None => Target::Local(local[model.next[m][g]]),
                })
                .collect();
            node.claims = (0..node.out.len()).map(|g| claims[m][g]).collect();
        }
        // A link whose classes always have room never makes sources wait.
        let link_waits = self.links.egress.as_deref().is_some_and(|link| link.room(0) != usize::MAX);
        let unbounded = self.backpressure() == usize::MAX;
        // Reverse topological order: a node reaches what its children reach.
        for v in (0..self.nodes.len()).rev() {
            let (mut reaches, mut classes): (Vec<u32>, Vec<u16>) = (Vec::new(), Vec::new());
            if let (Kind::Egress(_, Output::Scheduled(class, _)), true) = (&self.nodes[v].kind, link_waits) {
                classes.push(*class);
            }
            for &t in self.nodes[v].next.iter() {
                match t {
                    Target::Ring(r) => reaches.push(r as u32),
                    Target::Local(c) => {
                        reaches.extend_from_slice(&self.nodes[c].reaches);
                        classes.extend_from_slice(&self.nodes[c].classes);
                    }
                }
            }
            reaches.sort_unstable();
            reaches.dedup();
            classes.sort_unstable();
            classes.dedup();
            let node = &mut self.nodes[v];
            node.takes_in_freely = reaches.is_empty() && classes.is_empty() && unbounded;
            node.reaches = reaches.into();
            node.classes = classes.into();
        }
        for r in &mut self.links.rings_in {
            r.target = local[model.edges[r.edge].to];
        }
        // What the worker can hold: its buffers' and queues' packets, what its NFs keep, and a batch per entry.
        let entries = self.links.rings_in.len() + self.nodes.len();
        let held = self.nodes.iter().map(|n| n.buffer.capacity() + n.most_held).sum::<usize>() + entries * MAX_BURST;
        for r in &mut self.links.rings_out {
            r.sender = local[model.edges[r.edge].from];
            r.reserve_backlog(held);
        }
        let nodes = &self.nodes;
        self.sources = (0..nodes.len()).filter(|&i| matches!(nodes[i].kind, Kind::Source(_))).collect();
        self.aged = (0..nodes.len()).filter(|&i| nodes[i].max_age_ns.is_some()).collect();
        self.holding = (0..nodes.len()).filter(|&i| nodes[i].holds).collect();
        // A module that moved here brings what its NF keeps.
        self.wake_ns = self.next_due_ns();
        self.links.egress_node = vec![None; model.flows.len()];
        // Kept across relinks: packets may be waiting in the scheduled link.
        if self.links.egress.is_some() && self.links.offered_at.len() != self.pool.handles() {
            self.links.offered_at = vec![u32::MAX; self.pool.handles()].into();
        }
        for (v, node) in nodes.iter().enumerate() {
            if matches!(node.kind, Kind::Egress(..)) {
                for &f in &model.sink_flows[node.module] {
                    self.links.egress_node[f] = Some(v);
                }
            }
        }
        self.links.recount_backlogged();
        self.fair.queues = (0..nodes.len()).filter(|&i| nodes[i].queued).collect();
        self.fair.queued_pkts = self.fair.queues.iter().map(|&i| nodes[i].buffer.len()).sum();
        let units = (0..nodes.len()).filter(|&i| nodes[i].queued || nodes[i].queued_when_buffered || matches!(nodes[i].kind, Kind::Source(_))).collect();
        self.fair.set_units(units, nodes.len());
        // Sources pace their streams by the clock (see `round`); CoDel on inbound rings judges by it.
        let judges_rings = self.links.rings_in.iter().any(|r| r.codel.is_some());
        self.clocking.reads_clock = self.clocking.measures || !self.sources.is_empty() || !self.aged.is_empty() || !self.holding.is_empty() || judges_rings;
        // Deepest walk: every node once waiting to run again, with a task per gate of its last run.
        let depth = 1 + nodes.iter().map(|n| 1 + n.out.len()).sum::<usize>();
        self.stack = Vec::with_capacity(depth);
    }

    /// Per module of the model, whether every packet it sends belongs to a
    /// flow already, as far as this worker can tell: a source here that
    /// stamps every packet, and a module here fed only by such modules
    /// (modules elsewhere, whose packets come over a ring, it cannot tell
    /// of). `local` is each module's node here (`usize::MAX`: not here).
    fn stamped_modules(&self, model: &Model, local: &[usize]) -> Vec<bool> {
        let n = model.modules.len();
        // Whether every module feeding each one stamps (so far, in topological order).
        let mut fed_stamped = vec![true; n];
        let mut stamped = vec![false; n];
        for &m in &model.topo_order {
            stamped[m] = match self.nodes.get(local[m]).map(|n| &n.kind) {
                Some(Kind::Source(source)) => source.stamps_every_packet(),
                Some(_) => fed_stamped[m],
                None => false,
            };
            if !stamped[m] {
                for &to in &model.next[m] {
                    fed_stamped[to] = false;
                }
            }
        }
        stamped
    }

    /// Time now (ns since the run's origin).
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clocking.now_ns()
    }

    /// Packets this worker allocated minus those it freed (pkt); for a
    /// worker whose packets never leave it, the packets it holds.
    pub fn in_flight(&self) -> i64 {
        self.pool.in_use()
    }
}
