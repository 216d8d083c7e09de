//! `vlan_pop` and `vlan_push(id)`: remove or add an 802.1Q tag.

use sluice_core::DropReason;
use sluice_core::wire::ethernet::{Frame, ETHERTYPE_VLAN, VLAN_LEN};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Bytes of the two MAC addresses that move when a tag comes or goes.
const MACS: usize = 12;

/// Removes the 802.1Q tag; untagged or truncated frames are dropped.
#[derive(Default)]
pub struct VlanPop;

impl NetworkFunction for VlanPop {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            let tagged = Frame::new_checked(ctx.pool.data(id)).is_ok_and(|f| f.vlan_id().is_some());
            if !tagged {
                ctx.drop_packet(id, DropReason::Malformed);
                continue;
            }
            ctx.pool.data_mut(id).copy_within(0..MACS, VLAN_LEN);
            ctx.pool.strip(id, VLAN_LEN);
            out.push(0, id);
        }
        input.clear();
    }
}

/// Adds an 802.1Q tag with VLAN id `id` (priority 0); frames without room
/// in the headroom, or too short to be Ethernet, are dropped.
pub struct VlanPush {
    tci: u16,
}

impl VlanPush {
    /// A push of VLAN id `vlan` (0..=4095).
    pub fn new(vlan: u16) -> Result<Self, String> {
        if vlan > 0x0fff {
            return Err(format!("VLAN id {vlan} is not within 0..=4095"));
        }
        Ok(Self { tci: vlan })
    }
}

impl NetworkFunction for VlanPush {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            if Frame::new_checked(ctx.pool.data(id)).is_err() || !ctx.pool.prepend(id, VLAN_LEN) {
                ctx.drop_packet(id, DropReason::Malformed);
                continue;
            }
            let data = ctx.pool.data_mut(id);
            data.copy_within(VLAN_LEN..VLAN_LEN + MACS, 0);
            data[MACS..MACS + 2].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
            data[MACS + 2..MACS + 4].copy_from_slice(&self.tci.to_be_bytes());
            out.push(0, id);
        }
        input.clear();
    }
}

/// `vlan_pop`: removes the 802.1Q tag; untagged frames are dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VlanPopSpec {}

impl crate::NfConfig for VlanPopSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(VlanPop))
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self {}]
    }
}

/// `vlan_push`: adds an 802.1Q tag with VLAN id `vlan` (priority 0).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VlanPushSpec {
    /// VLAN id (0..=4095).
    pub vlan: u16,
}

impl crate::NfConfig for VlanPushSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(VlanPush::new(self.vlan)?))
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { vlan: 7 }]
    }
}
