//! `merge(n)`: n ingates into one outgate.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Joins the traffic of `n` ingates on gate 0.
pub struct Merge {
    ingates: usize,
}

impl Merge {
    /// A merge of `ingates` ingates.
    pub fn new(ingates: usize) -> Self {
        Self { ingates }
    }
}

impl NetworkFunction for Merge {
    fn outgates(&self) -> usize {
        1
    }

    fn ingates(&self) -> usize {
        self.ingates
    }

    fn process(&mut self, _ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        out.forward(0, input);
    }
}

/// `merge`: several ingates into one outgate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    /// Number of ingates (≥ 1).
    pub ingates: usize,
}

impl crate::NfConfig for MergeSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        if self.ingates == 0 {
            return Err("a merge needs at least one ingate".into());
        }
        Ok(Box::new(Merge::new(self.ingates)))
    }

    fn ingates(&self) -> usize {
        self.ingates
    }
}
