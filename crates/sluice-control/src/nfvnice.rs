//! The NFVnice baseline: weighted-fair scheduling instead of batching.

use sluice_core::{Actions, Model, Schedule, Telemetry};

use crate::controller::Controller;

/// Packets per controlled module the queues may hold before the sources pause.
const BACKPRESSURE_PER_QUEUE: usize = 2;

/// NFVnice as Batchy compares against it: every controlled module gets a
/// queue of its own, served by weighted-fair scheduling with equal weights,
/// and the sources are backpressured while the queues fill; no buffering.
#[derive(Default)]
pub struct NfVnice;

impl Controller for NfVnice {
    fn name(&self) -> &str {
        "nfvnice"
    }

    fn schedule(&self, model: &Model, configured: Schedule) -> Schedule {
        weighted_fair(model, configured, true)
    }

    fn init(&mut self, model: &Model) -> Actions {
        equal_weights(model)
    }

    fn step(&mut self, _model: &Model, _telemetry: &Telemetry) -> Actions {
        Actions::default()
    }
}

/// Weighted-fair scheduling: the pipeline's own if it is configured so,
/// else one where buffered modules queue (every controlled one when
/// `every_module_queues`, else only those with a trigger), sources paused
/// while the queues hold two batches each.
pub(crate) fn weighted_fair(model: &Model, configured: Schedule, every_module_queues: bool) -> Schedule {
    if let Schedule::WeightedFair { .. } = configured {
        return configured;
    }
    let queues = model.modules.iter().filter(|m| m.controlled).count().max(1);
    Schedule::WeightedFair { backpressure: Some(BACKPRESSURE_PER_QUEUE * queues * model.batch_size), buffered_only: !every_module_queues }
}

/// Weight 1 for every controlled module.
pub(crate) fn equal_weights(model: &Model) -> Actions {
    let controlled = model.modules.iter().enumerate().filter(|(_, m)| m.controlled);
    Actions { weights: controlled.map(|(v, _)| (v, 1)).collect(), ..Actions::default() }
}
