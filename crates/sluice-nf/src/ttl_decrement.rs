//! `ttl_decrement`: IPv4 TTL or IPv6 hop limit minus one (IPv4's checksum
//! updated incrementally); expired, non-IP and malformed packets to the
//! drop gate.

use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ip_of_mut;

/// Decrements the TTL or hop limit; a packet that arrives with 1 or 0 expires here.
#[derive(Default)]
pub struct TtlDecrement;

impl NetworkFunction for TtlDecrement {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, |ctx, id| match ip_of_mut(ctx.pool.data_mut(id)) {
            Ok(mut ip) if ip.hop_limit() > 1 => {
                let left = ip.hop_limit() - 1;
                ip.set_hop_limit(left);
                true
            }
            _ => false,
        });
    }
}

/// `ttl_decrement`: IPv4 TTL or IPv6 hop limit minus one, IPv4's checksum updated; expired packets dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TtlDecrementSpec {}

impl crate::NfConfig for TtlDecrementSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(TtlDecrement))
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self {})
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self {}]
    }
}
