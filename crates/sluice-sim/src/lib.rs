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
//! round of when they were sent.
#![warn(missing_docs)]

use std::sync::Arc;

use quanta::Mock;
use sluice_core::{
    wire, Actions, Backend, Batch, Counters, Instance, Knobs, Model, NetworkFunction, NfContext, Outputs, PeriodMeter,
    Profile, Result, Schedule, Telemetry, WalkerConfig, WorkerGraph,
};

/// Virtual time a round that admitted nothing waits before polling again (ns).
const IDLE_STEP_NS: u64 = 1_000;
/// Least virtual time a round takes (ns): with only free modules (no
/// profile), time must still move.
const MIN_ROUND_NS: u64 = 10;

/// Runs an NF for its routing and rewriting, charging its modelled cost to the virtual clock.
struct Costed {
    inner: Box<dyn NetworkFunction>,
    profile: Profile,
    clock: Arc<Mock>,
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
        self.clock.increment(cost.round() as u64);
    }
}

struct SimWorker {
    graph: WorkerGraph,
    clock: Arc<Mock>,
    reading: Counters,
}

/// A pipeline simulated under its modules' cost models.
pub struct Simulator {
    model: Model,
    knobs: Knobs,
    workers: Vec<SimWorker>,
    meter: PeriodMeter,
    end_ns: u64,
    finished: Option<Telemetry>,
}

impl Simulator {
    /// Builds the simulation. `instances` has one entry per module; NFs must
    /// not burn real time (build cost-only NFs such as Bypass with zero
    /// cycles): their time is the module's profile (no profile: free).
    /// `schedule` orders each worker's work as on the engine.
    pub fn new(model: Model, instances: Vec<Instance>, schedule: Schedule) -> Result<Self> {
        let knobs = Knobs::new(&model).with_rates_of(&instances);
        let n_workers = model.workers();
        let clocks: Vec<_> = (0..n_workers).map(|_| quanta::Clock::mock()).collect();
        let mut slots: Vec<Option<Instance>> = instances
            .into_iter()
            .enumerate()
            .map(|(m, inst)| {
                Some(match inst {
                    Instance::Function(inner) => {
                        let profile = model.modules[m].profile.unwrap_or(Profile { t0_ns: 0.0, t1_ns: 0.0 });
                        let clock = clocks[model.worker_of[m]].1.clone();
                        Instance::Function(Box::new(Costed { inner, profile, clock }))
                    }
                    other => other,
                })
            })
            .collect();
        let mut workers = Vec::with_capacity(n_workers);
        let wiring = wire(&model, schedule, None);
        for (w, ((clock, mock), wiring)) in clocks.into_iter().zip(wiring).enumerate() {
            let config = WalkerConfig { timing: true, pool_capacity: None, schedule };
            let graph = WorkerGraph::new(&model, w, &mut slots, &knobs, clock, 0, config, wiring)?;
            workers.push(SimWorker { graph, clock: mock, reading: Counters::for_model(&model, n_workers) });
        }
        Ok(Self {
            meter: PeriodMeter::new(&model),
            model,
            knobs,
            workers,
            end_ns: 0,
            finished: None,
        })
    }

    fn collect(&mut self) -> Telemetry {
        let start = std::time::Instant::now();
        self.meter.begin();
        for (w, worker) in self.workers.iter_mut().enumerate() {
            worker.graph.read_counters(w, &mut worker.reading);
            self.meter.merge(&mut worker.reading, &self.model, w);
        }
        let mut t = self.meter.end(&self.knobs, Some(self.end_ns));
        t.read_ns = start.elapsed().as_nanos() as u64;
        t
    }
}

impl Backend for Simulator {
    fn model(&self) -> &Model {
        &self.model
    }

    fn run_period(&mut self, period_ns: u64) -> Telemetry {
        self.end_ns += period_ns;
        loop {
            let behind = self.workers.iter_mut().filter(|w| w.clock.value() < self.end_ns).min_by_key(|w| w.clock.value());
            let Some(worker) = behind else { break };
            let before = worker.clock.value();
            if worker.graph.round() == 0 {
                worker.clock.increment(IDLE_STEP_NS.min(self.end_ns - before));
            } else if worker.clock.value() < before + MIN_ROUND_NS {
                worker.clock.increment(before + MIN_ROUND_NS - worker.clock.value());
            }
        }
        self.collect()
    }

    fn apply(&mut self, actions: &Actions) -> Result<()> {
        self.knobs.apply(&self.model, actions)
    }

    fn finish(&mut self) -> Telemetry {
        if let Some(t) = &self.finished {
            return t.clone();
        }
        // Upstream workers' flushes land in downstream rings: repeat until
        // nothing is left or nothing moves.
        loop {
            let held: i64 = self.workers.iter().map(|w| w.graph.in_flight()).sum();
            let mut moved = 0;
            for worker in &mut self.workers {
                moved += worker.graph.poll_inbound();
                worker.graph.drain();
            }
            if held == 0 || moved == 0 && held == self.workers.iter().map(|w| w.graph.in_flight()).sum::<i64>() {
                break;
            }
        }
        let t = self.collect();
        self.finished = Some(t.clone());
        t
    }
}
