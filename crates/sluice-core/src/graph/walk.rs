//! The depth-first push of batches through the graph. A batch arrives at
//! a module's fractional buffer, which decides when the NF runs; the NF
//! sorts packets into per-gate batches, and each non-empty gate's batch is
//! handed to the module behind it (or to a ring, across workers) before
//! the module runs again.
//!
//! The walk is a loop over an explicit stack of tasks, not recursion, so
//! a chain of any length runs in constant native stack. A module is never
//! re-entered (the graph is acyclic), which gives the walk two properties:
//! each module waits on the stack at most once, with at most one task per
//! gate above it (the stack's capacity); and a module's inbox is empty
//! whenever it is not on the stack, so handing a gate's batch to a module
//! that buffers is a swap of two batch pointers, not a copy. A module
//! where nothing waits and nothing will (see `Node::runs_through`) runs
//! its NF on the gate's batch where it lies: the batch pointers stay, and
//! the next module reads no pointer the walker has just written.
//!
//! The walker, not the NFs, keeps the counters the controllers read.

use super::delivery::{claim_for_egress, transmit_and_deliver, Recipient, Timer};
use super::{claims, gates, watch, Clocking, Ends, FairTurns, Kind, Links, Node, OutRing, Output, Release, Target, Task, WorkerGraph};
use crate::batch::Batch;
use crate::model::ModuleId;
use crate::nf::{free_dropped, EgressLink, Held, LinkReads, NetworkFunction, NfContext, Offered, Outputs};
use crate::packet::{PacketMeta, NO_FLOW};
use crate::stride::Stride;
use crate::wire::five_tuple::FiveTuple;
use crate::wire::ip_of;
use crate::telemetry::{DelaySampling, ModuleCounters};
use crate::trace::Way;
use crate::watch::Watch;

impl WorkerGraph {
    /// Does task `first`, and the tasks it pushes, until the stack is
    /// empty. The first task a step makes is done next without a trip
    /// through the stack. While a trace or capture is attached (see
    /// `watch`), a walk of its own runs each module through them; the
    /// other tests for one nowhere but here.
    #[inline]
    pub(super) fn walk(&mut self, first: Task) {
        if self.watch.is_some() {
            return self.walk_watched(first);
        }
        self.walk_with::<false>(first);
    }

    /// [`Self::walk`] while a trace or capture is attached.
    #[cold]
    #[inline(never)]
    fn walk_watched(&mut self, first: Task) {
        let v = first.node as usize;
        if let (Kind::Source(_), Some(w)) = (&self.nodes[v].kind, self.watch.as_deref_mut()) {
            let clock = &self.clocking.clock;
            let origin = self.clocking.origin;
            watch::left_source(w, self.nodes[v].module, &self.pool, &self.nodes[v].out[0], || clock.delta_as_nanos(origin, clock.raw()));
        }
        self.walk_with::<true>(first);
        if self.watch.as_deref().is_some_and(crate::watch::Watch::is_empty) {
            // Its last capture took its count.
            self.watch = None;
        }
    }

    /// [`Self::walk`], through the trace and captures attached when `WATCHED`.
    #[inline(always)]
    fn walk_with<const WATCHED: bool>(&mut self, first: Task) {
        let Self { nodes, stack, pool, flows, rounds, batch_size, clocking, fair, links, watch, wake_ns, tally, .. } = self;
        let Clocking { clock, origin, measures, times_runs, busy_sampling, delay_sampling, delay_draw, mark, draws, last_read, .. } = clocking;
        let Links { rings_out, backlogged, egress, egress_node, offered_at, .. } = links;
        let FairTurns { queued_pkts, unit_of, stride, .. } = fair;
        let mut env = Env {
            ctx: NfContext { pool, now_ns: None, clock, origin: *origin, tally, flows, batch_size: *batch_size },
            watch: if WATCHED { watch.as_deref_mut() } else { None },
            last_read,
            egress,
            egress_node,
            offered_at,
            measures: *measures,
            times_runs: *times_runs,
            busy_sampling: *busy_sampling,
            delay_sampling: *delay_sampling,
            delay_draw: *delay_draw,
            mark,
            draws,
            queued_pkts,
            round: *rounds,
            unit_of,
            stride,
            wake_ns,
        };
        debug_assert!(stack.is_empty(), "a walk starts on an empty stack");
        let mut next = Some(first);
        while let Some(Task { node, gate }) = next {
            let v = node as usize;
            let at = match gate {
                Task::CONTINUE => Some(v),
                Task::ARRIVED => arrive(&mut nodes[v], v, &mut env).then_some(v),
                g => {
                    let g = g as usize;
                    match nodes[v].next[g] {
                        Target::Local(c) => {
                            debug_assert!(v < c, "nodes are in topological order");
                            let (upstream, downstream) = nodes.split_at_mut(c);
                            let (parent, child) = (&mut upstream[v], &mut downstream[0]);
                            // A timed round times each NF's run on its own (see `step`).
                            if child.runs_through() && !env.times_runs {
                                next = through::<WATCHED>(nodes, v, g, c, stack, &mut env).or_else(|| stack.pop());
                                continue;
                            }
                            pass(parent, g, child, &mut env);
                            arrive(child, c, &mut env).then_some(c)
                        }
                        Target::Ring(r) => {
                            send(&mut nodes[v], g, &mut rings_out[r], backlogged, &mut env);
                            None
                        }
                    }
                }
            };
            next = at.and_then(|at| step::<WATCHED>(&mut nodes[at], at, None, stack, &mut env)).or_else(|| stack.pop());
        }
    }

    /// Runs node `v`'s NF on what its buffer holds, up to `n` packets a
    /// run: once, or until the buffer is empty when `all`. Returns the
    /// packets run (pkt).
    pub(super) fn run_queued(&mut self, v: usize, n: usize, all: bool) -> usize {
        if self.nodes[v].buffer.is_empty() {
            return 0;
        }
        let before = self.nodes[v].counters.run_pkts;
        self.nodes[v].release = Release::Queued { n, all };
        self.walk(Task { node: v as u32, gate: Task::CONTINUE });
        (self.nodes[v].counters.run_pkts - before) as usize
    }
}

/// What a step of the walk touches besides its node: the NFs' context
/// (the worker's pool, flows and clock), the scheduled link and the
/// scheduler's state, borrowed once per walk.
struct Env<'a> {
    ctx: NfContext<'a>,
    /// The walk's last clock reading (raw ticks), while nothing ran after it.
    last_read: &'a mut Option<u64>,
    /// The worker's way onto the scheduled link.
    egress: &'a mut Option<Box<dyn EgressLink>>,
    /// Per flow, the egress node it ends at here (see `Links::egress_node`).
    egress_node: &'a [Option<usize>],
    /// Where each packet of no flow was offered (see `Links::offered_at`).
    offered_at: &'a mut [u32],
    /// Whether the worker measures (see `Clocking::measures`).
    measures: bool,
    /// Whether this round's NF runs are timed.
    times_runs: bool,
    /// Rounds per timed round.
    busy_sampling: u64,
    /// Which delivered packets are timed, and this round's random bits that draw it for a flow.
    delay_sampling: DelaySampling,
    delay_draw: u64,
    mark: &'a mut u64,
    draws: &'a mut u64,
    queued_pkts: &'a mut usize,
    /// The round the walk belongs to.
    round: u64,
    unit_of: &'a [Option<usize>],
    stride: &'a mut Stride,
    /// The worker's trace and captures, on a watched walk (see `watch`).
    watch: Option<&'a mut Watch>,
    /// When the next packet an NF keeps comes due (see `WorkerGraph::wake_ns`).
    wake_ns: &'a mut u64,
}

/// Hands gate `g`'s batch of node `v` to node `c`, which runs through
/// (see `Node::runs_through`), and on down a straight run of such NFs as
/// far as the batch goes: each runs its NF on the batch where it lies, and
/// the run goes on while one gate took all a run sent and nothing else is
/// left to do (an NF with several gates, a router's next hop with its
/// ICMP gate, sends a batch out of one of them as a rule). Returns the
/// task of the first node the run cannot take (an egress, a module that
/// waits or queues, a run that filled several gates), as `step`. Not on a
/// round that times its NFs' runs.
#[inline(never)]
fn through<const WATCHED: bool>(nodes: &mut [Node], mut v: usize, mut g: usize, mut c: usize, stack: &mut Vec<Task>, env: &mut Env<'_>) -> Option<Task> {
    loop {
        let (upstream, downstream) = nodes.split_at_mut(c);
        let (parent, child) = (&mut upstream[v], &mut downstream[0]);
        let batch = &mut *parent.out[g];
        claim(parent.claims[g], batch, env);
        count_arrival(child, batch.len() as u64, env);
        let Node { kind: Kind::Function(nf), out, counters, held, release, filled, gate_rank, .. } = child else {
            return step::<WATCHED>(child, c, Some(batch), stack, env);
        };
        debug_assert!(!env.times_runs, "a timed round's runs go through `step`");
        count_run(counters, batch);
        run_function::<WATCHED>(nf.as_mut(), child.module, batch, out, counters, held, None, env);
        // Nothing due again, and all the run sent left by its first gate: its
        // only one, or the first of two whose second takes exceptions (a
        // router's next hop and its errors).
        let gate = if !held.ready && (out.len() == 1 || out.len() == 2 && out[1].is_empty()) {
            if out[0].is_empty() {
                return None;
            }
            0
        } else {
            let depth = stack.len();
            hold_if_due(stack, c, held.ready, release);
            let task = push_gates(stack, c, out, filled, gate_rank, env.draws)?;
            if stack.len() != depth {
                return Some(task);
            }
            task.gate as usize
        };
        let after = child.next[gate];
        match after {
            Target::Local(next) if nodes[next].runs_through() => (v, g, c) = (c, gate, next),
            _ => return Some(Task { node: c as u32, gate: gate as u32 }),
        }
    }
}

/// Moves gate `g`'s batch of `from` into the inbox of `to`, the node
/// behind it, claiming the packets for the gate's flow where it claims one.
#[inline(always)]
fn pass(from: &mut Node, g: usize, to: &mut Node, env: &mut Env<'_>) {
    debug_assert!(to.inbox.is_empty(), "a node off the stack has an empty inbox");
    std::mem::swap(&mut from.out[g], &mut to.inbox);
    claim(from.claims[g], &to.inbox, env);
}

/// Claims the packets of `batch` for `flow`, where a gate claims one (see `claims`).
#[inline(always)]
fn claim(flow: u16, batch: &Batch, env: &mut Env<'_>) {
    if flow != NO_FLOW {
        env.ctx.flows[flow as usize].claimed += claims::claim(env.ctx.pool, batch, flow);
    }
}

/// Counts a batch of `n` packets arriving at `node` (see [`ModuleCounters`]).
#[inline(always)]
fn count_arrival(node: &mut Node, n: u64, env: &Env<'_>) {
    let c = &mut node.counters;
    c.arrivals += 1;
    c.arrived_pkts += n;
    if !node.counts_rounds {
        return;
    }
    if node.last_arrival_round != env.round {
        node.last_arrival_round = env.round;
        node.last_round_pkts = 0;
        c.arrival_rounds += 1;
    }
    // (k + n)² − k²: the round's square kept current as packets come.
    c.round_pkts_sq += n * (2 * node.last_round_pkts + n);
    node.last_round_pkts += n;
}

/// The batch in node `v`'s inbox arrives at its fractional buffer:
/// counted, then admitted; or queued, in a module that queues between
/// turns (what its queue cannot hold is dropped and counted). Returns
/// whether `v` may run now.
#[inline(always)]
fn arrive(node: &mut Node, v: usize, env: &mut Env<'_>) -> bool {
    count_arrival(node, node.inbox.len() as u64, env);
    if node.queued {
        queue(node, v, env);
        return false;
    }
    if node.trigger > 0 {
        // Packets that waited here since an earlier arrival have left L1.
        node.waited = !node.buffer.is_empty();
        node.buffer.admit(node.trigger, &mut node.inbox);
    }
    true
}

/// Queues what node `v`'s inbox holds for its scheduler turns; drops and
/// counts what its queue has no room for.
#[cold]
fn queue(node: &mut Node, v: usize, env: &mut Env<'_>) {
    *env.queued_pkts += node.buffer.enqueue_from(&mut node.inbox);
    if env.watch.is_some() {
        ends_at(node.module, &node.inbox, Way::QueueFull, env);
    }
    for &id in node.inbox.as_slice() {
        free_dropped(env.ctx.pool, env.ctx.flows, id);
    }
    node.counters.queue_dropped += node.inbox.len() as u64;
    node.inbox.clear();
    if let Some(u) = env.unit_of[v] {
        env.stride.wake(u);
    }
}

/// Runs node `v`'s NF once if a run is due (see [`Release`]) — on `lying`,
/// the gate batch that reached it, where it runs through — then pushes
/// what follows: `v` again if another run may be due, and above it a task
/// for each gate the run filled, in the order they are served; the first
/// of those it returns instead of pushing. On sampled rounds the run's
/// busy time runs from the previous clock mark (so it includes the
/// module's own buffer handling) to the end of the NF.
#[inline(always)]
fn step<const WATCHED: bool>(node: &mut Node, v: usize, lying: Option<&mut Batch>, stack: &mut Vec<Task>, env: &mut Env<'_>) -> Option<Task> {
    let through = lying.is_some() || node.nothing_waits();
    let Node { module, kind, buffer, inbox, scratch, out, counters, release, trigger, waited, filled, gate_rank, queued, held, .. } = node;
    let mode = *release;
    let batch: &mut Batch = match mode {
        _ if lying.is_some() => lying?,
        Release::Arrivals if through => (!inbox.is_empty()).then_some(&mut **inbox)?,
        Release::Arrivals => {
            let batch = buffer.next_run(*trigger, inbox, scratch)?;
            if *waited {
                env.ctx.pool.prefetch(batch.as_slice());
            }
            batch
        }
        Release::Queued { n, .. } => {
            if !buffer.take_into(n, scratch) {
                *release = Release::Arrivals;
                return None;
            }
            if *queued {
                *env.queued_pkts -= scratch.len();
            }
            scratch
        }
        // The NF sends what it held; it is given nothing new.
        Release::Held => scratch,
    };
    let start = if env.times_runs { *env.mark } else { 0 };
    count_run(counters, batch);
    match kind {
        Kind::Function(nf) => {
            let now_ns = (start != 0).then(|| env.ctx.clock.delta_as_nanos(env.ctx.origin, start));
            run_function::<WATCHED>(nf.as_mut(), *module, batch, out, counters, held, now_ns, env);
        }
        Kind::Egress(ends, Output::Scheduled(class, _)) => {
            if WATCHED {
                ends_at(*module, batch, Way::Sent, env);
            }
            offer(recipient(*ends, v, env.egress_node), v, *class, batch, counters, env)
        }
        Kind::Egress(ends, output) => {
            if WATCHED {
                ends_at(*module, batch, Way::Sent, env);
            }
            // What the port's wire takes is delivered; what it has no room for is dropped, counted.
            let port = match output {
                Output::Port(port) => Some(port),
                _ => None,
            };
            let to = recipient(*ends, v, env.egress_node);
            let mut timer = env.measures.then(|| Timer::new(env.delay_sampling, env.delay_draw, env.round, env.ctx.clock, env.ctx.origin));
            let sent = transmit_and_deliver(env.ctx.pool, env.ctx.flows, port, to, batch.as_slice(), timer.as_mut());
            if let Some(read) = timer.and_then(|t| t.read) {
                *env.last_read = Some(read);
            }
            counters.egress_dropped += (batch.len() - sent) as u64;
            counters.delivered += sent as u64;
            batch.clear();
        }
        Kind::Source(_) => unreachable!("a source has no ingate"),
    }
    if env.times_runs {
        let end = env.ctx.clock.raw();
        counters.busy_ns += env.busy_sampling * env.ctx.clock.delta_as_nanos(start, end);
        *env.mark = end;
    }
    let more = match mode {
        Release::Arrivals => !through && (buffer.len() >= (*trigger).max(1) || !inbox.is_empty()),
        Release::Queued { all, .. } => all && !buffer.is_empty(),
        Release::Held => false,
    };
    if more {
        stack.push(Task { node: v as u32, gate: Task::CONTINUE });
    } else {
        hold_if_due(stack, v, held.ready, release);
    }
    push_gates(stack, v, out, filled, gate_rank, env.draws)
}

/// After a run of node `v` that left nothing due in its buffer: where its
/// NF holds more than one run sent (`due`), the next run sends the rest,
/// so `v` goes back on the stack; else it takes arrivals again.
#[inline(always)]
fn hold_if_due(stack: &mut Vec<Task>, v: usize, due: bool, release: &mut Release) {
    if due {
        *release = Release::Held;
        stack.push(Task { node: v as u32, gate: Task::CONTINUE });
    } else {
        *release = Release::Arrivals;
    }
}

/// Counts a run of the module on `batch`.
#[inline(always)]
fn count_run(counters: &mut ModuleCounters, batch: &Batch) {
    counters.runs += 1;
    counters.run_pkts += batch.len() as u64;
}

/// Runs `nf`, module `module`'s, on `batch` into `out`, telling it the
/// time `now_ns` if known; what it dropped and made goes to `counters`,
/// what it says it holds to `held`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run_function<const WATCHED: bool>(nf: &mut dyn NetworkFunction, module: ModuleId, batch: &mut Batch, out: &mut [Box<Batch>], counters: &mut ModuleCounters, held: &mut Held, now_ns: Option<u64>, env: &mut Env<'_>) {
    if WATCHED {
        return run_watched(nf, module, batch, out, counters, held, now_ns, env);
    }
    env.ctx.now_ns = now_ns;
    nf.process(&mut env.ctx, batch, &mut Outputs { gates: out });
    after_run(nf, counters, held, env);
    debug_assert!(batch.is_empty(), "an NF must empty its input batch");
}

/// [`run_function`] while a trace or a capture is attached (see `watch`).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn run_watched(nf: &mut dyn NetworkFunction, module: ModuleId, batch: &mut Batch, out: &mut [Box<Batch>], counters: &mut ModuleCounters, held: &mut Held, now_ns: Option<u64>, env: &mut Env<'_>) {
    let Some(w) = env.watch.as_deref_mut() else { unreachable!("called while watched") };
    watch::before_run(w, module, env.ctx.pool, batch);
    env.ctx.now_ns = now_ns;
    nf.process(&mut env.ctx, batch, &mut Outputs { gates: out });
    let (Some(w), NfContext { pool, clock, origin, tally, .. }) = (env.watch.as_deref_mut(), &env.ctx) else { unreachable!("called while watched") };
    watch::after_run(w, module, pool, out, tally.drops(), || clock.delta_as_nanos(*origin, clock.raw()));
    after_run(nf, counters, held, env);
}

/// After a run of `nf`: what it counted goes to `counters`, what it said
/// it keeps to `held` (see `held`).
#[inline(always)]
fn after_run(nf: &dyn NetworkFunction, counters: &mut ModuleCounters, held: &mut Held, env: &mut Env<'_>) {
    if let Some(said) = env.ctx.tally.fold_into(counters) {
        *held = said;
        *env.wake_ns = (*env.wake_ns).min(said.due_ns);
    }
    debug_assert_eq!(*held, Held::of(nf), "an NF that keeps packets says what after each change (see `NfContext::note_held`)");
    *env.last_read = None;
}

/// Notes for its trace and captures that `batch`'s packets end at `module`, as `way` says.
#[inline(never)]
fn ends_at(module: ModuleId, batch: &Batch, way: Way, env: &mut Env<'_>) {
    let (Some(w), NfContext { pool, clock, origin, .. }) = (env.watch.as_deref_mut(), &env.ctx) else { return };
    watch::ends_at(w, module, pool, batch, way, || clock.delta_as_nanos(*origin, clock.raw()));
}

/// Whose deliveries the packets reaching egress node `v`, which ends
/// `ends`, are.
#[inline(always)]
fn recipient(ends: Ends, v: usize, egress_node: &[Option<usize>]) -> Recipient<'_> {
    match ends {
        Ends::Nobody => Recipient::Nobody,
        Ends::One(f) => Recipient::Flow(f),
        Ends::Several => Recipient::Own { here: v, egress_node },
    }
}

/// Offers the batch that reached egress node `v`, whose packets go `to`,
/// to `class` of the scheduled link: the packets wait in the pool for its
/// decisions (see `delivery`); what it refuses is dropped, counted.
#[inline(never)]
fn offer(to: Recipient<'_>, v: usize, class: u16, batch: &mut Batch, counters: &mut ModuleCounters, env: &mut Env<'_>) {
    let link = env.egress.as_mut().expect("a scheduled egress's worker has a scheduled link");
    let reads = link.reads();
    let mut refused = 0;
    for &id in batch.as_slice() {
        claim_for_egress(env.ctx.pool, env.ctx.flows, to, id);
        let PacketMeta { len, flow, .. } = *env.ctx.pool.meta(id);
        if flow == NO_FLOW {
            env.offered_at[id.0 as usize] = v as u32;
        }
        let seen = if reads == LinkReads::default() { Offered::default() } else { read_for_link(env.ctx.pool.data(id), reads) };
        if !link.offer(class, len, id, seen) {
            free_dropped(env.ctx.pool, env.ctx.flows, id);
            refused += 1;
        }
    }
    counters.egress_dropped += refused;
    batch.clear();
}

/// What `reads` asks of `frame`, read from its IP header (nothing where it has none).
fn read_for_link(frame: &[u8], reads: LinkReads) -> Offered {
    let Ok(ip) = ip_of(frame) else { return Offered::default() };
    Offered {
        ect: reads.ecn && ip.ecn() != 0,
        flow_hash: if reads.flow { FiveTuple::of_ip(&ip).map_or(0, |t| t.hash(0) as u32) } else { 0 },
    }
}

/// Hands gate `g`'s packets of `node` to outbound ring `out`; what the
/// ring cannot take now waits in its backlog, in order (see `OutRing`);
/// `backlogged` counts the rings with a backlog.
#[inline(never)]
fn send(node: &mut Node, g: usize, out: &mut OutRing, backlogged: &mut usize, env: &mut Env<'_>) {
    let batch = &mut node.out[g];
    let flow = node.claims[g];
    if flow != NO_FLOW {
        env.ctx.flows[flow as usize].claimed += claims::claim(env.ctx.pool, batch, flow);
    }
    let mut sent = 0;
    if out.backlog.is_empty() {
        for &id in batch.as_slice() {
            if out.ring.push(id).is_err() {
                break;
            }
            sent += 1;
        }
    }
    if sent < batch.len() {
        batch.drain_front(sent);
        if out.backlog.is_empty() {
            *backlogged += 1;
        }
        out.backlog.enqueue_from(batch);
        assert!(batch.is_empty(), "a backlog holds the whole arena");
    }
    batch.clear();
}

/// Pushes a task for each gate of node `v` its run filled but the first
/// served (see [`gates`]), so that they pop in the order they are served,
/// and returns the first.
#[inline(always)]
fn push_gates(stack: &mut Vec<Task>, v: usize, out: &[Box<Batch>], filled: &mut [u32], gate_rank: &[u32], draws: &mut u64) -> Option<Task> {
    let task = |g: usize| Task { node: v as u32, gate: g as u32 };
    match out.len() {
        0 => None,
        1 => (!out[0].is_empty()).then(|| task(0)),
        n => {
            let mut k = 0;
            for (g, batch) in out.iter().enumerate().take(n) {
                if !batch.is_empty() {
                    filled[k] = g as u32;
                    k += 1;
                }
            }
            if k == 0 {
                // The run dropped every packet (a splitter with no gate for them).
                return None;
            }
            if k > 1 {
                gates::order(draws, gate_rank, &mut filled[..k]);
            }
            for &g in filled[1..k].iter().rev() {
                stack.push(task(g as usize));
            }
            Some(task(filled[0] as usize))
        }
    }
}
