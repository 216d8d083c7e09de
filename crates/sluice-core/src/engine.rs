//! The engine: one pinned thread per worker, and the control side that reads
//! their telemetry and writes triggers and rates without stopping them.
//!
//! Telemetry hand-over is lock-free: the control thread bumps an epoch; at
//! its next round boundary each worker copies its counters into a
//! preallocated [`Counters`] taken from a recycle ring and publishes it on a
//! second ring. Triggers and rates are relaxed atomics ([`Knobs`]) the walker
//! reads once per batch.
//!
//! Moving modules between workers (pipeline decomposition) parks the
//! workers that lose or gain one: at its next round boundary each hands its
//! graph to the control side over a channel and waits for it back; the
//! others run on. A spare worker's thread waits for its first graph.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::backend::{Actions, Backend};
use crate::core_pinning::Cores;
use crate::error::{Error, Result};
use crate::graph::{move_modules, WalkerConfig, WorkerGraph};
use crate::knobs::Knobs;
use crate::meter::PeriodMeter;
use crate::model::{Model, ModuleId};
use crate::nf::{EgressLink, ModuleCode, LiveHandle, NetworkFunction, PacketSource};
use crate::poll::{self, PollPolicy, Poller, Wait};
use crate::ring::{spsc, Consumer, Producer};
use crate::telemetry::{Counters, DelaySampling, Telemetry};
use crate::watch::Watch;
use crate::wiring::wire;

/// Spare telemetry blocks per worker.
const READINGS: usize = 4;
/// How long the control side waits for a worker's reading before giving up.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Walker settings of every worker.
    pub walker: WalkerConfig,
    /// Pin worker w to CPU core w (mod the number of cores).
    pub pin: bool,
    /// What every worker does after a round that drains its input ...
    pub poll: PollPolicy,
    /// ... unless it has a policy of its own here, by worker number.
    pub worker_poll: Vec<(usize, PollPolicy)>,
    /// Workers log what the learned poll policy reads at each round
    /// short of a full batch, into each period's reading (for training it).
    pub log_poll_features: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self { walker: WalkerConfig::default(), pin: true, poll: PollPolicy::Busy, worker_poll: Vec::new(), log_poll_features: false }
    }
}

struct Signals {
    /// Bumped by the control side to ask every worker for a reading.
    epoch: AtomicU64,
    /// Sources off: workers only move what is inside, flushing every buffer.
    stop: AtomicBool,
    /// Threads end.
    exit: AtomicBool,
    /// Per worker: hand the graph to the control side at the next round boundary.
    park: Box<[AtomicBool]>,
    /// Per worker: the longest it may sleep when idle (ns); 0 until the
    /// control side has measured the slack of its flows.
    sleep_bound_ns: Box<[AtomicU64]>,
}

/// How long a stopping engine may take to empty its buffers and rings.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A graph handed (back) to its worker thread: the graph, the reading
/// epoch in force when sent, and a new poll policy if it changed.
type Handback = (Box<WorkerGraph>, u64, Option<PollPolicy>);

struct WorkerHandle {
    thread: Option<JoinHandle<()>>,
    readings: Consumer<Box<Counters>>,
    recycle: Producer<Box<Counters>>,
    /// The last reading taken, holding the delays of the period before it
    /// until they are cleared and it goes back through `recycle`.
    spent: Option<Box<Counters>>,
    /// Graphs go to the worker thread (its first, and back after a move)
    /// with the reading epoch in force when sent: the worker answers every
    /// later epoch, however late it gets to run (loading the epoch itself
    /// once it runs could miss a reading asked for meanwhile and leave the
    /// control thread waiting). Dropped to end a thread that waits for one.
    to_worker: Option<Sender<Handback>>,
    /// A parked worker's graph comes back here.
    from_worker: Receiver<Box<WorkerGraph>>,
    /// A spare worker's graph, kept here until modules move to it.
    idle: Option<Box<WorkerGraph>>,
    /// A poll policy set for a spare, handed over with its first graph.
    pending_poll: Option<PollPolicy>,
}

/// A running pipeline.
pub struct Engine {
    model: Model,
    knobs: Knobs,
    signals: Arc<Signals>,
    workers: Vec<WorkerHandle>,
    meter: PeriodMeter,
    period_end: Instant,
    finished: Option<Telemetry>,
    /// The cores the workers are pinned to, held until the engine is dropped.
    _cores: Option<Cores>,
    /// What the workers' egress links lead to (a scheduled egress's
    /// arbiter), stopped once the workers have ended.
    companion: Option<Box<dyn Send>>,
    /// Per module, its NF's live handle (see [`NetworkFunction::live`]).
    live: Vec<Option<LiveHandle>>,
    /// Which delivered packets the workers time (`None`: timing off).
    delays_timed: Option<DelaySampling>,
    /// While changes are held back together (see [`Backend::hold`]): the
    /// graphs of the workers parked for them, handed back at `release`.
    held: Option<Vec<(usize, Box<WorkerGraph>)>>,
    /// Packet handles in the workers' arena (see [`PacketPool::handles`](crate::PacketPool::handles)).
    packet_handles: usize,
}

impl Engine {
    /// Starts one thread per worker of `model`; `instances` has one entry per module.
    pub fn start(model: Model, instances: Vec<ModuleCode>, config: EngineConfig) -> Result<Self> {
        Self::start_linked(model, instances, config, Vec::new(), None)
    }

    /// [`Self::start`] with a scheduled link: worker `w` gets `egress[w]`
    /// (see [`crate::nf::EgressLink`]), and the engine keeps `companion`
    /// (what the links lead to: a thread of its own, which a core is
    /// claimed for as for a worker) until its workers have ended.
    pub fn start_linked(model: Model, instances: Vec<ModuleCode>, config: EngineConfig, egress: Vec<Box<dyn EgressLink>>, companion: Option<Box<dyn Send>>) -> Result<Self> {
        if instances.len() != model.modules.len() {
            return Err(Error::module("<pipeline>", format!("{} implementations for {} modules", instances.len(), model.modules.len())));
        }
        let knobs = Knobs::new(&model).with_rates_of(&instances).with_egress_of(egress.iter().map(|l| l.as_ref()));
        let live = instances.iter().map(ModuleCode::live).collect();
        let n_workers = model.workers();
        let signals = Arc::new(Signals {
            epoch: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            exit: AtomicBool::new(false),
            park: (0..n_workers).map(|_| AtomicBool::new(false)).collect(),
            sleep_bound_ns: (0..n_workers).map(|_| AtomicU64::new(0)).collect(),
        });
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        let mut slots: Vec<Option<ModuleCode>> = instances.into_iter().map(Some).collect();
        // A companion (a scheduled egress's arbiter) is a thread that spins
        // like a worker: it counts among the threads the cores are claimed for.
        let threads = n_workers + usize::from(companion.is_some());
        let cores = if config.pin { Some(Cores::claim(threads)?) } else { None };
        let mut graphs = Vec::with_capacity(n_workers);
        let mut egress = egress.into_iter();
        for (w, mut wiring) in wire(&model, config.walker.schedule, config.walker.pool_capacity).into_iter().enumerate() {
            wiring.egress = egress.next();
            graphs.push(WorkerGraph::new(&model, w, &mut slots, &knobs, clock.clone(), origin, config.walker, wiring)?);
        }
        let packet_handles = graphs.first().map_or(0, |g| g.pool_handles());
        let mut workers = Vec::with_capacity(n_workers);
        for (w, graph) in graphs.into_iter().enumerate() {
            let (reading_tx, readings) = spsc::<Box<Counters>>(READINGS);
            let (mut recycle, spare_rx) = spsc::<Box<Counters>>(READINGS);
            for _ in 0..READINGS - 1 {
                let _ = recycle.push(Box::new(Counters::for_model(&model, n_workers)));
            }
            let core = cores.as_ref().and_then(|c| c.of_worker(w));
            // More threads than cores share them: an idle worker gives its
            // core away instead of spinning on it.
            let shared = threads > cores.as_ref().map_or(0, Cores::len).max(1);
            let signals = signals.clone();
            let policy = config.worker_poll.iter().find(|(of, _)| *of == w).map_or(&config.poll, |(_, p)| p);
            let poller = Poller::new(policy.clone(), config.log_poll_features);
            let (to_worker, graphs_rx) = channel();
            let (graphs_tx, from_worker) = channel();
            let thread = std::thread::Builder::new()
                .name(format!("sluice-worker-{w}"))
                .spawn(move || worker_loop(w, core, shared, poller, &signals, reading_tx, spare_rx, graphs_tx, graphs_rx))
                .map_err(|e| Error::module("<engine>", format!("cannot start worker {w}: {e}")))?;
            let idle = if model.worker_of.contains(&w) {
                to_worker.send((Box::new(graph), 0, None)).expect("the worker waits for its graph");
                None
            } else {
                Some(Box::new(graph))
            };
            workers.push(WorkerHandle { thread: Some(thread), readings, recycle, spent: None, to_worker: Some(to_worker), from_worker, idle, pending_poll: None });
        }
        Ok(Self {
            meter: PeriodMeter::new(&model),
            model,
            knobs,
            signals,
            workers,
            period_end: Instant::now(),
            finished: None,
            _cores: cores,
            companion,
            live,
            delays_timed: config.walker.timing.then_some(config.walker.delay_sampling),
            held: None,
            packet_handles,
        })
    }

    /// Asks every worker for a reading and turns them into telemetry.
    fn read(&mut self) -> Telemetry {
        self.return_readings();
        let start = Instant::now();
        self.signals.epoch.fetch_add(1, Ordering::AcqRel);
        let mut t = self.collect();
        t.read_ns = start.elapsed().as_nanos() as u64;
        t
    }

    /// Collects one reading from every worker and turns them into telemetry.
    fn collect(&mut self) -> Telemetry {
        self.meter.begin();
        for (w, worker) in self.workers.iter_mut().enumerate().filter(|(_, h)| h.idle.is_none()) {
            let deadline = Instant::now() + READ_TIMEOUT;
            let mut waited = 0u32;
            let mut reading = loop {
                if let Some(r) = worker.readings.pop() {
                    break r;
                }
                assert!(Instant::now() < deadline, "worker {w} gave no telemetry for {READ_TIMEOUT:?}");
                // A worker answers at its next round boundary, usually within
                // microseconds: yield first, sleep only if it takes long.
                waited += 1;
                if waited < 1000 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                }
            };
            self.meter.merge(&mut reading, &self.model, w);
            worker.spent = Some(reading);
        }
        self.meter.end(&self.knobs, None)
    }

    /// Hands the spent readings back to their workers, delays cleared: done
    /// while a period runs, so that reading the next one takes less.
    fn return_readings(&mut self) {
        for worker in &mut self.workers {
            if let Some(mut reading) = worker.spent.take() {
                reading.clear_delays();
                let _ = worker.recycle.push(reading);
            }
        }
    }

    /// Moves modules to the placement of `to` (see [`Model::with_moves`]):
    /// parks the workers that lose or gain a module, re-wires their graphs
    /// and hands them back; a spare worker starts running.
    fn move_to(&mut self, to: Model) {
        let from = &self.model;
        let involved: Vec<usize> = (0..self.workers.len())
            .filter(|&w| from.worker_of.iter().zip(&to.worker_of).any(|(&a, &b)| a != b && (a == w || b == w)))
            .collect();
        let mut graphs = self.park(&involved);
        let mut parked: Vec<&mut WorkerGraph> = graphs.iter_mut().map(|(_, g)| &mut **g).collect();
        move_modules(&mut parked, &self.model, &to);
        self.model = to;
        self.unpark(graphs);
    }

    /// Takes the graphs of `workers` at their next round boundary (a
    /// spare's from where it waits, a held one's from where it is held);
    /// the others run on.
    fn park(&mut self, workers: &[usize]) -> Vec<(usize, Box<WorkerGraph>)> {
        let held = |w: usize| self.held.as_ref().is_some_and(|h| h.iter().any(|&(x, _)| x == w));
        for &w in workers {
            if self.workers[w].idle.is_none() && !held(w) {
                self.signals.park[w].store(true, Ordering::Release);
            }
        }
        workers
            .iter()
            .map(|&w| {
                if let Some(i) = self.held.as_ref().and_then(|h| h.iter().position(|&(x, _)| x == w)) {
                    return self.held.as_mut().expect("found there").swap_remove(i);
                }
                let handle = &mut self.workers[w];
                let graph = handle.idle.take().unwrap_or_else(|| {
                    handle.from_worker.recv_timeout(READ_TIMEOUT).unwrap_or_else(|e| panic!("worker {w} did not park: {e}"))
                });
                self.signals.park[w].store(false, Ordering::Release);
                (w, graph)
            })
            .collect()
    }

    /// Hands parked graphs back to their workers (a spare's among them
    /// starts running); while changes are held, keeps them until `release`.
    fn unpark(&mut self, graphs: Vec<(usize, Box<WorkerGraph>)>) {
        if let Some(held) = &mut self.held {
            held.extend(graphs);
            return;
        }
        for (w, graph) in graphs {
            let poll = self.workers[w].pending_poll.take();
            self.hand_back(w, graph, poll);
        }
    }

    /// Runs `edit` on every worker's graph, a spare's too (it stays a
    /// spare), with every running worker parked until all are edited.
    fn edit_every_graph(&mut self, mut edit: impl FnMut(usize, &mut WorkerGraph)) {
        let spares: Vec<bool> = self.workers.iter().map(|w| w.idle.is_some()).collect();
        let all: Vec<usize> = (0..self.workers.len()).collect();
        let mut graphs = self.park(&all);
        for (w, graph) in &mut graphs {
            edit(*w, graph);
        }
        for (w, graph) in graphs {
            if spares[w] {
                self.workers[w].idle = Some(graph);
            } else {
                self.unpark(vec![(w, graph)]);
            }
        }
    }

    fn hand_back(&mut self, w: usize, graph: Box<WorkerGraph>, poll: Option<PollPolicy>) {
        let epoch = self.signals.epoch.load(Ordering::Acquire);
        let sent = self.workers[w].to_worker.as_ref().map(|tx| tx.send((graph, epoch, poll)));
        assert!(matches!(sent, Some(Ok(()))), "worker {w} ended while parked");
    }

    /// [`Backend::set_poll`]: the worker is parked for the hand-over; a
    /// spare takes the policy when it starts.
    fn put_under(&mut self, w: usize, policy: PollPolicy) -> Result<()> {
        if w >= self.workers.len() || self.finished.is_some() {
            return Err(Error::module("<engine>", format!("cannot set the poll policy of worker {w}: there are {} running workers", self.workers.len())));
        }
        let running = self.workers[w].idle.is_none();
        let mut graphs = self.park(&[w]);
        let (_, graph) = graphs.pop().expect("one parked");
        if running {
            self.workers[w].pending_poll = Some(policy);
            self.unpark(vec![(w, graph)]);
        } else {
            // A spare keeps its graph here; the policy waits with it.
            self.workers[w].idle = Some(graph);
            self.workers[w].pending_poll = Some(policy);
        }
        Ok(())
    }

    /// Ends every worker thread (a spare one waiting for its graph too);
    /// `false` if one had panicked.
    fn join(&mut self) -> bool {
        self.signals.exit.store(true, Ordering::Release);
        let mut clean = true;
        for w in &mut self.workers {
            w.to_worker = None;
            if let Some(t) = w.thread.take() {
                clean &= t.join().is_ok();
            }
        }
        self.companion = None;
        clean
    }
}

/// A worker thread: rounds until stopped, then flushes until told to exit,
/// publishing a reading at each epoch.
#[allow(clippy::too_many_arguments)]
fn worker_loop(
    w: usize,
    core: Option<core_affinity::CoreId>,
    shared: bool,
    mut poller: Poller,
    signals: &Signals,
    mut readings: Producer<Box<Counters>>,
    mut spares: Consumer<Box<Counters>>,
    to_control: Sender<Box<WorkerGraph>>,
    from_control: Receiver<Handback>,
) {
    if let Some(core) = core {
        core_affinity::set_for_current(core);
    }
    poll::tight_timer_slack();
    // An interrupt wait wakes this much early and spins the rest (the machine's usual oversleep).
    let spin_of = |poller: &Poller| match poller.policy() {
        PollPolicy::VppAdaptive { .. } => poll::spin_before_deadline(),
        _ => Duration::ZERO,
    };
    let Ok((mut graph, mut seen, poll)) = from_control.recv() else { return };
    if let Some(policy) = poll {
        poller = poller.under(policy);
    }
    poller.set_intake(graph.intake());
    let mut spin = spin_of(&poller);
    let mut publish = |graph: &mut WorkerGraph, poller: &mut Poller| {
        let mut slot = loop {
            match spares.pop() {
                Some(s) => break s,
                None => std::thread::yield_now(),
            }
        };
        graph.read_counters(&mut slot);
        // Once a period: the sources' rates may have changed, and with them their queues' room.
        poller.set_intake(graph.intake());
        slot.workers[w].cpu_ns = poll::thread_cpu_ns();
        poller.take_features(&mut slot.poll_features[w]);
        assert!(readings.push(slot).is_ok(), "the reading ring holds every spare");
    };
    // Whether the last thing the loop did was a round: the next starts at the clock read that ended it.
    let mut back_to_back = false;
    loop {
        if signals.park[w].load(Ordering::Acquire) {
            if to_control.send(graph).is_err() {
                return;
            }
            // Readings asked for before the move were answered by others.
            let Ok((back, epoch, poll)) = from_control.recv() else { return };
            (graph, seen) = (back, epoch);
            if let Some(policy) = poll {
                poller = poller.under(policy);
                spin = spin_of(&poller);
            }
            poller.set_intake(graph.intake());
            back_to_back = false;
        }
        let epoch = signals.epoch.load(Ordering::Acquire);
        if epoch != seen {
            seen = epoch;
            publish(&mut graph, &mut poller);
            back_to_back = false;
        }
        if signals.exit.load(Ordering::Acquire) {
            return;
        }
        if signals.stop.load(Ordering::Acquire) {
            graph.poll_inbound();
            graph.drain();
            std::thread::yield_now();
        } else {
            let work = if back_to_back { graph.next_round() } else { graph.round() };
            back_to_back = true;
            // Packets an NF holds leave on time: a worker that waits wakes when they come due.
            let due = |d: Duration| graph.until_due().map_or(d, |due| d.min(due));
            match poller.after_round(work, || signals.sleep_bound_ns[w].load(Ordering::Relaxed)) {
                Wait::Poll if work > 0 => {}
                Wait::Poll if shared => {
                    std::thread::yield_now();
                    back_to_back = false;
                }
                Wait::Poll => std::hint::spin_loop(),
                Wait::Sleep(d) => {
                    let (asked, start) = (due(d), Instant::now());
                    std::thread::sleep(asked);
                    let took = start.elapsed();
                    graph.note_wait(asked, took);
                    poller.note_sleep(asked, took);
                    back_to_back = false;
                }
                Wait::Interrupt(most) => {
                    // A port's socket wakes the worker when packets arrive; the
                    // built-in sources know their next arrival (an emulated NIC).
                    let (most, start) = (due(most), Instant::now());
                    let asked = if graph.wait_readable(most) {
                        most
                    } else {
                        let until = graph.until_arrival().map_or(most, |a| a.min(most));
                        poll::sleep_precisely(until, spin);
                        until
                    };
                    graph.note_wait(asked, start.elapsed());
                    back_to_back = false;
                }
            }
        }
    }
}

impl Backend for Engine {
    fn model(&self) -> &Model {
        &self.model
    }

    fn delays_timed(&self) -> Option<DelaySampling> {
        self.delays_timed
    }

    fn run_period(&mut self, period_ns: u64, stop: &dyn Fn() -> bool) -> Telemetry {
        // Periods keep a fixed grid, so time the control side spends between
        // periods does not stretch them; after a stall the grid restarts now.
        let period = Duration::from_nanos(period_ns);
        self.return_readings();
        let now = Instant::now();
        self.period_end = if self.period_end + period < now { now + period } else { self.period_end + period };
        loop {
            let left = self.period_end.saturating_duration_since(Instant::now());
            if left.is_zero() || stop() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(1)));
        }
        self.read()
    }

    fn apply(&mut self, actions: &Actions) -> Result<()> {
        let moved = if actions.moves.is_empty() { None } else { Some(self.model.with_moves(&actions.moves)?) };
        self.knobs.apply(&self.model, actions)?;
        for &(w, ns) in &actions.sleep_bounds {
            if let Some(bound) = self.signals.sleep_bound_ns.get(w) {
                bound.store(ns, Ordering::Relaxed);
            }
        }
        if let Some(to) = moved {
            self.move_to(to);
        }
        Ok(())
    }

    fn hold(&mut self) {
        if self.held.is_some() || self.finished.is_some() {
            return;
        }
        let running: Vec<usize> = (0..self.workers.len()).filter(|&w| self.workers[w].idle.is_none()).collect();
        let graphs = self.park(&running);
        self.held = Some(graphs);
    }

    fn release(&mut self) {
        if let Some(graphs) = self.held.take() {
            self.unpark(graphs);
        }
    }

    fn replace_function(&mut self, m: ModuleId, nf: Box<dyn NetworkFunction>) -> Result<Box<dyn NetworkFunction>> {
        let w = *self.model.worker_of.get(m).ok_or_else(|| Error::module(&format!("#{m}"), "no such module"))?;
        if self.finished.is_some() {
            return Err(Error::module(&self.model.modules[m].name, "the pipeline has stopped"));
        }
        let live = nf.live();
        // A spare holds no module; only a running worker is parked.
        let mut graphs = self.park(&[w]);
        let replaced = graphs[0].1.replace_function(m, nf);
        self.unpark(graphs);
        let old = replaced.map_err(|e| Error::module(&self.model.modules[m].name, e))?;
        self.live[m] = live;
        Ok(old)
    }

    fn live(&self, m: ModuleId) -> Option<LiveHandle> {
        self.live.get(m).cloned().flatten()
    }

    fn set_flows(&mut self, of: &Model) -> Result<()> {
        let model = self.model.with_flows_of(of)?;
        if self.finished.is_some() {
            return Err(Error::Pipeline("cannot change its flows: the pipeline has stopped".into()));
        }
        self.edit_every_graph(|_, graph| graph.set_flows(&model));
        self.meter.set_flows(&model);
        self.model = model;
        Ok(())
    }

    fn packet_handles(&self) -> usize {
        self.packet_handles
    }

    fn watch(&mut self, edit: &mut dyn FnMut(usize, &mut Watch)) -> Result<()> {
        if self.finished.is_some() {
            return Err(Error::Pipeline("cannot watch it: the pipeline has stopped".into()));
        }
        self.edit_every_graph(|w, graph| graph.edit_watch(|watch| edit(w, watch)));
        Ok(())
    }

    fn edit_source(&mut self, m: ModuleId, edit: &mut dyn FnMut(&mut dyn PacketSource) -> std::result::Result<(), String>) -> Result<()> {
        let Some(&w) = self.model.worker_of.get(m) else {
            return Err(Error::module(&format!("#{m}"), "no such module"));
        };
        let name = self.model.modules[m].name.clone();
        if self.finished.is_some() {
            return Err(Error::module(&name, "the pipeline has stopped"));
        }
        let mut graphs = self.park(&[w]);
        let edited = graphs[0].1.edit_source(m, &self.model, edit);
        self.unpark(graphs);
        edited.unwrap_or_else(|| Err("it is not a source".into())).map_err(|e| Error::module(&name, e))
    }

    fn set_poll(&mut self, w: usize, policy: PollPolicy) -> Result<()> {
        self.put_under(w, policy)
    }

    fn finish(&mut self) -> Telemetry {
        if let Some(t) = &self.finished {
            return t.clone();
        }
        self.signals.stop.store(true, Ordering::Release);
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        let telemetry = loop {
            let t = self.read();
            if t.totals.in_flight == 0 || Instant::now() > deadline {
                break t;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(self.join(), "a worker thread panicked");
        self.finished = Some(telemetry.clone());
        telemetry
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.join();
    }
}
