//! `interface_split(interfaces)`: sends each packet out of the gate of the
//! interface it arrived on — gate i for the i-th interface it names — so
//! that what answers a packet (an ICMP error) leaves where the packet came
//! in. Packets that arrived on none of them go to the drop gate.

use sluice_core::DropReason;
use std::sync::Arc;

use sluice_core::packet::NO_PORT;
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

use crate::interfaces::Interfaces;

/// Sends each packet to the gate of the interface it arrived on.
pub struct InterfaceSplit {
    /// Per interface index (a packet's port), its gate.
    gate_of: Vec<Option<u16>>,
    gates: usize,
}

impl NetworkFunction for InterfaceSplit {
    fn outgates(&self) -> usize {
        self.gates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            match self.gate_of.get(usize::from(ctx.pool.meta(id).port)).copied().flatten() {
                Some(gate) => out.push(usize::from(gate), id),
                None => ctx.drop_packet(id, DropReason::NotOurs),
            }
        }
        input.clear();
    }
}

/// `interface_split`: gate i for the packets that arrived on the i-th
/// interface named (an ICMP error back out the way its packet came); the
/// rest to the drop gate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterfaceSplitSpec {
    /// The interfaces, by their names in the description's `interfaces`, in gate order.
    pub interfaces: Vec<String>,
}

impl crate::NfConfig for InterfaceSplitSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(&Interfaces::none())
    }

    fn build_on(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        if self.interfaces.is_empty() {
            return Err("an interface split needs at least one interface".into());
        }
        let mut gate_of = vec![None; interfaces.all().len()];
        for (gate, name) in self.interfaces.iter().enumerate() {
            let index = usize::from(interfaces.named(name)?.index);
            if gate_of[index].replace(gate as u16).is_some() {
                return Err(format!("interface '{name}' is named twice"));
            }
        }
        debug_assert!(gate_of.len() < usize::from(NO_PORT));
        Ok(Box::new(InterfaceSplit { gate_of, gates: self.interfaces.len() }))
    }

    fn outgates(&self) -> usize {
        self.interfaces.len()
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { interfaces: vec![crate::interfaces::FUZZ_INTERFACE.into(), "sample1".into()] }]
    }
}
