//! Queue management of the scheduled egress's classes, beside the
//! scheduler: per class, tail drop alone (the scheduler's full queue),
//! CoDel over the class's one queue, or FQ-CoDel over its flows' queues.
//! The scheduler chooses which class sends; this decides which of the
//! class's packets fills that turn and whether it is sent, marked or
//! dropped.

use std::collections::VecDeque;

use sluice_core::{LinkReads, Offered};

use sluice_core::codel::{CoDel, CoDelConfig, Verdict};
use crate::entry::Entry;
use crate::fq_codel::{FqCoDel, FqCoDelConfig};

/// How a class's queue is managed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueManagement {
    /// Tail drop at the class's full queue only.
    #[default]
    TailDrop,
    /// CoDel (RFC 8289) on the class's queue.
    CoDel(CoDelConfig),
    /// FQ-CoDel (RFC 8290): the class's flows queued apart, CoDel on each.
    FqCoDel(FqCoDelConfig),
}

impl QueueManagement {
    /// Checks the settings; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Self::TailDrop => Ok(()),
            Self::CoDel(c) => c.check(),
            Self::FqCoDel(c) => c.check(),
        }
    }

    /// Its name in the description and the API.
    pub fn name(&self) -> &'static str {
        match self {
            Self::TailDrop => "tail_drop",
            Self::CoDel(_) => "codel",
            Self::FqCoDel(_) => "fq_codel",
        }
    }

    /// Takes `codel` as its CoDel's settings (under FQ-CoDel, each flow
    /// queue's); tail drop stays as it is.
    pub fn set_codel(&mut self, codel: CoDelConfig) {
        match self {
            Self::TailDrop => {}
            Self::CoDel(c) => *c = codel,
            Self::FqCoDel(f) => f.codel = codel,
        }
    }

    /// Its CoDel's settings (under FQ-CoDel, each flow queue's), if it has one.
    pub fn codel(&self) -> Option<CoDelConfig> {
        match self {
            Self::TailDrop => None,
            Self::CoDel(c) => Some(*c),
            Self::FqCoDel(f) => Some(f.codel),
        }
    }
}

/// A class's state.
enum Class {
    TailDrop,
    /// Its CoDel and, in the class's order, each packet's queueing time (ns) and whether it is ECN-capable.
    CoDel(CoDel, VecDeque<(u64, bool)>),
    FqCoDel(FqCoDel),
}

/// The queue management of every class of one scheduled egress.
pub struct Aqm {
    classes: Vec<Class>,
}

impl Aqm {
    /// Per class, its management (a class past the end: tail drop); each class queues up to `limit` packets.
    pub fn new(configs: &[QueueManagement], limit: usize) -> Self {
        let class = |config: &QueueManagement| match config {
            QueueManagement::TailDrop => Class::TailDrop,
            QueueManagement::CoDel(c) => Class::CoDel(CoDel::new(c), VecDeque::with_capacity(limit)),
            QueueManagement::FqCoDel(c) => Class::FqCoDel(FqCoDel::new(c, limit)),
        };
        Self { classes: configs.iter().map(class).collect() }
    }

    /// Whether `class` is managed by more than tail drop.
    #[inline]
    pub fn runs_on(&self, class: usize) -> bool {
        !matches!(self.classes.get(class), None | Some(Class::TailDrop))
    }

    /// What it reads of each packet offered: whether it is ECN-capable
    /// where a class has CoDel (marking may be turned on while it runs),
    /// its flow where a class has FQ-CoDel.
    pub fn reads(&self) -> LinkReads {
        let mut reads = LinkReads::default();
        for class in &self.classes {
            reads.ecn |= !matches!(class, Class::TailDrop);
            reads.flow |= matches!(class, Class::FqCoDel(_));
        }
        reads
    }

    /// Takes new CoDel settings, per class (`None`: as it is); each class
    /// keeps its state and its packets.
    pub fn set_codel(&mut self, settings: &[Option<CoDelConfig>]) {
        for (class, config) in self.classes.iter_mut().zip(settings) {
            match (class, config) {
                (Class::CoDel(codel, _), Some(c)) => codel.set(c),
                (Class::FqCoDel(fq), Some(c)) => fq.set_codel(c),
                _ => {}
            }
        }
    }

    /// The scheduler queued `e` (of class `e.flow`) at `now_ns`; `seen` is what the walker read of it.
    #[inline]
    pub fn queued(&mut self, e: Entry, now_ns: u64, seen: Offered) {
        match self.classes.get_mut(usize::from(e.flow)) {
            None | Some(Class::TailDrop) => {}
            Some(Class::CoDel(_, times)) => times.push_back((now_ns, seen.ect)),
            Some(Class::FqCoDel(fq)) => {
                let victim = fq.enqueue(e, now_ns, seen.ect, seen.flow_hash);
                debug_assert!(victim.is_none(), "a class the scheduler took a packet into has room in its flow queues");
            }
        }
    }

    /// The scheduler refused `e`: its class is full. The packet to drop:
    /// `e` itself, or under FQ-CoDel the head of the class's fattest flow
    /// queue, `e` taken in its place (its turn in the scheduler's queue is
    /// the dropped one's; the class's room is as it was, and the drop is
    /// its management's).
    #[inline]
    pub fn refused(&mut self, e: Entry, now_ns: u64, seen: Offered) -> Entry {
        match self.classes.get_mut(usize::from(e.flow)) {
            Some(Class::FqCoDel(fq)) => fq.enqueue(e, now_ns, seen.ect, seen.flow_hash).expect("a class the scheduler refuses is full"),
            _ => e,
        }
    }

    /// The scheduler gave `e`'s class a turn at `now_ns`: the packet that
    /// fills it (`e`, or under FQ-CoDel the one its round chooses) and what
    /// becomes of it.
    #[inline]
    pub fn verdict(&mut self, e: Entry, now_ns: u64) -> (Entry, Verdict) {
        match self.classes.get_mut(usize::from(e.flow)) {
            None | Some(Class::TailDrop) => (e, Verdict::Send),
            Some(Class::CoDel(codel, times)) => {
                let (queued_at, ect) = times.pop_front().unwrap_or((now_ns, false));
                let verdict = codel.verdict(now_ns, now_ns.saturating_sub(queued_at), times.len(), ect);
                if times.is_empty() {
                    codel.emptied();
                }
                (e, verdict)
            }
            Some(Class::FqCoDel(fq)) => fq.dequeue(now_ns).expect("a class the scheduler gives a turn has a packet"),
        }
    }
}
