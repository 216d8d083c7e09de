//! Runs walker rounds of a 10-module Bypass(0,0) chain at B = 32: a fixed
//! workload for instruction counts (`valgrind --tool=callgrind`).
//!
//!     walk [ROUNDS] [timing: on|off]

use sluice_nf::NfSpec;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let nfs = vec![NfSpec::Bypass { cycles_per_batch: 0, cycles_per_packet: 0 }; 10];
    let timing = std::env::args().nth(2).is_none_or(|a| a != "off");
    let mut g = sluice_pipeline::chain::chain(&nfs, 1, 32, timing).expect("a valid chain");
    let moved: usize = (0..rounds).map(|_| g.round()).sum();
    println!("{moved} packets in {rounds} rounds");
}
