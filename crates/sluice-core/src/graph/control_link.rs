//! What the control thread sets and a worker reads: the knobs' shared
//! values (triggers, weights, hold times, which workers are down) and how
//! many trigger sets this worker has taken.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::knobs::Knobs;

/// A worker's end of the control thread's knobs (see [`Knobs`]).
pub(super) struct ControlLink {
    /// Fractional-buffer trigger per module (pkt; 0 = pass-through).
    pub(super) triggers: Arc<[AtomicU32]>,
    /// How many times the control thread has set triggers or weights ...
    trigger_sets: Arc<AtomicU64>,
    /// ... and how many of those sets this worker has taken (`None`: none yet).
    triggers_taken: Option<u64>,
    /// Weighted-fair weight per module (≥ 1).
    pub(super) weights: Arc<[AtomicU32]>,
    /// Hold time per module that holds packets (ns; 0: as built).
    pub(super) holds: Arc<[AtomicU64]>,
    /// Per worker, whether it is down; a worker reads its own.
    halted: Arc<[AtomicBool]>,
}

impl ControlLink {
    /// The worker's end of `knobs`, no set taken yet.
    pub(super) fn new(knobs: &Knobs) -> Self {
        Self {
            triggers: knobs.triggers.clone(),
            trigger_sets: knobs.trigger_sets.clone(),
            triggers_taken: None,
            weights: knobs.weights.clone(),
            holds: knobs.holds.clone(),
            halted: knobs.halted.clone(),
        }
    }

    /// Whether the control thread set triggers or weights since this
    /// worker last took them (always, before the first); marks them taken.
    /// A set that lands while the worker reads them is taken whole next time.
    #[inline]
    pub(super) fn take_new_sets(&mut self) -> bool {
        let sets = self.trigger_sets.load(Ordering::Acquire);
        if self.triggers_taken == Some(sets) {
            return false;
        }
        self.triggers_taken = Some(sets);
        true
    }

    /// Forgets which sets were taken: the next [`Self::take_new_sets`] takes
    /// them again (modules that moved in bring their old worker's triggers).
    pub(super) fn retake(&mut self) {
        self.triggers_taken = None;
    }

    /// Whether worker `index` is down.
    #[inline]
    pub(super) fn is_halted(&self, index: usize) -> bool {
        self.halted[index].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelBuilder, ModuleDecl, Role};

    #[test]
    fn a_worker_takes_each_set_once_and_again_after_a_move() {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1)).module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "out", 0).flow("f", &["src", "out"], None);
        let knobs = Knobs::new(&b.build(32).expect("a valid model"));
        let mut link = ControlLink::new(&knobs);
        assert!(link.take_new_sets(), "the first round takes what is set");
        assert!(!link.take_new_sets());
        knobs.trigger_sets.fetch_add(1, Ordering::Release);
        assert!(link.take_new_sets() && !link.take_new_sets(), "a new set is taken once");
        link.retake();
        assert!(link.take_new_sets(), "after a move, taken again");
        assert!(!link.is_halted(0));
        knobs.halted[0].store(true, Ordering::Relaxed);
        assert!(link.is_halted(0));
    }
}
