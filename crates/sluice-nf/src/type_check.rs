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
