//! Deterministic discrete-event simulation of a Sluice pipeline.
//!
//! The simulator runs the engine's own walker ([`WorkerGraph`]) — the same
//! fractional buffers, run-to-completion order, sources and NF routing code —
//! on a virtual clock. Each NF run advances that clock by its cost model
//! T0 + T1·b (ns) instead of taking real time, so a run is a pure function
//! of the pipeline, its seeds and the controller: deterministic and
//! independent of the machine. Each worker has a clock of its own; the
//! simulator always advances the worker whose clock is behind, one round at
//! a time, so packets crossing between workers on rings arrive within a
//! round of when they were sent. An NF's cost goes to the clock of the
//! worker running it, so modules can move between workers mid-run.
#![warn(missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use quanta::Mock;
use sluice_core::{
    wire, Actions, Backend, Batch, Counters, DelaySampling, EgressLink, Error, ModuleCode, Knobs, Model, ModuleId, NetworkFunction, NfContext, Outputs, PeriodMeter,
    LiveHandle, Profile, Result, Schedule, Telemetry, WalkerConfig, WorkerGraph, move_modules,
};

/// Virtual time a round that admitted nothing waits before polling again (ns).
const IDLE_STEP_NS: u64 = 1_000;
/// Least virtual time a round takes (ns): with only free modules (no
/// profile), time must still move. A worker none of whose modules costs
/// anything runs at this floor, a rate no engine reaches (see
/// `sluice_pipeline::Pipeline::uncosted`).
pub const MIN_ROUND_NS: u64 = 10;
/// Most virtual time a finishing run waits for a scheduled link to let
/// out what it holds (ns).
const DRAIN_NS: u64 = 10_000_000_000;
/// Rounds between two asks whether to stop (a few ms of the simulator's time).
const STOP_CHECK_ROUNDS: u64 = 4096;

/// Every worker's virtual clock, and which worker runs now.
struct Clocks {
    mocks: Vec<Arc<Mock>>,
    running: AtomicUsize,
}

/// Runs an NF for its routing and rewriting, charging its modelled cost to
/// the virtual clock of the worker running it.
struct Costed {
    inner: Box<dyn NetworkFunction>,
    profile: Profile,
    clocks: Arc<Clocks>,
}

impl NetworkFunction for Costed {
    fn outgates(&self) -> usize {
        self.inner.outgates()
    }

    fn ingates(&self) -> usize {
        self.inner.ingates()
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let cost = self.profile.cost_ns(input.len() as f64);
        self.inner.process(ctx, input, out);
        self.clocks.mocks[self.clocks.running.load(Ordering::Relaxed)].increment(cost.round() as u64);
    }

    fn most_held(&self) -> usize {
        self.inner.most_held()
    }

    fn held(&self) -> usize {
        self.inner.held()
    }

    fn due_ns(&self) -> Option<u64> {
        self.inner.due_ns()
    }

    fn ready(&self) -> bool {
        self.inner.ready()
    }

    fn release_all(&mut self) {
        self.inner.release_all()
    }

    fn set_hold_ns(&mut self, ns: u64) {
        self.inner.set_hold_ns(ns)
    }

    fn live(&self) -> Option<LiveHandle> {
        self.inner.live()
    }

    fn read_counters(&self, into: &mut sluice_core::telemetry::NfCounters) {
        self.inner.read_counters(into)
    }
}

struct SimWorker {
    graph: WorkerGraph,
    reading: Counters,
}

/// A pipeline simulated under its modules' cost models.
pub struct Simulator {
    model: Model,
    knobs: Knobs,
    clocks: Arc<Clocks>,
    workers: Vec<SimWorker>,
    meter: PeriodMeter,
    end_ns: u64,
    finished: Option<Telemetry>,
    /// Whether the workers have a scheduled link (see [`Simulator::new_linked`]).
    linked: bool,
    /// Per module, its NF's live handle.
    live: Vec<Option<LiveHandle>>,
}

/// Module `m`'s NF timed by its profile on the virtual clocks.
fn costed(model: &Model, m: ModuleId, inner: Box<dyn NetworkFunction>, clocks: &Arc<Clocks>) -> Box<dyn NetworkFunction> {
    let profile = model.modules[m].profile.unwrap_or(Profile { t0_ns: 0.0, t1_ns: 0.0 });
    Box::new(Costed { inner, profile, clocks: clocks.clone() })
}

impl Simulator {
    /// Builds the simulation. `instances` has one entry per module; NFs must
    /// not burn real time (build cost-only NFs such as Bypass with zero
    /// cycles): their time is the module's profile (no profile: free).
    /// `schedule` orders each worker's work as on the engine.
    pub fn new(model: Model, instances: Vec<ModuleCode>, schedule: Schedule) -> Result<Self> {
        Self::new_linked(model, instances, schedule, None, 0)
    }

    /// [`Self::new`] with a scheduled link: `egress` makes each worker's
    /// (see [`sluice_core::EgressLink`]) on its virtual clock, and every
    /// worker's pool makes room for `held` packets waiting in it.
    pub fn new_linked(model: Model, instances: Vec<ModuleCode>, schedule: Schedule, egress: Option<&dyn Fn(quanta::Clock) -> Box<dyn EgressLink>>, held: usize) -> Result<Self> {
        let n_workers = model.workers();
        let (clocks, mocks): (Vec<_>, Vec<_>) = (0..n_workers).map(|_| quanta::Clock::mock()).unzip();
        let links: Vec<Option<Box<dyn EgressLink>>> = clocks.iter().map(|clock| egress.map(|make| make(clock.clone()))).collect();
        let knobs = Knobs::new(&model).with_rates_of(&instances).with_egress_of(links.iter().flatten().map(|l| l.as_ref()));
        let live = instances.iter().map(ModuleCode::live).collect();
        let shared = Arc::new(Clocks { mocks, running: AtomicUsize::new(0) });
        let mut slots: Vec<Option<ModuleCode>> = instances
            .into_iter()
            .enumerate()
            .map(|(m, inst)| {
                Some(match inst {
                    ModuleCode::Function(inner) => ModuleCode::Function(costed(&model, m, inner, &shared)),
                    other => other,
                })
            })
            .collect();
        let mut workers = Vec::with_capacity(n_workers);
        let pool = egress.map(|_| sluice_core::wiring::pool_capacity(&model, schedule, held));
        let wiring = wire(&model, schedule, pool);
        for (w, ((clock, link), mut wiring)) in clocks.into_iter().zip(links).zip(wiring).enumerate() {
            wiring.egress = link;
            // Virtual clock reads cost nothing: every round is timed.
            let config = WalkerConfig { timing: true, pool_capacity: None, schedule, busy_sampling: 1, delay_sampling: DelaySampling::EVERY_PACKET, ring_codel: None };
            let graph = WorkerGraph::new(&model, w, &mut slots, &knobs, clock, 0, config, wiring)?;
            workers.push(SimWorker { graph, reading: Counters::for_model(&model, n_workers) });
        }
        Ok(Self {
            meter: PeriodMeter::new(&model),
            model,
            knobs,
            clocks: shared,
            workers,
            end_ns: 0,
            finished: None,
            linked: egress.is_some(),
            live,
        })
    }

    fn collect(&mut self) -> Telemetry {
        for worker in &mut self.workers {
            worker.reading.clear_delays();
        }
        let start = std::time::Instant::now();
        self.meter.begin();
        for (w, worker) in self.workers.iter_mut().enumerate() {
            worker.graph.read_counters(&mut worker.reading);
            self.meter.merge(&mut worker.reading, &self.model, w);
        }
        let mut t = self.meter.end(&self.knobs, Some(self.end_ns));
        t.read_ns = start.elapsed().as_nanos() as u64;
        t
    }
}

impl Backend for Simulator {
    fn delays_timed(&self) -> Option<DelaySampling> {
        Some(DelaySampling::EVERY_PACKET)
    }

    fn model(&self) -> &Model {
        &self.model
    }

    fn run_period(&mut self, period_ns: u64, stop: &dyn Fn() -> bool) -> Telemetry {
        self.end_ns += period_ns;
        let mocks = &self.clocks.mocks;
        for round in 0u64.. {
            if round % STOP_CHECK_ROUNDS == STOP_CHECK_ROUNDS - 1 && stop() {
                // The period ends where the slowest worker got to.
                self.end_ns = (0..mocks.len()).map(|w| mocks[w].value()).min().unwrap_or(self.end_ns).min(self.end_ns);
                break;
            }
            let behind = (0..mocks.len()).filter(|&w| mocks[w].value() < self.end_ns).min_by_key(|&w| mocks[w].value());
            let Some(w) = behind else { break };
            let clock = &mocks[w];
            let before = clock.value();
            self.clocks.running.store(w, Ordering::Relaxed);
            if self.workers[w].graph.round() == 0 {
                clock.increment(IDLE_STEP_NS.min(self.end_ns - before));
            } else if clock.value() < before + MIN_ROUND_NS {
                clock.increment(before + MIN_ROUND_NS - clock.value());
            }
        }
        self.collect()
    }

    fn apply(&mut self, actions: &Actions) -> Result<()> {
        let moved = if actions.moves.is_empty() { None } else { Some(self.model.with_moves(&actions.moves)?) };
        self.knobs.apply(&self.model, actions)?;
        if let Some(to) = moved {
            let mut graphs: Vec<&mut WorkerGraph> = self.workers.iter_mut().map(|w| &mut w.graph).collect();
            move_modules(&mut graphs, &self.model, &to);
            self.model = to;
        }
        Ok(())
    }

    fn replace_function(&mut self, m: ModuleId, nf: Box<dyn NetworkFunction>) -> Result<Box<dyn NetworkFunction>> {
        let w = *self.model.worker_of.get(m).ok_or_else(|| Error::module(&format!("#{m}"), "no such module"))?;
        let live = nf.live();
        let nf = costed(&self.model, m, nf, &self.clocks);
        let old = self.workers[w].graph.replace_function(m, nf).map_err(|e| Error::module(&self.model.modules[m].name, e))?;
        self.live[m] = live;
        Ok(old)
    }

    fn live(&self, m: ModuleId) -> Option<LiveHandle> {
        self.live.get(m).cloned().flatten()
    }

    fn set_flows(&mut self, of: &Model) -> Result<()> {
        let model = self.model.with_flows_of(of)?;
        for w in &mut self.workers {
            w.graph.set_flows(&model);
        }
        self.meter.set_flows(&model);
        self.model = model;
        Ok(())
    }

    fn edit_source(&mut self, m: ModuleId, edit: &mut dyn FnMut(&mut dyn sluice_core::PacketSource) -> std::result::Result<(), String>) -> Result<()> {
        let Some(&w) = self.model.worker_of.get(m) else {
            return Err(Error::module(&format!("#{m}"), "no such module"));
        };
        let edited = self.workers[w].graph.edit_source(m, &self.model, edit);
        edited.unwrap_or_else(|| Err("it is not a source".into())).map_err(|e| Error::module(&self.model.modules[m].name, e))
    }

    fn packet_handles(&self) -> usize {
        self.workers.first().map_or(0, |w| w.graph.pool_handles())
    }

    fn watch(&mut self, edit: &mut dyn FnMut(usize, &mut sluice_core::Watch)) -> Result<()> {
        for (i, w) in self.workers.iter_mut().enumerate() {
            w.graph.edit_watch(|watch| edit(i, watch));
        }
        Ok(())
    }

    fn set_poll(&mut self, _w: usize, _policy: sluice_core::PollPolicy) -> Result<()> {
        Err(Error::module("<simulator>", "the simulator has no poll policies: its workers never wait"))
    }

    fn finish(&mut self) -> Telemetry {
        if let Some(t) = &self.finished {
            return t.clone();
        }
        // Upstream workers' flushes land in downstream rings: repeat until
        // nothing is left or nothing moves. A scheduled link lets packets
        // out only as virtual time passes: while it holds some, time moves
        // on (up to DRAIN_NS).
        let mut waited_ns = 0;
        loop {
            let held: i64 = self.workers.iter().map(|w| w.graph.in_flight()).sum();
            let mut moved = 0;
            for (w, worker) in self.workers.iter_mut().enumerate() {
                self.clocks.running.store(w, Ordering::Relaxed);
                moved += worker.graph.poll_inbound();
                worker.graph.drain();
            }
            let still = self.workers.iter().map(|w| w.graph.in_flight()).sum::<i64>();
            if held == 0 || moved == 0 && still == held && (!self.linked || waited_ns >= DRAIN_NS) {
                break;
            }
            if self.linked && still == held {
                for mock in &self.clocks.mocks {
                    mock.increment(IDLE_STEP_NS);
                }
                waited_ns += IDLE_STEP_NS;
            }
        }
        let t = self.collect();
        self.finished = Some(t.clone());
        t
    }
}
