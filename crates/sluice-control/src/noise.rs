//! How far a controller's model misses: per flow, the measured delay's
//! overshoot of the delay the model predicted for the triggers it set.

use crate::view::View;

/// Weight of the newest period in the noise estimate.
const NOISE_WEIGHT: f64 = 0.3;

/// Per flow, how far measured delays overshoot the model's predictions:
/// an exponentially weighted mean of the squared overshoot, as a share of
/// the SLO. On a quiet machine it stays near 0; where the machine takes the
/// core away now and then, it keeps growth that much further below the SLO.
#[derive(Default)]
pub(crate) struct Noise {
    /// Delay the model predicted for this period, per flow (s).
    predicted: Vec<Option<f64>>,
    /// Mean squared overshoot, per flow (share of the SLO, squared).
    variance: Vec<f64>,
}

impl Noise {
    /// Folds this period's overshoots in; returns their root mean squares.
    pub(crate) fn update(&mut self, view: &View<'_>) -> Vec<f64> {
        let n = view.model.flows.len();
        self.predicted.resize(n, None);
        self.variance.resize(n, 0.0);
        for f in 0..n {
            if let (Some(p), Some(t), Some(slo)) = (self.predicted[f], view.delay[f], view.slo[f]) {
                // Only delays over the prediction put an SLO at risk.
                let miss = (t - p).max(0.0) / slo;
                self.variance[f] = (1.0 - NOISE_WEIGHT) * self.variance[f] + NOISE_WEIGHT * miss * miss;
            }
        }
        self.variance.iter().map(|v| v.sqrt()).collect()
    }

    /// Records what the model expects of each flow's delay under `trigger`.
    pub(crate) fn predict(&mut self, view: &View<'_>, trigger: &[u32]) {
        for (f, p) in self.predicted.iter_mut().enumerate() {
            *p = view.delay[f].map(|t| {
                t + (0..trigger.len())
                    .filter(|&v| trigger[v] != view.trigger[v] && view.r[v] > 0.0)
                    .map(|v| view.delay_change(f, v, view.trigger[v], trigger[v]))
                    .sum::<f64>()
            });
        }
    }
}
