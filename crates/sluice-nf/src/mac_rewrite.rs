//! `mac_rewrite(src, dst)`: sets both Ethernet addresses (next-hop rewrite).

use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ethernet::{Frame, Mac};

/// Rewrites source and destination MAC; frames too short are dropped.
pub struct MacRewrite {
    src: Mac,
    dst: Mac,
}

impl MacRewrite {
    /// A rewrite to `src` → `dst`.
    pub fn new(src: Mac, dst: Mac) -> Self {
        Self { src, dst }
    }
}

impl NetworkFunction for MacRewrite {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, |ctx, id| match Frame::new_checked(ctx.pool.data_mut(id)) {
            Ok(mut f) => {
                f.set_src(self.src);
                f.set_dst(self.dst);
                true
            }
            Err(_) => false,
        });
    }
}
