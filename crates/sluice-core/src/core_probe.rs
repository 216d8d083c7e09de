//! A fixed piece of arithmetic each worker times about once a millisecond.
//!
//! Its time depends on nothing the pipeline does (no memory, no branches
//! on data), only on how much of its core the worker gets. On a shared
//! machine a busy neighbour on the same physical core stretches it (up to
//! 2.4× for a second or so at a time on the two-core VM here). Telemetry
//! reports the mean per period
//! ([`crate::telemetry::WorkerTelemetry::probe_ns`]); experiments use it to
//! tell a controller's effect from the machine's.

/// Time between two probes of a worker (ns).
pub const PROBE_INTERVAL_NS: u64 = 1_000_000;

/// Longest a probe counts for (ns): one that took longer lost its core
/// midway (an interrupt, a preemption), and counted in full that one loss
/// would read as a whole slow period.
pub const PROBE_CAP_NS: u64 = 2_000;

/// The probe's work: eight add/xor chains of 64 steps each, 130 ns on an
/// undisturbed core here. Returns a value the caller must consume, so the
/// work is not optimised away.
#[inline(never)]
pub fn probe_work() -> u64 {
    let mut y = std::hint::black_box([1u64, 2, 3, 4, 5, 6, 7, 8]);
    for i in 0..64u64 {
        for k in 0..8 {
            y[k] = y[k].wrapping_add(y[(k + 1) % 8] ^ i);
        }
    }
    y.iter().fold(0, |a, b| a ^ b)
}
