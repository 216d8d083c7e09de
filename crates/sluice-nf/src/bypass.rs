//! `Bypass(cycles_per_batch, cycles_per_packet)`: burns CPU time, forwards everything.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, Profile};

/// Spins for `cycles_per_batch + cycles_per_packet · b` TSC cycles per batch of
/// b packets, then forwards the batch to gate 0: a stand-in for an NF of
/// known cost (Batchy's Bypass module).
pub struct Bypass {
    cycles_per_batch: u64,
    cycles_per_packet: u64,
    clock: quanta::Clock,
}

impl Bypass {
    /// A bypass that costs the given cycles (TSC ticks) per batch and per packet.
    pub fn new(cycles_per_batch: u64, cycles_per_packet: u64) -> Self {
        Self { cycles_per_batch, cycles_per_packet, clock: quanta::Clock::new() }
    }
}

/// Length of one TSC cycle on this machine (ns), as the clock calibrates it.
pub fn ns_per_cycle() -> f64 {
    const CYCLES: u64 = 1 << 40;
    quanta::Clock::new().delta_as_nanos(0, CYCLES) as f64 / CYCLES as f64
}

/// The cost model of `Bypass(cycles_per_batch, cycles_per_packet)` on this machine (ns).
pub fn profile(cycles_per_batch: u64, cycles_per_packet: u64) -> Profile {
    let ns = ns_per_cycle();
    Profile { t0_ns: cycles_per_batch as f64 * ns, t1_ns: cycles_per_packet as f64 * ns }
}

impl NetworkFunction for Bypass {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, _ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let cycles = self.cycles_per_batch + self.cycles_per_packet * input.len() as u64;
        if cycles > 0 {
            let deadline = self.clock.raw().wrapping_add(cycles);
            while self.clock.raw() < deadline {
                std::hint::spin_loop();
            }
        }
        out.forward(0, input);
    }
}
