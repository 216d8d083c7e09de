//! `ip_src_rewrite(addr)`: sets the IPv4 source address.

use sluice_core::wire::{ipv4_of_mut, l4};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

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
        for &id in input.as_slice() {
            let Ok(mut ip) = ipv4_of_mut(ctx.pool.data_mut(id)) else {
                ctx.drop_packet(id);
                continue;
            };
            let (old, proto) = (ip.src(), ip.protocol());
            ip.set_src(self.addr);
            l4::update_for_address(proto, ip.payload_mut(), old, self.addr);
            out.push(0, id);
        }
        input.clear();
    }
}
