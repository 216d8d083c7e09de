//! The arbiter's thread: scans in a loop on a core of its own, at most
//! once per Δ_A (`scan_gap`), and sleeps when there is nothing to do. It sleeps only after its scans have found
//! the mailboxes and the algorithm empty for `idle_before_sleep`, for
//! `sleep` at a time, so a packet that arrives while it sleeps waits at
//! most `sleep` plus the timer's slack (tens of µs here), and traffic that
//! comes at least every `idle_before_sleep` never waits for a wake-up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::arbiter::{Arbiter, Scan};
use crate::entry::Entry;
use crate::sched::Scheduler;

/// How often the arbiter scans, and when an idle one sleeps.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// Δ_A: the least time from one scan's start to the next's (zero: back
    /// to back). The arbiter spins between; the mailboxes' lines move
    /// between the clients' cores and its own at most once per Δ_A, and a
    /// packet waits up to Δ_A more (it adds to the T-WFI, eq. (1)).
    pub scan_gap: Duration,
    /// How long its scans find nothing before it sleeps (`Duration::MAX`: never).
    pub idle_before_sleep: Duration,
    /// How long it sleeps.
    pub sleep: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Self { scan_gap: Duration::ZERO, idle_before_sleep: Duration::from_millis(1), sleep: Duration::from_micros(50) }
    }
}

impl Pace {
    /// An arbiter that scans back to back and never sleeps.
    pub const SPIN: Self = Self { scan_gap: Duration::ZERO, idle_before_sleep: Duration::MAX, sleep: Duration::ZERO };
}

/// What the arbiter's thread did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ArbiterStats {
    /// Scans made.
    pub scans: u64,
    /// Packets taken from the mailboxes, released onto the link, refused.
    pub totals: Scan,
    /// Times it slept.
    pub sleeps: u64,
    /// Time spent scanning, not asleep (ns).
    pub busy_ns: u64,
    /// Time between two scans, with no sleep between them, beyond Δ_A by
    /// over [`OFF_CORE_GAP_NS`] (ns): a spinning arbiter scans every few
    /// hundred ns after Δ_A, so this is the time the machine kept its
    /// thread off the core.
    pub off_core_ns: u64,
}

/// A gap between two scans longer than this (ns) was spent off the core.
pub const OFF_CORE_GAP_NS: u64 = 20_000;

/// Where the arbiter's thread hands what it decided.
pub trait Dispatch: Send {
    /// `entry` went onto the link at the scan's time `now_ns` (ns).
    fn transmit(&mut self, entry: Entry, now_ns: u64);
    /// `entry` found its class's queue full.
    fn refuse(&mut self, entry: Entry);
}

/// A transmit and a refuse closure.
impl<T: FnMut(Entry, u64) + Send, R: FnMut(Entry) + Send> Dispatch for (T, R) {
    fn transmit(&mut self, entry: Entry, now_ns: u64) {
        (self.0)(entry, now_ns)
    }

    fn refuse(&mut self, entry: Entry) {
        (self.1)(entry)
    }
}

/// The arbiter running on its own thread.
pub struct ArbiterThread<S> {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<(Arbiter<S>, ArbiterStats)>,
}

impl<S: Scheduler<u32> + Send + 'static> ArbiterThread<S> {
    /// Starts `arbiter` on a thread (pinned to `core` if given) that scans
    /// at the time of `clock` (ns since `origin`, a raw reading) and hands
    /// what it released and refused to `dispatch`.
    pub fn spawn(arbiter: Arbiter<S>, clock: quanta::Clock, origin: u64, core: Option<core_affinity::CoreId>, pace: Pace, dispatch: impl Dispatch + 'static) -> Self {
        Self::spawn_tuned(arbiter, clock, origin, core, pace, dispatch, |_| {})
    }

    /// [`Self::spawn`] with `tune` called before each scan, to change the
    /// arbiter (its algorithm's weights, its link's rate) between scans.
    pub fn spawn_tuned(
        arbiter: Arbiter<S>,
        clock: quanta::Clock,
        origin: u64,
        core: Option<core_affinity::CoreId>,
        pace: Pace,
        mut dispatch: impl Dispatch + 'static,
        mut tune: impl FnMut(&mut Arbiter<S>) + Send + 'static,
    ) -> Self {
        let mut arbiter = arbiter;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let handle = std::thread::spawn(move || {
            if let Some(core) = core {
                core_affinity::set_for_current(core);
            }
            let mut stats = ArbiterStats::default();
            let idle_ns = u64::try_from(pace.idle_before_sleep.as_nanos()).unwrap_or(u64::MAX);
            let scan_gap_ns = u64::try_from(pace.scan_gap.as_nanos()).unwrap_or(u64::MAX);
            // When the scans last found work (ns since the origin).
            let mut worked_ns = 0;
            let mut last = clock.raw();
            // When the previous scan started, unless the thread slept since (ns).
            let mut previous_ns = None;
            while !stopping.load(Ordering::Relaxed) {
                let now = clock.raw();
                let now_ns = clock.delta_as_nanos(origin, now);
                if let Some(previous) = previous_ns {
                    let gap = now_ns - previous;
                    if gap < scan_gap_ns {
                        std::hint::spin_loop();
                        continue;
                    }
                    // Beyond Δ_A, time off the core.
                    let late = gap - scan_gap_ns;
                    stats.off_core_ns += if late > OFF_CORE_GAP_NS { late } else { 0 };
                }
                previous_ns = Some(now_ns);
                tune(&mut arbiter);
                // A scan refuses while it drains and transmits after: never both at once.
                let dispatch = std::cell::RefCell::new(&mut dispatch);
                let scan = arbiter.scan(now_ns, &mut |e| dispatch.borrow_mut().transmit(e, now_ns), &mut |e| dispatch.borrow_mut().refuse(e));
                stats.scans += 1;
                stats.totals.drained += scan.drained;
                stats.totals.sent += scan.sent;
                stats.totals.dropped += scan.dropped;
                stats.totals.visited += scan.visited;
                if scan.drained > 0 || scan.sent > 0 || !arbiter.scheduler().is_empty() {
                    worked_ns = now_ns;
                } else if now_ns.saturating_sub(worked_ns) >= idle_ns {
                    stats.busy_ns += clock.delta_as_nanos(last, now);
                    std::thread::sleep(pace.sleep);
                    last = clock.raw();
                    previous_ns = None;
                    stats.sleeps += 1;
                }
            }
            stats.busy_ns += clock.delta_as_nanos(last, clock.raw());
            (arbiter, stats)
        });
        Self { stop, handle }
    }

    /// Stops the thread; returns the arbiter (with what it still holds) and what it did.
    pub fn stop(self) -> (Arbiter<S>, ArbiterStats) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().expect("the arbiter thread does not panic")
    }
}
