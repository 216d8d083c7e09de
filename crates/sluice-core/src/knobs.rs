//! The settings the control plane changes while a pipeline runs: triggers,
//! weights, source rates, which workers are down and the scheduled
//! egress's weights and link rate, kept in atomics the walker (and the
//! egress) reads without locks.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::backend::Actions;
use crate::egress_knobs::EgressKnobs;
use crate::error::{Error, Result};
use crate::model::{Model, ModuleId};
use crate::nf::{ModuleCode, RateKnobs};

/// Triggers and weights of every module and rate knobs of every source.
pub struct Knobs {
    /// Fractional-buffer trigger per module (pkt; 0 = pass-through).
    pub triggers: Arc<[AtomicU32]>,
    /// How many times triggers or weights were set: workers take the new
    /// triggers, all at once, and start their weighted-fair turns afresh at
    /// their next round when it moves.
    pub trigger_sets: Arc<AtomicU64>,
    /// Weighted-fair scheduling weight per module (≥ 1; default 1).
    pub weights: Arc<[AtomicU32]>,
    /// Per worker, whether it is down (a failed core; see [`Actions::halted`]).
    pub halted: Arc<[AtomicBool]>,
    /// Hold time per module that holds packets (ns; 0: as built), taken
    /// with the triggers (see [`Actions::holds`]).
    pub holds: Arc<[AtomicU64]>,
    rates: Vec<(ModuleId, RateKnobs)>,
    /// The scheduled egress's settings, if the pipeline has one.
    egress: Option<EgressKnobs>,
}

impl Knobs {
    /// Knobs for `model`: triggers 0, weights 1, every worker up, no rate knobs.
    pub fn new(model: &Model) -> Self {
        Self {
            triggers: model.modules.iter().map(|_| AtomicU32::new(0)).collect(),
            trigger_sets: Arc::new(AtomicU64::new(0)),
            weights: model.modules.iter().map(|_| AtomicU32::new(1)).collect(),
            halted: (0..model.workers()).map(|_| AtomicBool::new(false)).collect(),
            holds: model.modules.iter().map(|_| AtomicU64::new(0)).collect(),
            rates: Vec::new(),
            egress: None,
        }
    }

    /// Adds the rate knobs of the source `instances` (one per module, in model order).
    pub fn with_rates_of(mut self, instances: &[ModuleCode]) -> Self {
        self.rates = instances
            .iter()
            .enumerate()
            .filter_map(|(m, inst)| match inst {
                ModuleCode::Source(s) => s.rates().map(|k| (m, k)),
                _ => None,
            })
            .collect();
        self
    }

    /// Adds the settings of the scheduled egress the workers' `links` lead to.
    pub fn with_egress_of<'a>(mut self, mut links: impl Iterator<Item = &'a dyn crate::nf::EgressLink>) -> Self {
        self.egress = links.find_map(|l| l.knobs());
        self
    }

    /// Applies `actions`, refusing (before changing anything) a trigger above
    /// B, a weight of 0, a rate for a stream that does not exist, or a
    /// worker that does not exist.
    pub fn apply(&self, model: &Model, actions: &Actions) -> Result<()> {
        let name = |m: ModuleId| model.modules.get(m).map_or_else(|| format!("#{m}"), |d| d.name.clone());
        for &(m, b) in &actions.triggers {
            if m >= model.modules.len() || b as usize > model.batch_size {
                return Err(Error::module(&name(m), format!("trigger {b} is outside 0..={}", model.batch_size)));
            }
        }
        for &(m, w) in &actions.weights {
            if m >= model.modules.len() || w == 0 {
                return Err(Error::module(&name(m), format!("weight {w} must be ≥ 1")));
            }
        }
        for &(m, stream, pps) in &actions.rates {
            let ok = self.rates.iter().any(|(s, k)| *s == m && stream < k.len()) && pps > 0.0;
            if !ok {
                return Err(Error::module(&name(m), format!("cannot set rate {pps} pkt/s of stream {stream}")));
            }
        }
        for &(m, ns) in &actions.holds {
            let bound = model.modules.get(m).and_then(|d| d.max_hold_ns);
            if !bound.is_some_and(|b| (1..=b).contains(&ns)) {
                return Err(Error::module(&name(m), format!("hold time {ns} ns: the module's hold time is not controlled, or it is outside 1..={}", bound.unwrap_or(0))));
            }
        }
        let egress_changes = !actions.egress.is_empty();
        match &self.egress {
            Some(e) => e.check(&actions.egress).map_err(|e| Error::module("<egress>", e))?,
            None if egress_changes => return Err(Error::module("<egress>", "the pipeline has no scheduled egress")),
            None => {}
        }
        if let Some(&(w, _)) = actions.halted.iter().find(|(w, _)| *w >= self.halted.len()) {
            return Err(Error::module("<engine>", format!("cannot take down worker {w}: there are {} workers", self.halted.len())));
        }
        for &(m, b) in &actions.triggers {
            self.triggers[m].store(b, Ordering::Relaxed);
        }
        for &(m, w) in &actions.weights {
            self.weights[m].store(w, Ordering::Relaxed);
        }
        for &(m, ns) in &actions.holds {
            self.holds[m].store(ns, Ordering::Relaxed);
        }
        if !actions.triggers.is_empty() || !actions.weights.is_empty() || !actions.holds.is_empty() {
            self.trigger_sets.fetch_add(1, Ordering::Release);
        }
        for &(w, down) in &actions.halted {
            self.halted[w].store(down, Ordering::Relaxed);
        }
        for &(m, stream, pps) in &actions.rates {
            if let Some((_, k)) = self.rates.iter().find(|(s, _)| *s == m) {
                k.set(stream, pps);
            }
        }
        if let (Some(e), true) = (&self.egress, egress_changes) {
            e.set(&actions.egress).expect("checked above");
        }
        Ok(())
    }

    /// Writes the triggers in force into `into` (pkt, by module).
    pub fn read_triggers(&self, into: &mut [u32]) {
        for (t, a) in into.iter_mut().zip(self.triggers.iter()) {
            *t = a.load(Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress_knobs::{EgressChange, EgressSettings};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::EgressLink;
    use crate::packet::PacketId;

    /// A link that only carries the egress's knobs.
    struct Knobbed(EgressKnobs);

    impl EgressLink for Knobbed {
        fn offer(&mut self, _: u16, _: u16, _: PacketId, _: crate::Offered) -> bool {
            false
        }
        fn decision(&mut self) -> Option<(PacketId, crate::nf::Decision)> {
            None
        }
        fn knobs(&self) -> Option<EgressKnobs> {
            Some(self.0.clone())
        }
    }

    fn model() -> Model {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1));
        b.module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "out", 0);
        b.build(32).unwrap()
    }

    #[test]
    fn egress_settings_are_checked_with_the_rest_and_set_all_at_once() {
        let model = model();
        let bare = Knobs::new(&model);
        let err = bare.apply(&model, &Actions { egress: EgressChange { link_bits_per_s: Some(1e9), ..EgressChange::default() }, ..Actions::default() }).unwrap_err().to_string();
        assert!(err.contains("<egress>") && err.contains("no scheduled egress"), "{err}");

        let egress = EgressKnobs::new(&EgressSettings { weights: vec![1, 1], link_bits_per_s: 1e9, parents: Vec::new(), codel: Vec::new() }, 1024);
        let links: Vec<Box<dyn EgressLink>> = vec![Box::new(Knobbed(egress.clone()))];
        let knobs = Knobs::new(&model).with_egress_of(links.iter().map(|l| l.as_ref()));
        // A bad class refuses the whole action: the trigger beside it is not set either.
        let bad = Actions { triggers: vec![(1, 8)], egress: EgressChange { weights: vec![(2, 3)], ..EgressChange::default() }, ..Actions::default() };
        assert!(knobs.apply(&model, &bad).unwrap_err().to_string().contains("class 2 weight 3"));
        assert_eq!(knobs.triggers[1].load(Ordering::Relaxed), 0);
        assert_eq!(egress.current().weights, [1, 1]);
        knobs.apply(&model, &Actions { egress: EgressChange { weights: vec![(1, 3)], link_bits_per_s: Some(5e8), ..EgressChange::default() }, ..Actions::default() }).unwrap();
        assert_eq!(egress.current(), EgressSettings { weights: vec![1, 3], link_bits_per_s: 5e8, parents: Vec::new(), codel: Vec::new() });
    }
}
