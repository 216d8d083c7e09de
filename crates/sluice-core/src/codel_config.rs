//! CoDel's settings (RFC 8289), as a scheduled egress's class takes them
//! at the start and as the control plane changes them while it runs (see
//! [`crate::EgressChange`]).

/// CoDel's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoDelConfig {
    /// The sojourn time it keeps the queue to (µs; RFC 8289: 5 ms).
    #[serde(default = "default_target_us")]
    pub target_us: u64,
    /// How long the sojourn time may stay above the target before it acts,
    /// and the control law's base (µs; RFC 8289: 100 ms).
    #[serde(default = "default_interval_us")]
    pub interval_us: u64,
    /// Mark ECN-capable packets congestion experienced instead of dropping them (RFC 3168).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
}

fn default_target_us() -> u64 {
    5_000
}

fn default_interval_us() -> u64 {
    100_000
}

fn default_ecn() -> bool {
    true
}

impl Default for CoDelConfig {
    fn default() -> Self {
        Self { target_us: default_target_us(), interval_us: default_interval_us(), ecn: default_ecn() }
    }
}

impl CoDelConfig {
    /// Checks the settings; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        if self.target_us == 0 || self.interval_us == 0 {
            return Err("codel: target_us and interval_us must be > 0".into());
        }
        if self.target_us >= self.interval_us {
            return Err(format!("codel: target_us {} must be below interval_us {}", self.target_us, self.interval_us));
        }
        Ok(())
    }
}
