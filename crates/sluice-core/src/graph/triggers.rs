//! Trigger hand-over: a worker takes the triggers (and the hold times of
//! NFs that hold packets) the control thread set, all at once, at a round
//! boundary.

use std::sync::atomic::Ordering;

use super::WorkerGraph;
use crate::batch::MAX_BURST;

impl WorkerGraph {
    /// Takes the triggers the control thread set since the last round, all
    /// at once. Every buffer whose trigger is now a value some buffer just
    /// took releases what it holds, in topological order, so that buffers
    /// set alike fill and fire in step. Returns the packets released (pkt).
    ///
    /// A buffer's phase would otherwise carry its trigger history: buffers
    /// given equal triggers at different times fire in different rounds for
    /// good, and the flows behind one that fires just after a round where
    /// many others fired wait through all their runs (L2L3(16) under Max:
    /// 4–5 µs more than the other flows, on a mean delay of 14 µs).
    /// Releasing only the buffers whose trigger changed left a buffer
    /// already at the trigger its siblings just took out of step with them
    /// (L2L3(4) on the simulator: its flow's mean 2.4% off the others');
    /// releasing every buffer at any change also aligned buffers at other
    /// triggers (RC(16): the 15 bulk buffers, drifted apart by a random
    /// split, fired in one long round after each cut of the robot-control
    /// buffer, whose p95 landed over the SLO again).
    pub(super) fn take_triggers(&mut self) -> usize {
        if !self.control.take_new_sets() {
            return 0;
        }
        // Bit t: some buffer just took trigger t.
        let mut taken = [0u64; MAX_BURST / 64 + 1];
        for node in self.nodes.iter_mut() {
            let trigger = (self.control.triggers[node.module].load(Ordering::Relaxed) as usize).min(MAX_BURST);
            if trigger != node.trigger {
                node.trigger = trigger;
                taken[trigger / 64] |= 1 << (trigger % 64);
            }
        }
        for i in 0..self.holding.len() {
            let v = self.holding[i];
            let ns = self.control.holds[self.nodes[v].module].load(Ordering::Relaxed);
            if ns > 0 {
                self.function_mut(v).set_hold_ns(ns);
                self.ask_held(v);
            }
        }
        // A queue whose trigger fell may have become runnable; new weights
        // start the turns afresh (see `Stride::restart`).
        self.fair.stride.restart();
        let mut released = 0;
        for v in 0..self.nodes.len() {
            let node = &mut self.nodes[v];
            let t = node.trigger;
            if node.queued_when_buffered && node.queued != (t > 0) {
                if t > 0 {
                    // Buffered now: it queues for turns of its own.
                    node.queued = true;
                    self.fair.queued_pkts += node.buffer.len();
                } else {
                    // Unbuffered now: its queue goes on down, and it runs inline.
                    released += self.run_queued(v, MAX_BURST, true);
                    self.nodes[v].queued = false;
                }
                continue;
            }
            // Queues of weighted-fair modules are served by the scheduler, not released.
            if !node.queued && taken[t / 64] & (1 << (t % 64)) != 0 {
                released += self.run_queued(v, MAX_BURST, true);
            }
        }
        released
    }
}
