//! `ip_src_rewrite(addr)`: sets the IPv4 source address.

use sluice_core::wire::{ipv4_of_mut, l4};
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

/// Rewrites the source address, updating IPv4 and UDP/TCP checksums
/// incrementally; non-IPv4 and malformed packets are dropped.
pub struct IpSrcRewrite {
    addr: u32,
}

impl IpSrcRewrite {
    /// A rewrite to `addr`.
    pub fn new(addr: u32) -> Self {
        Self { addr }
    }
}

impl NetworkFunction for IpSrcRewrite {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let addr = self.addr;
        keep_or_drop(ctx, input, out, |ctx, id| {
            let Ok(mut ip) = ipv4_of_mut(ctx.pool.data_mut(id)) else { return false };
            let (old, proto) = (ip.src(), ip.protocol());
            ip.set_src(addr);
            l4::update_for_address(proto, ip.payload_mut(), old, addr);
            true
        });
    }
}

/// `ip_src_rewrite`: sets the IPv4 source address (checksums updated).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IpSrcRewriteSpec {
    /// The new source address.
    pub addr: String,
}

impl crate::NfConfig for IpSrcRewriteSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(IpSrcRewrite::new(crate::nf_config::parse_ip(&self.addr)?)))
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { addr: "192.0.2.1".into() }]
    }
}
