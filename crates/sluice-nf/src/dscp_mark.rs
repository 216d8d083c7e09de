//! `dscp_mark(dscp)`: sets the DSCP of IPv4 and IPv6 packets, as an edge router marks the
//! class of a flow's packets (RFC 2474).

use sluice_core::DropReason;
use sluice_core::wire::ip_of_mut;
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs};

/// Sets every IP packet's DSCP (ECN bits kept, IPv4's checksum updated
/// incrementally); non-IP and malformed packets are dropped.
pub struct DscpMark {
    dscp: u8,
}

impl DscpMark {
    /// A marker of `dscp` (0..=63).
    pub fn new(dscp: u8) -> Result<Self, String> {
        if dscp > 63 {
            return Err(format!("DSCP {dscp} is outside 0..=63"));
        }
        Ok(Self { dscp })
    }
}

impl NetworkFunction for DscpMark {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let dscp = self.dscp;
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| {
            let Ok(mut ip) = ip_of_mut(ctx.pool.data_mut(id)) else { return false };
            ip.set_dscp(dscp);
            true
        });
    }
}

/// `dscp_mark`: sets the DSCP of IPv4 and IPv6 packets (ECN kept); non-IP dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DscpMarkSpec {
    /// The DSCP (0..=63; 46 = EF, 0 = best effort).
    pub dscp: u8,
}

impl crate::NfConfig for DscpMarkSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(DscpMark::new(self.dscp)?))
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { dscp: 46 })
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { dscp: 46 }]
    }
}

#[cfg(test)]
mod tests {
    use etherparse::{PacketBuilder, SlicedPacket};
    use sluice_core::harness::Harness;

    use super::*;
    use crate::NfConfig;

    fn udp(dscp: u8, ecn: u8) -> Vec<u8> {
        let ip = etherparse::Ipv4Header { dscp: dscp.try_into().unwrap(), ecn: ecn.try_into().unwrap(), ..etherparse::Ipv4Header::new(8, 64, etherparse::IpNumber::UDP, [10, 0, 0, 1], [20, 0, 0, 1]).unwrap() };
        let mut frame = Vec::new();
        PacketBuilder::ethernet2([2; 6], [4; 6]).ip(etherparse::IpHeaders::Ipv4(ip, Default::default())).udp(1, 2).write(&mut frame, &[0; 8]).unwrap();
        frame
    }

    #[test]
    fn marks_the_dscp_keeps_ecn_and_a_valid_checksum() {
        let mut nf = DscpMarkSpec { dscp: 46 }.build().unwrap();
        let out = Harness::default().run(nf.as_mut(), &[udp(0, 0), udp(10, 3), vec![0; 20]]);
        assert_eq!(out.dropped, 1, "the frame that is not IPv4");
        for (frame, ecn) in out.gates[0].iter().zip([0, 3]) {
            let ip = match SlicedPacket::from_ethernet(frame).unwrap().net {
                Some(etherparse::NetSlice::Ipv4(ip)) => ip.header().to_header(),
                other => panic!("not IPv4: {other:?}"),
            };
            assert_eq!((ip.dscp.value(), ip.ecn.value()), (46, ecn));
            assert_eq!(ip.header_checksum, ip.calc_header_checksum(), "checksum updated");
        }
    }

    #[test]
    fn a_dscp_beyond_six_bits_is_refused() {
        assert!(DscpMarkSpec { dscp: 64 }.build().err().unwrap().contains("outside 0..=63"));
    }
}
