//! `token_bucket(rate, burst)`: a rate limiter; non-conforming packets are dropped.

use sluice_core::DropReason;
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Lets packets through at `rate_pps` on average with bursts of up to
/// `burst` packets; the rest go to the drop gate.
pub struct TokenBucket {
    rate_pps: f64,
    burst: f64,
    tokens: f64,
    last_ns: Option<u64>,
}

impl TokenBucket {
    /// A bucket of `burst` packets (≥ 1) refilled at `rate_pps` (> 0).
    pub fn new(rate_pps: f64, burst: f64) -> Result<Self, String> {
        let valid = rate_pps > 0.0 && rate_pps.is_finite() && burst >= 1.0;
        if !valid {
            return Err(format!("token bucket needs rate > 0 pkt/s and burst ≥ 1 pkt, got {rate_pps} and {burst}"));
        }
        Ok(Self { rate_pps, burst, tokens: burst, last_ns: None })
    }
}

impl NetworkFunction for TokenBucket {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let now = ctx.now();
        let last = self.last_ns.replace(now).unwrap_or(now);
        self.tokens = (self.tokens + self.rate_pps * now.saturating_sub(last) as f64 * 1e-9).min(self.burst);
        for &id in input.as_slice() {
            if self.tokens >= 1.0 {
                self.tokens -= 1.0;
                out.push(0, id);
            } else {
                ctx.drop_packet(id, DropReason::Policed);
            }
        }
        input.clear();
    }
}

/// `token_bucket`: a rate limiter, `rate_pps` on average and bursts of
/// `burst` packets; non-conforming packets dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketSpec {
    /// Rate (pkt/s, > 0).
    pub rate_pps: f64,
    /// Bucket depth (pkt, ≥ 1).
    #[serde(default = "default_burst")]
    pub burst: f64,
}

fn default_burst() -> f64 {
    32.0
}

impl crate::NfConfig for TokenBucketSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(TokenBucket::new(self.rate_pps, self.burst)?))
    }
}
