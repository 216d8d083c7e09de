//! [`NfConfig`]: what an NF's own file says of it — its configuration as
//! descriptions write it (the serde type, whose doc comment is the NF's
//! documentation and whose JSON Schema the Python API is generated from),
//! its gates, how it is built and how the profiler and the fuzzer set it up.
//! The registry in `lib.rs` turns the configurations into [`crate::NfSpec`].

use std::sync::Arc;

use sluice_core::{NetworkFunction, Profile};

use crate::interfaces::Interfaces;

/// One NF's configuration. Only [`NfConfig::build`] is required; the rest
/// say what the walker, the run and the tools need to know before it runs.
pub trait NfConfig {
    /// Builds the NF, or says what is wrong with the configuration.
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String>;

    /// Builds the NF in a pipeline of `interfaces`: an NF that names an
    /// interface finds it there (see [`crate::interfaces`]); the rest need none.
    fn build_on(&self, _interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        self.build()
    }

    /// Builds the NF for a simulator, which charges time by the cost model
    /// (an NF that only burns time becomes a free pass-through).
    fn build_modelled(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(interfaces)
    }

    /// Number of outgates the NF will have (0 when the configuration is invalid).
    fn outgates(&self) -> usize {
        1
    }

    /// Number of ingates the NF will have.
    fn ingates(&self) -> usize {
        1
    }

    /// Entries of the NF's table (routes, rules, keys, weights), checked
    /// against [`sluice_core::limits::MAX_TABLE_ENTRIES`] before it is built.
    fn table_entries(&self) -> usize {
        0
    }

    /// The queue the walker keeps in front of the module (pkt), for a task boundary.
    fn queue_capacity(&self) -> Option<usize> {
        None
    }

    /// The most packets the NF keeps between runs (pkt).
    fn most_held(&self) -> usize {
        0
    }

    /// The bound of the hold time the run's hold controller sets (ns), for
    /// an NF whose hold the run controls.
    fn max_hold_ns(&self) -> Option<u64> {
        None
    }

    /// What the slots of the NF's own counters count, in order (see
    /// [`NetworkFunction::read_counters`]); empty for NFs that keep none.
    fn counter_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The cost model the NF's own parameters imply (ns), if they imply one.
    fn intrinsic_profile(&self) -> Option<Profile> {
        None
    }

    /// The configuration of copy `copy` (0, 1, …) in the profiler's chain,
    /// for NFs the profiler measures (None: it does not). The profiler's
    /// traffic is [`PROFILE_FLOWS`] UDP flows, flow i from 10.0.0.1 to
    /// 20.0.(i+1).1; a setup must pass all of it on gate 0.
    fn profiling(_copy: usize) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }

    /// Configurations the fuzzer runs on arbitrary frames (for NFs that parse packets).
    fn fuzz_samples() -> Vec<Self>
    where
        Self: Sized,
    {
        Vec::new()
    }
}

/// Flows of the profiler's traffic (flow i: 10.0.0.1 → 20.0.(i+1).1, UDP).
pub const PROFILE_FLOWS: usize = 32;

/// Outgates a table needs: one past the highest gate it names (0 when it names none).
pub(crate) fn gate_count(gates: impl IntoIterator<Item = u16>, default: Option<u16>) -> usize {
    gates.into_iter().chain(default).max().map_or(0, |g| g as usize + 1)
}

/// Parses a dotted IPv4 address into an integer.
pub(crate) fn parse_ip(s: &str) -> Result<u32, String> {
    s.parse::<std::net::Ipv4Addr>().map(u32::from).map_err(|_| format!("'{s}' is not an IPv4 address"))
}
