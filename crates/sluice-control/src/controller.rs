//! The controller interface.

use sluice_core::{Actions, Model, Schedule, Telemetry};

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
