//! Runs a pipeline under a named controller and renders the report as the
//! JSON document `sluice run --json` writes.

use serde_json::{json, Map, Value};
use sluice_control::{drive_until, Controller, PeriodRecord, RunPlan, RunReport};
use sluice_core::telemetry::NfCounters;
use sluice_core::{Backend, Model};

use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::run_params::BackendKind;

/// The built-in controller `name`, set up for `plan`'s SLO statistic and δ.
pub fn controller(name: &str, plan: &RunPlan) -> Result<Box<dyn Controller>> {
    sluice_control::by_name(name, plan.control).ok_or_else(|| {
        Error::Spec(format!("unknown controller '{name}' (known: {})", sluice_control::CONTROLLERS.join(", ")))
    })
}

/// Runs `pipeline` on `backend` under `ctl` for
/// `plan`, calling `on_period` after each period, until the end or until
/// `stop` returns true (see [`drive_until`]).
pub fn run(
    pipeline: &Pipeline,
    mut ctl: Box<dyn Controller>,
    backend: BackendKind,
    timing: bool,
    plan: &RunPlan,
    on_period: &mut dyn FnMut(&PeriodRecord),
    stop: &dyn Fn() -> bool,
) -> Result<RunReport> {
    let schedule = ctl.schedule(pipeline.model(), pipeline.schedule());
    let mut backend: Box<dyn Backend> = match backend {
        BackendKind::Engine => Box::new(pipeline.engine_with(timing, schedule)?),
        BackendKind::Sim => Box::new(pipeline.simulator_with(schedule)?),
    };
    Ok(drive_until(backend.as_mut(), ctl.as_mut(), plan, on_period, stop)?)
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// One period as JSON, flows and modules keyed by name; `model` is the
/// pipeline as it ran then or later (flows are only ever added).
pub fn period_json(pipeline: &Pipeline, model: &Model, p: &PeriodRecord) -> Value {
    let t = &p.telemetry;
    let flows: Map<String, Value> = model
        .flows
        .iter()
        .zip(&t.flows)
        .zip(&p.slo_ns)
        .map(|((f, ft), slo)| {
            let v = json!({
                "generated": ft.generated, "dropped": ft.dropped, "delivered": ft.delivered, "rate_pps": ft.rate_pps, "mean_us": us(ft.mean_ns),
                "p50_us": us(ft.p50_ns), "p95_us": us(ft.p95_ns), "p99_us": us(ft.p99_ns), "max_us": us(ft.max_ns),
                "slo_us": slo.map(us), "misdelivered": ft.misdelivered,
                // Past the floor, the delays of one round in `timed_one_in` (1: every packet), drawn `drawn_rounds` times:
                // with 95% confidence every quantile within `quantile_error_pct` percentile points of the period's.
                "timed_one_in": ft.sample.one_in.max(1), "drawn_rounds": ft.sample.drawn, "quantile_error_pct": ft.sample.error_pct(),
            });
            (f.name.clone(), v)
        })
        .collect();
    let modules: Map<String, Value> = model
        .modules
        .iter()
        .zip(&t.modules)
        .enumerate()
        .map(|(i, (m, mt))| {
            let mut v = json!({
                "trigger": mt.trigger, "x": mt.x, "r": mt.r, "b_in": mt.b_in, "b_round": mt.b_round, "b_round_sd": mt.b_round_sd, "b": mt.b,
                "busy_ns": mt.busy_ns, "dropped": mt.dropped, "drops": mt.drops, "held": mt.held, "controlled": m.controlled,
            });
            add_own_counters(&mut v, pipeline.own_counters(i), &mt.nf);
            if let Some(&(_, ns)) = p.holds.iter().find(|(h, _)| *h == i) {
                v["hold_us"] = json!(us(ns));
            }
            (m.name.clone(), v)
        })
        .collect();
    let moves: Map<String, Value> = p.moves.iter().map(|&(m, w)| (model.modules[m].name.clone(), json!(w))).collect();
    json!({
        "t_s": t.t_s, "period": t.period, "warmup": p.warmup, "rate_pps": p.rate_pps, "mean_batch": p.mean_batch,
        "violated": p.violated, "flows": flows, "modules": modules, "workers": t.workers, "totals": t.totals,
        "response": p.response, "moves": moves, "fallback": p.fallback, "changes": p.changes,
        "classes": pipeline.egress().map(|plan| class_period(plan, model, t)),
    })
}

/// A scheduled egress's classes over one period: what their flows were
/// offered, delivered and lost (pkt), the rate delivered (pkt/s) and the
/// largest p99 delay among them (µs).
fn class_period(plan: &crate::egress_plan::EgressPlan, model: &Model, t: &sluice_core::Telemetry) -> Value {
    let mut classes = Map::new();
    for (c, name) in plan.class_names.iter().enumerate() {
        let members: Vec<&sluice_core::FlowTelemetry> = plan.flows_of(model, c).filter_map(|f| t.flows.get(f)).collect();
        let sum = |get: fn(&sluice_core::FlowTelemetry) -> u64| members.iter().map(|f| get(f)).sum::<u64>();
        classes.insert(name.clone(), json!({
            "generated": sum(|f| f.generated), "delivered": sum(|f| f.delivered), "dropped": sum(|f| f.dropped),
            "rate_pps": members.iter().map(|f| f.rate_pps).sum::<f64>(),
            "p99_us": members.iter().filter(|f| f.delivered > 0).map(|f| us(f.p99_ns)).fold(0.0, f64::max),
        }));
    }
    Value::Object(classes)
}

/// Adds a module's own counters to its JSON as `key: {name: count}`
/// (`"nf"`, `"port"`), if it names any.
fn add_own_counters(module: &mut Value, (key, names): (&str, &[&str]), slots: &NfCounters) {
    if !names.is_empty() {
        module[key] = names.iter().zip(slots).map(|(&n, &c)| (n.to_owned(), json!(c))).collect::<Map<String, Value>>().into();
    }
}

/// The whole run as JSON.
pub fn report_json(pipeline: &Pipeline, report: &RunReport, backend: BackendKind, plan: &RunPlan) -> Value {
    json!({
        "pipeline": pipeline.name(),
        "controller": report.controller,
        "backend": backend,
        "batch_size": report.model.batch_size,
        "period_ms": plan.period_ns as f64 / 1e6,
        "warmup_periods": plan.warmup_periods,
        "slo_statistic": plan.control.statistic,
        "delta": plan.control.delta,
        "summary": report.summary,
        "delays_timed": report.delays_timed,
        "interrupted": report.interrupted,
        "periods_dropped": report.periods_dropped,
        "flow_totals": report.model.flows.iter().zip(&report.flow_totals).map(|(f, t)| (f.name.clone(), json!(t))).collect::<Map<String, Value>>(),
        "removed_flows": report.model.flows.iter().filter(|f| f.removed).map(|f| f.name.as_str()).collect::<Vec<_>>(),
        "module_totals": report.model.modules.iter().zip(&report.module_totals).enumerate().map(|(i, (m, t))| {
            let mut v = json!(t);
            add_own_counters(&mut v, pipeline.own_counters(i), &t.nf);
            (m.name.clone(), v)
        }).collect::<Map<String, Value>>(),
        "periods": report.periods.iter().map(|p| period_json(pipeline, &report.model, p)).collect::<Vec<_>>(),
        "egress_classes": pipeline.egress().map(|plan| egress_classes(&report.model, plan)),
        "rate_bound": (backend == BackendKind::Sim).then(|| rate_bound(pipeline)).flatten(),
    })
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

/// The scheduled egress's classes as the description resolved them: name,
/// weight and the flows each one carries.
fn egress_classes(model: &Model, plan: &crate::egress_plan::EgressPlan) -> Value {
    plan.class_names
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let members: Vec<&str> = plan.flows_of(model, c).map(|f| model.flows[f].name.as_str()).collect();
            json!({"name": name, "weight": plan.config.weights[c], "flows": members})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source, an NF of `cycles` per batch and a sink, run 2 periods of 10 ms on `backend`.
    fn report(cycles: u64, backend: BackendKind) -> Value {
        let spec = format!(
            r#"{{"modules": [{{"name": "src", "source": {{"synthetic": {{"streams": [{{"flow": "f"}}]}}}}}},
                {{"name": "nf", "nf": {{"type": "bypass", "cycles_per_batch": {cycles}, "cycles_per_packet": 0}}}}, {{"name": "out", "sink": {{}}}}],
               "edges": [{{"from": "src", "to": "nf"}}, {{"from": "nf", "to": "out"}}], "flows": [{{"name": "f", "path": ["src", "nf", "out"]}}]}}"#
        );
        let pipeline = Pipeline::from_json(&spec).unwrap();
        let plan = pipeline.plan(2, 0, 10_000_000, sluice_control::ControlParams::default());
        let ctl = controller("null", &plan).unwrap();
        let r = run(&pipeline, ctl, backend, true, &plan, &mut |_| {}, &|| false).unwrap();
        report_json(&pipeline, &r, backend, &plan)
    }

    #[test]
    fn a_simulated_rate_of_uncosted_modules_is_said_to_be_the_model_s_bound() {
        let free = report(0, BackendKind::Sim);
        let why = free["rate_bound"].as_str().expect("a bound said");
        assert!(why.contains("'nf'") && why.contains("floor of 10 ns"), "{why}");
        assert!(report(1000, BackendKind::Sim)["rate_bound"].is_null(), "a costed NF makes the rate the model's own");
        assert!(report(0, BackendKind::Engine)["rate_bound"].is_null(), "the engine's rate is measured");
    }
}
