//! `type_check(ether_type, also)`: frames of the EtherTypes named to gate 0, the rest dropped.

use sluice_core::DropReason;
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ethernet::Frame;

/// Passes frames whose outer EtherType is `ether_type` or one of `also`;
/// drops the others and frames too short to have one.
pub struct TypeCheck {
    ether_type: u16,
    also: Box<[u16]>,
}

impl TypeCheck {
    /// A check for `ether_type` (0x0800 IPv4, 0x86DD IPv6, 0x8100 802.1Q, …).
    pub fn new(ether_type: u16) -> Self {
        Self::passing(ether_type, &[])
    }

    /// A check for `ether_type` and the types of `also` (IPv4 and IPv6: 0x0800, `[0x86DD]`).
    pub fn passing(ether_type: u16, also: &[u16]) -> Self {
        Self { ether_type, also: also.into() }
    }
}

impl NetworkFunction for TypeCheck {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let (wanted, also) = (self.ether_type, &self.also);
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| Frame::new_checked(ctx.pool.data(id)).is_ok_and(|f| f.outer_type() == wanted || also.contains(&f.outer_type())));
    }
}

/// `type_check`: frames of the EtherTypes named to gate 0, the rest dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeCheckSpec {
    /// The EtherType (2048 = 0x0800 IPv4, 34525 = 0x86DD IPv6, 33024 = 0x8100 802.1Q).
    #[serde(default = "ipv4")]
    pub ether_type: u16,
    /// More EtherTypes that pass (a dual-stack router's: `[34525]`).
    #[serde(default)]
    pub also: Vec<u16>,
}

fn ipv4() -> u16 {
    sluice_core::wire::ethernet::ETHERTYPE_IPV4
}

impl crate::NfConfig for TypeCheckSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(TypeCheck::passing(self.ether_type, &self.also)))
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { ether_type: ipv4(), also: Vec::new() })
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { ether_type: ipv4(), also: vec![sluice_core::wire::ethernet::ETHERTYPE_IPV6] }]
    }
}
