//! What a worker watches besides forwarding: the trace and captures
//! attached to its modules (see [`crate::trace`], [`crate::capture`] and
//! the walker's side, `graph::watch`).

use std::sync::Arc;

use crate::capture::Capture;
use crate::model::ModuleId;
use crate::packet::PacketId;
use crate::trace::{Trace, TracedPacket};

/// What a worker looks at besides forwarding: the trace and captures
/// attached to its modules. A worker without any carries none (`None`
/// in its graph), and its walk then does nothing more than test for one.
pub struct Watch {
    pub(crate) trace: Option<Arc<Trace>>,
    pub(crate) captures: Vec<Capture>,
    /// The traced packets in the input of the run under way: each one's
    /// record and its flow then (see `graph::watch`).
    pub(crate) in_run: Vec<(PacketId, u32, u16)>,
    /// The index of the worker it is attached to.
    pub(crate) worker: u16,
}

impl Default for Watch {
    fn default() -> Self {
        Self { trace: None, captures: Vec::new(), in_run: Vec::with_capacity(crate::batch::MAX_BURST), worker: 0 }
    }
}

impl Watch {
    /// Follows `trace` from now on, in place of any other (`None`: none).
    pub fn set_trace(&mut self, trace: Option<Arc<Trace>>) {
        self.trace = trace;
    }

    /// The records of its trace so far, if it has one. Called where the
    /// worker is held (see [`crate::Backend::watch`]), as every other
    /// worker of the trace is.
    pub fn trace(&self) -> Option<Vec<TracedPacket>> {
        self.trace.as_ref().map(|t| t.records())
    }

    /// Copies what reaches `capture`'s module (or gate) from now on.
    pub fn add_capture(&mut self, capture: Capture) {
        self.captures.push(capture);
    }

    /// Ends its captures of `module` (every one: `None`); their readers then see them end.
    pub fn end_captures(&mut self, module: Option<ModuleId>) {
        self.captures.retain(|c| module.is_some_and(|m| c.module != m));
    }

    /// Whether it looks at nothing (the worker may then drop it).
    pub fn is_empty(&self) -> bool {
        self.trace.is_none() && self.captures.is_empty()
    }
}
