//! Sluice's network functions, one file each, and the closed set of their
//! configurations ([`NfSpec`]) from which pipelines build them.
#![warn(missing_docs)]

pub mod bypass;
pub mod random_split;

pub use bypass::Bypass;
pub use random_split::RandomSplit;

use sluice_core::NetworkFunction;

/// The configuration of a network function, as pipeline descriptions carry it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum NfSpec {
    /// Burns CPU cycles per batch and per packet; one outgate.
    Bypass {
        /// TSC cycles per batch.
        cycles_per_batch: u64,
        /// TSC cycles per packet.
        cycles_per_packet: u64,
    },
    /// Sends each packet to a random gate, by weight.
    RandomSplit {
        /// One weight per outgate.
        weights: Vec<f64>,
        /// RNG seed (deterministic runs).
        #[serde(default)]
        seed: u64,
    },
}

impl NfSpec {
    /// Number of outgates the NF will have.
    pub fn outgates(&self) -> usize {
        match self {
            NfSpec::Bypass { .. } => 1,
            NfSpec::RandomSplit { weights, .. } => weights.len(),
        }
    }

    /// Number of ingates the NF will have.
    pub fn ingates(&self) -> usize {
        1
    }

    /// The cost model the NF's own parameters imply (ns), if they imply one.
    pub fn intrinsic_profile(&self) -> Option<sluice_core::Profile> {
        match self {
            NfSpec::Bypass { cycles_per_batch, cycles_per_packet } => Some(bypass::profile(*cycles_per_batch, *cycles_per_packet)),
            NfSpec::RandomSplit { .. } => None,
        }
    }

    /// Builds the NF for a simulator, which charges time by the cost model:
    /// NFs that only burn time become free pass-throughs.
    pub fn build_modelled(&self) -> Result<Box<dyn NetworkFunction>, String> {
        match self {
            NfSpec::Bypass { .. } => Ok(Box::new(Bypass::new(0, 0))),
            other => other.build(),
        }
    }

    /// Builds the NF, or says what is wrong with the configuration.
    pub fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(match self {
            NfSpec::Bypass { cycles_per_batch, cycles_per_packet } => Box::new(Bypass::new(*cycles_per_batch, *cycles_per_packet)),
            NfSpec::RandomSplit { weights, seed } => Box::new(RandomSplit::new(weights, *seed)?),
        })
    }
}
