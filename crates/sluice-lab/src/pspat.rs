//! The PSPAT paper's measurements, on this machine: the arbiter alone,
//! throughput against clients, rate shares under overload and a victim's
//! latency, each for PSPAT (clients → mailboxes → arbiter thread), the
//! same algorithm behind one mutex every client takes per packet (Linux
//! TC's architecture) and, for throughput, no scheduler at all. Packets
//! are mailbox entries with a no-op transmit: what is measured is the
//! scheduling, not a NIC.
//!
//! Placement on a two-core machine: PSPAT's arbiter has core 1 to itself
//! and every client shares core 0; the mutex and no-scheduler clients
//! alternate between the two cores (the lock-based design has no thread
//! of its own to give a core to).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;

use sluice_pspat::full_flag::FullFlag;
use sluice_pspat::sched::Algorithm;
use sluice_pspat::{Arbiter, ArbiterThread, Entry, Link, Pace};

use crate::locked::Locked;

/// How packets reach the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// Mailboxes and an arbiter thread.
    Pspat,
    /// One lock per packet.
    Mutex,
    /// No scheduler: each client transmits at once.
    Unscheduled,
}

/// The latency test's frame (bytes), the largest Ethernet payload.
const MAX_FRAME: u16 = 1500;
/// Ethernet framing charged per packet on the link (bytes).
const FRAMING: u32 = 24;
/// Entries a client's mailbox holds.
const MAILBOX: usize = 1024;
/// Entries the arbiter takes from one mailbox per scan.
const DRAIN_BUDGET: usize = 64;
/// Packets a flow's queue holds.
const FLOW_QUEUE: usize = 1024;
/// Mailbox and flow queue of the share and latency tests: PSPAT's clients
/// time-share one core there, and a flow stays backlogged through its
/// client's time off the core (ms) only if its queues hold that long at
/// the link's rate. (The throughput test keeps mailboxes of `MAILBOX`,
/// which stay in cache: 64 Ki entries halved its rate.)
const OFFER_MAILBOX: usize = 1 << 16;
const OFFER_QUEUE: usize = 1 << 16;
/// A paced client sleeps when its next packet is due in more than this (ns).
const PACING_SLEEP_NS: u64 = 100_000;

fn cores() -> (Option<core_affinity::CoreId>, Option<core_affinity::CoreId>) {
    let ids = core_affinity::get_core_ids().unwrap_or_default();
    (ids.first().copied(), ids.get(1).or(ids.first()).copied())
}

/// Decisions per second of the arbiter alone (M/s): `clients` mailboxes,
/// each refilled with `per_client` packets of its own flow before every
/// scan, over an unlimited link with a no-op transmit, for `seconds`; only
/// the scans are timed.
pub fn arbiter_alone(algorithm: Algorithm, clients: usize, per_client: usize, seconds: f64) -> f64 {
    let per_client = per_client.clamp(1, MAILBOX);
    let (mut arbiter, mut mailboxes) =
        Arbiter::new(algorithm.build(&vec![1; clients], FLOW_QUEUE), Link { bits_per_s: f64::INFINITY, overhead: FRAMING }, clients, MAILBOX, per_client);
    let clock = quanta::Clock::new();
    let (mut decisions, mut scanning_ns) = (0u64, 0u64);
    let began = std::time::Instant::now();
    while began.elapsed().as_secs_f64() < seconds {
        for (flow, mailbox) in mailboxes.iter_mut().enumerate() {
            for id in 0..per_client as u32 {
                mailbox.send(Entry { flow: flow as u16, len: 60, id });
            }
        }
        let start = clock.raw();
        let scan = arbiter.scan(0, &mut |e| {
            std::hint::black_box(e);
        }, &mut |_| {});
        scanning_ns += clock.delta_as_nanos(start, clock.raw());
        decisions += scan.sent;
    }
    decisions as f64 / scanning_ns.max(1) as f64 * 1e3
}

/// Client threads that send until told to stop; each returns its count.
struct Clients {
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<u64>>,
}

impl Clients {
    /// Starts `n` threads running `client(i)` (pinned to `core(i)`).
    fn start<F: FnOnce(Arc<AtomicBool>) -> u64 + Send + 'static>(threads: Vec<(Option<core_affinity::CoreId>, F)>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let handles = threads
            .into_iter()
            .map(|(core, client)| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    if let Some(core) = core {
                        core_affinity::set_for_current(core);
                    }
                    client(stop)
                })
            })
            .collect();
        Self { stop, handles }
    }

    /// Runs the clients for `run`; returns each one's count.
    fn run<F: FnOnce(Arc<AtomicBool>) -> u64 + Send + 'static>(threads: Vec<(Option<core_affinity::CoreId>, F)>, run: Duration) -> Vec<u64> {
        let running = Self::start(threads);
        std::thread::sleep(run);
        running.stop.store(true, Ordering::Relaxed);
        running.handles.into_iter().map(|h| h.join().expect("a client does not panic")).collect()
    }
}

/// The core of client `i` of an architecture (see the module's placement).
fn client_core(architecture: Architecture, i: usize) -> Option<core_affinity::CoreId> {
    let (first, second) = cores();
    match architecture {
        Architecture::Pspat => first,
        _ if i.is_multiple_of(2) => first,
        _ => second,
    }
}

/// What a throughput run measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Throughput {
    /// Packets transmitted per second (M/s).
    pub mpps: f64,
    /// The arbiter's decisions per second of its busy time (M/s; PSPAT only, else 0).
    pub arbiter_mdps: f64,
}

/// `clients` threads send 60-byte packets, one flow each, as fast as they
/// can for `seconds` to an unlimited link with a no-op transmit.
pub fn throughput(architecture: Architecture, algorithm: Algorithm, clients: usize, seconds: f64) -> Throughput {
    let weights = vec![1; clients];
    let link = Link { bits_per_s: f64::INFINITY, overhead: FRAMING };
    let run = Duration::from_secs_f64(seconds);
    match architecture {
        Architecture::Pspat => {
            let (arbiter, mailboxes) = Arbiter::new(algorithm.build(&weights, FLOW_QUEUE), link, clients, MAILBOX, DRAIN_BUDGET);
            let clock = quanta::Clock::new();
            let thread = ArbiterThread::spawn(arbiter, clock.clone(), clock.raw(), cores().1, Pace::default(), (|e: Entry, _| {
                std::hint::black_box(e);
            }, |_| {}));
            let threads = mailboxes
                .into_iter()
                .enumerate()
                .map(|(i, mut mailbox)| {
                    (client_core(architecture, i), move |stop: Arc<AtomicBool>| {
                        let mut sent = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            // A full mailbox is backpressure: wait for the arbiter.
                            if mailbox.send(Entry { flow: i as u16, len: 60, id: sent as u32 % 1_000_000 }) {
                                sent += 1;
                            } else {
                                std::thread::yield_now();
                            }
                        }
                        sent
                    })
                })
                .collect();
            Clients::run(threads, run);
            let (_, stats) = thread.stop();
            Throughput { mpps: stats.totals.sent as f64 / seconds / 1e6, arbiter_mdps: stats.totals.sent as f64 / stats.busy_ns.max(1) as f64 * 1e3 }
        }
        Architecture::Mutex => {
            let locked = Arc::new(Locked::new(algorithm.build(&weights, FLOW_QUEUE), link));
            let clock = quanta::Clock::new();
            let origin = clock.raw();
            let threads = (0..clients)
                .map(|i| {
                    let (locked, clock) = (locked.clone(), clock.clone());
                    (client_core(architecture, i), move |stop: Arc<AtomicBool>| {
                        let mut sent = 0u64;
                        let mut transmit = |e: Entry| {
                            std::hint::black_box(e);
                            sent += 1;
                        };
                        let mut id = 0u32;
                        while !stop.load(Ordering::Relaxed) {
                            locked.send(Entry { flow: i as u16, len: 60, id }, || clock.delta_as_nanos(origin, clock.raw()), &mut transmit);
                            id = (id + 1) % 1_000_000;
                        }
                        sent
                    })
                })
                .collect();
            let sent: u64 = Clients::run(threads, run).iter().sum();
            Throughput { mpps: sent as f64 / seconds / 1e6, arbiter_mdps: 0.0 }
        }
        Architecture::Unscheduled => {
            let threads = (0..clients)
                .map(|i| {
                    (client_core(architecture, i), move |stop: Arc<AtomicBool>| {
                        let mut sent = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            std::hint::black_box(Entry { flow: i as u16, len: 60, id: sent as u32 });
                            sent += 1;
                        }
                        sent
                    })
                })
                .collect();
            let sent: u64 = Clients::run(threads, run).iter().sum();
            Throughput { mpps: sent as f64 / seconds / 1e6, arbiter_mdps: 0.0 }
        }
    }
}

/// Packets transmitted per flow in consecutive windows, written by
/// whichever thread transmits.
struct Windows {
    counts: Vec<AtomicU64>,
    flows: usize,
    /// 1 / the window's length (1/ns): a multiply per packet, not a division.
    per_ns: f64,
}

impl Windows {
    fn new(flows: usize, windows: usize, window_ns: u64) -> Self {
        Self { counts: (0..flows * windows).map(|_| AtomicU64::new(0)).collect(), flows, per_ns: 1.0 / window_ns as f64 }
    }

    /// Counts a packet of `flow` at `at_ns`. Transmits never run at once
    /// (one arbiter thread, or under the lock), so a load and a store do.
    #[inline]
    fn count(&self, at_ns: u64, flow: usize) {
        if let Some(c) = self.counts.get((at_ns as f64 * self.per_ns) as usize * self.flows + flow) {
            c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }

    fn rows(&self) -> Vec<Vec<u64>> {
        self.counts.chunks(self.flows).map(|w| w.iter().map(|c| c.load(Ordering::Relaxed)).collect()).collect()
    }
}

/// What the clients of a test offer.
struct Load<'a> {
    /// Per flow (= client), its weight, and `None` to send as fast as it
    /// can or `Some(interval)` to send one stamped packet every interval.
    flows: &'a [(u32, Option<Duration>)],
    link: Link,
    /// Frame length (bytes).
    len: u16,
    seconds: f64,
}

/// Sends `load` through `architecture` for its `seconds`: client `i`
/// offers flow `i`'s packets; a paced client stamps each in `stamps`
/// (indexed by handle); `on_transmit` sees each transmitted entry at the
/// time it leaves (ns since the start). Returns, for PSPAT, the time its
/// arbiter's thread spent off its core (ns; see
/// [`sluice_pspat::ArbiterStats::off_core_ns`]); the mutex has no
/// thread of its own whose stall could be told from the lock's.
fn offer(architecture: Architecture, algorithm: Algorithm, load: Load<'_>, on_transmit: Arc<dyn Fn(Entry, u64) + Send + Sync>, stamps: Arc<Vec<AtomicU64>>) -> Option<u64> {
    let Load { flows, link, len, seconds } = load;
    let weights: Vec<u32> = flows.iter().map(|f| f.0).collect();
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    let now = move |clock: &quanta::Clock| clock.delta_as_nanos(origin, clock.raw());
    // Client i's loop: offer packets by `send`, as fast as it may, or one
    // every `interval`, stamped (sleeping until shortly before it is due,
    // so that a paced client takes little of the core it shares).
    let client = move |i: usize, interval: Option<Duration>, clock: quanta::Clock, stamps: Arc<Vec<AtomicU64>>, mut send: Box<dyn FnMut(Entry) -> bool + Send>| {
        move |stop: Arc<AtomicBool>| {
            let mut offered = 0u64;
            let mut next = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // A timed client's handles index its stamps; the others' only need to be distinct.
                let id = (offered % stamps.len().max(1_000_000) as u64) as u32;
                let Some(every) = interval else {
                    if send(Entry { flow: i as u16, len, id }) {
                        offered += 1;
                    } else {
                        std::thread::yield_now();
                    }
                    continue;
                };
                let t = now(&clock);
                if t < next {
                    if next - t > PACING_SLEEP_NS {
                        std::thread::sleep(Duration::from_nanos(next - t - PACING_SLEEP_NS / 2));
                    }
                    continue;
                }
                next = t + every.as_nanos() as u64;
                stamps[id as usize % stamps.len()].store(t, Ordering::Relaxed);
                // A timed packet the mailbox refuses is lost to the test, not retried: it is not timed.
                send(Entry { flow: i as u16, len, id });
                offered += 1;
            }
            offered
        }
    };
    let run = Duration::from_secs_f64(seconds);
    match architecture {
        Architecture::Pspat => {
            let (arbiter, mailboxes) = Arbiter::new(algorithm.build(&weights, OFFER_QUEUE), link, flows.len(), OFFER_MAILBOX, DRAIN_BUDGET);
            // PSPAT's backpressure: a greedy client waits while its flow's queue is full.
            let full: Arc<[FullFlag]> = flows.iter().map(|_| FullFlag::default()).collect();
            let (seen, room, refused) = (on_transmit.clone(), full.clone(), full.clone());
            let transmit = move |e: Entry, now_ns| {
                room[usize::from(e.flow)].sent();
                seen(e, now_ns)
            };
            let refuse = move |e: Entry| refused[usize::from(e.flow)].refused();
            let thread = ArbiterThread::spawn(arbiter, clock.clone(), origin, cores().1, Pace::SPIN, (transmit, refuse));
            let threads = mailboxes
                .into_iter()
                .enumerate()
                .map(|(i, mut mailbox)| {
                    let full = full.clone();
                    let send: Box<dyn FnMut(Entry) -> bool + Send> = Box::new(move |e| !full[i].is_set() && mailbox.send(e));
                    (client_core(architecture, i), client(i, flows[i].1, clock.clone(), stamps.clone(), send))
                })
                .collect();
            Clients::run(threads, run);
            Some(thread.stop().1.off_core_ns)
        }
        Architecture::Mutex => {
            let locked = Arc::new(Locked::new(algorithm.build(&weights, OFFER_QUEUE), link));
            let threads = (0..flows.len())
                .map(|i| {
                    let (locked, seen, tclock) = (locked.clone(), on_transmit.clone(), clock.clone());
                    // The lock's holder releases what the link has room for by now, as TC's does.
                    let send: Box<dyn FnMut(Entry) -> bool + Send> = Box::new(move |e| {
                        // The time read under the lock is the time of what it releases.
                        let at = std::cell::Cell::new(0);
                        locked.send(
                            e,
                            || {
                                at.set(now(&tclock));
                                at.get()
                            },
                            &mut |out| seen(out, at.get()),
                        )
                    });
                    (client_core(architecture, i), client(i, flows[i].1, clock.clone(), stamps.clone(), send))
                })
                .collect();
            Clients::run(threads, run);
            None
        }
        Architecture::Unscheduled => panic!("offer runs a scheduler"),
    }
}

/// The 10:1 test: two flows of weights 10 and 1 send 60-byte packets as
/// fast as they can over a link of `link_pps` such packets a second
/// (infinite: unlimited, to find what the architecture sustains) for
/// `seconds`; packets each flow got per `window_ms` window (the first and
/// the last, partial, are left out).
pub fn share(architecture: Architecture, algorithm: Algorithm, link_pps: f64, seconds: f64, window_ms: f64) -> Vec<[u64; 2]> {
    let window_ns = (window_ms * 1e6) as u64;
    let windows = Arc::new(Windows::new(2, (seconds * 1e9 / window_ns as f64) as usize + 2, window_ns));
    let seen = windows.clone();
    let link = Link { bits_per_s: link_pps * f64::from(60 + FRAMING) * 8.0, overhead: FRAMING };
    let load = Load { flows: &[(10, None), (1, None)], link, len: 60, seconds };
    offer(architecture, algorithm, load, Arc::new(move |e, t| seen.count(t, usize::from(e.flow))), Arc::new(vec![]));
    let rows = windows.rows();
    let measured = (seconds * 1e9 / window_ns as f64) as usize;
    rows[1..measured.max(2)].iter().map(|w| [w[0], w[1]]).collect()
}

/// Latency quantiles of a victim (µs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Latency {
    /// p10, p50, p90, p99 and the largest (µs).
    pub quantiles: [f64; 5],
    /// Victim packets timed.
    pub packets: u64,
    /// The share of the run PSPAT's arbiter spent off its core (%; `None`
    /// for the mutex): beyond 1% the machine, not the scheduler, may set
    /// the p99.
    pub arbiter_off_core_pct: Option<f64>,
}

/// The latency test (the paper's Table 3): a victim flow at `victim_pps`
/// with 50 times the weight of each of `interferers` flows that send as
/// fast as they can, all of 1500-byte frames over a link of
/// `link_bits_per_s`, for `seconds`: the victim's latency from enqueue to
/// the end of its frame on the emulated link.
pub fn victim(architecture: Architecture, algorithm: Algorithm, interferers: usize, victim_pps: f64, link_bits_per_s: f64, seconds: f64) -> Latency {
    let histogram = Arc::new(Mutex::new(Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("valid bounds")));
    let stamps = Arc::new((0..65_536).map(|_| AtomicU64::new(0)).collect::<Vec<_>>());
    let (seen, stamped) = (histogram.clone(), stamps.clone());
    // Latency runs to the end of the victim's frame on the link, as a receiver would see it.
    let frame_ns = ((u32::from(MAX_FRAME) + FRAMING) as f64 * 8.0 / link_bits_per_s * 1e9) as u64;
    let on_transmit = Arc::new(move |e: Entry, t: u64| {
        if e.flow == 0 {
            let delay = (t + frame_ns).saturating_sub(stamped[e.id as usize % stamped.len()].load(Ordering::Relaxed));
            let _ = seen.lock().unwrap_or_else(|p| p.into_inner()).record(delay.max(1));
        }
    });
    let mut flows = vec![(50, Some(Duration::from_secs_f64(1.0 / victim_pps)))];
    flows.extend((0..interferers).map(|_| (1, None)));
    let load = Load { flows: &flows, link: Link { bits_per_s: link_bits_per_s, overhead: FRAMING }, len: MAX_FRAME, seconds };
    let off_core_ns = offer(architecture, algorithm, load, on_transmit, stamps);
    let h = histogram.lock().unwrap_or_else(|p| p.into_inner());
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
    Latency { quantiles: [q(0.1), q(0.5), q(0.9), q(0.99), h.max() as f64 / 1e3], packets: h.len(), arbiter_off_core_pct: off_core_ns.map(|ns| 100.0 * ns as f64 / (seconds * 1e9)) }
}
