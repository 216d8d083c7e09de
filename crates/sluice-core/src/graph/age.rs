//! The age bound: a buffer whose oldest packet entered the pipeline longer
//! ago than its module's bound flushes, whether or not more packets come.

use super::WorkerGraph;
use crate::batch::MAX_BURST;

impl WorkerGraph {
    /// Flushes the buffers whose oldest packet is older than their age bound;
    /// returns the packets flushed (pkt).
    pub(super) fn flush_aged(&mut self, now_ns: u64) -> usize {
        let mut moved = 0;
        for i in 0..self.aged.len() {
            let v = self.aged[i];
            let (Some(bound), Some(oldest)) = (self.nodes[v].max_age_ns, self.nodes[v].buffer.front()) else { continue };
            if now_ns.saturating_sub(self.pool.meta(oldest).ts_ns) > bound {
                moved += self.run_queued(v, MAX_BURST, true);
            }
        }
        moved
    }
}
