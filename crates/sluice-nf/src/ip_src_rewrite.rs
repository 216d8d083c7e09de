//! `ip_src_rewrite(addr)`: sets the IPv4 source address; IPv6 passes unchanged.

use sluice_core::DropReason;
use sluice_core::wire::{ip_of_mut, l4, Ip};
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

/// Rewrites the source address, updating IPv4 and UDP/TCP checksums
/// incrementally; IPv6 packets pass unchanged, non-IP and malformed ones
/// are dropped.
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
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| {
            let mut ip = match ip_of_mut(ctx.pool.data_mut(id)) {
                Ok(Ip::V4(ip)) => ip,
                Ok(Ip::V6(_)) => return true,
                Err(_) => return false,
            };
            let (old, proto) = (ip.src(), ip.protocol());
            ip.set_src(addr);
            l4::update_for_address(proto, ip.payload_mut(), old, addr);
            true
        });
    }
}

/// `ip_src_rewrite`: sets the IPv4 source address (checksums updated); IPv6 passes unchanged.
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
