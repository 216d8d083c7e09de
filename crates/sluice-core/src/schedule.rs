//! How a worker orders its work: run-to-completion or weighted-fair.

/// How a worker orders its work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Each source's batch runs to completion through the graph.
    #[default]
    RunToCompletion,
    /// Stride scheduling over sources and per-module queues of controlled modules.
    WeightedFair {
        /// Sources pause while the queues hold this many packets or more (pkt).
        backpressure: Option<usize>,
        /// Only buffered modules (trigger > 0) queue and take turns of their
        /// own; the others run within the turn that feeds them, as under
        /// run-to-completion. With every trigger at 0 this is
        /// run-to-completion. Otherwise every controlled module queues
        /// (NFVnice's model).
        buffered_only: bool,
    },
}
