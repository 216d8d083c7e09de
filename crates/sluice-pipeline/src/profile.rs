//! The profiler: `COPIES` modules of one NF kind in a row (source → NF
//! → … → NF → egress), on realistic packets, at batch sizes 1..B. The
//! NF's cost at batch size b is the lower-quartile time of a walker round
//! with them minus that without them (noise on a shared machine only ever
//! adds time), divided by `COPIES`, so T0 includes what the walker spends
//! per batch on a module (buffer, dispatch), as it does in a real
//! pipeline. A robust (Theil–Sen) fit of T(b) = T0 + T1·b gives the cost
//! model.

use serde::Serialize;
use sluice_core::{WorkerGraph, MAX_BURST};
use sluice_nf::{NfSpec, PROFILE_FLOWS as FLOWS};

use crate::chain::chain;
use crate::error::{Error, Result};


/// A fitted cost model.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Fit {
    /// Cost per batch (ns).
    pub t0_ns: f64,
    /// Cost per packet (ns).
    pub t1_ns: f64,
    /// Coefficient of determination of the fit over the medians.
    pub r2: f64,
    /// Batchiness T1/(T0+T1).
    pub beta: f64,
}

/// A robust line through (b, ns) points: the Theil–Sen estimator (median
/// of pairwise slopes, median intercept), which a few points disturbed by
/// a noisy machine do not drag, with T0, T1 ≥ 0 (a negative cost is noise:
/// it is set to 0 and the other coefficient refitted alone). R² is that of
/// the resulting line.
pub fn fit(points: &[(f64, f64)]) -> Fit {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 { 0.0 } else if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    };
    let mut slopes = Vec::with_capacity(points.len() * points.len() / 2);
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            if b.0 != a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    let mut t1 = median(slopes).max(0.0);
    let mut t0 = median(points.iter().map(|(x, y)| y - t1 * x).collect());
    if t0 < 0.0 {
        t0 = 0.0;
        t1 = median(points.iter().filter(|(x, _)| *x > 0.0).map(|(x, y)| y / x).collect()).max(0.0);
    }
    let my = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
    let ss_tot: f64 = points.iter().map(|(_, y)| (y - my).powi(2)).sum();
    let ss_res: f64 = points.iter().map(|(x, y)| (y - t0 - t1 * x).powi(2)).sum();
    let r2 = if ss_tot > 0.0 { 1.0 - ss_res / ss_tot } else { 1.0 };
    let beta = if t0 + t1 > 0.0 { t1 / (t0 + t1) } else { 0.0 };
    Fit { t0_ns: t0, t1_ns: t1, r2, beta }
}

/// The `COPIES` modules profiled for NF kind `kind`, in chain order: each
/// copy as its NF's file sets it up for profiling ([`sluice_nf::NfConfig::profiling`]).
fn reference_chain(kind: &str) -> Result<Vec<NfSpec>> {
    (0..COPIES)
        .map(|copy| {
            NfSpec::profiling(kind, copy).ok_or_else(|| {
                Error::Profile(format!("no setup for NF '{kind}' (known: {})", NfSpec::profiled_kinds().join(", ")))
            })
        })
        .collect()
}

/// Modules of the profiled kind in series: a few ns of per-batch cost per
/// module is then well above the jitter of the subtracted baseline (with
/// one module, T0 of the cheapest NFs came out anywhere from 0 to 14 ns).
const COPIES: usize = 8;

/// Rounds timed together in one sample, so clock reads and jitter are amortised.
const ROUNDS_PER_SAMPLE: u64 = 32;

/// Mean time of a round of `graph` over one sample (ns, ×[`ROUNDS_PER_SAMPLE`]).
fn round_ns(graph: &mut WorkerGraph, clock: &quanta::Clock) -> u64 {
    let start = clock.raw();
    for _ in 0..ROUNDS_PER_SAMPLE {
        graph.round();
    }
    clock.delta_as_nanos(start, clock.raw())
}

/// Profiles NF kind `kind` at batch sizes 1..=`max_batch`, `reps` samples per size.
/// Rounds with and without the NF alternate, so drift in the machine's
/// speed touches both quartiles alike. Ends early with [`Error::Stopped`]
/// once `stop` returns true (asked every few milliseconds).
pub fn profile(kind: &str, max_batch: usize, reps: usize, stop: &dyn Fn() -> bool) -> Result<Fit> {
    let copies = reference_chain(kind)?;
    let clock = quanta::Clock::new();
    let reps = reps.max(1);
    let (mut with_ns, mut without_ns) = (vec![0u64; reps], vec![0u64; reps]);
    let mut points = Vec::new();
    for b in 1..=max_batch.clamp(2, MAX_BURST) {
        let mut with = chain(&copies, FLOWS, b, false)?;
        let mut without = chain(&[], FLOWS, b, false)?;
        for _ in 0..reps / 4 {
            round_ns(&mut with, &clock);
            round_ns(&mut without, &clock);
        }
        for i in 0..reps {
            if i % 64 == 0 && stop() {
                return Err(Error::Stopped);
            }
            with_ns[i] = round_ns(&mut with, &clock);
            without_ns[i] = round_ns(&mut without, &clock);
        }
        with_ns.sort_unstable();
        without_ns.sort_unstable();
        // Lower quartiles: on a shared machine noise only ever adds time.
        let per_module_run = (with_ns[reps / 4] as f64 - without_ns[reps / 4] as f64) / (ROUNDS_PER_SAMPLE * COPIES as u64) as f64;
        points.push((b as f64, per_module_run));
    }
    Ok(fit(&points))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_line() {
        let f = fit(&[(1.0, 12.0), (2.0, 14.0), (3.0, 16.0), (4.0, 18.0)]);
        assert!((f.t0_ns - 10.0).abs() < 1e-9 && (f.t1_ns - 2.0).abs() < 1e-9 && (f.r2 - 1.0).abs() < 1e-12);
        assert!((f.beta - 2.0 / 12.0).abs() < 1e-12);
        let f = fit(&[(1.0, 1.0), (2.0, 4.0), (3.0, 7.0)]);
        assert_eq!(f.t0_ns, 0.0, "a negative intercept is clamped");
        assert_eq!(f.t1_ns, 2.0, "refitted through the origin: the median of y/x");
        let f = fit(&[(1.0, 9.0), (2.0, 8.0)]);
        assert_eq!((f.t0_ns, f.t1_ns), (8.5, 0.0), "a negative slope is clamped");
        let f = fit(&[(1.0, 12.0), (2.0, 14.0), (3.0, 90.0), (4.0, 18.0), (5.0, 20.0)]);
        assert!((f.t0_ns - 10.0).abs() < 1e-9 && (f.t1_ns - 2.0).abs() < 1e-9, "one wild point does not move the line");
    }

    #[test]
    fn every_kind_has_a_setup_that_builds_and_passes_its_traffic() {
        let traffic = crate::chain::reference_frames(FLOWS).unwrap();
        let mut h = sluice_core::harness::Harness::default();
        for kind in NfSpec::profiled_kinds() {
            let mut frames = traffic.clone();
            for (copy, spec) in reference_chain(kind).unwrap().iter().enumerate() {
                let mut nf = spec.build().unwrap();
                let mut out = h.run(nf.as_mut(), &frames);
                assert_eq!((out.dropped, out.gates[0].len()), (0, traffic.len()), "{kind} copy {copy} drops or diverts its profiling traffic");
                if kind == "static_nat" {
                    assert_ne!(out.gates[0], frames, "NAT copy {copy} translates nothing");
                }
                frames = std::mem::take(&mut out.gates[0]);
            }
        }
    }
}
