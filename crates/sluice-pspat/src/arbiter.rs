//! The arbiter, as PSPAT's `do_scan`: take the time, drain the mailbox of
//! every client with work (see `active`; a bounded number of packets each,
//! so that one client cannot hold the others off) into the scheduling
//! algorithm, then take packets from the algorithm while the emulated link
//! has room up to that time, and hand them to the transmit side.

use crate::active::{ActiveSet, Mark};
use sluice_core::Offered;

use crate::aqm::Aqm;
use sluice_core::codel::Verdict;
use crate::entry::{Entry, ECN, MANAGED};
use crate::link::{Link, LinkClock};
use crate::mailbox::{Consumer, Producer};
use crate::sched::Scheduler;

/// A client's end: where a worker writes the packets it wants scheduled.
pub struct Client {
    mailbox: Producer,
    /// Says the arbiter has this client's mailbox to read.
    mark: Mark,
}

impl Client {
    /// Hands `entry` to the arbiter; false when the mailbox is full (the
    /// client then waits or drops, and counts it).
    #[inline]
    pub fn send(&mut self, entry: Entry) -> bool {
        let sent = self.mailbox.push(entry.pack());
        if sent {
            self.mark.set();
        }
        sent
    }
}

/// What one scan did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Packets taken from the mailboxes.
    pub drained: u64,
    /// Packets the algorithm released onto the link.
    pub sent: u64,
    /// Packets refused at a full flow queue (handed to the drop side).
    pub dropped: u64,
    /// Clients whose mailboxes were read (those with work, and those not yet retired).
    pub visited: u64,
}

/// The arbiter over its clients' mailboxes, an algorithm and a link.
pub struct Arbiter<S> {
    mailboxes: Vec<Consumer>,
    /// The clients whose mailboxes a scan reads.
    active: ActiveSet,
    scheduler: S,
    link: LinkClock,
    /// Packets taken from one mailbox per scan, at most.
    drain_budget: usize,
    /// The classes' queue management.
    aqm: Aqm,
    /// The bit of a mailbox entry's handle from which up it carries its
    /// flow's hash, for FQ-CoDel (32: none).
    hash_at: u32,
}

impl<S: Scheduler<u32>> Arbiter<S> {
    /// An arbiter for `clients` clients with mailboxes of `capacity`
    /// entries, draining up to `drain_budget` a client per scan into
    /// `scheduler`, sending on `link`; returns it and the clients' ends.
    pub fn new(scheduler: S, link: Link, clients: usize, capacity: usize, drain_budget: usize) -> (Self, Vec<Client>) {
        let (producers, mailboxes): (Vec<_>, Vec<_>) = (0..clients).map(|_| crate::mailbox::mailbox(capacity)).unzip();
        let (active, marks) = ActiveSet::new(clients);
        let arbiter = Self { mailboxes, active, scheduler, link: LinkClock::new(link), drain_budget: drain_budget.max(1), aqm: Aqm::new(&[], 0), hash_at: 32 };
        (arbiter, producers.into_iter().zip(marks).map(|(mailbox, mark)| Client { mailbox, mark }).collect())
    }

    /// The same, its classes' queues managed by `aqm`; the handles its
    /// clients write carry their flow's hash from bit `hash_at` up (32:
    /// they carry none).
    pub fn with_aqm(self, aqm: Aqm, hash_at: u32) -> Self {
        Self { aqm, hash_at, ..self }
    }

    /// The algorithm (for its per-flow drops and queue lengths).
    pub fn scheduler(&self) -> &S {
        &self.scheduler
    }

    /// The algorithm, the link and the queue management, to change between scans.
    pub fn parts_mut(&mut self) -> (&mut S, &mut LinkClock, &mut Aqm) {
        (&mut self.scheduler, &mut self.link, &mut self.aqm)
    }

    /// One scan at time `now_ns`: drain the mailboxes into the algorithm
    /// (a refused packet goes to `drop`), then release packets onto the
    /// link while it has room up to `now_ns`, each to `transmit` (or to
    /// `drop`, flagged [`MANAGED`], where queue management drops it).
    pub fn scan(&mut self, now_ns: u64, transmit: &mut impl FnMut(Entry), drop: &mut impl FnMut(Entry)) -> Scan {
        let mut scan = Scan::default();
        let Self { mailboxes, active, scheduler, drain_budget, aqm, hash_at, .. } = self;
        let handle_mask = if *hash_at >= 32 { u32::MAX } else { (1 << *hash_at) - 1 };
        scan.visited = active.visit(now_ns, |c| {
            let mailbox = &mut mailboxes[c];
            let before = scan.drained;
            for _ in 0..*drain_budget {
                let Some(word) = mailbox.pop() else { break };
                let e = Entry::unpack(word);
                let seen = Offered { ect: e.flow & ECN != 0, flow_hash: e.id.checked_shr(*hash_at).unwrap_or(0) };
                let e = Entry { flow: e.flow & !ECN, id: e.id & handle_mask, ..e };
                scan.drained += 1;
                if scheduler.enqueue(usize::from(e.flow), u32::from(e.len), e.id).is_err() {
                    scan.dropped += 1;
                    // The arrival, or under FQ-CoDel its fattest flow's head, the class's management's choice.
                    let dropped = aqm.refused(e, now_ns, seen);
                    drop(if dropped == e { e } else { Entry { flow: dropped.flow | MANAGED, ..dropped } });
                } else {
                    aqm.queued(e, now_ns, seen);
                }
            }
            scan.drained > before
        });
        active.settle(now_ns, |c| mailboxes[c].has_next());
        let aqm = &mut self.aqm;
        let mut judge = |e: Entry| match aqm.verdict(e, now_ns) {
            (e, Verdict::Send) => Some(e),
            (e, Verdict::Mark) => Some(Entry { flow: e.flow | ECN, ..e }),
            (e, Verdict::Drop) => {
                scan.dropped += 1;
                drop(Entry { flow: e.flow | MANAGED, ..e });
                None
            }
        };
        scan.sent = self.link.release_through(&mut self.scheduler, now_ns, &mut judge, transmit);
        scan
    }
}
