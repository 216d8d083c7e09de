//! `ttl_decrement`: IPv4 TTL or IPv6 hop limit minus one (IPv4's checksum
//! updated incrementally). A packet that arrives with 1 or 0 expires here:
//! dropped, or, with `icmp`, answered with a time exceeded (RFC 1812
//! §5.3.1, RFC 4443 §3.3) from the interface it came in on, which leaves by
//! gate 1 (see [`crate::icmp_error`]). Non-IP and malformed packets go to
//! the drop gate.

use sluice_core::DropReason;
use std::sync::Arc;

use sluice_core::wire::ip_of_mut;
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

use crate::icmp_error::{self, ErrorSource, IcmpError};
use crate::interfaces::Interfaces;

/// Gate of the time-exceeded errors, with `icmp`.
pub const ICMP: usize = 1;

/// Decrements the TTL or hop limit; a packet that arrives with 1 or 0 expires here.
pub struct TtlDecrement {
    /// Where expired packets' errors come from; `None`: expired packets are dropped.
    icmp: Option<Arc<Interfaces>>,
    /// The IPv4 identification of its next error.
    ident: u16,
}

impl TtlDecrement {
    /// Expired packets dropped, or (`icmp`) answered from their interface of `interfaces`.
    pub fn new(icmp: Option<Arc<Interfaces>>) -> Self {
        Self { icmp, ident: 0x7700 }
    }
}

impl NetworkFunction for TtlDecrement {
    fn outgates(&self) -> usize {
        1 + usize::from(self.icmp.is_some())
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let icmp = self.icmp.as_deref();
        for &id in input.as_slice() {
            match ip_of_mut(ctx.pool.data_mut(id)) {
                Ok(mut ip) if ip.hop_limit() > 1 => {
                    let left = ip.hop_limit() - 1;
                    ip.set_hop_limit(left);
                    out.push(0, id);
                }
                Ok(_) => {
                    let came_in = icmp.and_then(|interfaces| Some((interfaces, interfaces.get(ctx.pool.meta(id).port)?)));
                    let answered = came_in.is_some_and(|(interfaces, interface)| {
                        let from = ErrorSource { interface, address: None, ident: &mut self.ident };
                        icmp_error::report(ctx, id, IcmpError::TimeExceeded, from, &interfaces.icmp).is_ok()
                    });
                    if answered {
                        out.push(ICMP, id);
                    } else {
                        ctx.drop_packet(id, DropReason::TtlExpired);
                    }
                }
                Err(_) => ctx.drop_packet(id, DropReason::Malformed),
            }
        }
        input.clear();
    }
}

/// `ttl_decrement`: IPv4 TTL or IPv6 hop limit minus one, IPv4's checksum
/// updated; expired packets dropped, or with `icmp` answered with a time
/// exceeded by gate 1.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TtlDecrementSpec {
    /// Answer expired packets with a time exceeded from the interface they
    /// came in on, out of gate 1 (the description's `interfaces` say their
    /// addresses); else drop them.
    #[serde(default)]
    pub icmp: bool,
}

impl crate::NfConfig for TtlDecrementSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(&Interfaces::none())
    }

    fn build_on(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(TtlDecrement::new(self.icmp.then(|| interfaces.clone()))))
    }

    fn outgates(&self) -> usize {
        1 + usize::from(self.icmp)
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { icmp: false })
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { icmp: false }, Self { icmp: true }]
    }
}
