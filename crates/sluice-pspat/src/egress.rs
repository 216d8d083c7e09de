//! Sluice's scheduled egress: a pipeline's workers are the arbiter's
//! clients. A worker's scheduled sinks offer each packet by handle to its
//! mailbox, in the class its flow maps to; the arbiter schedules the
//! classes over the emulated link and posts each decision (sent, or
//! refused at a full class queue) back to the worker that offered it, in
//! a mailbox of its own, and the worker delivers or drops the packet,
//! which never left its pool. So the arbiter touches descriptors only, and
//! every packet is accounted where it lives.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sluice_core::limits::MAX_POOL_BUFFERS;
use sluice_core::{Decision, EgressKnobs, EgressLink, EgressSettings, LinkReads, Offered, PacketId};

use crate::arbiter::{Arbiter, Client};
use crate::entry::{Entry, ECN, MANAGED};
use crate::arbiter_thread::{ArbiterStats, ArbiterThread, Dispatch, Pace};
use crate::full_flag::FullFlag;
use crate::sched::{Algorithm, AnyScheduler, Shape, Tree};
use crate::aqm::{Aqm, QueueManagement};
use crate::link::Link;
use crate::retune::Retune;
use crate::mailbox::{mailbox, Consumer, Producer};

/// Packet handles below this (a pool has at most `MAX_POOL_BUFFERS`); the
/// bits above carry the offering worker, and above those its flow's hash.
const HANDLE_BITS: u32 = 16;
const _: () = assert!(MAX_POOL_BUFFERS <= 1 << HANDLE_BITS);
/// Entries a worker's offer mailbox holds.
const OFFERS: usize = 4096;

/// A scheduled egress's settings.
#[derive(Clone, Debug)]
pub struct EgressConfig {
    /// The scheduling algorithm.
    pub algorithm: Algorithm,
    /// The emulated link.
    pub link: Link,
    /// Per class, its weight (≥ 1).
    pub weights: Vec<u32>,
    /// Packets a class's queue holds (pkt).
    pub queue_pkts: usize,
    /// Whether sources wait while a class is full rather than its packets
    /// being dropped: each worker may have a share of a class's queue
    /// outstanding, and its entries take nothing in while a class they
    /// reach has less than a batch of its share left. A source feeding
    /// several classes waits for the fullest: their shares then follow its
    /// mix, not the weights.
    pub wait: bool,
    /// Δ_A: the least time between two of the arbiter's scans (zero: back
    /// to back; see [`Pace::scan_gap`]). A pipeline with one worker, which
    /// is its own arbiter, decides at each of its rounds instead.
    pub scan_gap: std::time::Duration,
    /// Per class, how its queue is managed (a class without an entry: tail drop only).
    pub aqm: Vec<QueueManagement>,
    /// The shaped parents of a class tree (see [`Tree`]; none: the classes are flat).
    pub parents: Vec<Shape>,
    /// With parents, per class, its parent.
    pub parent_of: Vec<usize>,
}

impl EgressConfig {
    /// Packets of a class one of `workers` workers may have outstanding at
    /// once when sources wait: its share of the class's queue, so that
    /// together they never overflow it (pkt).
    pub fn share(&self, workers: usize) -> usize {
        (self.queue_pkts / workers.max(1)).min(OFFERS / self.weights.len().max(1))
    }

    /// The most packets one worker can have waiting in the scheduled egress
    /// (pkt): every class's queue full of its packets and its offer mailbox
    /// full. Its pool needs that many beside its own, or the egress holds
    /// the pool's buffers and the source pauses before any class drops.
    pub fn most_held(&self) -> usize {
        self.weights.len() * self.queue_pkts + OFFERS
    }

    /// Checks the class tree, if it has one; the error names the parent.
    pub fn check_tree(&self) -> Result<(), String> {
        if self.parents.is_empty() {
            return Ok(());
        }
        if self.parent_of.len() != self.weights.len() {
            return Err(format!("{} classes but {} parents named for them", self.weights.len(), self.parent_of.len()));
        }
        for (p, shape) in self.parents.iter().enumerate() {
            shape.check().map_err(|e| format!("parent {p}: {e}"))?;
            if !self.parent_of.contains(&p) {
                return Err(format!("parent {p}: no class is under it"));
            }
        }
        match self.parent_of.iter().find(|&&p| p >= self.parents.len()) {
            Some(p) => Err(format!("parent {p}: there are {} parents", self.parents.len())),
            None => Ok(()),
        }
    }

    /// The scheduler over the classes: the algorithm's, or a tree of it under the parents (as [`Self::check_tree`] takes them).
    pub fn scheduler(&self) -> AnyScheduler {
        if self.parents.is_empty() {
            return self.algorithm.build(&self.weights, self.queue_pkts);
        }
        AnyScheduler::Tree(Box::new(Tree::new(self.algorithm, &self.weights, &self.parent_of, &self.parents, self.queue_pkts, self.link.overhead)))
    }

    /// Knobs starting at these settings, for the control plane to change.
    pub fn knobs(&self) -> EgressKnobs {
        let parents = self.parents.iter().map(|s| (s.rate_bits_per_s, s.ceil_bits_per_s)).collect();
        let codel = (0..self.weights.len()).map(|c| self.aqm.get(c).and_then(QueueManagement::codel)).collect();
        EgressKnobs::new(&EgressSettings { weights: self.weights.clone(), link_bits_per_s: self.link.bits_per_s, parents, codel }, self.algorithm.max_weight())
    }
}

/// Per class, what the arbiter sent and refused (cumulative).
#[derive(Debug, Default)]
pub struct ClassCounters {
    /// Packets put on the link (pkt).
    pub sent_pkts: AtomicU64,
    /// Their bytes (without framing).
    pub sent_bytes: AtomicU64,
    /// Packets refused at the class's full queue, by the arbiter or, seeing
    /// [`Self::full`], by a worker before offering them, and those its
    /// queue management dropped (pkt).
    pub dropped: AtomicU64,
    /// Whether the class's queue was full at the arbiter's last decision
    /// for it: workers drop its packets at once rather than offer them.
    pub full: FullFlag,
}

/// The arbiter's side: hands decisions back to the workers.
struct Decisions {
    to_workers: Vec<Producer>,
    classes: Arc<[ClassCounters]>,
}

impl Decisions {
    fn post(&mut self, e: Entry, sent: bool) {
        let worker = (e.id >> HANDLE_BITS) as usize;
        let handle = e.id & ((1 << HANDLE_BITS) - 1);
        // A worker has no more packets out than its pool holds, and its
        // mailbox holds that many: a decision always finds room.
        let posted = self.to_workers[worker].push(Entry { flow: e.flow, len: u16::from(sent), id: handle }.pack());
        assert!(posted, "worker {worker}'s decision mailbox holds every packet it can have out");
    }
}

impl Dispatch for Decisions {
    fn transmit(&mut self, e: Entry, _now_ns: u64) {
        // The flow's ECN bit (marked) goes back with the decision.
        let c = &self.classes[usize::from(e.flow & !ECN)];
        // One writer (this thread): a load and a store are enough.
        c.sent_pkts.store(c.sent_pkts.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        c.sent_bytes.store(c.sent_bytes.load(Ordering::Relaxed) + u64::from(e.len), Ordering::Relaxed);
        c.full.sent();
        self.post(e, true);
    }

    fn refuse(&mut self, e: Entry) {
        let c = &self.classes[usize::from(e.flow & !MANAGED)];
        c.dropped.fetch_add(1, Ordering::Relaxed);
        // A drop by queue management says nothing of room; it goes back flagged.
        if e.flow & MANAGED == 0 {
            c.full.refused();
        }
        self.post(e, false);
    }
}

/// A worker's end of the scheduled egress.
pub struct WorkerEgress {
    offers: Client,
    decisions: Consumer,
    classes: Arc<[ClassCounters]>,
    /// The worker's index, in the handles' top bits.
    tag: u32,
    /// Per class, packets offered and not yet decided (pkt).
    outstanding: Box<[usize]>,
    /// Per class, the most it may have outstanding when sources wait (pkt; `None`: they do not).
    share: Option<usize>,
    /// The egress's settings (the arbiter takes their changes).
    knobs: EgressKnobs,
    /// What the classes' queue management reads of each packet.
    reads: LinkReads,
    /// The bit of an offered handle from which up the flow's hash goes (see [`Arbiter::with_aqm`]).
    hash_at: u32,
}

impl EgressLink for WorkerEgress {
    #[inline]
    fn offer(&mut self, class: u16, len: u16, id: PacketId, seen: Offered) -> bool {
        debug_assert!(id.0 < 1 << HANDLE_BITS, "{id:?} does not fit the handle bits");
        let c = &self.classes[usize::from(class)];
        if c.full.is_set() {
            c.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let id = id.0 | self.tag | seen.flow_hash << self.hash_at;
        let sent = self.offers.send(Entry { flow: if seen.ect { class | ECN } else { class }, len, id });
        self.outstanding[usize::from(class)] += usize::from(sent);
        sent
    }

    #[inline]
    fn decision(&mut self) -> Option<(PacketId, Decision)> {
        self.decisions.pop().map(|word| {
            let e = Entry::unpack(word);
            self.outstanding[usize::from(e.flow & !ECN)] -= 1;
            let decision = match (e.len == 1, e.flow & ECN != 0) {
                (false, false) => Decision::Dropped,
                (false, true) => Decision::Managed,
                (true, false) => Decision::Sent,
                (true, true) => Decision::Marked,
            };
            (PacketId(e.id), decision)
        })
    }

    fn reads(&self) -> LinkReads {
        self.reads
    }

    #[inline]
    fn room(&self, class: u16) -> usize {
        self.share.map_or(usize::MAX, |share| share.saturating_sub(self.outstanding[usize::from(class)]))
    }

    fn knobs(&self) -> Option<EgressKnobs> {
        Some(self.knobs.clone())
    }
}

/// The running scheduled egress: the arbiter's thread and the classes' counters.
pub struct ScheduledEgress {
    thread: Option<ArbiterThread<AnyScheduler>>,
    classes: Arc<[ClassCounters]>,
}

impl ScheduledEgress {
    /// Starts the arbiter for `workers` workers (pinned to `core` if
    /// given); returns it and each worker's end, in worker order.
    pub fn start(config: &EgressConfig, workers: usize, core: Option<core_affinity::CoreId>) -> Result<(Self, Vec<WorkerEgress>), String> {
        if workers == 0 || workers > 1 << (32 - HANDLE_BITS - 1) {
            return Err(format!("scheduled egress: {workers} workers (at most {})", 1 << (32 - HANDLE_BITS - 1)));
        }
        // The worker's bits hold `workers` itself: a handle is never all ones (see `Entry::pack`).
        let hash_at = HANDLE_BITS + (usize::BITS - workers.leading_zeros());
        for (c, aqm) in config.aqm.iter().enumerate() {
            aqm.check().map_err(|e| format!("scheduled egress: class {c}: {e}"))?;
            if let QueueManagement::FqCoDel(fq) = aqm {
                if u64::from(fq.flows) > 1 << (32 - hash_at) {
                    return Err(format!("scheduled egress: class {c}: fq_codel over {workers} workers has at most {} flows, not {}", 1u64 << (32 - hash_at), fq.flows));
                }
            }
        }
        if config.weights.is_empty() || config.queue_pkts == 0 {
            return Err("scheduled egress: it needs a class and its queue ≥ 1 packet".into());
        }
        config.algorithm.check(&config.weights).map_err(|e| format!("scheduled egress: {e}"))?;
        config.check_tree().map_err(|e| format!("scheduled egress: {e}"))?;
        let classes: Arc<[ClassCounters]> = config.weights.iter().map(|_| ClassCounters::default()).collect();
        let (arbiter, clients) = Arbiter::new(config.scheduler(), config.link, workers, OFFERS, 64);
        let aqm = Aqm::new(&config.aqm, config.queue_pkts);
        let reads = aqm.reads();
        let arbiter = arbiter.with_aqm(aqm, if reads.flow { hash_at } else { 32 });
        let (to_workers, from_arbiter): (Vec<_>, Vec<_>) = (0..workers).map(|_| mailbox(MAX_POOL_BUFFERS)).unzip();
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        let dispatch = Decisions { to_workers, classes: classes.clone() };
        let mut retune = Retune::new(config.knobs(), config.algorithm, config.queue_pkts);
        let knobs = retune.knobs().clone();
        let tune = move |arbiter: &mut Arbiter<AnyScheduler>| {
            let (scheduler, link, aqm) = arbiter.parts_mut();
            retune.apply(scheduler, link, aqm);
        };
        let pace = Pace { scan_gap: config.scan_gap, ..Pace::default() };
        let thread = ArbiterThread::spawn_tuned(arbiter, clock, origin, core, pace, dispatch, tune);
        let ends = clients
            .into_iter()
            .zip(from_arbiter)
            .enumerate()
            .map(|(w, (offers, decisions))| WorkerEgress {
                offers,
                decisions,
                classes: classes.clone(),
                tag: (w as u32) << HANDLE_BITS,
                outstanding: vec![0; config.weights.len()].into(),
                share: config.wait.then(|| config.share(workers)),
                knobs: knobs.clone(),
                reads,
                hash_at,
            })
            .collect();
        Ok((Self { thread: Some(thread), classes }, ends))
    }

    /// Per class, what went out and what was refused so far.
    pub fn classes(&self) -> &[ClassCounters] {
        &self.classes
    }

    /// Stops the arbiter; returns what it did.
    pub fn stop(&mut self) -> ArbiterStats {
        self.thread.take().map(|t| t.stop().1).unwrap_or_default()
    }
}

impl Drop for ScheduledEgress {
    fn drop(&mut self) {
        self.stop();
    }
}
