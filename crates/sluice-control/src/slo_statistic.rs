//! [`SloStatistic`]: which statistic of a flow's delays its SLO bounds.

use serde::{Deserialize, Serialize};

/// Which statistic of a flow's delays its SLO bounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SloStatistic {
    /// Median.
    P50,
    /// 95th percentile (Batchy's default).
    #[default]
    P95,
    /// 99th percentile.
    P99,
    /// Largest delay.
    Max,
    /// Mean delay.
    Mean,
}

impl SloStatistic {
    /// Share of a buffer's fill time (b/r) that this statistic of its wait
    /// sees. Packets arrive spread over the fill, so the mean and the median
    /// wait half of it; the tail statistics are priced at all of it, as in
    /// Batchy's model.
    pub fn wait_share(self) -> f64 {
        if self.averages() { 0.5 } else { 1.0 }
    }

    /// Whether the statistic sees the average round (mean, median) rather
    /// than the worst ones (p95, p99, max).
    pub fn averages(self) -> bool {
        matches!(self, Self::P50 | Self::Mean)
    }

    /// Whether a flow that delivered this period is over `slo_ns` by this
    /// statistic (never without an SLO or without deliveries).
    pub fn over(self, f: &sluice_core::FlowTelemetry, slo_ns: Option<u64>) -> bool {
        slo_ns.is_some_and(|slo| f.delivered > 0 && self.of(f) > slo)
    }

    /// The statistic of one flow's period telemetry (ns).
    pub fn of(self, f: &sluice_core::FlowTelemetry) -> u64 {
        match self {
            Self::P50 => f.p50_ns,
            Self::P95 => f.p95_ns,
            Self::P99 => f.p99_ns,
            Self::Max => f.max_ns,
            Self::Mean => f.mean_ns,
        }
    }
}
