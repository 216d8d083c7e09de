//! PSPAT's backpressure: per flow (class), whether its queue was full at
//! the arbiter's last decision for it. A client that sees it set drops or
//! waits rather than fill its mailbox with packets the arbiter would
//! refuse, each refusal lengthening the scan every other client waits on.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the arbiter when it refuses a packet of the flow, cleared when
/// it sends one; read by the flow's clients before they offer.
#[derive(Debug, Default)]
pub struct FullFlag(AtomicBool);

impl FullFlag {
    /// The arbiter refused a packet of the flow: its queue is full.
    #[inline]
    pub fn refused(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// The arbiter sent a packet of the flow: there is room again. (One
    /// writer: a load first spares the shared line a store when it is clear.)
    #[inline]
    pub fn sent(&self) {
        if self.0.load(Ordering::Relaxed) {
            self.0.store(false, Ordering::Relaxed);
        }
    }

    /// Whether the flow's queue was full at the last decision for it.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
