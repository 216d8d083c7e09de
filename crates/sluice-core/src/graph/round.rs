//! One scheduler round: the run-to-completion round (every inbound ring's
//! and every source's batch pushed through the graph, each queue module
//! served once), the weighted-fair turn it hands over to, the age-bound
//! flush, the held packets that came due and the core probe that follow it.
//!
//! Sources and inbound rings are a worker's entries. An entry takes
//! packets in only while every outbound ring its packets can reach has
//! room for what a batch may release (and, weighted-fair with
//! backpressure, while the worker's queues hold fewer than the bound): a
//! full ring downstream stops the entries upstream of it, worker by worker
//! back to the sources, and nothing is dropped between workers.


use super::{ring_aqm, InRing, Kind, Node, OutRing, Schedule, Task, WorkerGraph};
use crate::nf::EgressLink;
use crate::core_probe;

/// The most sources with a file descriptor a worker waits on at once.
const MAX_WAIT_FDS: usize = 8;

impl WorkerGraph {
    /// One scheduler round: run-to-completion, a batch from every entry
    /// pushed through; weighted-fair, one unit's turn; on a worker that is
    /// down, [`Self::discard`]. Returns the packets the round moved or
    /// discarded (pkt); 0 means there was nothing to do.
    pub fn round(&mut self) -> usize {
        self.clocking.carried = None;
        self.next_round()
    }

    /// [`Self::round`] for a caller that runs rounds back to back, with
    /// nothing between them that takes time: the round starts at the clock
    /// read that ended the previous one (one read a round, not two).
    pub fn next_round(&mut self) -> usize {
        if self.control.is_halted(self.index) {
            self.clocking.carried = None;
            return self.discard();
        }
        self.rounds += 1;
        let (start, now) = self.clocking.start_round();
        let decided = if self.links.egress.is_some() { self.take_decisions() } else { 0 };
        self.clocking.draw_round();
        let mut moved = decided + self.take_triggers();
        if self.links.backlogged > 0 {
            self.flush_backlogs();
        }
        moved += self.poll_inbound();
        moved += match self.fair.schedule {
            Schedule::RunToCompletion => {
                let mut moved = 0;
                for i in 0..self.sources.len() {
                    let v = self.sources[i];
                    if self.may_take_in(v) {
                        moved += self.pull(v, now);
                    }
                }
                // Queue modules are tasks of their own: one batch each per round.
                for i in 0..self.fair.queues.len() {
                    let v = self.fair.queues[i];
                    if self.may_take_in(v) {
                        moved += self.serve(v);
                    }
                }
                moved
            }
            Schedule::WeightedFair { .. } => self.fair_turn(now),
        };
        if !self.aged.is_empty() {
            moved += self.flush_aged(now);
        }
        if now >= self.wake_ns {
            moved += self.send_due(now);
        }
        if moved > 0 && self.clocking.times_runs {
            self.worker.busy_ns += self.clocking.busy_sampling * self.clocking.clock.delta_as_nanos(start, self.clocking.mark);
            self.worker.busy_rounds += self.clocking.busy_sampling;
        }
        if self.clocking.measures && now >= self.clocking.next_probe_ns {
            self.probe_core(now);
        }
        self.worker.polls += 1;
        self.worker.empty_polls += u64::from(moved == 0);
        // The round's last clock read, if nothing ran after it, is where the next starts.
        self.clocking.carried = self.clocking.last_read.take();
        moved
    }

    /// How long until the next packet arrives at one of this worker's
    /// sources, where they know (`None`: none does); zero when one waits.
    pub fn until_arrival(&self) -> Option<std::time::Duration> {
        let next = self.least_of_sources(|s| s.next_arrival_ns())?;
        Some(std::time::Duration::from_nanos(next.saturating_sub(self.now_ns())))
    }

    /// What this worker's input allows a sleep: the batch size, and the
    /// arrivals the emptiest of its sources' receive queues holds.
    pub fn intake(&self) -> crate::poll::Intake {
        let room_pkts = self.least_of_sources(|s| s.queue_pkts()).unwrap_or(u64::MAX);
        crate::poll::Intake { batch_pkts: self.batch_size, room_pkts }
    }

    /// The least of what `of` says of this worker's sources, where any says.
    fn least_of_sources(&self, of: impl Fn(&dyn crate::nf::PacketSource) -> Option<u64>) -> Option<u64> {
        self.sources
            .iter()
            .filter_map(|&v| match &self.nodes[v].kind {
                Kind::Source(s) => of(s.as_ref()),
                _ => None,
            })
            .min()
    }

    /// Blocks until one of this worker's sources that has a file
    /// descriptor to wait on (a port) has packets, or `most` has passed,
    /// then tells those sources it woke; `false` at once when none has one.
    pub fn wait_readable(&mut self, most: std::time::Duration) -> bool {
        let mut fds = [libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 }; MAX_WAIT_FDS];
        let mut n = 0;
        for &v in &self.sources {
            if let (Kind::Source(s), true) = (&self.nodes[v].kind, n < MAX_WAIT_FDS) {
                if let Some(fd) = s.wait_fd() {
                    fds[n].fd = fd;
                    n += 1;
                }
            }
        }
        if n == 0 {
            return false;
        }
        let timeout = libc::timespec { tv_sec: most.as_secs() as libc::time_t, tv_nsec: most.subsec_nanos() as libc::c_long };
        // SAFETY: ppoll reads `n` initialised pollfds (writing their revents) and the timeout; no signal mask.
        unsafe { libc::ppoll(fds.as_mut_ptr(), n as libc::nfds_t, &timeout, std::ptr::null()) };
        for &v in &self.sources {
            if let Kind::Source(s) = &mut self.nodes[v].kind {
                s.woke();
            }
        }
        true
    }

    /// Counts a sleep or wait for an interrupt the worker asked for (`asked`) and took (`slept`).
    pub fn note_wait(&mut self, asked: std::time::Duration, slept: std::time::Duration) {
        self.worker.waits += 1;
        self.worker.wait_asked_ns += asked.as_nanos() as u64;
        self.worker.wait_slept_ns += slept.as_nanos() as u64;
    }

    /// Times the fixed [`core_probe`] work into the worker's counters.
    #[cold]
    fn probe_core(&mut self, now_ns: u64) {
        let start = self.clocking.clock.raw();
        std::hint::black_box(core_probe::probe_work());
        self.worker.probe_ns += self.clocking.clock.delta_as_nanos(start, self.clocking.clock.raw()).min(core_probe::PROBE_CAP_NS);
        self.worker.probes += 1;
        self.clocking.next_probe_ns = now_ns + core_probe::PROBE_INTERVAL_NS;
        self.clocking.last_read = None;
    }

    /// The most packets the worker's queues may hold while its entries take
    /// packets in (pkt; weighted-fair backpressure, else unbounded).
    pub(super) fn backpressure(&self) -> usize {
        match self.fair.schedule {
            Schedule::WeightedFair { backpressure: Some(bound), .. } => bound,
            _ => usize::MAX,
        }
    }

    /// Whether entry `v` (a source, a ring's target or a queue module) may
    /// take packets in (see [`may_take_in`]).
    #[inline]
    pub(super) fn may_take_in(&self, v: usize) -> bool {
        may_take_in(&self.nodes[v], &self.downstream())
    }

    /// Where the entries' packets must find room (see [`may_take_in`]).
    pub(super) fn downstream(&self) -> Downstream<'_> {
        Downstream::of(&self.links.rings_out, self.fair.queued_pkts, self.backpressure(), &self.links.egress, self.batch_size)
    }

    /// Delivers what the inbound rings hold, a batch of up to B per ring
    /// (no more than a queued target has room for), to entries that may
    /// take packets in; returns the packets taken (pkt).
    pub fn poll_inbound(&mut self) -> usize {
        let mut moved = 0;
        for i in 0..self.links.rings_in.len() {
            let target = self.links.rings_in[i].target;
            if !self.may_take_in(target) {
                continue;
            }
            let node = &mut self.nodes[target];
            let room = if node.queued { node.buffer.room().min(self.batch_size) } else { self.batch_size };
            let InRing { ring, codel, .. } = &mut self.links.rings_in[i];
            match codel {
                None => {
                    while node.inbox.len() < room {
                        match ring.pop() {
                            Some(id) => node.inbox.push(id),
                            None => break,
                        }
                    }
                }
                Some(codel) => ring_aqm::take_judged(codel, ring, node, room, self.clocking.now_ns(), &mut self.pool, &mut self.flows),
            }
            if !node.inbox.is_empty() {
                self.clocking.last_read = None;
                moved += node.inbox.len();
                self.walk(Task { node: target as u32, gate: Task::ARRIVED });
            }
        }
        moved
    }

    /// Moves what the outbound rings' backlogs hold into the rings, in
    /// order, as far as the rings have room.
    pub(super) fn flush_backlogs(&mut self) {
        for out in &mut self.links.rings_out {
            if out.backlog.is_empty() {
                continue;
            }
            while let Some(id) = out.backlog.front() {
                if out.ring.push(id).is_err() {
                    break;
                }
                out.backlog.pop();
            }
            if out.backlog.is_empty() {
                self.links.backlogged -= 1;
            }
        }
    }

    /// Source `v` makes a batch (as many packets as the pool has room for,
    /// up to B), stamped `now_ns`, and pushes it through the graph; returns
    /// its packets (pkt).
    pub(super) fn pull(&mut self, v: usize, now_ns: u64) -> usize {
        let max = self.batch_size.min(self.pool.available());
        let node = &mut self.nodes[v];
        let Kind::Source(source) = &mut node.kind else { unreachable!("sources lists source nodes only") };
        self.clocking.last_read = None;
        source.fill(&mut self.pool, now_ns, &mut node.out[0], max);
        let n = node.out[0].len();
        if self.clocking.times_runs {
            let end = self.clocking.clock.raw();
            node.counters.busy_ns += self.clocking.busy_sampling * self.clocking.clock.delta_as_nanos(self.clocking.mark, end);
            self.clocking.mark = end;
        }
        if n > 0 {
            node.counters.runs += 1;
            node.counters.run_pkts += n as u64;
            // The batch the source made goes through the graph from its one outgate.
            self.walk(Task { node: v as u32, gate: 0 });
        }
        n
    }
}

/// Where an entry's packets must find room before it takes more in.
pub(super) struct Downstream<'a> {
    rings_out: &'a [OutRing],
    /// Packets the worker's queues hold, and the most they may (pkt).
    queued_pkts: usize,
    backpressure: usize,
    egress: Option<&'a dyn EgressLink>,
    /// The pipeline's batch size (pkt).
    batch: usize,
}

impl<'a> Downstream<'a> {
    /// From the worker's fields (borrowed apart from the rest where a caller needs that).
    pub(super) fn of(rings_out: &'a [OutRing], queued_pkts: usize, backpressure: usize, egress: &'a Option<Box<dyn EgressLink>>, batch: usize) -> Self {
        Self { rings_out, queued_pkts, backpressure, egress: egress.as_deref(), batch }
    }
}

/// Whether `entry` may take packets in: every outbound ring it reaches has
/// room, the worker's queues hold fewer than their bound, and every class
/// of the scheduled link it reaches has room for a batch (where the link
/// makes sources wait).
#[inline]
pub(super) fn may_take_in(entry: &Node, d: &Downstream<'_>) -> bool {
    entry.takes_in_freely
        || d.queued_pkts < d.backpressure
        && entry.reaches.iter().all(|&r| d.rings_out[r as usize].has_room())
        && d.egress.is_none_or(|link| entry.classes.iter().all(|&c| link.room(c) >= d.batch))
}
