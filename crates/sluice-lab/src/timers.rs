//! What the worker's timing costs and misses by on this machine: one poll
//! decision (ns) and how late a sleep ends (ns), plain and precise.

use std::time::{Duration, Instant};

use sluice_core::poll::{lateness_ns, oversleep_ns, sleep_precisely, spin_before_deadline, tight_timer_slack, Poller};
use sluice_core::PollPolicy;

/// Rounds [`decision_ns`] averages over.
const ROUNDS: u32 = 1_000_000;

/// What one decision of `policy` after a round costs the worker (ns), over
/// rounds of a light load (a packet every 1024 rounds: a learned model is
/// asked, its rate bound passed).
pub fn decision_ns(policy: PollPolicy) -> f64 {
    let mut poller = Poller::new(policy, false);
    let start = Instant::now();
    for i in 0..ROUNDS {
        // The decision is kept from being optimised away.
        let work = usize::from(i % 1024 == 0);
        std::hint::black_box(poller.after_round(std::hint::black_box(work), || u64::MAX));
    }
    start.elapsed().as_nanos() as f64 / f64::from(ROUNDS)
}

/// How late sleeps of one length end (ns): median and 99th percentile.
#[derive(Clone, Copy, Debug)]
pub struct SleepError {
    /// Plain sleeps (`std::thread::sleep`): p50, p99 (ns).
    pub plain: (u64, u64),
    /// Precise sleeps (an absolute deadline early by the usual oversleep, then a spin): p50, p99 (ns).
    pub precise: (u64, u64),
    /// How early the precise sleep's deadline is set, spun the rest of the way (ns).
    pub spin_ns: u64,
}

/// Measures `samples` sleeps of `request` of each kind, with the thread's
/// timer slack as tight as the worker sets it.
pub fn sleep_error(request: Duration, samples: usize) -> SleepError {
    tight_timer_slack();
    let plain = oversleep_ns(request, samples);
    let spin = spin_before_deadline();
    let precise = lateness_ns(request, samples, |d| sleep_precisely(d, spin));
    SleepError { plain, precise, spin_ns: spin.as_nanos() as u64 }
}
