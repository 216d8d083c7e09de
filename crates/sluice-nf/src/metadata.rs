//! `set_metadata(value)` and `split_by_metadata(table)`: tag packets, then
//! steer them by the tag (the packet's mark).

use sluice_core::DropReason;
use std::collections::HashMap;

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Sets every packet's mark to `value`.
pub struct SetMetadata {
    value: u32,
}

impl SetMetadata {
    /// Marks packets with `value`.
    pub fn new(value: u32) -> Self {
        Self { value }
    }
}

impl NetworkFunction for SetMetadata {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            ctx.pool.meta_mut(id).mark = self.value;
        }
        out.forward(0, input);
    }
}

/// Sends each packet to the gate its mark maps to; unknown marks go to
/// `default` or are dropped.
pub struct SplitByMetadata {
    table: HashMap<u32, u16>,
    default: Option<u16>,
    gates: usize,
}

impl SplitByMetadata {
    /// A split over `(mark, gate)` entries.
    pub fn new(entries: &[(u32, u16)], default: Option<u16>) -> Result<Self, String> {
        let mut table = HashMap::new();
        for &(k, g) in entries {
            if table.insert(k, g).is_some() {
                return Err(format!("mark {k} appears twice"));
            }
        }
        let gates = crate::nf_config::gate_count(entries.iter().map(|e| e.1), default);
        if gates == 0 {
            return Err("a metadata split needs an entry or a default gate".into());
        }
        Ok(Self { table, default, gates })
    }
}

impl NetworkFunction for SplitByMetadata {
    fn outgates(&self) -> usize {
        self.gates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            match self.table.get(&ctx.pool.meta(id).mark).copied().or(self.default) {
                Some(gate) => out.push(gate as usize, id),
                None => ctx.drop_packet(id, DropReason::Denied),
            }
        }
        input.clear();
    }
}

/// `set_metadata`: sets every packet's mark to `value`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMetadataSpec {
    /// The mark.
    pub value: u32,
}

impl crate::NfConfig for SetMetadataSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(SetMetadata::new(self.value)))
    }
}

/// `split_by_metadata`: steers packets by their mark; unknown marks to
/// `default_gate`, or dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitByMetadataSpec {
    /// (mark, gate) entries.
    pub table: Vec<(u32, u16)>,
    /// Gate of unknown marks (absent: drop them).
    #[serde(default)]
    pub default_gate: Option<u16>,
}

impl crate::NfConfig for SplitByMetadataSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(SplitByMetadata::new(&self.table, self.default_gate)?))
    }

    fn outgates(&self) -> usize {
        crate::nf_config::gate_count(self.table.iter().map(|e| e.1), self.default_gate)
    }

    fn table_entries(&self) -> usize {
        self.table.len()
    }
}
