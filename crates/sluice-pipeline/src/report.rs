//! Runs a pipeline under a named controller (its report rendered in
//! [`crate::run_output`]).

use sluice_control::{drive_until, Controller, PeriodRecord, RunPlan, RunReport};
use sluice_core::Backend;

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
