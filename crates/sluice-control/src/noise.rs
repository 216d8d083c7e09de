//! How far a controller's model misses: per flow, the measured delay's
//! overshoot of the delay the model predicted for the triggers it set.

use crate::view::View;

/// Weight of the newest period in the noise estimate.
const NOISE_WEIGHT: f64 = 0.3;
/// A period's overshoot counts up to this many root mean squares of the
/// overshoots so far, and at least [`SPELL_FLOOR`] of the SLO: beyond
/// that it is a spell of the machine taking the core away, which recovery
/// answers, not jitter to keep a margin for over the next ten periods.
const SPELL_SIGMAS: f64 = 3.0;
/// The least overshoot counted in full (share of the SLO).
const SPELL_FLOOR: f64 = 0.05;

/// Per flow, how far measured delays overshoot the model's predictions:
/// an exponentially weighted mean of the squared overshoot, as a share of
/// the SLO. On a quiet machine it stays near 0; where delays scatter from
/// period to period, it keeps growth that much further below the SLO.
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
                self.variance[f] = fold(self.variance[f], (t - p).max(0.0) / slo);
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

/// `variance` with one period's overshoot `miss` folded in (both shares of
/// the SLO, the variance squared), a spell's counted as one of
/// [`SPELL_SIGMAS`] root mean squares.
fn fold(variance: f64, miss: f64) -> f64 {
    let counted = miss.min((SPELL_SIGMAS * variance.sqrt()).max(SPELL_FLOOR));
    (1.0 - NOISE_WEIGHT) * variance + NOISE_WEIGHT * counted * counted
}

#[cfg(test)]
mod tests {
    use super::fold;

    fn rms_after(misses: &[f64]) -> f64 {
        misses.iter().fold(0.0, |v, &m| fold(v, m)).sqrt()
    }

    #[test]
    fn one_spell_widens_the_margin_little_and_steady_jitter_fully() {
        // Jitter of 2% of the SLO, then one period 30% over: counted in full,
        // 2σ would keep growth a third of the SLO short for periods.
        let jitter = [0.02; 10];
        let spell: Vec<f64> = jitter.iter().copied().chain([0.3]).collect();
        assert!(rms_after(&spell) < 0.04, "{}", rms_after(&spell));
        // A machine that misses by 10% every period is tracked within a few.
        assert!(rms_after(&[0.1; 8]) > 0.09, "{}", rms_after(&[0.1; 8]));
        assert_eq!(rms_after(&[0.0; 5]), 0.0);
    }
}
