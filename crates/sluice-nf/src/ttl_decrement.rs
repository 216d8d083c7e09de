//! `ttl_decrement`: IPv4 TTL minus one (checksum updated incrementally);
//! expired, non-IPv4 and malformed packets to the drop gate.

use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ipv4_of_mut;

/// Decrements the TTL; a packet that arrives with TTL ≤ 1 expires here.
#[derive(Default)]
pub struct TtlDecrement;

impl NetworkFunction for TtlDecrement {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, |ctx, id| match ipv4_of_mut(ctx.pool.data_mut(id)) {
            Ok(mut ip) if ip.ttl() > 1 => {
                let ttl = ip.ttl() - 1;
                ip.set_ttl(ttl);
                true
            }
            _ => false,
        });
    }
}

/// `ttl_decrement`: IPv4 TTL minus one, checksum updated; expired packets dropped.
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
