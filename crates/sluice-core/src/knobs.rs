//! The settings the control plane changes while a pipeline runs: triggers,
//! weights, source rates and which workers are down, kept in atomics the
//! walker reads without locks.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::backend::Actions;
use crate::error::{Error, Result};
use crate::model::{Model, ModuleId};
use crate::nf::{Instance, RateKnobs};

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
        }
    }

    /// Adds the rate knobs of the source `instances` (one per module, in model order).
    pub fn with_rates_of(mut self, instances: &[Instance]) -> Self {
        self.rates = instances
            .iter()
            .enumerate()
            .filter_map(|(m, inst)| match inst {
                Instance::Source(s) => s.rates().map(|k| (m, k)),
                _ => None,
            })
            .collect();
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
        Ok(())
    }

    /// Writes the triggers in force into `into` (pkt, by module).
    pub fn read_triggers(&self, into: &mut [u32]) {
        for (t, a) in into.iter_mut().zip(self.triggers.iter()) {
            *t = a.load(Ordering::Relaxed);
        }
    }
}
