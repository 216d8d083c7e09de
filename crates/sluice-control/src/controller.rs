//! The controller interface and the two baseline controllers.

use sluice_core::{Actions, Model, Schedule, Telemetry};

use crate::nfvnice::NfVnice;
use crate::onoff::OnOff;
use crate::projgrad::ProjGrad;
use crate::view::ControlParams;

/// Decides, once per control period, how every fractional buffer (and later
/// WFQ weights and worker placement) should change. The same controller runs
/// against the engine and the simulator.
pub trait Controller: Send {
    /// Name used on the command line and in reports.
    fn name(&self) -> &str;

    /// The scheduling model the pipeline runs under for this controller,
    /// given the one it is `configured` with.
    fn schedule(&self, _model: &Model, configured: Schedule) -> Schedule {
        configured
    }

    /// Settings to apply before the first period.
    fn init(&mut self, _model: &Model) -> Actions {
        Actions::default()
    }

    /// Settings for the next period, given the telemetry of the last one.
    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions;

    /// Why the settings of its last step are a fallback rather than what
    /// its model chose (its model found no feasible point, or it could not
    /// trust it), if they are; reports carry it per period.
    fn fallback(&self) -> Option<String> {
        None
    }
}

/// Every controlled module's trigger to `b`.
fn set_all(model: &Model, b: u32) -> Actions {
    let triggers = model.modules.iter().enumerate().filter(|(_, m)| m.controlled).map(|(i, _)| (i, b)).collect();
    Actions { triggers, ..Actions::default() }
}

/// No buffering: every trigger 0, batches run as they arrive (BESS's default).
#[derive(Default)]
pub struct Null;

impl Controller for Null {
    fn name(&self) -> &str {
        "null"
    }

    fn init(&mut self, model: &Model) -> Actions {
        set_all(model, 0)
    }

    fn step(&mut self, _model: &Model, _telemetry: &Telemetry) -> Actions {
        Actions::default()
    }
}

/// Full batches everywhere: every controlled module's trigger at B, whatever the delay.
#[derive(Default)]
pub struct Max;

impl Controller for Max {
    fn name(&self) -> &str {
        "max"
    }

    fn init(&mut self, model: &Model) -> Actions {
        set_all(model, model.batch_size as u32)
    }

    fn step(&mut self, _model: &Model, _telemetry: &Telemetry) -> Actions {
        Actions::default()
    }
}

/// The triggers that differ between `before` and `after`, as actions.
pub(crate) fn changes(before: &[u32], after: &[u32]) -> Actions {
    let triggers = before.iter().zip(after).enumerate().filter(|(_, (b, a))| b != a).map(|(m, (_, &a))| (m, a)).collect();
    Actions { triggers, ..Actions::default() }
}

/// Names of the built-in controllers.
pub const CONTROLLERS: &[&str] = &["null", "max", "nfvnice", "onoff", "projgrad", "wfq-opt"];

/// The built-in controller called `name`, with `params` where it takes them.
pub fn by_name(name: &str, params: ControlParams) -> Option<Box<dyn Controller>> {
    match name {
        "null" => Some(Box::new(Null)),
        "max" => Some(Box::new(Max)),
        "nfvnice" => Some(Box::new(NfVnice)),
        "onoff" => Some(Box::new(OnOff::new(params))),
        "projgrad" => Some(Box::new(ProjGrad::new(params))),
        "wfq-opt" => Some(Box::new(crate::WfqOpt::new(params))),
        _ => None,
    }
}
