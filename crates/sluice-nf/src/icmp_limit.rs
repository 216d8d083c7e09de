//! How many ICMP errors a router sends: a token bucket per destination (the
//! source of the packets they report) and one for all, as Linux's
//! `icmp_ratelimit` (one a second to a destination, a burst of six) and
//! `icmp_msgs_per_sec`/`icmp_msgs_burst` (a thousand a second, fifty at
//! once). Echo replies are not limited (Linux's `icmp_ratemask`).
//!
//! Each bucket is one atomic word, the generic cell rate algorithm's
//! theoretical arrival time: a message is allowed when the bucket's time is
//! no further ahead of now than its burst allows, and the time then moves
//! on by one interval. Workers share the buckets without a lock.
//! Destinations hash into [`BUCKETS`] buckets; two that share one share its
//! allowance, which errs on the side of sending fewer.

use std::sync::atomic::{AtomicU64, Ordering};

/// Buckets of destinations.
pub const BUCKETS: usize = 1024;

/// How many ICMP errors a router sends, as descriptions write it (Linux's
/// sysctls of the same names): a burst and then one an interval to each
/// destination, and a rate to all.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IcmpSettings {
    /// Time between two errors to one destination, after its burst (ms; 0: no limit per destination).
    pub ratelimit_ms: f64,
    /// Errors to one destination at once.
    pub burst: u32,
    /// Errors a second to all destinations (0: no limit).
    pub msgs_per_sec: f64,
    /// Errors at once to all destinations.
    pub msgs_burst: u32,
}

impl Default for IcmpSettings {
    fn default() -> Self {
        Self { ratelimit_ms: 1000.0, burst: 6, msgs_per_sec: 1000.0, msgs_burst: 50 }
    }
}

impl IcmpSettings {
    /// Refuses a negative or non-finite time or rate, or a burst of 0, naming the field.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [("ratelimit_ms", self.ratelimit_ms), ("msgs_per_sec", self.msgs_per_sec)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("icmp.{name}: {v} must be ≥ 0 (0: no limit)"));
            }
        }
        for (name, v) in [("burst", self.burst), ("msgs_burst", self.msgs_burst)] {
            if v == 0 {
                return Err(format!("icmp.{name}: must be ≥ 1"));
            }
        }
        Ok(())
    }
}

/// One bucket's rate: the time a message takes of its allowance (ns) and its burst.
#[derive(Clone, Copy, Debug)]
struct Rate {
    interval_ns: u64,
    burst: u64,
}

impl Rate {
    /// Whether a message at `now_ns` fits `bucket`, taking its share if it does.
    fn take(self, bucket: &AtomicU64, now_ns: u64) -> bool {
        if self.interval_ns == 0 {
            return true;
        }
        let slack = self.interval_ns * (self.burst - 1);
        let mut due = bucket.load(Ordering::Relaxed);
        loop {
            let from = due.max(now_ns);
            if from - now_ns > slack {
                return false;
            }
            match bucket.compare_exchange_weak(due, from + self.interval_ns, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(seen) => due = seen,
            }
        }
    }
}

/// The router's ICMP limit (see the module documentation).
pub struct IcmpLimit {
    per_destination: Box<[AtomicU64]>,
    all: AtomicU64,
    per: Rate,
    total: Rate,
}

impl Default for IcmpLimit {
    fn default() -> Self {
        Self::new(&IcmpSettings::default())
    }
}

impl IcmpLimit {
    /// A limit of `settings` (checked).
    pub fn new(settings: &IcmpSettings) -> Self {
        let per = Rate { interval_ns: (settings.ratelimit_ms * 1e6).round() as u64, burst: u64::from(settings.burst.max(1)) };
        let total = Rate { interval_ns: if settings.msgs_per_sec > 0.0 { (1e9 / settings.msgs_per_sec).round().max(1.0) as u64 } else { 0 }, burst: u64::from(settings.msgs_burst.max(1)) };
        Self { per_destination: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(), all: AtomicU64::new(0), per, total }
    }

    /// Whether an error to `destination` (an address, IPv4 as its mapped
    /// form) may be sent at `now_ns`; counts it against both limits if so.
    pub fn allow(&self, destination: u128, now_ns: u64) -> bool {
        let folded = (destination as u64) ^ ((destination >> 64) as u64);
        let bucket = &self.per_destination[(folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize % BUCKETS];
        self.total.take(&self.all, now_ns) && self.per.take(bucket, now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_gets_its_burst_then_one_an_interval_and_others_keep_theirs() {
        let limit = IcmpLimit::new(&IcmpSettings { ratelimit_ms: 1000.0, burst: 6, msgs_per_sec: 0.0, msgs_burst: 50 });
        let allowed = |dst: u128, at: u64| (0..20).filter(|_| limit.allow(dst, at)).count();
        assert_eq!(allowed(1, 0), 6);
        assert_eq!(allowed(1, 999_000_000), 0);
        assert_eq!(allowed(1, 1_000_000_000), 1);
        assert_eq!(allowed(2, 0), 6, "another destination has its own bucket");
        assert_eq!(allowed(1, 10_000_000_000), 6, "a long quiet refills the burst, no more");
    }

    #[test]
    fn all_destinations_together_are_held_to_the_total() {
        let limit = IcmpLimit::new(&IcmpSettings { ratelimit_ms: 0.0, burst: 1, msgs_per_sec: 1000.0, msgs_burst: 50 });
        let sent = (0..10_000u64).filter(|&d| limit.allow(u128::from(d), d * 10_000)).count();
        // 100 ms of one error every 10 µs: the burst of 50 and one a millisecond.
        assert!((149..=151).contains(&sent), "{sent}");
        assert!(IcmpSettings { burst: 0, ..IcmpSettings::default() }.check().is_err());
        assert!(IcmpSettings { ratelimit_ms: -1.0, ..IcmpSettings::default() }.check().unwrap_err().contains("ratelimit_ms"));
    }
}
