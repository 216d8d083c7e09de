//! `random_split(weights)`: sends each packet to a gate drawn by weight.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Splits traffic at random: packet by packet, gate i with probability
/// `weights[i] / Σ weights` (the robot-control pipeline's splitter).
pub struct RandomSplit {
    /// Upper bound of each gate's share of the u32 range, ascending.
    thresholds: Vec<u32>,
    rng: SmallRng,
}

impl RandomSplit {
    /// A splitter over `weights.len()` gates; weights must be ≥ 0 with a positive sum.
    pub fn new(weights: &[f64], seed: u64) -> Result<Self, String> {
        let total: f64 = weights.iter().sum();
        if weights.is_empty() || weights.iter().any(|w| !(*w >= 0.0)) || !(total > 0.0) || !total.is_finite() {
            return Err(format!("random split weights {weights:?} must be ≥ 0 with a positive, finite sum"));
        }
        let mut acc = 0.0;
        let mut thresholds: Vec<u32> = weights
            .iter()
            .map(|w| {
                acc += w / total;
                (acc * u32::MAX as f64).round().min(u32::MAX as f64) as u32
            })
            .collect();
        *thresholds.last_mut().expect("non-empty") = u32::MAX;
        Ok(Self { thresholds, rng: SmallRng::seed_from_u64(seed) })
    }
}

impl NetworkFunction for RandomSplit {
    fn outgates(&self) -> usize {
        self.thresholds.len()
    }

    fn process(&mut self, _ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            let draw: u32 = self.rng.gen();
            let gate = self.thresholds.partition_point(|&t| t < draw);
            out.push(gate, id);
        }
        input.clear();
    }
}

/// `random_split`: sends each packet to gate i with probability
/// `weights[i] / Σ weights`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RandomSplitSpec {
    /// One weight per outgate (≥ 0, positive sum).
    pub weights: Vec<f64>,
    /// RNG seed (deterministic runs).
    #[serde(default)]
    pub seed: u64,
}

impl crate::NfConfig for RandomSplitSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(RandomSplit::new(&self.weights, self.seed)?))
    }

    fn outgates(&self) -> usize {
        self.weights.len()
    }

    fn table_entries(&self) -> usize {
        self.weights.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_weights() {
        assert!(RandomSplit::new(&[], 1).is_err());
        assert!(RandomSplit::new(&[0.0, 0.0], 1).is_err());
        assert!(RandomSplit::new(&[1.0, f64::NAN], 1).is_err());
        assert!(RandomSplit::new(&[1.0, -1.0], 1).is_err());
    }

    #[test]
    fn shares_follow_weights() {
        let mut s = RandomSplit::new(&[1.0, 3.0, 0.0], 7).unwrap();
        let mut counts = [0usize; 3];
        for _ in 0..100_000 {
            let draw: u32 = s.rng.gen();
            counts[s.thresholds.partition_point(|&t| t < draw)] += 1;
        }
        assert_eq!(counts[2], 0);
        assert!((counts[1] as f64 / 100_000.0 - 0.75).abs() < 0.01, "{counts:?}");
    }
}

