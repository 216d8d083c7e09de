//! `mac_rewrite(src, dst)`: sets both Ethernet addresses (next-hop rewrite).

use sluice_core::DropReason;
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ethernet::{parse_mac, Frame, Mac};

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
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| match Frame::new_checked(ctx.pool.data_mut(id)) {
            Ok(mut f) => {
                f.set_src(self.src);
                f.set_dst(self.dst);
                true
            }
            Err(_) => false,
        });
    }
}

/// `mac_rewrite`: sets source and destination MAC.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MacRewriteSpec {
    /// New source MAC.
    pub src: String,
    /// New destination MAC.
    pub dst: String,
}

impl crate::NfConfig for MacRewriteSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(MacRewrite::new(parse_mac(&self.src)?, parse_mac(&self.dst)?)))
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { src: "02:00:00:00:01:01".into(), dst: "02:00:00:00:02:02".into() })
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { src: "02:00:00:00:00:01".into(), dst: "02:00:00:00:00:02".into() }]
    }
}
