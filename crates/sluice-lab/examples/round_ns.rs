//! Prints the time of one walker round (ns) of each round-cost workload at
//! each batch size, timing on and off, as CSV: for A/B runs of two builds.
//!
//!     round_ns [REPEATS]

use sluice_lab::round_cost::{round_ns, workload, CASES};

fn main() {
    let repeats: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    println!("case,timing,batch,ns");
    for case in CASES {
        for timing in [true, false] {
            for batch in [1, 2, 4, 8, 16, 32, 64, 128, 256] {
                let ns = (0..repeats).map(|_| round_ns(&mut workload(case, batch, timing).expect("a known workload"))).fold(f64::INFINITY, f64::min);
                println!("{case},{timing},{batch},{ns:.1}");
            }
        }
    }
}
