//! [`RunParams`]: what a run of a description is asked besides the
//! description and the controller: how long, and how the SLOs are read.

use serde::{Deserialize, Serialize};
use sluice_control::{ControlParams, RunPlan, SloStatistic, DEFAULT_DELTA, DEFAULT_KEEP_PERIODS};
use sluice_core::limits::{check_count, MAX_PERIODS, MAX_PERIOD_NS};

use crate::Pipeline;

/// What a run goes through: its backend, length, control period and SLO
/// reading. `sluice serve` reads the same, less `periods` and
/// `warmup_periods` (it runs until stopped) and on the engine only.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunParams {
    /// What runs the pipeline.
    pub backend: BackendKind,
    /// Measured control periods.
    pub periods: usize,
    /// Periods run first and left out of the summary.
    pub warmup_periods: usize,
    /// The control period (ms, at most an hour).
    pub period_ms: f64,
    /// Which statistic of a flow's delays its SLO bounds.
    pub slo_statistic: SloStatistic,
    /// δ of the built-in SLO-aware controllers, in [0, 0.5): a flow is
    /// active from (1 − δ)·SLO and its buffers grow up to (1 − 2δ)·SLO.
    pub delta: f64,
    /// Whether the workers time every round (delay histograms and busy
    /// time); off, only the counters are kept.
    pub timing: bool,
    /// The most recent periods the report keeps (its summary counts them all).
    pub keep_periods: usize,
}

/// What runs a pipeline.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, schemars::JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// The engine: real workers on real cores (and ports, if it has them).
    #[default]
    Engine,
    /// The simulator: the cost model on a virtual clock, the same on any machine.
    Sim,
}

impl Default for RunParams {
    fn default() -> Self {
        Self {
            backend: BackendKind::default(),
            periods: 10,
            warmup_periods: 1,
            period_ms: 100.0,
            slo_statistic: SloStatistic::default(),
            delta: DEFAULT_DELTA,
            timing: true,
            keep_periods: DEFAULT_KEEP_PERIODS,
        }
    }
}

impl RunParams {
    /// Reads them from JSON; the error names the field at fault.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let params: Self = serde_path_to_error::deserialize(&mut de).map_err(|e| crate::spec_error::describe(&e))?;
        params.check()?;
        Ok(params)
    }

    /// Refuses a count, period or δ out of its range, by the field's name.
    pub fn check(&self) -> Result<(), String> {
        check_count("periods", self.periods, false, MAX_PERIODS)?;
        check_count("warmup_periods", self.warmup_periods, true, MAX_PERIODS)?;
        check_count("keep_periods", self.keep_periods, false, MAX_PERIODS)?;
        let max_ms = MAX_PERIOD_NS as f64 / 1e6;
        if !(self.period_ms > 0.0 && self.period_ms <= max_ms) {
            return Err(format!("period_ms: control period {} ms must be > 0 and ≤ {max_ms} (an hour)", self.period_ms));
        }
        self.control().map(drop)
    }

    /// The control period (ns).
    pub fn period_ns(&self) -> u64 {
        (self.period_ms * 1e6).round() as u64
    }

    /// The statistic and δ the controllers read.
    pub fn control(&self) -> Result<ControlParams, String> {
        ControlParams::new(self.delta, self.slo_statistic).map_err(|e| format!("delta: {e}"))
    }

    /// The plan of a run of `pipeline` with these parameters (checked first).
    pub fn plan(&self, pipeline: &Pipeline) -> Result<RunPlan, String> {
        self.check()?;
        let mut plan = pipeline.plan(self.periods, self.warmup_periods, self.period_ns(), self.control()?);
        plan.keep_periods = self.keep_periods;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_object_is_the_defaults() {
        let params = RunParams::from_json("{}").unwrap();
        assert_eq!((params.periods, params.warmup_periods, params.keep_periods), (10, 1, DEFAULT_KEEP_PERIODS));
        assert_eq!((params.period_ns(), params.slo_statistic), (100_000_000, SloStatistic::P95));
    }

    #[test]
    fn a_bad_field_is_named() {
        for (json, error) in [
            (r#"{"periods": 0}"#, "periods: 0 is out of range 1..="),
            (r#"{"period_ms": 0}"#, "period_ms: control period 0 ms must be > 0"),
            (r#"{"delta": 0.5}"#, "delta: δ = 0.5 must be in [0, 0.5)"),
            (r#"{"slo_statistic": "p90"}"#, "slo_statistic: unknown kind `p90`"),
            (r#"{"period": 5}"#, "unknown key `period` (did you mean `periods`?)"),
        ] {
            let got = RunParams::from_json(json).unwrap_err();
            assert!(got.contains(error), "{json}: {got}");
        }
    }
}
