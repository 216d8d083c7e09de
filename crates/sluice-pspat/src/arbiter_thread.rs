//! The arbiter's thread: scans in a loop on a core of its own and sleeps
//! when there is nothing to do. It sleeps only after `spins` scans in a
//! row found the mailboxes and the algorithm empty, for `sleep` at a time,
//! so a packet that arrives while it sleeps waits at most `sleep` plus the
//! timer's slack (measured in `sluice experiment pspat`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::arbiter::{Arbiter, Entry, Scan};
use crate::sched::Scheduler;

/// When an idle arbiter sleeps.
#[derive(Clone, Copy, Debug)]
pub struct Idle {
    /// Empty scans in a row before it sleeps.
    pub spins: u32,
    /// How long it sleeps.
    pub sleep: Duration,
}

impl Default for Idle {
    fn default() -> Self {
        Self { spins: 1024, sleep: Duration::from_micros(50) }
    }
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
}

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
    pub fn spawn(arbiter: Arbiter<S>, clock: quanta::Clock, origin: u64, core: Option<core_affinity::CoreId>, idle: Idle, mut dispatch: impl Dispatch + 'static) -> Self {
        let mut arbiter = arbiter;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let handle = std::thread::spawn(move || {
            if let Some(core) = core {
                core_affinity::set_for_current(core);
            }
            let mut stats = ArbiterStats::default();
            let mut empty = 0u32;
            let mut last = clock.raw();
            while !stopping.load(Ordering::Relaxed) {
                let now = clock.raw();
                let now_ns = clock.delta_as_nanos(origin, now);
                // A scan refuses while it drains and transmits after: never both at once.
                let dispatch = std::cell::RefCell::new(&mut dispatch);
                let scan = arbiter.scan(now_ns, &mut |e| dispatch.borrow_mut().transmit(e, now_ns), &mut |e| dispatch.borrow_mut().refuse(e));
                stats.scans += 1;
                stats.totals.drained += scan.drained;
                stats.totals.sent += scan.sent;
                stats.totals.dropped += scan.dropped;
                if scan.drained == 0 && scan.sent == 0 && arbiter.scheduler().is_empty() {
                    empty += 1;
                    if empty >= idle.spins {
                        stats.busy_ns += clock.delta_as_nanos(last, now);
                        std::thread::sleep(idle.sleep);
                        last = clock.raw();
                        stats.sleeps += 1;
                        empty = 0;
                    }
                } else {
                    empty = 0;
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
