//! What a worker does after a round that found no work. Busy polling costs
//! a whole core at any load; sleeping between polls gives the core back at
//! light load, at the price of the sleep in the delay of the next packet.

use std::time::Duration;

/// A worker's poll policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PollPolicy {
    /// Poll again at once: the least delay, a whole core at any load.
    #[default]
    Busy,
    /// DPDK's empty-poll rule with a remembered sleep: after `empty_polls`
    /// rounds in a row without work, sleep; the sleep doubles while the
    /// rounds after it stay empty (up to `max_sleep_ns`) and halves with
    /// each round that finds work (down to `min_sleep_ns`), so that at a
    /// steady light load it settles near the gap between arrivals rather
    /// than starting over at the shortest sleep after every packet (which
    /// kept a worker at 10 kpps on 60% of its core in sleeps' own cost).
    EmptyPoll {
        /// Rounds without work before the first sleep.
        empty_polls: u32,
        /// The first sleep (ns).
        min_sleep_ns: u64,
        /// The longest sleep (ns): what a packet arriving at an idle worker may wait, at most.
        max_sleep_ns: u64,
    },
    /// Empty-poll whose sleeps are also bounded by the delay slack of the
    /// flows the worker carries, as the control side measures it each
    /// period (see `Actions::sleep_bounds`): a worker whose flows have no
    /// room does not sleep, so sleeping puts no SLO at risk.
    SloAware {
        /// Rounds without work before the first sleep.
        empty_polls: u32,
        /// The first sleep (ns); a bound below it means no sleep.
        min_sleep_ns: u64,
        /// The longest sleep (ns), where no flow with an SLO bounds it.
        max_sleep_ns: u64,
    },
}

impl PollPolicy {
    /// An empty-poll (or, with `slo_aware`, SLO-aware) policy, its settings
    /// checked: `empty_polls` ≥ 1 and 1 µs ≤ `min_sleep_ns` ≤ `max_sleep_ns` ≤ 1 s.
    pub fn sleeping(slo_aware: bool, empty_polls: u32, min_sleep_ns: u64, max_sleep_ns: u64) -> Result<Self, String> {
        if empty_polls == 0 || !(1_000..=max_sleep_ns).contains(&min_sleep_ns) || max_sleep_ns > 1_000_000_000 {
            return Err(format!(
                "needs ≥ 1 empty poll and 1 µs ≤ min sleep ≤ max sleep ≤ 1 s; got {empty_polls} polls, {min_sleep_ns} ns, {max_sleep_ns} ns"
            ));
        }
        Ok(if slo_aware {
            Self::SloAware { empty_polls, min_sleep_ns, max_sleep_ns }
        } else {
            Self::EmptyPoll { empty_polls, min_sleep_ns, max_sleep_ns }
        })
    }
}

/// A worker's state under its policy.
#[derive(Clone, Debug)]
pub struct Poller {
    policy: PollPolicy,
    /// Rounds in a row without work.
    empty: u32,
    /// The next sleep (ns).
    sleep_ns: u64,
}

impl Poller {
    /// A poller under `policy`.
    pub fn new(policy: PollPolicy) -> Self {
        Self { policy, empty: 0, sleep_ns: 0 }
    }

    /// After a round that moved `work` packets: how long to sleep before
    /// the next (`None`: poll at once); `bound_ns` gives the control side's
    /// bound on this worker's sleeps, read only by SLO-aware polling.
    #[inline]
    pub fn after_round(&mut self, work: usize, bound_ns: impl FnOnce() -> u64) -> Option<Duration> {
        let (empty_polls, min_sleep_ns, max_sleep_ns) = match self.policy {
            PollPolicy::Busy => return None,
            PollPolicy::EmptyPoll { empty_polls, min_sleep_ns, max_sleep_ns } => (empty_polls, min_sleep_ns, max_sleep_ns),
            PollPolicy::SloAware { empty_polls, min_sleep_ns, max_sleep_ns } => {
                let bound_ns = bound_ns();
                if bound_ns < min_sleep_ns {
                    return None;
                }
                (empty_polls, min_sleep_ns, max_sleep_ns.min(bound_ns))
            }
        };
        if work > 0 {
            self.empty = 0;
            self.sleep_ns = (self.sleep_ns / 2).max(min_sleep_ns);
            return None;
        }
        self.empty = self.empty.saturating_add(1);
        if self.empty < empty_polls {
            return None;
        }
        self.sleep_ns = if self.empty == empty_polls { self.sleep_ns.max(min_sleep_ns) } else { (2 * self.sleep_ns).min(max_sleep_ns) };
        Some(Duration::from_nanos(self.sleep_ns))
    }
}

/// Makes this thread's sleeps end on time: Linux lets a sleep run 50 µs
/// late by default (timer slack), longer than the sleeps a poller asks for.
pub fn tight_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes a value and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// CPU time this thread has used (ns).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_poll_sleeps_after_its_empty_rounds_doubling_to_the_bound_and_halving_with_work() {
        let mut p = Poller::new(PollPolicy::sleeping(false, 3, 10_000, 35_000).unwrap());
        let rounds = [0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7, 7, 7, 0, 0, 0];
        let sleeps: Vec<Option<u64>> = rounds.iter().map(|&w| p.after_round(w, || 0).map(|d| d.as_nanos() as u64)).collect();
        let want = [None, None, Some(10_000), Some(20_000), Some(35_000), Some(35_000), None, None, None, Some(17_500), None, None, None, None, None, Some(10_000)];
        assert_eq!(sleeps, want);
        assert_eq!(Poller::new(PollPolicy::Busy).after_round(0, || u64::MAX), None);
        assert!(PollPolicy::sleeping(false, 0, 10_000, 20_000).is_err() && PollPolicy::sleeping(false, 1, 30_000, 20_000).is_err());
    }

    #[test]
    fn slo_aware_sleeps_no_longer_than_its_bound_and_not_at_all_below_the_shortest_sleep() {
        let mut p = Poller::new(PollPolicy::sleeping(true, 1, 10_000, 1_000_000).unwrap());
        let ns = |d: Option<Duration>| d.map(|d| d.as_nanos() as u64);
        assert_eq!(ns(p.after_round(0, || u64::MAX)), Some(10_000));
        assert_eq!(ns(p.after_round(0, || 15_000)), Some(15_000), "doubling stops at the bound");
        assert_eq!(ns(p.after_round(0, || 5_000)), None, "no room for the shortest sleep: poll");
    }
}
