//! What an SLO-aware controller (projgrad, on-off) carries from one period
//! to the next around its own rule: the delay noise it measured, what the
//! model mispriced, the period before, the cooldowns of buffers it took
//! away, and why its settings are a fallback, if they are.

use sluice_core::{Actions, FlowId, Model, ModuleId, Telemetry};

use crate::misprice::{Misprice, Raise};
use crate::noise::Noise;
use crate::rules::{changes, probed, short_circuit, Before, Cooldown};
use crate::view::{ControlParams, View};

/// A controller's memory of the periods before (see the module doc).
#[derive(Default)]
pub(crate) struct Hindsight {
    noise: Noise,
    misprice: Misprice,
    before: Before,
    cooldown: Cooldown,
    /// Why the last step's settings are a fallback, if they are.
    fallback: Option<String>,
}

impl Hindsight {
    /// Opens a period's step: the view of `telemetry` with the noise and
    /// mispricing learned so far, the triggers in force less the buffers
    /// that cannot help (see [`short_circuit`]), and the period before.
    pub(crate) fn open<'a>(&mut self, model: &'a Model, telemetry: &Telemetry, params: &ControlParams) -> (View<'a>, Vec<u32>, Before) {
        let mut view = View::new(model, telemetry, params);
        view.noise = self.noise.update(&view);
        let unbuffered = view.trigger.iter().all(|&t| t == 0) && !view.stalled();
        view.misprice = self.misprice.update(view.model.modules.len(), &view.delay, unbuffered);
        let mut trigger = view.trigger.clone();
        short_circuit(&view, &mut trigger);
        let before = self.before.roll(&view);
        (view, trigger, before)
    }

    /// Learns from a raise of the last change that delayed a flow over its SLO.
    pub(crate) fn learn(&mut self, raise: &Raise) {
        self.misprice.learn(raise);
    }

    /// Charges the buffers switched off for flows over by more than the
    /// model explains (see [`Misprice::unexplained`]), which makes this
    /// step's settings a fallback; returns per module whether it was
    /// switched off so (a probe, see [`probed`]).
    pub(crate) fn explain(&mut self, view: &View<'_>, unexplained: Vec<(FlowId, Vec<ModuleId>)>) -> Vec<bool> {
        let probed = probed(view.model.modules.len(), &unexplained);
        self.fallback = self.misprice.unexplained(&view.model.flows, &view.delay, unexplained);
        probed
    }

    /// Starts the cooldown of the modules in `started`, and freezes in
    /// `frozen` every module still cooling.
    pub(crate) fn cool(&mut self, started: &[bool], frozen: &mut [bool]) {
        for (f, cooling) in frozen.iter_mut().zip(self.cooldown.update(started)) {
            *f |= cooling;
        }
    }

    /// Closes the step at `trigger`: predicts the delay noise it will
    /// bring (unless the step is a fallback) and returns the changes.
    pub(crate) fn close(&mut self, view: &View<'_>, trigger: &[u32]) -> Actions {
        if self.fallback.is_some() {
            self.noise.abstain();
        } else {
            self.noise.predict(view, trigger);
        }
        changes(&view.trigger, trigger)
    }

    /// Why the last step's settings are a fallback, if they are.
    pub(crate) fn fallback(&self) -> Option<String> {
        self.fallback.clone()
    }
}
