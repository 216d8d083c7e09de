//! The largest values a pipeline description may ask for. Everything a
//! run allocates is sized from validated numbers within these bounds, so a
//! description that passes validation cannot ask for terabytes or
//! overflow a counter; a value beyond one is refused with an error that
//! names the field, the value and the bound.

/// Workers a pipeline runs on, spare ones included (each is a thread).
pub const MAX_WORKERS: usize = 256;
/// Modules of a pipeline (MGW(64, 250), the largest reference pipeline, has 96 147).
pub const MAX_MODULES: usize = 1 << 17;
/// Flows of a pipeline: flow ids are 16 bits, and one value means "none".
pub const MAX_FLOWS: usize = crate::packet::NO_FLOW as usize;
/// Ingates or outgates of one module (MGW(64, 250)'s merges have 16 000
/// ingates; each outgate holds a batch of 1 KiB).
pub const MAX_GATES: usize = 1 << 16;
/// Entries of one NF's table (routes, rules, exact-match keys).
pub const MAX_TABLE_ENTRIES: usize = 1 << 20;
/// Packet buffers of one worker's pool (pkt; 2 KiB each: 128 MiB).
pub const MAX_POOL_BUFFERS: usize = 1 << 16;
/// Packet buffers of all the workers' pools together (pkt; 2 GiB).
pub const MAX_ARENA_BUFFERS: usize = 1 << 20;
/// Control periods of one run (warm-up included): a day of 1 ms periods.
pub const MAX_PERIODS: usize = 86_400_000;
/// Length of a control period (ns): an hour.
pub const MAX_PERIOD_NS: u64 = 3_600_000_000_000;
/// An offered rate (pkt/s): far beyond any link, and low enough that the
/// packets of a period count exactly in a double.
pub const MAX_RATE_PPS: f64 = 1e12;

/// `value` of `field` if it is within `1..=max` (or `0..=max` when `zero`
/// is allowed), else the error naming both.
pub fn check_count(field: &str, value: usize, zero: bool, max: usize) -> Result<usize, String> {
    let min = usize::from(!zero);
    if value < min || value > max {
        return Err(format!("{field}: {value} is out of range {min}..={max}"));
    }
    Ok(value)
}

/// Whether `pps` is a rate a source can be set to: > 0, at most [`MAX_RATE_PPS`], or infinite (unlimited).
pub fn check_rate(field: &str, pps: f64) -> Result<f64, String> {
    if pps == f64::INFINITY || pps > 0.0 && pps <= MAX_RATE_PPS {
        return Ok(pps);
    }
    Err(format!("{field}: rate {pps} pkt/s must be > 0 and ≤ {MAX_RATE_PPS:e}"))
}
