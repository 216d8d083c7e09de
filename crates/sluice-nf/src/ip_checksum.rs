//! `ip_checksum`: recomputes the IPv4 header checksum in full (IPv6 has none).

use sluice_core::DropReason;
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::{ip_of_mut, Ip};

/// Fills in the IPv4 header checksum; IPv6 packets pass unchanged, non-IP
/// and malformed ones are dropped.
#[derive(Default)]
pub struct IpChecksum;

impl NetworkFunction for IpChecksum {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| match ip_of_mut(ctx.pool.data_mut(id)) {
            Ok(Ip::V4(mut ip)) => {
                ip.fill_checksum();
                true
            }
            Ok(Ip::V6(_)) => true,
            Err(_) => false,
        });
    }
}

/// `ip_checksum`: recomputes the IPv4 header checksum; IPv6 passes unchanged.
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
