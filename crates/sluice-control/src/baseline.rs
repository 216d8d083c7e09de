//! The two baseline controllers: no buffering and full batches.

use sluice_core::{Actions, Model, Telemetry};

use crate::controller::Controller;

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
