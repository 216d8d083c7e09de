//! `type_check(ether_type)`: frames of one EtherType to gate 0, the rest dropped.

use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ethernet::Frame;

/// Passes frames whose outer EtherType is `ether_type`; drops the others
/// and frames too short to have one.
pub struct TypeCheck {
    ether_type: u16,
}

impl TypeCheck {
    /// A check for `ether_type` (0x0800 IPv4, 0x8100 802.1Q, …).
    pub fn new(ether_type: u16) -> Self {
        Self { ether_type }
    }
}

impl NetworkFunction for TypeCheck {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let wanted = self.ether_type;
        keep_or_drop(ctx, input, out, |ctx, id| Frame::new_checked(ctx.pool.data(id)).is_ok_and(|f| f.outer_type() == wanted));
    }
}

/// `type_check`: frames of one EtherType to gate 0, the rest dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeCheckSpec {
    /// The EtherType (2048 = 0x0800 IPv4, 33024 = 0x8100 802.1Q).
    #[serde(default = "ipv4")]
    pub ether_type: u16,
}

fn ipv4() -> u16 {
    sluice_core::wire::ethernet::ETHERTYPE_IPV4
}

impl crate::NfConfig for TypeCheckSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(TypeCheck::new(self.ether_type)))
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { ether_type: ipv4() })
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { ether_type: ipv4() }]
    }
}
