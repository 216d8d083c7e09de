//! What a worker does after a round that drained its input. Busy polling
//! costs a whole core at any load and, below saturation, takes whatever
//! few packets have arrived: small batches, each dearer a packet. Sleeping
//! gives the core back at light load and, under load, lets the next
//! batches fill, at the price of the sleep in the delay of the next packet.

pub mod features;
pub mod forest;
pub mod learned;

use std::sync::Arc;
use std::time::Duration;

use features::{FeatureLog, RoundHistory};
use learned::LearnedPolicy;

/// A worker's poll policy.
#[derive(Clone, Debug, PartialEq, Default)]
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
    /// VPP's adaptive mode: while the vectors a round brings are small
    /// (a moving average of packets a round below `threshold_pkts`), a
    /// round without work waits for the next packet to arrive (an
    /// interrupt; at most `max_wait_ns`); above it, the worker polls.
    VppAdaptive {
        /// Packets a round below which the worker waits for interrupts.
        threshold_pkts: u32,
        /// The longest wait (ns), where the next arrival is not known.
        max_wait_ns: u64,
    },
    /// Metronome with one thread per queue: a worker that has drained its
    /// input sleeps a vacation of `vacation_ns`. (Metronome's short sleep,
    /// N·V·(1 − ρ)/(1 − ρ^N) for N threads sharing a queue at load ρ, is V
    /// for N = 1: Sluice gives each input one worker.)
    Metronome {
        /// The vacation (ns).
        vacation_ns: u64,
    },
    /// Batching under load, without a model: after every round that
    /// drained the input (fewer packets than a full batch, none included)
    /// the worker sleeps so that the next rounds find as many packets
    /// waiting as the flows' SLOs and the receive queues allow: the least
    /// of `max_sleep_ns`, the flows' slack bound (as SLO-aware's) and the
    /// time half the emptiest receive queue's room takes to fill at the
    /// arrival rate as measured (the highest of the last 10–20 ms', the
    /// last cycle's and the bursts' of the last second or so), so a sleep
    /// does not overflow a queue. A sleep shorter than `min_sleep_ns` (one
    /// that costs more than it gives) is not taken: the worker polls.
    SloBatching {
        /// The shortest sleep taken (ns).
        min_sleep_ns: u64,
        /// The longest sleep (ns), where no flow with an SLO bounds it.
        max_sleep_ns: u64,
    },
    /// A trained model predicts the sleep after a round that drained the
    /// input from the sizes of the last rounds, the time since the last
    /// with work and the rate packets arrived at over the last 10–20 ms;
    /// the sleep is bounded as SLO-batching's is.
    Learned(Arc<LearnedPolicy>),
}

/// What a worker's input allows a sleep: a round takes at most
/// `batch_pkts` from an entry, and `room_pkts` more may arrive at its
/// sources, at their current mix of rates, before a receive queue loses one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intake {
    /// The pipeline's batch size (pkt).
    pub batch_pkts: usize,
    /// Arrivals the emptiest receive queue holds (pkt; `u64::MAX`: no queue loses any).
    pub room_pkts: u64,
}

impl Default for Intake {
    fn default() -> Self {
        Self { batch_pkts: crate::MAX_BURST, room_pkts: u64::MAX }
    }
}

impl Intake {
    /// The longest sleep after which at most half the room has filled at
    /// `rate` (pkt/µs; ns, `u64::MAX` at no rate or no queue).
    fn fill_half_ns(&self, rate: f64) -> u64 {
        if rate > 0.0 && self.room_pkts != u64::MAX {
            (self.room_pkts as f64 / 2.0 / rate * 1e3) as u64
        } else {
            u64::MAX
        }
    }
}

/// What a worker does after a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Polls again at once.
    Poll,
    /// Sleeps this long (bounded further by packets an NF holds).
    Sleep(Duration),
    /// Waits until its next packet arrives (an interrupt), at most this long.
    Interrupt(Duration),
}

impl PollPolicy {
    /// An SLO-batching policy, its settings checked: 1 µs ≤ `min_sleep_ns` ≤ `max_sleep_ns` ≤ 1 s.
    pub fn slo_batching(min_sleep_ns: u64, max_sleep_ns: u64) -> Result<Self, String> {
        check_sleeps(min_sleep_ns, max_sleep_ns)?;
        Ok(Self::SloBatching { min_sleep_ns, max_sleep_ns })
    }

    /// An empty-poll (or, with `slo_aware`, SLO-aware) policy, its settings
    /// checked: `empty_polls` ≥ 1 and 1 µs ≤ `min_sleep_ns` ≤ `max_sleep_ns` ≤ 1 s.
    pub fn sleeping(slo_aware: bool, empty_polls: u32, min_sleep_ns: u64, max_sleep_ns: u64) -> Result<Self, String> {
        if empty_polls == 0 {
            return Err("needs ≥ 1 empty poll before a sleep; got 0".into());
        }
        check_sleeps(min_sleep_ns, max_sleep_ns)?;
        Ok(if slo_aware {
            Self::SloAware { empty_polls, min_sleep_ns, max_sleep_ns }
        } else {
            Self::EmptyPoll { empty_polls, min_sleep_ns, max_sleep_ns }
        })
    }
}

/// Checks 1 µs ≤ `min_sleep_ns` ≤ `max_sleep_ns` ≤ 1 s.
fn check_sleeps(min_sleep_ns: u64, max_sleep_ns: u64) -> Result<(), String> {
    if !(1_000..=max_sleep_ns).contains(&min_sleep_ns) || max_sleep_ns > 1_000_000_000 {
        return Err(format!("needs 1 µs ≤ min sleep ≤ max sleep ≤ 1 s; got {min_sleep_ns} ns, {max_sleep_ns} ns"));
    }
    Ok(())
}

/// A worker's state under its policy.
#[derive(Clone, Debug)]
pub struct Poller {
    policy: PollPolicy,
    /// Rounds in a row without work.
    empty: u32,
    /// The next sleep (ns).
    sleep_ns: u64,
    /// Moving average of packets a round (×16, vpp-adaptive).
    vector16: u64,
    /// How late this worker's sleeps end (ns): a decaying maximum, left
    /// out of the flows' slack so that a bounded sleep keeps its bound. It
    /// fades over some 16 sleeps, and over some thousand decisions without
    /// one (a stall that made it larger than the slack does not stop the
    /// worker sleeping for good).
    late_ns: u64,
    /// What its worker's input allows a sleep.
    intake: Intake,
    /// The last rounds' sizes, kept for the learned and SLO-batching policies and the log.
    history: Option<Box<RoundHistory>>,
    /// The features at each decision, when they are logged for training.
    log: Option<Box<FeatureLog>>,
}

impl Poller {
    /// A poller under `policy`; with `log_features` it logs what the
    /// learned policy would read at each round that drains the input (see [`Poller::take_features`]).
    pub fn new(policy: PollPolicy, log_features: bool) -> Self {
        let history = (log_features || matches!(policy, PollPolicy::Learned(_) | PollPolicy::SloBatching { .. })).then(Box::default);
        Self { policy, empty: 0, sleep_ns: 0, vector16: 0, late_ns: 0, intake: Intake::default(), history, log: log_features.then(Box::default) }
    }

    /// A poller under `policy` that logs features if this one does and
    /// knows the same input (a worker's policy changed while it runs).
    pub fn under(&self, policy: PollPolicy) -> Self {
        Self { intake: self.intake, late_ns: self.late_ns, ..Self::new(policy, self.log.is_some()) }
    }

    /// Notes a sleep of `asked` that took `took`: the lateness counts at
    /// once and fades over some 16 sleeps.
    #[inline]
    pub fn note_sleep(&mut self, asked: Duration, took: Duration) {
        let late = took.saturating_sub(asked).as_nanos().min(u128::from(u64::MAX)) as u64;
        self.late_ns = late.max(self.late_ns - self.late_ns / 16);
    }

    /// Tells it what its worker's input allows (when the worker's graph or its rates change).
    pub fn set_intake(&mut self, intake: Intake) {
        self.intake = intake;
    }

    /// The policy it follows.
    pub fn policy(&self) -> &PollPolicy {
        &self.policy
    }

    /// Moves the features logged since the last call into `out` (rows of [`features::FEATURES`]).
    pub fn take_features(&mut self, out: &mut Vec<f32>) {
        match &mut self.log {
            Some(log) => log.take(out),
            None => out.clear(),
        }
    }

    /// After a round that moved `work` packets: what to do before the
    /// next; `bound_ns` gives the control side's bound on this worker's
    /// sleeps, read by SLO-aware, SLO-batching and learned polling.
    #[inline]
    pub fn after_round(&mut self, work: usize, bound_ns: impl FnOnce() -> u64) -> Wait {
        // A round short of a full batch drained the input: a decision.
        let drained = work < self.intake.batch_pkts;
        if drained {
            self.late_ns -= self.late_ns >> 10;
        }
        if let Some(h) = &mut self.history {
            h.note(work);
            if drained {
                h.before_decision(work);
                if let Some(log) = &mut self.log {
                    log.log(h);
                }
            }
        }
        match &self.policy {
            PollPolicy::Busy => Wait::Poll,
            PollPolicy::Learned(model) if drained => {
                let h = self.history.as_deref().expect("a learned poller keeps its history");
                // What the model predicts, within what the flows' SLOs and the queues leave room for.
                match model.sleep_ns(h) {
                    0 => Wait::Poll,
                    ns => self.bounded(ns, learned::MIN_SLEEP_NS, bound_ns),
                }
            }
            &PollPolicy::SloBatching { min_sleep_ns, max_sleep_ns } if drained => self.bounded(max_sleep_ns, min_sleep_ns, bound_ns),
            PollPolicy::Learned(_) | PollPolicy::SloBatching { .. } => Wait::Poll,
            PollPolicy::Metronome { vacation_ns } if work == 0 => Wait::Sleep(Duration::from_nanos(*vacation_ns)),
            PollPolicy::Metronome { .. } => Wait::Poll,
            &PollPolicy::VppAdaptive { threshold_pkts, max_wait_ns } => {
                // An average over about 16 rounds, in sixteenths of a packet.
                self.vector16 = self.vector16 - self.vector16 / 16 + work.min(1 << 20) as u64;
                if work == 0 && self.vector16 < u64::from(threshold_pkts) * 16 {
                    Wait::Interrupt(Duration::from_nanos(max_wait_ns))
                } else {
                    Wait::Poll
                }
            }
            _ => self.sleep_after(work, bound_ns).map_or(Wait::Poll, Wait::Sleep),
        }
    }

    /// A sleep of `ns` at most, within the flows' slack (`bound_ns`, less
    /// how late sleeps end here) and the time half the receive queues'
    /// room takes to fill at the rate the history bounds sleeps by; a poll
    /// if that leaves less than `min_ns`.
    #[inline]
    fn bounded(&self, ns: u64, min_ns: u64, bound_ns: impl FnOnce() -> u64) -> Wait {
        let rate = self.history.as_deref().map_or(0.0, RoundHistory::bounding_rate);
        match ns.min(self.intake.fill_half_ns(rate)).min(bound_ns().saturating_sub(self.late_ns)) {
            ns if ns < min_ns => Wait::Poll,
            ns => Wait::Sleep(Duration::from_nanos(ns)),
        }
    }

    /// Empty-poll and SLO-aware: the sleep after a round of `work` packets, if any.
    fn sleep_after(&mut self, work: usize, bound_ns: impl FnOnce() -> u64) -> Option<Duration> {
        let (empty_polls, min_sleep_ns, max_sleep_ns) = match self.policy {
            PollPolicy::EmptyPoll { empty_polls, min_sleep_ns, max_sleep_ns } => (empty_polls, min_sleep_ns, max_sleep_ns),
            PollPolicy::SloAware { empty_polls, min_sleep_ns, max_sleep_ns } => {
                let bound_ns = bound_ns().saturating_sub(self.late_ns);
                if bound_ns < min_sleep_ns {
                    return None;
                }
                (empty_polls, min_sleep_ns, max_sleep_ns.min(bound_ns))
            }
            _ => return None,
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

/// Sleeps `d`, ending as close to its deadline as the machine allows:
/// `clock_nanosleep` to an absolute deadline `spin` early (the machine's
/// usual oversleep, see [`oversleep_ns`]), then a spin for the rest.
pub fn sleep_precisely(d: Duration, spin: Duration) {
    let deadline = std::time::Instant::now() + d;
    if d > spin {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let wake = (d - spin).as_nanos() as i64 + ts.tv_nsec;
        let at = libc::timespec { tv_sec: ts.tv_sec + (wake / 1_000_000_000) as libc::time_t, tv_nsec: (wake % 1_000_000_000) as libc::c_long };
        // SAFETY: clock_nanosleep reads the deadline and writes nothing (no remainder with TIMER_ABSTIME).
        unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &at, std::ptr::null_mut()) };
    }
    while std::time::Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// How early a precise sleep of this thread leaves its kernel sleep to
/// spin to the deadline: the median oversleep of short sleeps here.
pub fn spin_before_deadline() -> Duration {
    Duration::from_nanos(oversleep_ns(Duration::from_micros(1), 32).0)
}

/// How late this thread's sleeps of `request` end (ns): the median and the
/// 99th percentile of `samples` plain sleeps (nanosleep, with the thread's timer slack).
pub fn oversleep_ns(request: Duration, samples: usize) -> (u64, u64) {
    lateness_ns(request, samples, std::thread::sleep)
}

/// How late `sleep(request)` ends on this thread (ns): the median and the
/// 99th percentile of `samples` of them.
pub fn lateness_ns(request: Duration, samples: usize, sleep: impl Fn(Duration)) -> (u64, u64) {
    let mut late: Vec<u64> = (0..samples.max(1))
        .map(|_| {
            let start = std::time::Instant::now();
            sleep(request);
            start.elapsed().saturating_sub(request).as_nanos() as u64
        })
        .collect();
    late.sort_unstable();
    (late[late.len() / 2], late[(late.len() * 99 / 100).min(late.len() - 1)])
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

    fn slept(w: Wait) -> Option<u64> {
        match w {
            Wait::Sleep(d) => Some(d.as_nanos() as u64),
            _ => None,
        }
    }

    #[test]
    fn vpp_adaptive_waits_for_interrupts_while_vectors_are_small_and_metronome_sleeps_when_drained() {
        let mut p = Poller::new(PollPolicy::VppAdaptive { threshold_pkts: 4, max_wait_ns: 100_000 }, false);
        assert_eq!(p.after_round(0, || 0), Wait::Interrupt(Duration::from_micros(100)));
        // Full vectors: it polls, also after an empty round, until the average falls below 4.
        for _ in 0..32 {
            assert_eq!(p.after_round(32, || 0), Wait::Poll);
        }
        let waits: Vec<Wait> = (0..40).map(|_| p.after_round(0, || 0)).collect();
        assert_eq!(waits[0], Wait::Poll);
        assert!(waits.iter().position(|w| *w != Wait::Poll).is_some_and(|i| (20..40).contains(&i)), "{waits:?}");
        let mut m = Poller::new(PollPolicy::Metronome { vacation_ns: 20_000 }, false);
        assert_eq!((m.after_round(5, || 0), m.after_round(0, || 0)), (Wait::Poll, Wait::Sleep(Duration::from_micros(20))));
    }

    use forest::{Forest, Node};

    /// A tree reading one round size, the idle time and the rate: it sleeps 200 µs once idle for any time at all.
    fn sleeps_200_us_once_idle() -> Vec<Node> {
        let leaf = |value| Node { value, feature: Node::LEAF, left: 0, right: 0 };
        vec![Node { value: 0.0, feature: 1, left: 1, right: 2 }, leaf(0.0), leaf(200.0)]
    }

    #[test]
    fn the_learned_policy_sleeps_as_its_model_predicts_only_after_rounds_that_drain_the_input_and_logs_what_it_read() {
        let nodes = sleeps_200_us_once_idle();
        let model = LearnedPolicy::new(Forest::new(nodes.clone(), vec![0], 3, 0.0, 1.0).unwrap(), 1, 150_000).unwrap();
        let mut p = Poller::new(PollPolicy::Learned(Arc::new(model)), true);
        p.set_intake(Intake { batch_pkts: 32, room_pkts: u64::MAX });
        assert_eq!(p.after_round(32, || u64::MAX), Wait::Poll, "a full batch: more waits, no decision");
        assert_eq!(p.after_round(5, || u64::MAX), Wait::Poll, "drained, but not idle: the model says poll");
        assert_eq!(p.after_round(0, || u64::MAX), Wait::Poll, "idle for no time yet");
        std::thread::sleep(Duration::from_micros(10));
        assert_eq!(p.after_round(0, || u64::MAX), Wait::Sleep(Duration::from_micros(150)), "200 µs predicted, 150 at most");
        assert_eq!(p.after_round(0, || 40_000), Wait::Sleep(Duration::from_micros(40)), "the flows' slack leaves 40 µs");
        assert_eq!(p.after_round(0, || 0), Wait::Poll, "a flow at its SLO: no room for a sleep");
        let mut rows = Vec::new();
        p.take_features(&mut rows);
        assert_eq!(rows.len(), 5 * features::FEATURES, "one row per round short of a batch");
        let row = |i: usize| &rows[i * features::FEATURES..][..features::FEATURES];
        assert_eq!((row(0)[0], row(1)[1], row(2)[2], row(2)[3]), (5.0, 5.0, 5.0, 32.0), "the rounds with work, latest first");
        let wrong = LearnedPolicy::new(Forest::new(nodes, vec![0], 3, 0.0, 1.0).unwrap(), 4, 150_000).unwrap_err();
        assert!(wrong.contains("read 3 features, but 4 round sizes, the idle time and the arrival rate are 6"), "{wrong}");
    }

    #[test]
    fn slo_batching_sleeps_after_rounds_short_of_a_batch_within_the_slack_and_the_queues_room() {
        let mut p = Poller::new(PollPolicy::slo_batching(1_000, 500_000).unwrap(), false);
        p.set_intake(Intake { batch_pkts: 32, room_pkts: 16 });
        assert_eq!(p.after_round(32, || u64::MAX), Wait::Poll, "a full batch: packets are waiting");
        assert_eq!(p.after_round(5, || u64::MAX), Wait::Sleep(Duration::from_micros(500)), "no rate known yet: the longest sleep");
        // (No packets since: no rate measured that the queues' room would bound a sleep by.)
        assert_eq!(p.after_round(0, || 40_000), Wait::Sleep(Duration::from_micros(40)), "the flows' slack leaves 40 µs");
        assert_eq!(p.after_round(0, || 500), Wait::Poll, "no room for the shortest sleep: poll");
        // 2048 packets in ≥ 1 ms: half a queue of 16 fills in ≤ 8 / 2.048 µs ≥ 3.9 µs,
        // and in under 500 µs unless this thread stalled for 100 ms.
        std::thread::sleep(Duration::from_millis(1));
        for _ in 0..64 {
            assert_eq!(p.after_round(32, || u64::MAX), Wait::Poll);
        }
        let slept = slept(p.after_round(3, || u64::MAX)).expect("a sleep within the queue's room");
        assert!((3_900..500_000).contains(&slept), "{slept} ns");
        assert!(PollPolicy::slo_batching(0, 1_000).is_err() && PollPolicy::slo_batching(20_000, 10_000).is_err());
    }

    #[test]
    fn a_burst_after_an_idle_spell_finds_the_room_its_rate_needs_and_late_sleeps_are_left_out_of_the_slack() {
        let mut p = Poller::new(PollPolicy::slo_batching(1_000, 1_000_000).unwrap(), false);
        p.set_intake(Intake { batch_pkts: 32, room_pkts: 1024 });
        p.after_round(0, || u64::MAX); // opens the rate's first window
        // 20 000 packets in ≥ 11 ms (≤ 1.8 pkt/µs): half the queue fills in ≥ 280 µs.
        p.after_round(20_000, || u64::MAX);
        std::thread::sleep(Duration::from_millis(11));
        let busy = slept(p.after_round(0, || u64::MAX)).expect("a sleep");
        assert!((280_000..1_000_000).contains(&busy), "{busy} ns");
        // Idle windows: the windows' rate falls to nothing, the sleep stays what the burst's rate allows.
        let mut after_idle = Vec::new();
        for _ in 0..8 {
            std::thread::sleep(Duration::from_micros(10_500));
            after_idle.push(slept(p.after_round(0, || u64::MAX)).expect("a sleep"));
        }
        assert!(after_idle.iter().all(|&ns| ns == after_idle[0] && ns <= 2 * busy), "{busy} then {after_idle:?}");
        // Sleeps here end 30 µs late: a slack of 100 µs leaves 70 asked (the
        // lateness a thousandth faded at this decision).
        p.note_sleep(Duration::from_micros(50), Duration::from_micros(80));
        assert_eq!(p.after_round(0, || 100_000), Wait::Sleep(Duration::from_nanos(100_000 - (30_000 - 30_000 / 1024))));
        let mut aware = Poller::new(PollPolicy::sleeping(true, 1, 10_000, 500_000).unwrap(), false);
        aware.note_sleep(Duration::from_micros(50), Duration::from_micros(95));
        assert_eq!(aware.after_round(0, || 50_000), Wait::Poll, "45 µs late of a 50 µs slack leaves less than the shortest sleep");
        // A stall made it late by far more than the slack: it sleeps again once that has faded, without a sleep to measure.
        aware.note_sleep(Duration::from_micros(50), Duration::from_millis(5));
        let again = (0..20_000).position(|_| aware.after_round(0, || 50_000) != Wait::Poll);
        assert!(again.is_some_and(|i| i > 100), "{again:?}");
    }

    #[test]
    fn the_learned_policy_sleeps_at_any_rate_no_longer_than_the_queues_room_allows() {
        // A model that sleeps 150 µs once idle, whatever the rate; a queue of 64.
        let model = LearnedPolicy::new(Forest::new(sleeps_200_us_once_idle(), vec![0], 3, 0.0, 1.0).unwrap(), 1, 150_000).unwrap();
        let mut p = Poller::new(PollPolicy::Learned(Arc::new(model)), false);
        p.set_intake(Intake { batch_pkts: 32, room_pkts: 64 });
        p.after_round(0, || u64::MAX); // opens the rate's first window
        assert_eq!(p.after_round(0, || u64::MAX), Wait::Sleep(Duration::from_micros(150)), "no rate known yet: the model's sleep");
        // 20 000 packets in ≥ 11 ms (≤ 1.8 pkt/µs): half the queue fills in
        // ≥ 17 µs, and in under 150 µs unless this thread stalled for 100 ms.
        p.after_round(20_000, || u64::MAX);
        std::thread::sleep(Duration::from_millis(11));
        p.after_round(0, || u64::MAX);
        let slept = slept(p.after_round(0, || u64::MAX)).expect("a sleep within the queue's room");
        assert!((17_000..150_000).contains(&slept), "{slept} ns");
    }

    #[test]
    fn a_precise_sleep_ends_after_its_deadline() {
        // How close after it is the machine's figure: `sluice experiment
        // polling` reports it (sleep_error_us), not a test.
        tight_timer_slack();
        let spin = spin_before_deadline();
        for _ in 0..20 {
            let start = std::time::Instant::now();
            sleep_precisely(Duration::from_micros(200), spin);
            assert!(start.elapsed() >= Duration::from_micros(200));
        }
    }

    #[test]
    fn empty_poll_sleeps_after_its_empty_rounds_doubling_to_the_bound_and_halving_with_work() {
        let mut p = Poller::new(PollPolicy::sleeping(false, 3, 10_000, 35_000).unwrap(), false);
        let rounds = [0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7, 7, 7, 0, 0, 0];
        let sleeps: Vec<Option<u64>> = rounds.iter().map(|&w| slept(p.after_round(w, || 0))).collect();
        let want = [None, None, Some(10_000), Some(20_000), Some(35_000), Some(35_000), None, None, None, Some(17_500), None, None, None, None, None, Some(10_000)];
        assert_eq!(sleeps, want);
        assert_eq!(Poller::new(PollPolicy::Busy, false).after_round(0, || u64::MAX), Wait::Poll);
        assert!(PollPolicy::sleeping(false, 0, 10_000, 20_000).is_err() && PollPolicy::sleeping(false, 1, 30_000, 20_000).is_err());
    }

    #[test]
    fn slo_aware_sleeps_no_longer_than_its_bound_and_not_at_all_below_the_shortest_sleep() {
        let mut p = Poller::new(PollPolicy::sleeping(true, 1, 10_000, 1_000_000).unwrap(), false);
        assert_eq!(slept(p.after_round(0, || u64::MAX)), Some(10_000));
        assert_eq!(slept(p.after_round(0, || 15_000)), Some(15_000), "doubling stops at the bound");
        assert_eq!(slept(p.after_round(0, || 5_000)), None, "no room for the shortest sleep: poll");
    }
}
