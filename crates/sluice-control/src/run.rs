//! The control loop: drives a backend period by period under a controller,
//! applies rate and SLO schedules, decomposes the pipeline onto a spare
//! worker when a worker is in inherent violation (see [`crate::decompose()`]),
//! and summarises the run.

use std::collections::VecDeque;
use std::time::Instant;

use serde::Serialize;
use sluice_core::limits::{MAX_PERIODS, MAX_PERIOD_NS};
use sluice_core::{Actions, Backend, DelaySampling, Drops, Error, FlowTotals, ModuleCounters, Model, ModuleId, Result, Role, Telemetry, Totals};

use crate::controller::Controller;
use crate::decompose::decompose;
use crate::steer::{pin_over, Boundary, Steering, Unsteered};
use crate::view::ControlParams;

/// A value that changes at given periods: `(first period, value)` steps.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Steps(pub Vec<(usize, f64)>);

impl Steps {
    /// The value that starts at exactly `period`, if one does.
    fn starting_at(&self, period: usize) -> Option<f64> {
        self.0.iter().rev().find(|(p, _)| *p == period).map(|(_, v)| *v)
    }
}

/// How long to run and what changes on the way.
#[derive(Clone, Debug, Serialize)]
pub struct RunPlan {
    /// Measured periods.
    pub periods: usize,
    /// Periods run first and left out of the summary.
    pub warmup_periods: usize,
    /// Control period (ns).
    pub period_ns: u64,
    /// The SLO statistic (which also judges a period's violations) and δ
    /// of the built-in SLO-aware controllers.
    pub control: ControlParams,
    /// Per flow, SLO steps (µs), counted over all periods including warm-up.
    pub slo_schedules: Vec<(usize, Steps)>,
    /// Per (source module, stream), rate steps (pkt/s).
    pub rate_schedules: Vec<(ModuleId, usize, Steps)>,
    /// Workers taken down for a while, as on a core failure.
    pub outages: Vec<Outage>,
    /// The most recent periods the report keeps (the summary counts all):
    /// a run of any length holds a bounded history.
    pub keep_periods: usize,
}

/// Periods a report keeps by default (at 100 ms, the last minute), for a
/// run and for `sluice serve` alike: a period of a pipeline of tens of
/// modules and flows takes ~10 KiB.
pub const DEFAULT_KEEP_PERIODS: usize = 600;

/// A worker down from the start of period `from` to the start of period
/// `until` (counted over all periods, warm-up included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Outage {
    /// The worker that fails.
    pub worker: usize,
    /// First period it is down.
    pub from: usize,
    /// First period it is back.
    pub until: usize,
}

impl Default for RunPlan {
    fn default() -> Self {
        Self {
            periods: 10,
            warmup_periods: 1,
            period_ns: 100_000_000,
            control: ControlParams::default(),
            slo_schedules: Vec::new(),
            rate_schedules: Vec::new(),
            outages: Vec::new(),
            keep_periods: DEFAULT_KEEP_PERIODS,
        }
    }
}

/// One control period as the run saw it.
#[derive(Clone, Debug, Serialize)]
pub struct PeriodRecord {
    /// The backend's telemetry.
    pub telemetry: Telemetry,
    /// SLO in force per flow (ns).
    pub slo_ns: Vec<Option<u64>>,
    /// Delivered packets per second over all flows (pkt/s).
    pub rate_pps: f64,
    /// Mean over controlled modules of the mean batch size at the NF (pkt).
    pub mean_batch: f64,
    /// Whether some flow's SLO statistic exceeded its SLO.
    pub violated: bool,
    /// Whether this period is warm-up.
    pub warmup: bool,
    /// How long the controller took to respond to this period.
    pub response: Response,
    /// Modules moved to another worker after this period (module, worker).
    pub moves: Vec<(ModuleId, usize)>,
    /// Why the controller's settings for the next period are a fallback
    /// (see [`Controller::fallback`]), if they are.
    pub fallback: Option<String>,
    /// Hold times in force during the period, of modules whose hold is
    /// controlled (module, ns; see [`crate::hold`]).
    pub holds: Vec<(ModuleId, u64)>,
    /// Changes made from outside the run before this period, one line
    /// each (see [`crate::steer`]).
    pub changes: Vec<String>,
}

/// The control side's response time to one period (Batchy Table 1).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Response {
    /// Reading the telemetry from the data plane (ns).
    pub read_ns: u64,
    /// The controller's computation (ns).
    pub compute_ns: u64,
    /// Applying its actions to the data plane (ns).
    pub apply_ns: u64,
}

/// The whole run in brief.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Summary {
    /// Delivered packets per second over the measured periods (pkt/s).
    pub rate_pps: f64,
    /// Mean over measured periods of the mean batch size at controlled NFs (pkt).
    pub mean_batch: f64,
    /// Share of measured periods with an SLO violation (%).
    pub violation_pct: f64,
    /// Packets made by the sources (pkt).
    pub generated: u64,
    /// Packets that reached an egress (pkt).
    pub delivered: u64,
    /// Packets dropped, every reason (pkt).
    pub dropped: u64,
    /// The same by reason (pkt).
    pub drops: Drops,
    /// Packets still inside at the end (pkt; 0 after a drained stop).
    pub in_flight: u64,
    /// Arrivals lost at the sources' full receive queues, never generated (pkt).
    pub missed: u64,
    /// Whether every packet is accounted for: generated = delivered + dropped + in flight.
    pub accounted: bool,
    /// Whether nothing was lost: accounted for, no drop but of removed
    /// duplicates, no arrival missed at a full receive queue, and nothing
    /// left inside when the run ended (what a drain could not deliver in
    /// time is lost with the pipeline).
    pub lossless: bool,
}

/// A finished run.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Controller name.
    pub controller: String,
    /// The most recent periods (up to the plan's `keep_periods`), warm-up included.
    pub periods: Vec<PeriodRecord>,
    /// Earlier periods not kept (the summary counts them).
    pub periods_dropped: usize,
    /// Why the run ended before its last period: stopped (a signal, a
    /// callback's request) or the error that ended it. `None`: it ran to the end.
    pub interrupted: Option<String>,
    /// Summary over the measured periods; totals after the final drain.
    pub summary: Summary,
    /// Per flow, by flow id, over the whole run (warm-up and final drain included).
    pub flow_totals: Vec<FlowTotals>,
    /// Per module, by module id, its counters over the whole run.
    pub module_totals: Vec<ModuleCounters>,
    /// Which delivered packets the delays were measured on (`None`: timing off).
    pub delays_timed: Option<DelaySampling>,
    /// The pipeline as the run left it: its flows (added and removed ones
    /// among them), SLOs and placement.
    pub model: Model,
}

/// Modules whose batch size the summary averages: the controlled ones, or
/// every network function when none is controlled.
fn batch_modules(model: &Model) -> Vec<ModuleId> {
    let controlled: Vec<_> = (0..model.modules.len()).filter(|&m| model.modules[m].controlled).collect();
    if !controlled.is_empty() {
        return controlled;
    }
    (0..model.modules.len()).filter(|&m| model.modules[m].role == Role::Function).collect()
}

/// Runs `backend` under `controller` for `plan`, calling `on_period` after each period.
pub fn drive(
    backend: &mut dyn Backend,
    controller: &mut dyn Controller,
    plan: &RunPlan,
    on_period: &mut dyn FnMut(&PeriodRecord),
) -> Result<RunReport> {
    drive_until(backend, controller, plan, on_period, &|| false)
}

/// [`drive`], ending early once `stop` returns true (asked within every
/// period, several times a millisecond on the engine): the period under
/// way ends, the pipeline drains, and the report of the periods done says
/// it was interrupted. An error from applying a controller's actions ends
/// the run the same way, with the error as the reason; errors in the plan
/// itself are refused before the first period.
pub fn drive_until(
    backend: &mut dyn Backend,
    controller: &mut dyn Controller,
    plan: &RunPlan,
    on_period: &mut dyn FnMut(&PeriodRecord),
    stop: &dyn Fn() -> bool,
) -> Result<RunReport> {
    drive_loop(backend, Active::Borrowed(controller), plan, on_period, stop, &mut Unsteered)
}

/// [`drive_until`] with changes from outside between periods (see
/// [`crate::steer`]): `steering` may switch the controller, pin triggers,
/// set SLOs and apply actions at every period boundary.
pub fn drive_steered(
    backend: &mut dyn Backend,
    controller: Box<dyn Controller>,
    plan: &RunPlan,
    on_period: &mut dyn FnMut(&PeriodRecord),
    stop: &dyn Fn() -> bool,
    steering: &mut dyn Steering,
) -> Result<RunReport> {
    drive_loop(backend, Active::Owned(controller), plan, on_period, stop, steering)
}

/// The controller in force: the caller's, or one switched to.
enum Active<'a> {
    Borrowed(&'a mut dyn Controller),
    Owned(Box<dyn Controller>),
}

impl Active<'_> {
    fn get(&mut self) -> &mut dyn Controller {
        match self {
            Active::Borrowed(c) => *c,
            Active::Owned(c) => c.as_mut(),
        }
    }
}

fn drive_loop(
    backend: &mut dyn Backend,
    mut controller: Active<'_>,
    plan: &RunPlan,
    on_period: &mut dyn FnMut(&PeriodRecord),
    stop: &dyn Fn() -> bool,
    steering: &mut dyn Steering,
) -> Result<RunReport> {
    if !(1..=MAX_PERIODS).contains(&(plan.periods + plan.warmup_periods)) || plan.periods == 0 {
        let why = format!("{} measured and {} warm-up periods: at least 1 measured, at most {MAX_PERIODS} in all", plan.periods, plan.warmup_periods);
        return Err(Error::Pipeline(why));
    }
    if !(1..=MAX_PERIOD_NS).contains(&plan.period_ns) {
        return Err(Error::Pipeline(format!("control period {} ns is out of range 1..={MAX_PERIOD_NS}", plan.period_ns)));
    }
    let mut model = backend.model().clone();
    for (f, _) in &plan.slo_schedules {
        if *f >= model.flows.len() {
            return Err(Error::Flow { flow: format!("#{f}"), reason: "SLO schedule for a flow that does not exist".into() });
        }
    }
    for o in &plan.outages {
        if o.worker >= model.workers() || o.from >= o.until {
            let why = format!("outage of worker {} from period {} until {}: needs an existing worker (of {}) and from < until", o.worker, o.from, o.until, model.workers());
            return Err(Error::module("<run plan>", why));
        }
    }
    let measured = batch_modules(&model);
    let mut holds = crate::hold::HoldControl::new(&model);
    backend.apply(&Actions { holds: holds.holds(), sleep_bounds: crate::slack::first_sleep_bounds(&model), ..controller.get().init(&model) })?;
    let mut pins: Vec<(ModuleId, u32)> = Vec::new();
    let keep = plan.keep_periods.max(1);
    let mut periods: VecDeque<PeriodRecord> = VecDeque::with_capacity(keep.min(plan.warmup_periods + plan.periods));
    let mut aggregate = Aggregate::default();
    let mut interrupted = None;
    for p in 0..plan.warmup_periods + plan.periods {
        if stop() {
            interrupted = Some(STOPPED.to_string());
            break;
        }
        let name = controller.get().name().to_owned();
        let mut boundary = Boundary { model: &mut model, backend: &mut *backend, pins: &mut pins, controller: &name, switch_to: None, changes: Vec::new() };
        steering.at_boundary(&mut boundary);
        let Boundary { switch_to, changes: steered, .. } = boundary;
        if let Some(c) = switch_to {
            controller = Active::Owned(c);
        }
        let mut changes = Actions::default();
        for (m, stream, schedule) in &plan.rate_schedules {
            if let Some(pps) = schedule.starting_at(p) {
                changes.rates.push((*m, *stream, pps));
            }
        }
        for o in &plan.outages {
            if p == o.from || p == o.until {
                changes.halted.push((o.worker, p == o.from));
            }
        }
        if let Err(e) = backend.apply(&changes) {
            interrupted = Some(e.to_string());
            break;
        }
        for (f, schedule) in &plan.slo_schedules {
            if let Some(us) = schedule.starting_at(p) {
                if !(us > 0.0) {
                    return Err(Error::Flow { flow: model.flows[*f].name.clone(), reason: format!("scheduled SLO {us} µs must be > 0") });
                }
                model.flows[*f].slo_ns = Some((us * 1e3).round() as u64);
            }
        }
        let telemetry = backend.run_period(plan.period_ns, stop);
        let cut_short = telemetry.period_ns + MIN_PERIOD_SHARE_NS < plan.period_ns && stop();
        let mut record = record(&model, &measured, plan, telemetry, p < plan.warmup_periods);
        record.holds = holds.holds();
        let compute = Instant::now();
        record.changes = steered;
        let mut actions = controller.get().step(&model, &record.telemetry);
        pin_over(&mut actions, &pins);
        record.fallback = controller.get().fallback();
        if actions.moves.is_empty() {
            actions.moves = decompose(&model, &record.telemetry, plan.control.statistic);
        }
        actions.sleep_bounds = crate::slack::sleep_bounds(&model, &record.telemetry, plan.control.statistic);
        actions.holds = holds.step(&model, &record.telemetry, &plan.control);
        let apply = Instant::now();
        let applied = backend.apply(&actions);
        if applied.is_ok() && !actions.moves.is_empty() {
            model = model.with_moves(&actions.moves)?;
            record.moves = actions.moves;
        }
        record.response = Response {
            read_ns: record.telemetry.read_ns,
            compute_ns: (apply - compute).as_nanos() as u64,
            apply_ns: apply.elapsed().as_nanos() as u64,
        };
        aggregate.add(&record);
        on_period(&record);
        // What the summary needs of every period; only the last `keep` are
        // kept, without the running totals (the report's come from the end).
        record.telemetry.module_totals = Vec::new();
        record.telemetry.flow_totals = Vec::new();
        if periods.len() == keep {
            periods.pop_front();
        }
        periods.push_back(record);
        if let Err(e) = applied {
            interrupted = Some(e.to_string());
            break;
        }
        if cut_short {
            interrupted = Some(STOPPED.to_string());
            break;
        }
    }
    let last = backend.finish();
    let summary = aggregate.summary(last.totals);
    Ok(RunReport {
        controller: controller.get().name().to_owned(),
        periods_dropped: aggregate.periods - periods.len(),
        periods: periods.into(),
        interrupted,
        summary,
        flow_totals: last.flow_totals,
        module_totals: last.module_totals,
        delays_timed: backend.delays_timed(),
        model,
    })
}

/// Why a run stopped when `stop` asked it to.
pub const STOPPED: &str = "stopped";

/// A period shorter than its length by more than this was cut by a stop (ns).
const MIN_PERIOD_SHARE_NS: u64 = 1_000_000;

/// What the summary counts of every period, kept or not.
#[derive(Default)]
struct Aggregate {
    /// Periods run, warm-up included.
    periods: usize,
    /// Measured periods, those over an SLO, their length (ns), deliveries and batch sizes.
    measured: usize,
    violated: usize,
    time_ns: u64,
    delivered: u64,
    batch_sum: f64,
}

impl Aggregate {
    fn add(&mut self, p: &PeriodRecord) {
        self.periods += 1;
        if p.warmup {
            return;
        }
        self.measured += 1;
        self.violated += usize::from(p.violated);
        self.time_ns += p.telemetry.period_ns;
        self.delivered += p.telemetry.flows.iter().map(|f| f.delivered).sum::<u64>();
        self.batch_sum += p.mean_batch;
    }

    fn summary(&self, totals: Totals) -> Summary {
        let n = self.measured.max(1) as f64;
        let accounted = totals.generated == totals.delivered + totals.dropped + totals.in_flight;
        Summary {
            rate_pps: if self.time_ns == 0 { 0.0 } else { self.delivered as f64 * 1e9 / self.time_ns as f64 },
            mean_batch: self.batch_sum / n,
            violation_pct: 100.0 * self.violated as f64 / n,
            generated: totals.generated,
            delivered: totals.delivered,
            dropped: totals.dropped,
            drops: totals.drops,
            in_flight: totals.in_flight,
            missed: totals.missed,
            accounted,
            lossless: accounted && totals.drops.lost() == 0 && totals.missed == 0 && totals.in_flight == 0,
        }
    }
}

fn record(model: &Model, measured: &[ModuleId], plan: &RunPlan, telemetry: Telemetry, warmup: bool) -> PeriodRecord {
    let slo_ns: Vec<_> = model.flows.iter().map(|f| f.slo_ns).collect();
    let violated = telemetry.flows.iter().zip(&slo_ns).any(|(f, &slo)| plan.control.statistic.over(f, slo));
    let batches: Vec<f64> = measured.iter().map(|&m| &telemetry.modules[m]).filter(|m| m.x > 0.0).map(|m| m.b).collect();
    let mean_batch = if batches.is_empty() { 0.0 } else { batches.iter().sum::<f64>() / batches.len() as f64 };
    let delivered: u64 = telemetry.flows.iter().map(|f| f.delivered).sum();
    let rate_pps = delivered as f64 * 1e9 / telemetry.period_ns as f64;
    PeriodRecord { telemetry, slo_ns, rate_pps, mean_batch, violated, warmup, response: Response::default(), moves: Vec::new(), fallback: None, holds: Vec::new(), changes: Vec::new() }
}

