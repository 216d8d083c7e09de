//! `Bypass(cycles_per_batch, cycles_per_packet)`: burns CPU time, forwards everything.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

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
