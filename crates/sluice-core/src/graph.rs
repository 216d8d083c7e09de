//! The walker: one worker's share of the graph.
//!
//! Run-to-completion: a round pulls one batch from every task's source and
//! pushes it through the graph depth-first: each module's fractional buffer
//! decides when its NF runs, the NF sorts packets into per-gate batches, and
//! each non-empty gate batch is handed to the next module at once.
//!
//! Weighted-fair: every controlled module gets a queue of its own and
//! becomes a unit of a stride scheduler beside the sources; a round serves
//! one unit, whose output runs to completion until it reaches the next
//! queue. Optional backpressure stops the sources while the queues hold too
//! many packets (NFVnice's scheduling model).
//!
//! An edge to a module on another worker ends in a lock-free ring; the
//! other worker polls its inbound rings every round, as it does its sources.
//!
//! The walker, not the NFs, keeps the counters (calls, packets, busy time)
//! the controllers read. Nothing here allocates after construction.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::batch::{Batch, MAX_BURST};
use crate::buffer::FractionalBuffer;
use crate::core_probe;
use crate::error::{Error, Result};
use crate::knobs::Knobs;
use crate::model::{FlowId, Model, ModuleId, Role};
use crate::nf::{free_dropped, NetworkFunction, NfContext, Outputs, PacketSource};
use crate::packet::PacketId;
use crate::pool::PacketPool;
use crate::ring::{Consumer, Producer};
use crate::stride::Stride;
use crate::telemetry::{Counters, FlowRecorder, ModuleCounters, WorkerCounters};
use crate::wiring::{WorkerWiring, WFQ_QUEUE};

mod moves;
pub use moves::move_modules;

/// The code behind one module, as the pipeline layer builds it.
pub enum Instance {
    /// A task ingress.
    Source(Box<dyn PacketSource>),
    /// A network function.
    Function(Box<dyn NetworkFunction>),
    /// An egress: records delivery and delay for the flow that ends there.
    Egress,
}

enum Kind {
    Source(Box<dyn PacketSource>),
    Function(Box<dyn NetworkFunction>),
    Egress(Option<FlowId>),
}

struct Node {
    module: ModuleId,
    kind: Kind,
    buffer: FractionalBuffer,
    scratch: Option<Box<Batch>>,
    out: Vec<Box<Batch>>,
    next: Vec<Target>,
    counters: ModuleCounters,
    /// The last round in which a batch arrived (see [`WorkerGraph::rounds`]).
    last_arrival_round: u64,
    /// Packets that arrived in that round (pkt).
    last_round_pkts: u64,
    /// Whether the module queues between scheduler turns (weighted-fair mode).
    queued: bool,
    /// Age bound of the buffer (ns since the oldest packet's ingress).
    max_age_ns: Option<u64>,
    /// The trigger in force here (pkt; 0 = pass-through; see
    /// [`WorkerGraph::take_triggers`]).
    trigger: usize,
    /// Per gate, the rank of the tightest SLO of the flows through it
    /// (a splitter's only, and empty when all rank alike; see
    /// [`WorkerGraph::dispatch`]).
    gate_rank: Box<[u32]>,
    /// Room for the gates a run filled, in the order they are served
    /// (a splitter's only; see [`WorkerGraph::dispatch`]).
    filled: Box<[u32]>,
}

impl Node {
    /// Whether its queue holds a run's worth: its trigger, at least a packet.
    fn queue_ready(&self) -> bool {
        self.buffer.len() >= self.trigger.max(1)
    }
}

/// Per gate of module `m`, the rank of the tightest SLO of the flows
/// through it (gates no SLO flow passes rank last); empty when all rank alike.
fn gate_rank(model: &Model, m: ModuleId) -> Box<[u32]> {
    let tightest: Vec<u64> = model.next[m]
        .iter()
        .map(|&child| {
            let through = |f: &&crate::model::Flow| f.path.windows(2).any(|hop| hop == [m, child]);
            model.flows.iter().filter(through).filter_map(|f| f.slo_ns).min().unwrap_or(u64::MAX)
        })
        .collect();
    let mut slos = tightest.clone();
    slos.sort_unstable();
    slos.dedup();
    if slos.len() <= 1 {
        return Box::default();
    }
    tightest.iter().map(|t| slos.binary_search(t).expect("every SLO is listed") as u32).collect()
}

/// How a worker orders its work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Each source's batch runs to completion through the graph.
    #[default]
    RunToCompletion,
    /// Stride scheduling over sources and per-module queues of controlled modules.
    WeightedFair {
        /// Sources pause while the queues hold this many packets or more (pkt).
        backpressure: Option<usize>,
    },
}

/// Where an outgate leads.
#[derive(Clone, Copy)]
enum Target {
    /// A module on this worker (local index).
    Local(usize),
    /// A ring to another worker (index into `rings_out`).
    Ring(usize),
}

/// A ring this worker receives from.
struct InRing {
    /// The crossing edge it carries (index into `Model::edges`).
    edge: usize,
    ring: Consumer<PacketId>,
    /// The local node it feeds.
    target: usize,
}

/// Sources pause while an outbound ring has fewer free slots than this (pkt):
/// room for what one batch can release downstream, buffered packets included.
const RING_RESERVE: usize = 2 * MAX_BURST;

/// One round in this many (on average, drawn at random so that it cannot
/// alias with periodic buffer flushes) times its NF runs; busy times are
/// scaled up by it. Keeps the clock reads of busy-time accounting off most
/// rounds; delays are still measured on every packet.
const BUSY_SAMPLING: u64 = 8;

/// Run-time settings of the walker.
#[derive(Clone, Copy, Debug)]
pub struct WalkerConfig {
    /// Measure packet delays (every packet), NF busy times (sampled rounds)
    /// and the core probe (once a millisecond).
    pub timing: bool,
    /// Packet buffers in this worker's pool (pkt); `None` sizes it from the graph.
    pub pool_capacity: Option<usize>,
    /// Run-to-completion or weighted-fair.
    pub schedule: Schedule,
}

impl Default for WalkerConfig {
    fn default() -> Self {
        Self { timing: true, pool_capacity: None, schedule: Schedule::RunToCompletion }
    }
}

/// The modules of one worker and everything needed to run them.
pub struct WorkerGraph {
    nodes: Vec<Node>,
    sources: Vec<usize>,
    spares: Vec<Box<Batch>>,
    pool: PacketPool,
    flows: Vec<FlowRecorder>,
    triggers: Arc<[AtomicU32]>,
    /// How many times the control thread has set triggers ...
    trigger_sets: Arc<AtomicU64>,
    /// ... and how many of those sets this worker has taken (`None`: none yet).
    triggers_taken: Option<u64>,
    weights: Arc<[AtomicU32]>,
    /// Per worker, whether it is down; this worker reads its own.
    halted: Arc<[AtomicBool]>,
    /// This worker's index.
    index: usize,
    schedule: Schedule,
    /// Weighted-fair units (sources and queued modules) and their scheduler.
    units: Vec<usize>,
    /// Per node, its unit (`None`: not one).
    unit_of: Vec<Option<usize>>,
    /// Nodes that keep a queue (in run-to-completion mode, the queue
    /// modules, each served once per round).
    queues: Vec<usize>,
    stride: Stride,
    /// Packets in the queues of queued modules (pkt).
    queued_pkts: usize,
    /// Nodes with an age bound, in topological order.
    aged: Vec<usize>,
    /// Outbound rings and the crossing edge (index into `Model::edges`) each carries.
    rings_out: Vec<(usize, Producer<PacketId>)>,
    rings_in: Vec<InRing>,
    clock: quanta::Clock,
    origin: u64,
    timing: bool,
    /// Whether this round's NF runs are timed (see [`BUSY_SAMPLING`]).
    sampled: bool,
    /// State of the xorshift generator that draws sampled rounds and gate
    /// orders. (rand's `SmallRng` and `shuffle`, which the NFs use, ran the
    /// engine 2–4% slower here for the same instruction count.)
    draws: u64,
    /// Clock reading (raw ticks) at the end of the last timed step: the
    /// start of the next NF run, so each timed run costs one clock read.
    mark: u64,
    batch_size: usize,
    worker: WorkerCounters,
    /// Rounds started (the first is round 1).
    rounds: u64,
    /// When the core probe runs next (ns since the origin).
    next_probe_ns: u64,
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
        instances: &mut [Option<Instance>],
        knobs: &Knobs,
        clock: quanta::Clock,
        origin: u64,
        config: WalkerConfig,
        wiring: WorkerWiring,
    ) -> Result<Self> {
        let mine: Vec<ModuleId> = (0..model.modules.len()).filter(|&m| model.worker_of[m] == worker).collect();
        let mut nodes = Vec::with_capacity(mine.len());
        for &m in &mine {
            let decl = &model.modules[m];
            let instance = instances[m].take().ok_or_else(|| Error::module(&decl.name, "no implementation given"))?;
            let (kind, outgates) = match (decl.role, instance) {
                (Role::Source, Instance::Source(s)) => (Kind::Source(s), 1),
                (Role::Function, Instance::Function(nf)) => {
                    if nf.ingates() != decl.ingates {
                        return Err(Error::module(&decl.name, format!("declared {} ingates, its NF has {}", decl.ingates, nf.ingates())));
                    }
                    let n = nf.outgates();
                    (Kind::Function(nf), n)
                }
                (Role::Sink, Instance::Egress) => (Kind::Egress(model.sink_flow[m]), 0),
                (role, _) => return Err(Error::module(&decl.name, format!("implementation does not fit role {role:?}"))),
            };
            if outgates != decl.outgates {
                return Err(Error::module(&decl.name, format!("declared {} outgates, its NF has {outgates}", decl.outgates)));
            }
            let queued = decl.queue_pkts.is_some() || decl.controlled && matches!(config.schedule, Schedule::WeightedFair { .. });
            nodes.push(Node {
                module: m,
                kind,
                queued,
                max_age_ns: decl.max_age_ns,
                buffer: if queued { FractionalBuffer::with_capacity(decl.queue_pkts.unwrap_or(WFQ_QUEUE)) } else { FractionalBuffer::default() },
                scratch: Some(Batch::boxed()),
                out: (0..outgates).map(|_| Batch::boxed()).collect(),
                next: Vec::new(),
                counters: ModuleCounters::default(),
                last_arrival_round: 0,
                last_round_pkts: 0,
                trigger: 0,
                gate_rank: Box::default(),
                filled: if outgates > 1 { vec![0; outgates].into() } else { Box::default() },
            });
        }
        let mut graph = Self {
            spares: Vec::new(),
            nodes,
            sources: Vec::new(),
            pool: wiring.pool,
            aged: Vec::new(),
            rings_out: wiring.outbound,
            rings_in: wiring.inbound.into_iter().map(|(edge, ring)| InRing { edge, ring, target: usize::MAX }).collect(),
            flows: vec![FlowRecorder::default(); model.flows.len()],
            triggers: knobs.triggers.clone(),
            trigger_sets: knobs.trigger_sets.clone(),
            triggers_taken: None,
            weights: knobs.weights.clone(),
            halted: knobs.halted.clone(),
            index: worker,
            schedule: config.schedule,
            stride: Stride::new(0),
            units: Vec::new(),
            unit_of: Vec::new(),
            queues: Vec::new(),
            queued_pkts: 0,
            clock,
            origin,
            timing: config.timing,
            sampled: false,
            draws: 0x9E37_79B9_7F4A_7C15,
            mark: 0,
            batch_size: model.batch_size,
            worker: WorkerCounters::default(),
            rounds: 0,
            next_probe_ns: 0,
        };
        graph.link(model);
        Ok(graph)
    }

    /// Derives from the nodes and ring ends this worker holds everything
    /// the walker looks up: node order, where each gate leads, which node
    /// each inbound ring feeds, the scheduler's units. Runs at construction
    /// and after modules move (the only time it allocates).
    fn link(&mut self, model: &Model) {
        // Modules that moved in bring the triggers their old worker had taken.
        self.triggers_taken = None;
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
            let m = node.module;
            if node.out.len() > 1 {
                node.gate_rank = gate_rank(model, m);
            }
            node.next = (0..node.out.len())
                .map(|g| match self.rings_out.iter().position(|(e, _)| model.edges[*e].from == m && model.edges[*e].outgate == g) {
                    Some(r) => Target::Ring(r),
                    None => Target::Local(local[model.next[m][g]]),
                })
                .collect();
        }
        for r in &mut self.rings_in {
            r.target = local[model.edges[r.edge].to];
        }
        let nodes = &self.nodes;
        self.sources = (0..nodes.len()).filter(|&i| matches!(nodes[i].kind, Kind::Source(_))).collect();
        self.aged = (0..nodes.len()).filter(|&i| nodes[i].max_age_ns.is_some()).collect();
        self.queues = (0..nodes.len()).filter(|&i| nodes[i].queued).collect();
        self.units = (0..nodes.len()).filter(|&i| nodes[i].queued || matches!(nodes[i].kind, Kind::Source(_))).collect();
        self.unit_of = vec![None; nodes.len()];
        for (u, &v) in self.units.iter().enumerate() {
            self.unit_of[v] = Some(u);
        }
        self.stride = Stride::new(self.units.len());
        self.queued_pkts = self.queues.iter().map(|&i| nodes[i].buffer.len()).sum();
        self.spares.resize_with(nodes.len() + 1, Batch::boxed);
    }

    /// Time now (ns since the run's origin).
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }

    /// One scheduler round: run-to-completion, a batch from every source
    /// pushed through; weighted-fair, one unit's turn; on a worker that is
    /// down, [`Self::discard`]. Returns the packets the round moved or
    /// discarded (pkt); 0 means there was nothing to do.
    pub fn round(&mut self) -> usize {
        if self.halted[self.index].load(Ordering::Relaxed) {
            return self.discard();
        }
        self.rounds += 1;
        let start = self.clock.raw();
        let now = self.clock.delta_as_nanos(self.origin, start);
        self.mark = start;
        self.sampled = self.timing && self.draw().is_multiple_of(BUSY_SAMPLING);
        let mut moved = self.take_triggers();
        moved += self.poll_inbound();
        moved += match self.schedule {
            Schedule::RunToCompletion if self.rings_have_room() => {
                let mut moved: usize = (0..self.sources.len()).map(|i| self.pull(self.sources[i], now)).sum();
                // Queue modules are tasks of their own: one batch each per round.
                for q in 0..self.queues.len() {
                    moved += self.serve(self.queues[q]);
                }
                moved
            }
            Schedule::RunToCompletion => 0,
            Schedule::WeightedFair { backpressure } => self.fair_turn(now, backpressure.unwrap_or(usize::MAX)),
        };
        moved += self.flush_aged(now);
        if moved > 0 && self.sampled {
            self.worker.busy_ns += BUSY_SAMPLING * self.clock.delta_as_nanos(start, self.mark);
            self.worker.busy_rounds += BUSY_SAMPLING;
        }
        if self.timing && now >= self.next_probe_ns {
            self.probe_core(now);
        }
        moved
    }

    /// Times the fixed [`core_probe`] work into the worker's counters.
    #[cold]
    fn probe_core(&mut self, now_ns: u64) {
        let start = self.clock.raw();
        std::hint::black_box(core_probe::probe_work());
        self.worker.probe_ns += self.clock.delta_as_nanos(start, self.clock.raw()).min(core_probe::PROBE_CAP_NS);
        self.worker.probes += 1;
        self.next_probe_ns = now_ns + core_probe::PROBE_INTERVAL_NS;
    }

    /// Serves the weighted-fair unit whose turn it is.
    fn fair_turn(&mut self, now_ns: u64, backpressure: usize) -> usize {
        // Whether a source may run hangs on the whole worker: ask every turn.
        for &v in &self.sources {
            if let Some(u) = self.unit_of[v] {
                self.stride.wake(u);
            }
        }
        let (nodes, units, weights) = (&self.nodes, &self.units, &self.weights);
        let sources_may_run = self.queued_pkts < backpressure && self.pool.available() > 0 && self.rings_have_room();
        let runnable = |u: usize| {
            let node = &nodes[units[u]];
            match node.kind {
                Kind::Source(_) => sources_may_run,
                _ => node.queue_ready(),
            }
        };
        let weight = |u: usize| weights[nodes[units[u]].module].load(Ordering::Relaxed);
        let Some(u) = self.stride.pick(runnable, weight) else { return 0 };
        let v = self.units[u];
        if matches!(self.nodes[v].kind, Kind::Source(_)) {
            return self.pull(v, now_ns);
        }
        let served = self.serve(v);
        if !self.nodes[v].queue_ready() {
            self.stride.sleep(u);
        }
        served
    }

    /// Runs queued module `v` once on its trigger's worth of packets (B when
    /// its trigger is 0); returns the packets run (pkt).
    fn serve(&mut self, v: usize) -> usize {
        let trigger = self.nodes[v].trigger;
        let want = if trigger == 0 { self.batch_size } else { trigger };
        self.run_queued(v, want, false)
    }

    /// Takes the triggers the control thread set since the last round, all
    /// at once. Every buffer whose trigger is now a value some buffer just
    /// took releases what it holds, in topological order, so that buffers
    /// set alike fill and fire in step. Returns the packets released (pkt).
    ///
    /// A buffer's phase would otherwise carry its trigger history: buffers
    /// given equal triggers at different times fire in different rounds for
    /// good, and the flows behind one that fires just after a round where
    /// many others fired wait through all their runs (L2L3(16) under Max:
    /// 4–5 µs more than the other flows, on a mean delay of 14 µs).
    /// Releasing only the buffers whose trigger changed left a buffer
    /// already at the trigger its siblings just took out of step with them
    /// (L2L3(4) on the simulator: its flow's mean 2.4% off the others');
    /// releasing every buffer at any change also aligned buffers at other
    /// triggers (RC(16): the 15 bulk buffers, drifted apart by a random
    /// split, fired in one long round after each cut of the robot-control
    /// buffer, whose p95 landed over the SLO again).
    fn take_triggers(&mut self) -> usize {
        let sets = self.trigger_sets.load(Ordering::Acquire);
        if self.triggers_taken == Some(sets) {
            return 0;
        }
        self.triggers_taken = Some(sets);
        // A set that lands while this reads is taken whole next round.
        // Bit t: some buffer just took trigger t.
        let mut taken = [0u64; MAX_BURST / 64 + 1];
        for node in self.nodes.iter_mut() {
            let trigger = (self.triggers[node.module].load(Ordering::Relaxed) as usize).min(MAX_BURST);
            if trigger != node.trigger {
                node.trigger = trigger;
                taken[trigger / 64] |= 1 << (trigger % 64);
            }
        }
        // A queue whose trigger fell may have become runnable.
        self.stride.wake_all();
        let mut released = 0;
        for v in 0..self.nodes.len() {
            let t = self.nodes[v].trigger;
            // Queues of weighted-fair modules are served by the scheduler, not released.
            if !self.nodes[v].queued && taken[t / 64] & (1 << (t % 64)) != 0 {
                released += self.run_queued(v, MAX_BURST, true);
            }
        }
        released
    }

    /// Runs module `v`'s NF on what its buffer holds, `n` packets a run:
    /// once, or until the buffer is empty when `all`. Returns the packets run (pkt).
    fn run_queued(&mut self, v: usize, n: usize, all: bool) -> usize {
        let mut scratch = self.nodes[v].scratch.take().expect("a module is never re-entered in a DAG");
        let mut moved = 0;
        while self.take_queued(v, n, &mut scratch) {
            moved += scratch.len();
            self.run(v, &mut scratch);
            if !all {
                break;
            }
        }
        self.nodes[v].scratch = Some(scratch);
        moved
    }

    /// Flushes the buffers whose oldest packet is older than their age bound;
    /// returns the packets flushed (pkt).
    fn flush_aged(&mut self, now_ns: u64) -> usize {
        let mut moved = 0;
        for i in 0..self.aged.len() {
            let v = self.aged[i];
            let (Some(bound), Some(oldest)) = (self.nodes[v].max_age_ns, self.nodes[v].buffer.front()) else { continue };
            if now_ns.saturating_sub(self.pool.meta(oldest).ts_ns) > bound {
                moved += self.run_queued(v, MAX_BURST, true);
            }
        }
        moved
    }

    /// Whether every outbound ring can take what a source batch may release.
    fn rings_have_room(&self) -> bool {
        self.rings_out.iter().all(|(_, r)| r.room() >= RING_RESERVE)
    }

    /// Delivers what the inbound rings hold, a batch of up to B per ring;
    /// returns the packets taken (pkt).
    pub fn poll_inbound(&mut self) -> usize {
        let mut moved = 0;
        for i in 0..self.rings_in.len() {
            let mut batch = self.spares.pop().expect("one spare batch per graph level");
            let InRing { ring, target, .. } = &mut self.rings_in[i];
            let target = *target;
            while batch.len() < self.batch_size {
                match ring.pop() {
                    Some(id) => batch.push(id),
                    None => break,
                }
            }
            moved += batch.len();
            if !batch.is_empty() {
                self.deliver(target, &mut batch);
            }
            self.spares.push(batch);
        }
        moved
    }

    /// What a failed core does: nothing runs, its sources are not polled,
    /// and the packets that reach it on inbound rings or sit in its buffers
    /// are dropped and counted at the module they were for (and their flow).
    /// Returns the packets dropped (pkt).
    pub fn discard(&mut self) -> usize {
        let mut dropped = 0;
        for i in 0..self.rings_in.len() {
            let InRing { ring, target, .. } = &mut self.rings_in[i];
            let counters = &mut self.nodes[*target].counters;
            while let Some(id) = ring.pop() {
                counters.arrived_pkts += 1;
                counters.dropped += 1;
                free_dropped(&mut self.pool, &mut self.flows, id);
                dropped += 1;
            }
        }
        let mut batch = self.spares.pop().expect("one spare batch per graph level");
        for v in 0..self.nodes.len() {
            while self.take_queued(v, MAX_BURST, &mut batch) {
                for &id in batch.as_slice() {
                    free_dropped(&mut self.pool, &mut self.flows, id);
                }
                self.nodes[v].counters.dropped += batch.len() as u64;
                dropped += batch.len();
                batch.clear();
            }
        }
        self.spares.push(batch);
        dropped
    }

    /// Moves up to `n` packets from module `v`'s buffer into `out`; `false` when it was empty.
    fn take_queued(&mut self, v: usize, n: usize, out: &mut Batch) -> bool {
        let node = &mut self.nodes[v];
        let taken = node.buffer.take_into(n, out);
        if node.queued {
            self.queued_pkts -= out.len();
        }
        taken
    }

    fn pull(&mut self, v: usize, now_ns: u64) -> usize {
        let max = self.batch_size.min(self.pool.available());
        let node = &mut self.nodes[v];
        let Kind::Source(source) = &mut node.kind else { unreachable!("sources lists source nodes only") };
        source.fill(&mut self.pool, now_ns, &mut node.out[0], max);
        let n = node.out[0].len();
        if self.sampled {
            let end = self.clock.raw();
            node.counters.busy_ns += BUSY_SAMPLING * self.clock.delta_as_nanos(self.mark, end);
            self.mark = end;
        }
        if n > 0 {
            node.counters.runs += 1;
            node.counters.run_pkts += n as u64;
            self.dispatch(v);
        }
        n
    }

    /// A batch arrives at module `v`'s fractional buffer.
    fn deliver(&mut self, v: usize, input: &mut Batch) {
        let node = &mut self.nodes[v];
        let trigger = node.trigger;
        node.counters.arrivals += 1;
        let n = input.len() as u64;
        node.counters.arrived_pkts += n;
        if node.last_arrival_round != self.rounds {
            node.last_arrival_round = self.rounds;
            node.last_round_pkts = 0;
            node.counters.arrival_rounds += 1;
        }
        // (k + n)² − k²: the round's square kept current as packets come.
        node.counters.round_pkts_sq += n * (2 * node.last_round_pkts + n);
        node.last_round_pkts += n;
        if node.queued {
            self.queued_pkts += node.buffer.enqueue_from(input);
            if let Some(u) = self.unit_of[v] {
                self.stride.wake(u);
            }
            for &id in input.as_slice() {
                free_dropped(&mut self.pool, &mut self.flows, id);
            }
            node.counters.dropped += input.len() as u64;
            input.clear();
            return;
        }
        // Packets that waited here since an earlier arrival have left L1.
        let waited = trigger > 0 && !node.buffer.is_empty();
        node.buffer.admit(trigger, input);
        let mut scratch = node.scratch.take().expect("a module is never re-entered in a DAG");
        while let Some(batch) = self.nodes[v].buffer.next_run(trigger, input, &mut scratch) {
            if waited {
                self.pool.prefetch(batch.as_slice());
            }
            self.run(v, batch);
        }
        self.nodes[v].scratch = Some(scratch);
    }

    /// Runs module `v`'s NF on `batch`, then hands each gate's packets on.
    /// On sampled rounds its busy time runs from the previous clock mark (so
    /// it includes the module's own buffer handling) to the end of the NF.
    fn run(&mut self, v: usize, batch: &mut Batch) {
        let node = &mut self.nodes[v];
        let egress = matches!(node.kind, Kind::Egress(_));
        let start = match (self.sampled, self.timing && egress) {
            (true, _) => self.mark,
            (false, true) => self.clock.raw(),
            (false, false) => 0,
        };
        let now_ns = (start != 0).then(|| self.clock.delta_as_nanos(self.origin, start));
        node.counters.runs += 1;
        node.counters.run_pkts += batch.len() as u64;
        let mut ctx = NfContext {
            pool: &mut self.pool,
            now_ns,
            clock: &self.clock,
            origin: self.origin,
            dropped: &mut node.counters.dropped,
            created: &mut node.counters.created,
            flows: &mut self.flows,
            timing: self.timing,
        };
        match &mut node.kind {
            Kind::Function(nf) => nf.process(&mut ctx, batch, &mut Outputs { gates: &mut node.out }),
            Kind::Egress(flow) => {
                ctx.deliver(*flow, batch.as_slice());
                batch.clear();
            }
            Kind::Source(_) => unreachable!("a source has no ingate"),
        }
        debug_assert!(batch.is_empty(), "an NF must empty its input batch");
        if self.sampled {
            let end = self.clock.raw();
            node.counters.busy_ns += BUSY_SAMPLING * self.clock.delta_as_nanos(start, end);
            self.mark = end;
        }
        self.dispatch(v);
    }

    /// Hands each gate's packets of module `v` on, gate by gate. A splitter
    /// serves the gates it filled tightest SLO first, and gates whose
    /// tightest SLOs are equal in an order drawn afresh each time: buffers
    /// behind it that fire in the same round run one after another, and in
    /// a fixed order the flows behind the first gate would always wait
    /// least (L2L3(16) under Max, 16 flows with one SLO: 9 µs for the
    /// first, 18 µs for the last).
    fn dispatch(&mut self, v: usize) {
        let n = self.nodes[v].out.len();
        if n <= 1 {
            if n == 1 && !self.nodes[v].out[0].is_empty() {
                self.hand_on(v, 0);
            }
            return;
        }
        // A module is never re-entered in a DAG, so its list is free here.
        let mut filled = std::mem::take(&mut self.nodes[v].filled);
        let mut k = 0;
        for g in 0..n {
            if !self.nodes[v].out[g].is_empty() {
                filled[k] = g as u32;
                k += 1;
            }
        }
        if k > 1 {
            self.order_gates(v, &mut filled[..k]);
        }
        for &g in &filled[..k] {
            self.hand_on(v, g as usize);
        }
        self.nodes[v].filled = filled;
    }

    /// Shuffles `gates` of module `v` (Fisher–Yates; each draw 16 random
    /// bits scaled by Lemire's multiply-shift, uniform to within
    /// gates/65536), then puts them tightest SLO first
    /// (sorting by rank alone keeps each rank's order uniformly random).
    fn order_gates(&mut self, v: usize, gates: &mut [u32]) {
        let mut bits = 0;
        for (drawn, i) in (1..gates.len()).rev().enumerate() {
            if drawn % 4 == 0 {
                bits = self.draw();
            }
            let j = ((bits & 0xFFFF) * (i as u64 + 1)) >> 16;
            bits >>= 16;
            gates.swap(i, j as usize);
        }
        let rank = &self.nodes[v].gate_rank;
        if !rank.is_empty() {
            gates.sort_unstable_by_key(|&g| rank[g as usize]);
        }
    }

    /// The next number of the walker's xorshift generator.
    fn draw(&mut self) -> u64 {
        self.draws ^= self.draws << 13;
        self.draws ^= self.draws >> 7;
        self.draws ^= self.draws << 17;
        self.draws
    }

    /// Hands what gate `g` of module `v` holds (something) to the module behind it.
    #[inline]
    fn hand_on(&mut self, v: usize, g: usize) {
        let child = match self.nodes[v].next[g] {
            Target::Local(child) => child,
            Target::Ring(r) => {
                self.send(v, g, r);
                return;
            }
        };
        let spare = self.spares.pop().expect("one spare batch per graph level");
        let mut batch = std::mem::replace(&mut self.nodes[v].out[g], spare);
        self.deliver(child, &mut batch);
        let spare = std::mem::replace(&mut self.nodes[v].out[g], batch);
        self.spares.push(spare);
    }

    /// Hands gate `g`'s packets of module `v` to ring `r`; what does not fit
    /// is dropped at `v` (sources pause before rings fill, so only a burst of
    /// buffered packets can overflow).
    #[inline(never)]
    fn send(&mut self, v: usize, g: usize, r: usize) {
        let node = &mut self.nodes[v];
        let ring = &mut self.rings_out[r].1;
        for &id in node.out[g].as_slice() {
            if ring.push(id).is_err() {
                free_dropped(&mut self.pool, &mut self.flows, id);
                node.counters.dropped += 1;
            }
        }
        node.out[g].clear();
    }

    /// Flushes every fractional buffer downstream, in topological order, so
    /// that every packet is delivered or dropped (stopping a run).
    pub fn drain(&mut self) {
        self.sampled = false;
        // Nodes are kept in topological order; weighted-fair queues empty too.
        for v in 0..self.nodes.len() {
            self.run_queued(v, MAX_BURST, true);
        }
    }

    /// Writes this worker's cumulative counters into `into` at its own slots
    /// (its modules, the flows that end on it, its entry in `workers`) and moves
    /// the delays recorded since the last call there. `into`'s histograms
    /// must be empty; they come back to this worker at the next call.
    pub fn read_counters(&mut self, into: &mut Counters) {
        into.at_ns = self.now_ns();
        for (theirs, mine) in into.flows.iter_mut().zip(&self.flows) {
            theirs.generated = 0;
            theirs.dropped = mine.dropped;
        }
        for node in &self.nodes {
            into.modules[node.module] = node.counters;
            if let Kind::Source(source) = &node.kind {
                into.modules[node.module].missed = source.missed();
                source.count_generated(&mut |flow, n| {
                    if let Some(f) = into.flows.get_mut(flow) {
                        f.generated += n;
                    }
                });
            }
            if let Kind::Egress(Some(f)) = node.kind {
                let (mine, theirs) = (&mut self.flows[f], &mut into.flows[f]);
                theirs.delivered = mine.delivered;
                theirs.misdelivered = mine.misdelivered;
                theirs.swap_delays(mine);
            }
        }
        into.workers[self.index] = self.worker;
        into.in_flight = self.pool.in_use();
    }

    /// Packets this worker allocated minus those it freed (pkt); for a
    /// worker whose packets never leave it, the packets it holds.
    pub fn in_flight(&self) -> i64 {
        self.pool.in_use()
    }
}
