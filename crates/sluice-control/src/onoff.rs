//! On-off: every controlled buffer is either off (trigger 0) or full (B).

use sluice_core::{Actions, Model, Telemetry};

use crate::controller::Controller;
use crate::hindsight::Hindsight;
use crate::rules::{insert, last_raise, switch_off_hold_ups, switch_off_unexplained, switched_off};
use crate::view::ControlParams;

/// Batchy's on-off controller: buffers at B where every traversing flow has
/// the budget, switched off along the path of a flow over its SLO. Like
/// projgrad it keeps the budget it inserts into that much further below
/// the SLO as the flows' delays have overshot the model's predictions: a
/// buffer at B the model misprices by 10% of the SLO otherwise lands
/// right on it, and over it whenever a period runs slow.
#[derive(Default)]
pub struct OnOff {
    params: ControlParams,
    hindsight: Hindsight,
}

impl OnOff {
    /// An on-off controller with `params`.
    pub fn new(params: ControlParams) -> Self {
        Self { params, ..Self::default() }
    }
}

impl Controller for OnOff {
    fn name(&self) -> &str {
        "onoff"
    }

    fn fallback(&self) -> Option<String> {
        self.hindsight.fallback()
    }

    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions {
        let (view, mut trigger, before) = self.hindsight.open(model, telemetry, &self.params);
        let mut frozen = vec![false; model.modules.len()];
        let mut unexplained = Vec::new();
        for (f, flow) in model.flows.iter().enumerate() {
            let Some(mut excess) = view.excess(f) else { continue };
            if let Some(raise) = last_raise(&view, &before, f) {
                self.hindsight.learn(&raise);
            }
            for &v in &flow.path {
                frozen[v] = true;
            }
            // Each buffer on the path with what switching it off saves the flow.
            let mut on: Vec<_> = flow
                .path
                .iter()
                .filter(|&&v| trigger[v] > 0 && view.r[v] > 0.0)
                .map(|&v| (v, view.delay_change(f, v, 0, trigger[v])))
                .collect();
            on.sort_by(|a, b| b.1.total_cmp(&a.1));
            for (v, saved) in on {
                if excess <= 0.0 {
                    break;
                }
                excess -= saved;
                trigger[v] = 0;
            }
            if excess > 0.0 && switch_off_hold_ups(&view, f, excess, &mut trigger, &mut frozen) > 0.0 {
                unexplained.extend(switch_off_unexplained(&view, f, &mut trigger, &mut frozen));
            }
        }
        let probed = self.hindsight.explain(&view, unexplained);
        let started: Vec<bool> = switched_off(&view.trigger, &trigger).into_iter().zip(probed).map(|(off, probed)| off && !probed).collect();
        self.hindsight.cool(&started, &mut frozen);
        insert(&view, self.params.delta, &mut trigger, &frozen, |_| view.batch..=view.batch);
        self.hindsight.close(&view, &trigger)
    }
}
