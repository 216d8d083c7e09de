//! What a run reports, as `sluice run --json` writes it and a Python
//! `on_period` callback receives it: flows, modules and classes keyed by
//! name in the pipeline's order. The types carry their JSON Schema, from
//! which the Python front's TypedDicts are generated.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use sluice_control::{PeriodRecord, Response, RunPlan, RunReport, SloStatistic, Summary};
use sluice_core::telemetry::{DelaySampling, FlowTelemetry, FlowTotals, ModuleCounters, ModuleTelemetry, NfCounters, Totals, WorkerTelemetry};
use sluice_core::Model;

use crate::egress_plan::EgressPlan;
use crate::pipeline::Pipeline;
use crate::run_params::BackendKind;

/// Values by name, in the order the pipeline lists them.
pub type Named<T> = IndexMap<String, T>;

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// The reasons an NF dropped packets for, by name.
fn by_reason(drops: &sluice_core::NfDrops) -> Named<u64> {
    sluice_core::DropReason::counted(drops).map(|(name, n)| (name.to_owned(), n)).collect()
}

/// A whole run.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RunOutput {
    /// The pipeline's name.
    pub pipeline: String,
    /// The controller's name.
    pub controller: String,
    /// Where it ran.
    pub backend: BackendKind,
    /// Batch size B (pkt).
    pub batch_size: usize,
    /// Control period (ms).
    pub period_ms: f64,
    /// Periods of warm-up, not measured, before the others.
    pub warmup_periods: usize,
    /// The delay statistic held to each SLO.
    pub slo_statistic: SloStatistic,
    /// The controllers' margin δ (share of an SLO).
    pub delta: f64,
    /// The run in brief, over its measured periods.
    pub summary: Summary,
    /// Which delivered packets the delays were measured on (none: timing off).
    pub delays_timed: Option<DelaySampling>,
    /// Why the run ended before its last period (none: it ran to the end).
    pub interrupted: Option<String>,
    /// Earlier periods not kept in `periods` (the summary counts them).
    pub periods_dropped: usize,
    /// Per flow, over the whole run (pkt).
    pub flow_totals: Named<FlowTotals>,
    /// Flows removed while it ran.
    pub removed_flows: Vec<String>,
    /// Per module, its counters over the whole run.
    pub module_totals: Named<ModuleTotals>,
    /// The periods kept, warm-up included.
    pub periods: Vec<PeriodOutput>,
    /// The scheduled egress's classes (none: no scheduled egress).
    pub egress_classes: Option<Vec<ClassMembers>>,
    /// On the simulator, why its rate is the model's bound rather than a
    /// rate, where it is (see [`Pipeline::uncosted`]).
    pub rate_bound: Option<String>,
}

/// One control period.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PeriodOutput {
    /// End of the period (s since the run started).
    pub t_s: f64,
    /// Period index, from 0.
    pub period: u64,
    /// Whether it is warm-up.
    pub warmup: bool,
    /// Delivered over all flows (pkt/s).
    pub rate_pps: f64,
    /// Mean over controlled modules of the mean batch at the NF (pkt).
    pub mean_batch: f64,
    /// Whether some flow's SLO statistic exceeded its SLO.
    pub violated: bool,
    /// Per flow.
    pub flows: Named<FlowPeriod>,
    /// Per module.
    pub modules: Named<ModulePeriod>,
    /// Per worker.
    pub workers: Vec<WorkerTelemetry>,
    /// Accounting since the start (pkt).
    pub totals: Totals,
    /// How long the control side took to respond.
    pub response: Response,
    /// Modules moved after this period, to the worker given.
    pub moves: Named<usize>,
    /// Why the controller's next settings are a fallback, if they are.
    pub fallback: Option<String>,
    /// Changes made from outside before this period, one line each.
    pub changes: Vec<String>,
    /// The scheduled egress's classes (none: no scheduled egress).
    pub classes: Option<Named<ClassPeriod>>,
}

/// One flow over one period.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FlowPeriod {
    /// Packets its source made (pkt).
    pub generated: u64,
    /// Packets of it dropped, on any worker (pkt).
    pub dropped: u64,
    /// Packets delivered (pkt).
    pub delivered: u64,
    /// Delivery rate (pkt/s).
    pub rate_pps: f64,
    /// Mean delay (µs).
    pub mean_us: f64,
    /// Median delay (µs).
    pub p50_us: f64,
    /// 95th-percentile delay (µs).
    pub p95_us: f64,
    /// 99th-percentile delay (µs).
    pub p99_us: f64,
    /// Largest delay (µs).
    pub max_us: f64,
    /// The SLO in force (µs; none: best effort).
    pub slo_us: Option<f64>,
    /// Packets of other flows that reached its egress (pkt).
    pub misdelivered: u64,
    /// Past the floor, the delays of one round in this many were timed (1: every packet) ...
    pub timed_one_in: u32,
    /// ... drawn this many times ...
    pub drawn_rounds: u64,
    /// ... so that with 95% confidence every quantile is within this many
    /// percentile points of the period's.
    pub quantile_error_pct: f64,
}

impl FlowPeriod {
    fn of(f: &FlowTelemetry, slo_ns: Option<u64>) -> Self {
        Self {
            generated: f.generated,
            dropped: f.dropped,
            delivered: f.delivered,
            rate_pps: f.rate_pps,
            mean_us: us(f.mean_ns),
            p50_us: us(f.p50_ns),
            p95_us: us(f.p95_ns),
            p99_us: us(f.p99_ns),
            max_us: us(f.max_ns),
            slo_us: slo_ns.map(us),
            misdelivered: f.misdelivered,
            timed_one_in: f.sample.one_in.max(1),
            drawn_rounds: f.sample.drawn,
            quantile_error_pct: f.sample.error_pct(),
        }
    }
}

/// One module over one period.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ModulePeriod {
    /// Its buffer, runs and drops.
    #[serde(flatten)]
    pub telemetry: ModuleTelemetry,
    /// Whether a controller sizes its buffer.
    pub controlled: bool,
    /// Its own counters over the period.
    #[serde(flatten)]
    pub own: OwnCounters,
    /// Its NF's drops over the period by reason (pkt; reasons it dropped none for left out).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub nf_drops: Named<u64>,
    /// The hold time in force, for an NF whose hold is controlled (µs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_us: Option<f64>,
}

/// A module's counters over the whole run.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ModuleTotals {
    /// What arrived, ran, was made and dropped.
    #[serde(flatten)]
    pub counters: ModuleCounters,
    /// Its own counters.
    #[serde(flatten)]
    pub own: OwnCounters,
    /// Its NF's drops by reason (pkt; reasons it dropped none for left out).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub nf_drops: Named<u64>,
}

/// The counters an NF or a port keeps of its own, by name, where it names any.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct OwnCounters {
    /// An NF's (what each counts is its kind's to say).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub nf: Named<u64>,
    /// A port's, at a source or sink on one.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub port: Named<u64>,
}

impl OwnCounters {
    fn of(pipeline: &Pipeline, module: usize, slots: &NfCounters) -> Self {
        let (key, names) = pipeline.own_counters(module);
        let counters = names.iter().zip(slots).map(|(&n, &c)| (n.to_owned(), c)).collect();
        if key == "port" {
            Self { port: counters, ..Self::default() }
        } else {
            Self { nf: counters, ..Self::default() }
        }
    }
}

/// A scheduled egress's class over one period.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ClassPeriod {
    /// Packets its flows' sources made (pkt).
    pub generated: u64,
    /// Packets of its flows delivered (pkt).
    pub delivered: u64,
    /// Packets of its flows dropped (pkt).
    pub dropped: u64,
    /// Delivered (pkt/s).
    pub rate_pps: f64,
    /// The largest p99 delay among its flows that delivered (µs).
    pub p99_us: f64,
}

/// A scheduled egress's class as the description resolved it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ClassMembers {
    /// Its name.
    pub name: String,
    /// Its weight.
    pub weight: u32,
    /// The flows it carries.
    pub flows: Vec<String>,
}

impl PeriodOutput {
    /// Period `p` of `pipeline`; `model` is the pipeline as it ran then
    /// or later (flows are only ever added).
    pub fn of(pipeline: &Pipeline, model: &Model, p: &PeriodRecord) -> Self {
        let t = &p.telemetry;
        let flows = model.flows.iter().zip(&t.flows).zip(&p.slo_ns).map(|((f, ft), &slo)| (f.name.clone(), FlowPeriod::of(ft, slo))).collect();
        let modules = model
            .modules
            .iter()
            .zip(&t.modules)
            .enumerate()
            .map(|(i, (m, mt))| {
                let module = ModulePeriod {
                    telemetry: mt.clone(),
                    controlled: m.controlled,
                    own: OwnCounters::of(pipeline, i, &mt.nf),
                    nf_drops: by_reason(&mt.nf_drops),
                    hold_us: p.holds.iter().find(|(h, _)| *h == i).map(|&(_, ns)| us(ns)),
                };
                (m.name.clone(), module)
            })
            .collect();
        Self {
            t_s: t.t_s,
            period: t.period,
            warmup: p.warmup,
            rate_pps: p.rate_pps,
            mean_batch: p.mean_batch,
            violated: p.violated,
            flows,
            modules,
            workers: t.workers.clone(),
            totals: t.totals,
            response: p.response,
            moves: p.moves.iter().map(|&(m, w)| (model.modules[m].name.clone(), w)).collect(),
            fallback: p.fallback.clone(),
            changes: p.changes.clone(),
            classes: pipeline.egress().map(|plan| ClassPeriod::all(plan, model, t)),
        }
    }
}

impl ClassPeriod {
    /// Every class of `plan` over the period of `t`.
    fn all(plan: &EgressPlan, model: &Model, t: &sluice_core::Telemetry) -> Named<Self> {
        let class = |c: usize| {
            let members: Vec<&FlowTelemetry> = plan.flows_of(model, c).filter_map(|f| t.flows.get(f)).collect();
            let sum = |get: fn(&FlowTelemetry) -> u64| members.iter().map(|f| get(f)).sum::<u64>();
            Self {
                generated: sum(|f| f.generated),
                delivered: sum(|f| f.delivered),
                dropped: sum(|f| f.dropped),
                rate_pps: members.iter().map(|f| f.rate_pps).sum(),
                p99_us: members.iter().filter(|f| f.delivered > 0).map(|f| us(f.p99_ns)).fold(0.0, f64::max),
            }
        };
        plan.class_names.iter().enumerate().map(|(c, name)| (name.clone(), class(c))).collect()
    }
}

impl RunOutput {
    /// The whole run `report` of `pipeline` on `backend`.
    pub fn of(pipeline: &Pipeline, report: &RunReport, backend: BackendKind, plan: &RunPlan) -> Self {
        let model = &report.model;
        Self {
            pipeline: pipeline.name().to_owned(),
            controller: report.controller.clone(),
            backend,
            batch_size: model.batch_size,
            period_ms: plan.period_ns as f64 / 1e6,
            warmup_periods: plan.warmup_periods,
            slo_statistic: plan.control.statistic,
            delta: plan.control.delta,
            summary: report.summary.clone(),
            delays_timed: report.delays_timed,
            interrupted: report.interrupted.clone(),
            periods_dropped: report.periods_dropped,
            flow_totals: model.flows.iter().zip(&report.flow_totals).map(|(f, &t)| (f.name.clone(), t)).collect(),
            removed_flows: model.flows.iter().filter(|f| f.removed).map(|f| f.name.clone()).collect(),
            module_totals: model
                .modules
                .iter()
                .zip(&report.module_totals)
                .enumerate()
                .map(|(i, (m, &counters))| (m.name.clone(), ModuleTotals { counters, own: OwnCounters::of(pipeline, i, &counters.nf), nf_drops: by_reason(&counters.nf_drops) }))
                .collect(),
            periods: report.periods.iter().map(|p| PeriodOutput::of(pipeline, model, p)).collect(),
            egress_classes: pipeline.egress().map(|plan| ClassMembers::all(plan, model)),
            rate_bound: (backend == BackendKind::Sim).then(|| rate_bound(pipeline)).flatten(),
        }
    }
}

impl ClassMembers {
    /// Every class of `plan`: name, weight and the flows it carries.
    fn all(plan: &EgressPlan, model: &Model) -> Vec<Self> {
        plan.class_names
            .iter()
            .enumerate()
            .map(|(c, name)| Self { name: name.clone(), weight: plan.config.weights[c], flows: plan.flows_of(model, c).map(|f| model.flows[f].name.clone()).collect() })
            .collect()
    }
}

/// Why a simulated rate is the model's bound rather than a rate, where it
/// is (see [`Pipeline::uncosted`]).
fn rate_bound(pipeline: &Pipeline) -> Option<String> {
    let uncosted = pipeline.uncosted();
    let (first, more) = (uncosted.first()?, uncosted.len() - 1);
    let others = if more > 0 { format!(" and {more} more") } else { String::new() };
    Some(format!(
        "no module on a worker of '{first}'{others} has a cost (of its own, measured or given), so the simulator charged those \
         workers nothing but its floor of {} ns a round: the rate is that floor's, not one an engine reaches \
         (give the modules t0_ns/t1_ns, or run `sluice profile`)",
        sluice_sim::MIN_ROUND_NS
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{controller, run};

    /// A source, an NF of `cycles` per batch and a sink, run 2 periods of 10 ms on `backend`.
    fn report(cycles: u64, backend: BackendKind) -> RunOutput {
        let spec = format!(
            r#"{{"modules": [{{"name": "src", "source": {{"synthetic": {{"streams": [{{"flow": "f"}}]}}}}}},
                {{"name": "nf", "nf": {{"type": "bypass", "cycles_per_batch": {cycles}, "cycles_per_packet": 0}}}}, {{"name": "out", "sink": {{}}}}],
               "edges": [{{"from": "src", "to": "nf"}}, {{"from": "nf", "to": "out"}}], "flows": [{{"name": "f", "path": ["src", "nf", "out"]}}]}}"#
        );
        let pipeline = Pipeline::from_json(&spec).unwrap();
        let plan = pipeline.plan(2, 0, 10_000_000, sluice_control::ControlParams::default());
        let ctl = controller("null", &plan).unwrap();
        let r = run(&pipeline, ctl, backend, true, &plan, &mut |_| {}, &|| false).unwrap();
        RunOutput::of(&pipeline, &r, backend, &plan)
    }

    #[test]
    fn a_simulated_rate_of_uncosted_modules_is_said_to_be_the_model_s_bound() {
        let free = report(0, BackendKind::Sim);
        let why = free.rate_bound.expect("a bound said");
        assert!(why.contains("'nf'") && why.contains("floor of 10 ns"), "{why}");
        assert!(report(1000, BackendKind::Sim).rate_bound.is_none(), "a costed NF makes the rate the model's own");
        assert!(report(0, BackendKind::Engine).rate_bound.is_none(), "the engine's rate is measured");
    }

    #[test]
    fn flows_and_modules_are_keyed_by_name_in_the_pipeline_s_order() {
        let out = report(0, BackendKind::Sim);
        let json = serde_json::to_value(&out).unwrap();
        let modules: Vec<&String> = json["module_totals"].as_object().unwrap().keys().collect();
        assert_eq!(modules, ["src", "nf", "out"]);
        let period = &json["periods"][0];
        assert_eq!(period["flows"]["f"]["generated"], period["totals"]["generated"]);
        assert!(period["modules"]["nf"].get("hold_us").is_none(), "no hold is said where none is controlled");
    }
}
