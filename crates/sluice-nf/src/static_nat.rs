//! `static_nat(inside, outside)`: prefix-to-prefix address translation, both ways.

use sluice_core::DropReason;
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ipv4::{mask, parse_prefix};
use sluice_core::wire::{ip_of_mut, l4, Ip};

/// Rewrites a source inside `inside` to the same host in `outside`, and a
/// destination inside `outside` back to `inside`; IPv4 and UDP/TCP
/// checksums are updated incrementally. IPv6 packets (no NAT66) and IPv4
/// ones outside both prefixes pass unchanged; non-IP and malformed packets
/// are dropped.
pub struct StaticNat {
    inside: u32,
    outside: u32,
    mask: u32,
}

impl StaticNat {
    /// A translation between two prefixes of one length ("10.0.0.0/24", "20.0.0.0/24").
    pub fn new(inside: &str, outside: &str) -> Result<Self, String> {
        let (i, il) = parse_prefix(inside)?;
        let (o, ol) = parse_prefix(outside)?;
        if il != ol {
            return Err(format!("NAT prefixes {inside} and {outside} differ in length"));
        }
        Ok(Self { inside: i, outside: o, mask: mask(il) })
    }

    #[inline]
    fn map(&self, addr: u32, from: u32, to: u32) -> Option<u32> {
        (addr & self.mask == from).then_some(to | (addr & !self.mask))
    }
}

impl NetworkFunction for StaticNat {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| {
            let mut ip = match ip_of_mut(ctx.pool.data_mut(id)) {
                Ok(Ip::V4(ip)) => ip,
                Ok(Ip::V6(_)) => return true,
                Err(_) => return false,
            };
            let proto = ip.protocol();
            let (src, dst) = (ip.src(), ip.dst());
            if let Some(new) = self.map(src, self.inside, self.outside) {
                ip.set_src(new);
                l4::update_for_address(proto, ip.payload_mut(), src, new);
            }
            if let Some(new) = self.map(dst, self.outside, self.inside) {
                ip.set_dst(new);
                l4::update_for_address(proto, ip.payload_mut(), dst, new);
            }
            true
        });
    }
}

/// `static_nat`: prefix-to-prefix translation, sources in `inside` to
/// `outside`, destinations back.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticNatSpec {
    /// Inside prefix ("a.b.c.d/len").
    pub inside: String,
    /// Outside prefix of the same length.
    pub outside: String,
}

impl crate::NfConfig for StaticNatSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(StaticNat::new(&self.inside, &self.outside)?))
    }

    /// Every other copy maps back, so that every copy translates the
    /// source address, as the one NAT of a real pipeline does.
    fn profiling(copy: usize) -> Option<Self> {
        let (inside, outside) = ("10.0.0.0/24".to_string(), "20.0.0.0/24".to_string());
        Some(if copy.is_multiple_of(2) { Self { inside, outside } } else { Self { inside: outside, outside: inside } })
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { inside: "10.0.0.0/8".into(), outside: "100.0.0.0/8".into() }]
    }
}
