//! The settings of a scheduled egress that the control plane changes while
//! it runs: each class's weight, the link's rate, its class tree's
//! parents' rates and its classes' CoDel settings. The control thread
//! writes them whole, seqlock style; the egress (the arbiter's thread, or
//! the one worker that is its own arbiter) reads them between its scans
//! without locks and, when they moved, takes them all at once.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::CoDelConfig;

/// A scheduled egress's settings, as the egress takes them.
#[derive(Clone, Debug, PartialEq)]
pub struct EgressSettings {
    /// Per class, its weight (≥ 1).
    pub weights: Vec<u32>,
    /// The link's rate (bit/s; infinite: no limit).
    pub link_bits_per_s: f64,
    /// Per parent of its class tree, the rate it is given and its ceiling (bit/s).
    pub parents: Vec<(f64, f64)>,
    /// Per class, its CoDel's settings (`None`: the class has no CoDel).
    pub codel: Vec<Option<CoDelConfig>>,
}

/// A change of a scheduled egress's settings: what it names, the rest as it is.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EgressChange {
    /// New weights (class, weight ≥ 1).
    #[serde(rename = "egress_weights")]
    pub weights: Vec<(usize, u32)>,
    /// A new rate of the link (bit/s; infinite: no limit).
    pub link_bits_per_s: Option<f64>,
    /// New rates and ceilings of the class tree's parents (parent, rate, ceiling; bit/s).
    #[serde(rename = "egress_parents")]
    pub parents: Vec<(usize, f64, f64)>,
    /// New CoDel settings of classes that have CoDel or FQ-CoDel (class, settings).
    #[serde(rename = "egress_codel")]
    pub codel: Vec<(usize, CoDelConfig)>,
}

impl EgressChange {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty() && self.link_bits_per_s.is_none() && self.parents.is_empty() && self.codel.is_empty()
    }
}

/// The shared settings of one scheduled egress (cloned, they are the same).
#[derive(Clone)]
pub struct EgressKnobs(Arc<Shared>);

struct Shared {
    /// Odd while a write is under way; moves by two for each write.
    seq: AtomicU64,
    weights: Box<[AtomicU32]>,
    /// f64 bits.
    link_bits_per_s: AtomicU64,
    /// Per parent, its rate and ceiling (f64 bits).
    parents: Box<[[AtomicU64; 2]]>,
    /// Per class with CoDel, its target (µs), interval (µs) and ECN marking (0 or 1).
    codel: Box<[Option<[AtomicU64; 3]>]>,
    /// The largest weight the egress's algorithm takes.
    max_weight: u32,
}

impl EgressKnobs {
    /// Knobs starting at `start`, for an algorithm taking weights up to `max_weight`.
    pub fn new(start: &EgressSettings, max_weight: u32) -> Self {
        Self(Arc::new(Shared {
            seq: AtomicU64::new(0),
            weights: start.weights.iter().map(|&w| AtomicU32::new(w)).collect(),
            link_bits_per_s: AtomicU64::new(start.link_bits_per_s.to_bits()),
            parents: start.parents.iter().map(|&(rate, ceil)| [AtomicU64::new(rate.to_bits()), AtomicU64::new(ceil.to_bits())]).collect(),
            codel: start.codel.iter().map(|c| c.map(|c| [AtomicU64::new(c.target_us), AtomicU64::new(c.interval_us), AtomicU64::new(u64::from(c.ecn))])).collect(),
            max_weight,
        }))
    }

    /// Whether `change` may be made; the error names the class, the parent or the rate.
    pub fn check(&self, change: &EgressChange) -> Result<(), String> {
        let s = &self.0;
        let most = s.max_weight;
        if let Some(&(class, w)) = change.weights.iter().find(|&&(c, w)| c >= s.weights.len() || !(1..=most).contains(&w)) {
            return Err(format!("class {class} weight {w}: the egress has classes 0..{} and takes weights 1..={most}", s.weights.len()));
        }
        if let Some(&(p, rate, ceil)) = change.parents.iter().find(|&&(p, rate, ceil)| p >= s.parents.len() || !(rate > 0.0 && rate.is_finite() && ceil >= rate && ceil.is_finite())) {
            return Err(format!("parent {p} rate {rate} ceiling {ceil} bit/s: the egress has parents 0..{} and takes 0 < rate ≤ ceiling", s.parents.len()));
        }
        for (class, config) in &change.codel {
            if !s.codel.get(*class).is_some_and(Option::is_some) {
                return Err(format!("class {class} has no CoDel to change (tail drop; its queue management is set at the start)"));
            }
            config.check().map_err(|e| format!("class {class}: {e}"))?;
        }
        match change.link_bits_per_s {
            Some(r) if !(r > 0.0) => Err(format!("link rate {r} bit/s must be > 0 (infinite: no limit)")),
            _ => Ok(()),
        }
    }

    /// Makes `change`, all at once for the egress; checked first, nothing changed on an error.
    pub fn set(&self, change: &EgressChange) -> Result<(), String> {
        self.check(change)?;
        let s = &self.0;
        // One writer at a time: the sequence is made odd by whoever writes.
        let mut seq = s.seq.load(Ordering::Relaxed);
        loop {
            if seq & 1 == 1 {
                std::hint::spin_loop();
                seq = s.seq.load(Ordering::Relaxed);
                continue;
            }
            match s.seq.compare_exchange_weak(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => seq = now,
            }
        }
        fence(Ordering::Release);
        for &(class, w) in &change.weights {
            s.weights[class].store(w, Ordering::Relaxed);
        }
        if let Some(r) = change.link_bits_per_s {
            s.link_bits_per_s.store(r.to_bits(), Ordering::Relaxed);
        }
        for &(p, rate, ceil) in &change.parents {
            s.parents[p][0].store(rate.to_bits(), Ordering::Relaxed);
            s.parents[p][1].store(ceil.to_bits(), Ordering::Relaxed);
        }
        for (class, c) in &change.codel {
            let codel = s.codel[*class].as_ref().expect("checked above");
            for (field, value) in codel.iter().zip([c.target_us, c.interval_us, u64::from(c.ecn)]) {
                field.store(value, Ordering::Relaxed);
            }
        }
        s.seq.store(seq + 2, Ordering::Release);
        Ok(())
    }

    /// The settings in force (tests read them; the egress takes them by [`Self::changed`]).
    #[cfg(test)]
    pub(crate) fn current(&self) -> EgressSettings {
        loop {
            let mut seen = u64::MAX;
            if let Some(settings) = self.changed(&mut seen) {
                return settings;
            }
            std::hint::spin_loop();
        }
    }

    /// The settings, if they were set since the reading `seen` names
    /// (which then names this one); `None` also while a write is under
    /// way (the next call reads it whole). One atomic load when nothing moved.
    #[inline]
    pub fn changed(&self, seen: &mut u64) -> Option<EgressSettings> {
        let s = &self.0;
        let before = s.seq.load(Ordering::Acquire);
        if before == *seen || before & 1 == 1 {
            return None;
        }
        self.read(before, seen)
    }

    #[cold]
    fn read(&self, before: u64, seen: &mut u64) -> Option<EgressSettings> {
        let s = &self.0;
        let settings = EgressSettings {
            weights: s.weights.iter().map(|w| w.load(Ordering::Relaxed)).collect(),
            link_bits_per_s: f64::from_bits(s.link_bits_per_s.load(Ordering::Relaxed)),
            parents: s.parents.iter().map(|[rate, ceil]| (f64::from_bits(rate.load(Ordering::Relaxed)), f64::from_bits(ceil.load(Ordering::Relaxed)))).collect(),
            codel: s
                .codel
                .iter()
                .map(|c| c.as_ref().map(|[target, interval, ecn]| CoDelConfig { target_us: target.load(Ordering::Relaxed), interval_us: interval.load(Ordering::Relaxed), ecn: ecn.load(Ordering::Relaxed) == 1 }))
                .collect(),
        };
        fence(Ordering::Acquire);
        if s.seq.load(Ordering::Relaxed) != before {
            return None;
        }
        *seen = before;
        Some(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> EgressSettings {
        EgressSettings { weights: vec![1, 2, 3], link_bits_per_s: 1e9, parents: vec![(1e8, 1e9)], codel: vec![None, Some(CoDelConfig::default()), None] }
    }

    fn weights(weights: &[(usize, u32)], link_bits_per_s: Option<f64>) -> EgressChange {
        EgressChange { weights: weights.to_vec(), link_bits_per_s, ..EgressChange::default() }
    }

    #[test]
    fn a_reader_sees_a_change_once_and_whole() {
        let knobs = EgressKnobs::new(&start(), 1024);
        let mut seen = 0;
        assert_eq!(knobs.changed(&mut seen), None, "nothing set since the start");
        knobs.set(&weights(&[(0, 5), (2, 7)], Some(2e9))).unwrap();
        assert_eq!(knobs.changed(&mut seen), Some(EgressSettings { weights: vec![5, 2, 7], link_bits_per_s: 2e9, ..start() }));
        assert_eq!(knobs.changed(&mut seen), None, "read once");
        let codel = CoDelConfig { target_us: 2_000, interval_us: 40_000, ecn: false };
        knobs.set(&EgressChange { link_bits_per_s: Some(f64::INFINITY), parents: vec![(0, 2e8, 3e8)], codel: vec![(1, codel)], ..EgressChange::default() }).unwrap();
        assert_eq!(knobs.current(), EgressSettings { weights: vec![5, 2, 7], link_bits_per_s: f64::INFINITY, parents: vec![(2e8, 3e8)], codel: vec![None, Some(codel), None] });
    }

    #[test]
    fn a_bad_setting_names_itself_and_changes_nothing() {
        let knobs = EgressKnobs::new(&start(), 1024);
        let err = knobs.set(&weights(&[(0, 4), (3, 1)], None)).unwrap_err();
        assert!(err.contains("class 3 weight 1") && err.contains("0..3"), "{err}");
        assert!(knobs.set(&weights(&[(1, 0)], None)).unwrap_err().contains("1..=1024"));
        assert!(knobs.set(&weights(&[(1, 2000)], None)).unwrap_err().contains("class 1 weight 2000"));
        assert!(knobs.set(&weights(&[], Some(0.0))).unwrap_err().contains("link rate 0"));
        assert!(knobs.set(&weights(&[], Some(f64::NAN))).unwrap_err().contains("link rate NaN"));
        let parent = |p, rate, ceil| EgressChange { parents: vec![(p, rate, ceil)], ..EgressChange::default() };
        assert!(knobs.set(&parent(0, 2e8, 1e8)).unwrap_err().contains("parent 0 rate 200000000 ceiling 100000000"));
        assert!(knobs.set(&parent(1, 1e8, 1e8)).unwrap_err().contains("parents 0..1"));
        let codel = |class, target_us| EgressChange { codel: vec![(class, CoDelConfig { target_us, ..CoDelConfig::default() })], ..EgressChange::default() };
        assert!(knobs.set(&codel(0, 1_000)).unwrap_err().contains("class 0 has no CoDel"));
        assert!(knobs.set(&codel(7, 1_000)).unwrap_err().contains("class 7 has no CoDel"));
        assert!(knobs.set(&codel(1, 0)).unwrap_err().contains("class 1: codel: target_us and interval_us must be > 0"));
        let mut seen = 0;
        assert_eq!(knobs.changed(&mut seen), None);
        assert_eq!(knobs.current(), start());
    }

    #[test]
    fn a_reader_racing_writers_never_sees_half_a_change() {
        // Writers set every weight to one value; a reader must see them all equal.
        let knobs = EgressKnobs::new(&EgressSettings { weights: vec![1; 16], link_bits_per_s: 1.0, parents: Vec::new(), codel: Vec::new() }, u32::MAX);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|t| {
                let (knobs, stop) = (knobs.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut v = 1 + t;
                    while !stop.load(Ordering::Relaxed) {
                        let all: Vec<(usize, u32)> = (0..16).map(|c| (c, v)).collect();
                        knobs.set(&weights(&all, Some(f64::from(v)))).unwrap();
                        v += 2;
                    }
                })
            })
            .collect();
        let mut seen = 0;
        let mut reads = 0;
        while reads < 200 {
            if let Some(s) = knobs.changed(&mut seen) {
                assert!(s.weights.iter().all(|&w| w == s.weights[0]), "{s:?}");
                assert_eq!(s.link_bits_per_s, f64::from(s.weights[0]));
                reads += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        writers.into_iter().for_each(|w| w.join().unwrap());
    }
}
