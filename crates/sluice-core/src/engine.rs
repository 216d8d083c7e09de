//! The engine: one pinned thread per worker, and the control side that reads
//! their telemetry and writes triggers and rates without stopping them.
//!
//! Telemetry hand-over is lock-free: the control thread bumps an epoch; at
//! its next round boundary each worker copies its counters into a
//! preallocated [`Counters`] taken from a recycle ring and publishes it on a
//! second ring. Triggers and rates are relaxed atomics the walker reads once
//! per batch.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::backend::{Actions, Backend};
use crate::error::{Error, Result};
use crate::graph::{Instance, WalkerConfig, WorkerGraph};
use crate::model::{Model, ModuleId, Role};
use crate::nf::RateKnobs;
use crate::ring::{spsc, Consumer, Producer};
use crate::telemetry::{Counters, FlowRecorder, ModuleCounters, PeriodMeter, Telemetry, WorkerCounters};

/// Spare telemetry blocks per worker.
const SNAPSHOTS: usize = 4;
/// How long the control side waits for a worker's reading before giving up.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Engine settings.
#[derive(Clone, Copy, Debug)]
pub struct EngineConfig {
    /// Walker settings of every worker.
    pub walker: WalkerConfig,
    /// Pin worker w to CPU core w (mod the number of cores).
    pub pin: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self { walker: WalkerConfig::default(), pin: true }
    }
}

struct Signals {
    epoch: AtomicU64,
    stop: AtomicBool,
}

struct WorkerHandle {
    thread: Option<JoinHandle<()>>,
    readings: Consumer<Box<Counters>>,
    recycle: Producer<Box<Counters>>,
}

/// A running pipeline.
pub struct Engine {
    model: Model,
    triggers: Arc<[AtomicU32]>,
    rates: Vec<(ModuleId, RateKnobs)>,
    signals: Arc<Signals>,
    workers: Vec<WorkerHandle>,
    meter: PeriodMeter,
    sources: Vec<ModuleId>,
    sinks: Vec<ModuleId>,
    period_end: Instant,
    merged: Counters,
    finished: Option<Telemetry>,
}

fn blank_counters(model: &Model, workers: usize) -> Counters {
    Counters {
        at_ns: 0,
        modules: vec![ModuleCounters::default(); model.modules.len()],
        flows: vec![FlowRecorder::default(); model.flows.len()],
        workers: vec![WorkerCounters::default(); workers],
        in_flight: 0,
        triggers: vec![0; model.modules.len()],
    }
}

impl Engine {
    /// Starts one thread per worker of `model`; `instances` has one entry per module.
    pub fn start(model: Model, mut instances: Vec<Instance>, config: EngineConfig) -> Result<Self> {
        if instances.len() != model.modules.len() {
            return Err(Error::module("<pipeline>", format!("{} implementations for {} modules", instances.len(), model.modules.len())));
        }
        let rates = model
            .modules
            .iter()
            .enumerate()
            .zip(&instances)
            .filter_map(|((m, _), inst)| match inst {
                Instance::Source(s) => s.rates().map(|k| (m, k)),
                _ => None,
            })
            .collect();
        let n_workers = model.worker_of.iter().copied().max().map_or(1, |w| w + 1);
        let triggers: Arc<[AtomicU32]> = model.modules.iter().map(|_| AtomicU32::new(0)).collect();
        let signals = Arc::new(Signals { epoch: AtomicU64::new(0), stop: AtomicBool::new(false) });
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        let mut slots: Vec<Option<Instance>> = instances.drain(..).map(Some).collect();
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        let mut workers = Vec::with_capacity(n_workers);
        for w in 0..n_workers {
            let mut graph = WorkerGraph::new(&model, w, &mut slots, triggers.clone(), clock.clone(), origin, config.walker)?;
            let (mut reading_tx, readings) = spsc::<Box<Counters>>(SNAPSHOTS);
            let (mut recycle, mut spare_rx) = spsc::<Box<Counters>>(SNAPSHOTS);
            for _ in 0..SNAPSHOTS - 1 {
                let _ = recycle.push(Box::new(blank_counters(&model, n_workers)));
            }
            let signals = signals.clone();
            let core = (config.pin && !cores.is_empty()).then(|| cores[w % cores.len()]);
            let thread = std::thread::Builder::new()
                .name(format!("sluice-worker-{w}"))
                .spawn(move || {
                    if let Some(core) = core {
                        core_affinity::set_for_current(core);
                    }
                    let mut seen = 0;
                    let mut publish = |graph: &mut WorkerGraph| {
                        let mut slot = loop {
                            match spare_rx.pop() {
                                Some(s) => break s,
                                None => std::thread::yield_now(),
                            }
                        };
                        graph.read_counters(w, &mut slot);
                        if reading_tx.push(slot).is_err() {
                            unreachable!("the reading ring holds every spare");
                        }
                    };
                    loop {
                        let epoch = signals.epoch.load(Ordering::Acquire);
                        if epoch != seen {
                            seen = epoch;
                            publish(&mut graph);
                        }
                        if signals.stop.load(Ordering::Acquire) {
                            graph.drain();
                            publish(&mut graph);
                            return;
                        }
                        if graph.round() == 0 {
                            std::hint::spin_loop();
                        }
                    }
                })
                .map_err(|e| Error::module("<engine>", format!("cannot start worker {w}: {e}")))?;
            workers.push(WorkerHandle { thread: Some(thread), readings, recycle });
        }
        let sources = (0..model.modules.len()).filter(|&m| model.modules[m].role == Role::Source).collect();
        let sinks = (0..model.modules.len()).filter(|&m| model.modules[m].role == Role::Sink).collect();
        let merged = blank_counters(&model, n_workers);
        Ok(Self {
            model,
            triggers,
            rates,
            signals,
            workers,
            meter: PeriodMeter::default(),
            sources,
            sinks,
            period_end: Instant::now(),
            merged,
            finished: None,
        })
    }

    /// Collects one reading from every worker and merges them.
    fn collect(&mut self) -> Telemetry {
        let mut merged = std::mem::take(&mut self.merged);
        merged.at_ns = 0;
        merged.in_flight = 0;
        for f in &mut merged.flows {
            f.delays.reset();
        }
        for w in &mut self.workers {
            let deadline = Instant::now() + READ_TIMEOUT;
            let mut reading = loop {
                if let Some(r) = w.readings.pop() {
                    break r;
                }
                assert!(Instant::now() < deadline, "a worker gave no telemetry for {READ_TIMEOUT:?}");
                std::thread::sleep(Duration::from_micros(20));
            };
            merged.at_ns = merged.at_ns.max(reading.at_ns);
            merged.in_flight += reading.in_flight;
            for (m, c) in reading.modules.iter().enumerate() {
                if *c != ModuleCounters::default() {
                    merged.modules[m] = *c;
                }
            }
            for (f, r) in merged.flows.iter_mut().zip(reading.flows.iter_mut()) {
                if r.delivered > 0 || r.misdelivered > 0 {
                    f.delivered = r.delivered;
                    f.misdelivered = r.misdelivered;
                }
                f.delays.add(&r.delays).expect("same histogram bounds");
                r.delays.reset();
            }
            for (m, c) in reading.workers.iter().enumerate() {
                if *c != WorkerCounters::default() {
                    merged.workers[m] = *c;
                }
            }
            let _ = w.recycle.push(reading);
        }
        for (t, a) in merged.triggers.iter_mut().zip(self.triggers.iter()) {
            *t = a.load(Ordering::Relaxed);
        }
        let telemetry = self.meter.period(merged.clone(), &self.sources, &self.sinks);
        self.merged = merged;
        telemetry
    }
}

impl Backend for Engine {
    fn model(&self) -> &Model {
        &self.model
    }

    fn run_period(&mut self, period_ns: u64) -> Telemetry {
        self.period_end = self.period_end.max(Instant::now() - Duration::from_millis(1)) + Duration::from_nanos(period_ns);
        loop {
            let left = self.period_end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(1)));
        }
        self.signals.epoch.fetch_add(1, Ordering::AcqRel);
        self.collect()
    }

    fn apply(&mut self, actions: &Actions) -> Result<()> {
        for &(m, b) in &actions.triggers {
            let decl = self.model.modules.get(m).ok_or_else(|| Error::module(&format!("#{m}"), "no such module"))?;
            if b as usize > self.model.batch_size {
                return Err(Error::module(&decl.name, format!("trigger {b} exceeds the batch size {}", self.model.batch_size)));
            }
            self.triggers[m].store(b, Ordering::Relaxed);
        }
        for &(m, stream, pps) in &actions.rates {
            let knobs = self.rates.iter().find(|(s, _)| *s == m).map(|(_, k)| k);
            let name = self.model.modules.get(m).map_or("?", |d| d.name.as_str());
            match knobs {
                Some(k) if stream < k.len() && pps > 0.0 => k.set(stream, pps),
                _ => return Err(Error::module(name, format!("cannot set rate {pps} pkt/s of stream {stream}"))),
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Telemetry {
        if let Some(t) = &self.finished {
            return t.clone();
        }
        self.signals.stop.store(true, Ordering::Release);
        let telemetry = self.collect();
        for w in &mut self.workers {
            if let Some(t) = w.thread.take() {
                t.join().expect("worker thread panicked");
            }
        }
        self.finished = Some(telemetry.clone());
        telemetry
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.signals.stop.store(true, Ordering::Release);
        for w in &mut self.workers {
            if let Some(t) = w.thread.take() {
                let _ = t.join();
            }
        }
    }
}
