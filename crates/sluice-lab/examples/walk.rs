//! Runs walker rounds of a round-cost workload (see
//! `sluice_lab::round_cost`): a fixed workload for instruction counts
//! (`valgrind --tool=callgrind --toggle-collect='walk::run_rounds'`
//! counts the rounds alone) and for timing against another engine
//! (`scripts/fastclick.py`). A pass over the workload's frames warms up
//! first; it prints the packets the ROUNDS rounds after it moved and their
//! time (ns).
//!
//!     walk [CASE: replay|chain|branch4] [B] [ROUNDS] [timing: on|off]

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let case = arg(1).unwrap_or_else(|| "chain".into());
    let batch: usize = arg(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let rounds: usize = arg(3).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let timing = arg(4).is_none_or(|a| a != "off");
    let mut g = sluice_lab::round_cost::workload(&case, batch, timing).unwrap_or_else(|e| {
        eprintln!("walk: {e}");
        std::process::exit(2)
    });
    for _ in 0..sluice_lab::round_cost::FLOWS.div_ceil(batch) {
        g.next_round();
    }
    let start = std::time::Instant::now();
    let moved = run_rounds(&mut g, rounds);
    let ns = start.elapsed().as_nanos();
    println!("{moved} packets in {rounds} rounds, {ns} ns");
}

/// The rounds alone, for `--toggle-collect='walk::run_rounds'`.
#[inline(never)]
fn run_rounds(g: &mut sluice_core::WorkerGraph, rounds: usize) -> usize {
    (0..rounds).map(|_| g.next_round()).sum()
}
