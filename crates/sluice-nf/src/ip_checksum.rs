//! `ip_checksum`: recomputes the IPv4 header checksum in full.

use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ipv4_of_mut;

/// Fills in the IPv4 header checksum; non-IPv4 and malformed packets are dropped.
#[derive(Default)]
pub struct IpChecksum;

impl NetworkFunction for IpChecksum {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, |ctx, id| match ipv4_of_mut(ctx.pool.data_mut(id)) {
            Ok(mut ip) => {
                ip.fill_checksum();
                true
            }
            Err(_) => false,
        });
    }
}

/// `ip_checksum`: recomputes the IPv4 header checksum.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IpChecksumSpec {}

impl crate::NfConfig for IpChecksumSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(IpChecksum))
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self {})
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self {}]
    }
}
