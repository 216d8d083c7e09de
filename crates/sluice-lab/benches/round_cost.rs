//! What a walker round costs: criterion times one round of each round-cost
//! workload (replay, chain, branch4; see `sluice_lab::round_cost`) at
//! B = 1, 4, 32, 256, timing on and off, then fits ns per round = T0 +
//! T1·B through the medians of its samples and prints T0 (ns a round) and
//! T1 (ns a packet) per workload, and one NF visit (see `nf_visit_ns`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use sluice_lab::round_cost::{fit, nf_visit_ns, workload, CASES};

const BATCHES: [usize; 4] = [1, 4, 32, 256];
/// Samples criterion takes of each point, after its warm-up.
const SAMPLES: usize = 50;

/// ns per round of every timing criterion took, by (workload, timing, B):
/// its warm-up's, then its [`SAMPLES`] samples.
type Samples = BTreeMap<(&'static str, bool, usize), Vec<f64>>;

fn rounds(c: &mut Criterion, samples: &RefCell<Samples>) {
    for case in CASES {
        for timing in [true, false] {
            let mut group = c.benchmark_group(format!("round_{case}_timing_{}", if timing { "on" } else { "off" }));
            for batch in BATCHES {
                group.throughput(Throughput::Elements(batch as u64));
                group.bench_function(BenchmarkId::from_parameter(batch), |b| {
                    let mut g = workload(case, batch, timing).expect("a round-cost workload");
                    b.iter_custom(|n| {
                        let start = Instant::now();
                        for _ in 0..n {
                            std::hint::black_box(g.next_round());
                        }
                        let took = start.elapsed();
                        samples.borrow_mut().entry((case, timing, batch)).or_default().push(took.as_nanos() as f64 / n as f64);
                        took
                    });
                });
            }
            group.finish();
        }
    }
}

/// The median of the samples, the last [`SAMPLES`] timings (the warm-up's come first).
fn median(timings: &[f64]) -> f64 {
    let mut v = timings[timings.len().saturating_sub(SAMPLES)..].to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let samples = RefCell::new(Samples::new());
    let mut c = Criterion::default().sample_size(SAMPLES).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(2)).configure_from_args();
    rounds(&mut c, &samples);
    c.final_summary();
    let samples = samples.into_inner();
    if samples.is_empty() {
        return; // a filter left nothing to fit
    }
    println!("\n| workload | timing | T0 ns / round | T1 ns / pkt |\n|---|---|---|---|");
    let mut t0 = BTreeMap::new();
    for case in CASES {
        for timing in [true, false] {
            let points: Vec<(f64, f64)> =
                BATCHES.iter().filter_map(|&b| samples.get(&(case, timing, b)).map(|v| (b as f64, median(v)))).collect();
            if points.len() < 2 {
                continue;
            }
            let (a, b) = fit(&points);
            t0.insert((*case, timing), a);
            println!("| {case} | {} | {a:.1} | {b:.2} |", if timing { "on" } else { "off" });
        }
    }
    for timing in [true, false] {
        if let (Some(chain), Some(replay)) = (t0.get(&("chain", timing)), t0.get(&("replay", timing))) {
            println!("NF visit, timing {}: {:.1} ns", if timing { "on" } else { "off" }, nf_visit_ns(*chain, *replay));
        }
    }
}
