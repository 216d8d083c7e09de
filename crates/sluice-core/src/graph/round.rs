//! One scheduler round: the run-to-completion round (every source's batch
//! and every inbound ring's packets pushed through the graph), the
//! weighted-fair turn it hands over to, the age-bound flush and the core
//! probe that follow it.

use std::sync::atomic::Ordering;

use super::{InRing, Kind, Schedule, WorkerGraph, BUSY_SAMPLING, RING_RESERVE};
use crate::core_probe;

impl WorkerGraph {
    /// One scheduler round: run-to-completion, a batch from every source
    /// pushed through; weighted-fair, one unit's turn; on a worker that is
    /// down, [`Self::discard`]. Returns the packets the round moved or
    /// discarded (pkt); 0 means there was nothing to do.
    pub fn round(&mut self) -> usize {
        if self.halted[self.index].load(Ordering::Relaxed) {
            return self.discard();
        }
        self.rounds += 1;
        let start = self.clock.raw();
        let now = self.clock.delta_as_nanos(self.origin, start);
        self.mark = start;
        self.sampled = self.timing && self.draw().is_multiple_of(BUSY_SAMPLING);
        let mut moved = self.take_triggers();
        moved += self.poll_inbound();
        moved += match self.schedule {
            Schedule::RunToCompletion if self.rings_have_room() => {
                let mut moved: usize = (0..self.sources.len()).map(|i| self.pull(self.sources[i], now)).sum();
                // Queue modules are tasks of their own: one batch each per round.
                for q in 0..self.queues.len() {
                    moved += self.serve(self.queues[q]);
                }
                moved
            }
            Schedule::RunToCompletion => 0,
            Schedule::WeightedFair { backpressure } => self.fair_turn(now, backpressure.unwrap_or(usize::MAX)),
        };
        moved += self.flush_aged(now);
        if moved > 0 && self.sampled {
            self.worker.busy_ns += BUSY_SAMPLING * self.clock.delta_as_nanos(start, self.mark);
            self.worker.busy_rounds += BUSY_SAMPLING;
        }
        if self.timing && now >= self.next_probe_ns {
            self.probe_core(now);
        }
        moved
    }

    /// Times the fixed [`core_probe`] work into the worker's counters.
    #[cold]
    pub(super) fn probe_core(&mut self, now_ns: u64) {
        let start = self.clock.raw();
        std::hint::black_box(core_probe::probe_work());
        self.worker.probe_ns += self.clock.delta_as_nanos(start, self.clock.raw()).min(core_probe::PROBE_CAP_NS);
        self.worker.probes += 1;
        self.next_probe_ns = now_ns + core_probe::PROBE_INTERVAL_NS;
    }

    /// Whether every outbound ring can take what a source batch may release.
    pub(super) fn rings_have_room(&self) -> bool {
        self.rings_out.iter().all(|(_, r)| r.room() >= RING_RESERVE)
    }

    /// Delivers what the inbound rings hold, a batch of up to B per ring;
    /// returns the packets taken (pkt).
    pub fn poll_inbound(&mut self) -> usize {
        let mut moved = 0;
        for i in 0..self.rings_in.len() {
            let mut batch = self.spares.pop().expect("one spare batch per graph level");
            let InRing { ring, target, .. } = &mut self.rings_in[i];
            let target = *target;
            while batch.len() < self.batch_size {
                match ring.pop() {
                    Some(id) => batch.push(id),
                    None => break,
                }
            }
            moved += batch.len();
            if !batch.is_empty() {
                self.deliver(target, &mut batch);
            }
            self.spares.push(batch);
        }
        moved
    }

    pub(super) fn pull(&mut self, v: usize, now_ns: u64) -> usize {
        let max = self.batch_size.min(self.pool.available());
        let node = &mut self.nodes[v];
        let Kind::Source(source) = &mut node.kind else { unreachable!("sources lists source nodes only") };
        source.fill(&mut self.pool, now_ns, &mut node.out[0], max);
        let n = node.out[0].len();
        if self.sampled {
            let end = self.clock.raw();
            node.counters.busy_ns += BUSY_SAMPLING * self.clock.delta_as_nanos(self.mark, end);
            self.mark = end;
        }
        if n > 0 {
            node.counters.runs += 1;
            node.counters.run_pkts += n as u64;
            self.dispatch(v);
        }
        n
    }
}
