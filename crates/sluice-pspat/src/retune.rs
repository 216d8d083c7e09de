//! Where a scheduled egress takes the control plane's changes of its
//! settings (see [`EgressKnobs`]): between scans, its algorithm rebuilt
//! under the new weights with what it holds, its class tree's parents
//! reshaped, its link set to the new rate, its classes' CoDel given new
//! settings.

use sluice_core::EgressKnobs;

use crate::aqm::Aqm;
use crate::link::LinkClock;
use crate::sched::{Algorithm, AnyScheduler};

/// An egress's settings and the reading of them in force.
pub(crate) struct Retune {
    knobs: EgressKnobs,
    /// The last reading taken (see [`EgressKnobs::changed`]).
    seen: u64,
    algorithm: Algorithm,
    /// Packets a class's queue holds (pkt).
    limit: usize,
}

impl Retune {
    /// Retuning by `knobs` an egress of `algorithm` whose class queues hold `limit` packets.
    pub(crate) fn new(knobs: EgressKnobs, algorithm: Algorithm, limit: usize) -> Self {
        Self { knobs, seen: 0, algorithm, limit }
    }

    /// The knobs the control plane sets.
    pub(crate) fn knobs(&self) -> &EgressKnobs {
        &self.knobs
    }

    /// Takes the settings into `scheduler`, `link` and `aqm` if they were
    /// set since the last call (one atomic load when they were not).
    #[inline]
    pub(crate) fn apply(&mut self, scheduler: &mut AnyScheduler, link: &mut LinkClock, aqm: &mut Aqm) {
        if let Some(s) = self.knobs.changed(&mut self.seen) {
            scheduler.reweigh(self.algorithm, &s.weights, self.limit);
            scheduler.reshape(&s.parents);
            link.set_rate(s.link_bits_per_s);
            aqm.set_codel(&s.codel);
        }
    }
}
