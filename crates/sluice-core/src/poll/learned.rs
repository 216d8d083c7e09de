//! The learned poll policy: after a round that drained the input, a tree ensemble
//! reads the worker's last round sizes, idle time and arrival rate and predicts how
//! long to sleep (µs); a prediction under [`MIN_SLEEP_NS`] means poll. At
//! an arrival rate above any it was trained at its trees answer as at the
//! highest; the worker bounds every answer by the flows' slack and the
//! receive queues' room at the measured rate (see [`super::Poller`]), so
//! such a sleep neither fills a queue nor breaks an SLO.

use super::features::{RoundHistory, HISTORY};
use super::forest::Forest;

/// The shortest sleep the policy takes (ns): below it, it polls again.
pub const MIN_SLEEP_NS: u64 = 1_000;

/// A model and what it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnedPolicy {
    forest: Forest,
    /// Round sizes the model reads (the latest first), then the idle time and the arrival rate.
    rounds: usize,
    /// The longest sleep, whatever the model says (ns).
    max_sleep_ns: u64,
}

impl LearnedPolicy {
    /// A policy whose `forest` reads the last `rounds` round sizes and the
    /// idle time and the arrival rate (`rounds` + 2 features, 1 ≤ `rounds` ≤ [`HISTORY`]),
    /// sleeping at most `max_sleep_ns` (1 µs ..= 1 s).
    pub fn new(forest: Forest, rounds: usize, max_sleep_ns: u64) -> Result<Self, String> {
        if !(1..=HISTORY).contains(&rounds) {
            return Err(format!("reads {rounds} round sizes; 1..={HISTORY} are kept"));
        }
        if forest.features() != rounds + 2 {
            return Err(format!(
                "its trees read {} features, but {rounds} round sizes, the idle time and the arrival rate are {}",
                forest.features(),
                rounds + 2
            ));
        }
        if !(MIN_SLEEP_NS..=1_000_000_000).contains(&max_sleep_ns) {
            return Err(format!("max sleep {max_sleep_ns} ns must be 1 µs..=1 s"));
        }
        Ok(Self { forest, rounds, max_sleep_ns })
    }

    /// Its trees.
    pub fn into_forest(self) -> Forest {
        self.forest
    }

    /// The sleep after a round that drained the input (ns; 0: poll).
    #[inline]
    pub fn sleep_ns(&self, history: &RoundHistory) -> u64 {
        let ns = self.forest.predict(|i| history.feature(i, self.rounds)) * 1e3;
        if ns < MIN_SLEEP_NS as f64 {
            0
        } else {
            (ns as u64).min(self.max_sleep_ns)
        }
    }
}
