//! `Bypass(cycles_per_batch, cycles_per_packet)`: burns CPU time, forwards everything.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, Profile};

/// Spins for `cycles_per_batch + cycles_per_packet · b` cycles of a nominal
/// [`CYCLES_PER_NS`] clock per batch of b packets, then forwards the batch
/// to gate 0: a stand-in for an NF of known cost (Batchy's Bypass module).
pub struct Bypass {
    cost: Profile,
    clock: quanta::Clock,
}

impl Bypass {
    /// A bypass that costs the given (nominal) cycles per batch and per packet.
    pub fn new(cycles_per_batch: u64, cycles_per_packet: u64) -> Self {
        Self { cost: profile(cycles_per_batch, cycles_per_packet), clock: quanta::Clock::new() }
    }
}

/// The clock Bypass counts its cycles at (cycles per ns, i.e. GHz): a
/// nominal core's, not this machine's time-stamp counter (2.45 GHz on one
/// machine here, other rates on others). So a Bypass costs the same time on
/// every machine, and the simulator, which runs on its profile, gives the
/// same figures everywhere.
pub const CYCLES_PER_NS: f64 = 2.6;

/// Length of one Bypass cycle (ns).
pub fn ns_per_cycle() -> f64 {
    1.0 / CYCLES_PER_NS
}

/// The cost model of `Bypass(cycles_per_batch, cycles_per_packet)` (ns).
pub fn profile(cycles_per_batch: u64, cycles_per_packet: u64) -> Profile {
    let ns = ns_per_cycle();
    Profile { t0_ns: cycles_per_batch as f64 * ns, t1_ns: cycles_per_packet as f64 * ns }
}

impl NetworkFunction for Bypass {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, _ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        // Bypass(0, 0), the empty module of the walker's benchmarks, spends not even the arithmetic.
        let free = self.cost.t0_ns == 0.0 && self.cost.t1_ns == 0.0;
        let ns = if free { 0 } else { self.cost.cost_ns(input.len() as f64) as u64 };
        if ns > 0 {
            let start = self.clock.raw();
            while self.clock.delta_as_nanos(start, self.clock.raw()) < ns {
                std::hint::spin_loop();
            }
        }
        out.forward(0, input);
    }
}
