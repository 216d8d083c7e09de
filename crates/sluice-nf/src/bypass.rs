//! `Bypass(cycles_per_batch, cycles_per_packet)`: burns CPU time, forwards everything.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, Profile};

/// Spins for `cycles_per_batch + cycles_per_packet · b` cycles of a nominal
/// [`CYCLES_PER_NS`] clock per batch of b packets, then forwards the batch
/// to gate 0: a stand-in for an NF of known cost (Batchy's Bypass module).
pub struct Bypass {
    cost: Profile,
}

impl Bypass {
    /// A bypass that costs the given (nominal) cycles per batch and per packet.
    pub fn new(cycles_per_batch: u64, cycles_per_packet: u64) -> Self {
        Self { cost: profile(cycles_per_batch, cycles_per_packet) }
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
            // quanta's global clock, detected and calibrated once a process (a
            // clock of its own for each of MGW(64, 250)'s Bypasses took 2 s of cpuid).
            let (start, cost) = (quanta::Instant::now(), std::time::Duration::from_nanos(ns));
            while start.elapsed() < cost {
                std::hint::spin_loop();
            }
        }
        out.forward(0, input);
    }
}

/// Most cycles one Bypass run may burn (of the nominal clock: 0.1 s).
pub const MAX_BYPASS_CYCLES: u64 = 260_000_000;

/// `bypass`: burns `cycles_per_batch + cycles_per_packet · b` cycles of a
/// nominal 2.6 GHz clock per batch of b packets, then forwards it (a
/// stand-in for an NF of known cost).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BypassSpec {
    /// Cycles per batch (nominal 2.6 GHz clock).
    pub cycles_per_batch: u64,
    /// Cycles per packet (nominal 2.6 GHz clock).
    pub cycles_per_packet: u64,
}

impl BypassSpec {
    fn check(&self) -> Result<(), String> {
        let (batch, packet) = (self.cycles_per_batch, self.cycles_per_packet);
        if batch > MAX_BYPASS_CYCLES || packet.saturating_mul(sluice_core::MAX_BURST as u64) > MAX_BYPASS_CYCLES {
            return Err(format!("{batch} cycles a batch and {packet} a packet: a batch may take at most {MAX_BYPASS_CYCLES} cycles"));
        }
        Ok(())
    }
}

impl crate::NfConfig for BypassSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.check()?;
        Ok(Box::new(Bypass::new(self.cycles_per_batch, self.cycles_per_packet)))
    }

    fn build_modelled(&self, _interfaces: &std::sync::Arc<crate::interfaces::Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        self.check()?;
        Ok(Box::new(Bypass::new(0, 0)))
    }

    /// A Bypass that burns no cycles implies none: nothing to control.
    fn intrinsic_profile(&self) -> Option<Profile> {
        match (self.cycles_per_batch, self.cycles_per_packet) {
            (0, 0) => None,
            (batch, packet) => Some(profile(batch, packet)),
        }
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { cycles_per_batch: 1000, cycles_per_packet: 0 })
    }
}
