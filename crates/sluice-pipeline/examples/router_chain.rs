//! Runs rounds of the router chain (see
//! `sluice_pipeline::chain::router_chain`), its next hop a fixed MAC
//! rewrite or a `next_hop` reading the neighbour table: a fixed workload
//! for instruction counts, which machines do not move. A warm-up of eight
//! passes over the flows first; it prints the packets the ROUNDS rounds
//! after it moved. The rounds' instructions alone, for each hop:
//!
//!     cargo build --release -p sluice-pipeline --example router_chain
//!     valgrind --tool=callgrind --toggle-collect='router_chain::run_rounds' \
//!         target/release/examples/router_chain next_hop 1 40960
//!
//! and callgrind's total over the packets it printed is the instructions a packet.
//!
//!     router_chain [HOP: mac_rewrite|next_hop] [B] [ROUNDS]

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let hop = arg(1).unwrap_or_else(|| "next_hop".into());
    let batch: usize = arg(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let rounds: usize = arg(3).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let mut g = sluice_pipeline::chain::router_chain(&hop, batch).unwrap_or_else(|e| {
        eprintln!("router_chain: {e}");
        std::process::exit(2)
    });
    for _ in 0..(8 * 4096usize).div_ceil(batch) {
        g.round();
    }
    let moved = run_rounds(&mut g, rounds);
    println!("{moved} packets in {rounds} rounds");
}

/// The rounds alone, for `--toggle-collect='router_chain::run_rounds'`.
#[inline(never)]
fn run_rounds(g: &mut sluice_core::WorkerGraph, rounds: usize) -> usize {
    (0..rounds).map(|_| g.round()).sum()
}
