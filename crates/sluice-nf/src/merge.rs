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
