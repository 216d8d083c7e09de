//! How far a controller's model misses: per flow, the measured delay's
//! overshoot of the delay the model predicted for the triggers it set.

use crate::view::View;

/// Weight of the newest period in the noise estimate.
const NOISE_WEIGHT: f64 = 0.3;
/// Share of the largest recent overshoot kept from one period to the next
/// (half-life about 70 periods).
const PEAK_KEEP: f64 = 0.99;

/// Per flow, how far measured delays overshoot the model's predictions:
/// an exponentially weighted mean of the squared overshoot, as a share of
/// the SLO, and the largest recent overshoot, which wears off slowly. On a
/// quiet machine both stay near 0; where the machine takes the core away
/// now and then, or a flow's delay scatters in rare large steps, they keep
/// growth that much further below the SLO.
#[derive(Default)]
pub(crate) struct Noise {
    /// Delay the model predicted for this period, per flow (s).
    predicted: Vec<Option<f64>>,
    /// Mean squared overshoot, per flow (share of the SLO, squared).
    variance: Vec<f64>,
    /// Largest recent overshoot, per flow (share of the SLO).
    peak: Vec<f64>,
    /// Per flow, whether the prediction was of a cut (the delay priced to
    /// fall): that miss is the cut's misprice, not the flow's scatter.
    cut: Vec<bool>,
}

impl Noise {
    /// Folds this period's overshoots in; returns per flow the larger of
    /// their root mean square and half the largest recent one (growth
    /// stays two of these below its target: a flow whose delay once
    /// scattered 8% over the prediction in a steady state, at most every
    /// 30 periods, crossed its SLO each time the mean square forgot it).
    pub(crate) fn update(&mut self, view: &View<'_>) -> Vec<f64> {
        let n = view.model.flows.len();
        self.predicted.resize(n, None);
        self.variance.resize(n, 0.0);
        self.peak.resize(n, 0.0);
        // A stall is no scatter of the flows' delays, nor a cut that
        // bought less than priced (a recovery's): the peak leaves them out
        // (L2L3(16) regrew its buffers by 5 packets in 7 periods after a
        // recovery, not 40, with the cut's miss in its peak).
        let stalled = view.stalled();
        self.cut.resize(n, false);
        for f in 0..n {
            self.peak[f] *= PEAK_KEEP;
            if let (Some(p), Some(t), Some(slo)) = (self.predicted[f], view.delay[f], view.slo[f]) {
                // Only delays over the prediction put an SLO at risk.
                let miss = (t - p).max(0.0) / slo;
                self.variance[f] = (1.0 - NOISE_WEIGHT) * self.variance[f] + NOISE_WEIGHT * miss * miss;
                if !stalled && !self.cut[f] {
                    self.peak[f] = self.peak[f].max(miss);
                }
            }
        }
        self.variance.iter().zip(&self.peak).map(|(v, p)| v.sqrt().max(p / 2.0)).collect()
    }

    /// Predicts nothing for the next period: its settings are a probe of
    /// Null's schedule (see `rules::probed`), not the model's, and what
    /// the flows' delays do under it is no scatter.
    pub(crate) fn abstain(&mut self) {
        self.predicted.fill(None);
    }

    /// Records what the model expects of each flow's delay under `trigger`.
    pub(crate) fn predict(&mut self, view: &View<'_>, trigger: &[u32]) {
        let changed: Vec<usize> = (0..trigger.len()).filter(|&v| trigger[v] != view.trigger[v] && view.r[v] > 0.0).collect();
        self.cut.resize(self.predicted.len(), false);
        for (f, (p, cut)) in self.predicted.iter_mut().zip(&mut self.cut).enumerate() {
            let change: f64 = changed.iter().map(|&v| view.delay_change(f, v, view.trigger[v], trigger[v])).sum();
            *cut = change < 0.0;
            *p = view.delay[f].map(|t| t + change);
        }
    }
}
