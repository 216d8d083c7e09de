//! `gtpu_encap` and `gtpu_decap`: GTP-U tunnelling (3GPP TS 29.281) of IPv4
//! packets in outer Ethernet/IPv4/UDP (port 2152), the tunnel id in the
//! packet's mark.

use sluice_core::wire::ethernet::{parse_mac, Mac, ETHERTYPE_IPV4, HEADER_LEN as ETH_LEN};
use sluice_core::wire::ipv4::Header;
use sluice_core::wire::udp_tunnel::{payload_offset, Outer, OUTER_LEN};
use sluice_core::wire::{gtpu, ipv4_of};
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs, PacketId};

use crate::nf_config::parse_ip;

/// Bytes GTP-U puts in front of the inner IPv4 packet, in place of its Ethernet header.
const ADDED: usize = OUTER_LEN + gtpu::HEADER_LEN - ETH_LEN;

/// Puts each IPv4 packet (its Ethernet header replaced) into a GTP-U tunnel
/// with tunnel id = the packet's mark. Non-IPv4, malformed and oversize
/// packets are dropped.
pub struct GtpuEncap {
    outer: Outer,
}

impl GtpuEncap {
    /// A tunnel endpoint pair and the outer Ethernet addresses.
    pub fn new(src_ip: u32, dst_ip: u32, src_mac: Mac, dst_mac: Mac) -> Self {
        Self { outer: Outer { src_mac, dst_mac, src_ip, dst_ip } }
    }

    fn encap(&self, ctx: &mut NfContext<'_>, id: PacketId) -> bool {
        let Ok(inner) = ipv4_of(ctx.pool.data(id)) else { return false };
        let inner_len = ctx.pool.data(id).len() - ETH_LEN;
        if inner.total_len() as usize != inner_len || inner_len + ADDED + ETH_LEN > u16::MAX as usize {
            return false;
        }
        let teid = ctx.pool.meta(id).mark;
        if !ctx.pool.prepend(id, ADDED) {
            return false;
        }
        let frame = ctx.pool.data_mut(id);
        self.outer.write(frame, gtpu::PORT, gtpu::PORT, gtpu::HEADER_LEN + inner_len);
        gtpu::write_header(&mut frame[OUTER_LEN..OUTER_LEN + gtpu::HEADER_LEN], inner_len as u16, teid);
        true
    }
}

impl NetworkFunction for GtpuEncap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, |ctx, id| self.encap(ctx, id));
    }
}

/// Takes the IPv4 packet out of a GTP-U tunnel, puts a new Ethernet header
/// (`src_mac` → `dst_mac`) on it and the tunnel id into its mark. Frames
/// that are not GTP-U G-PDUs carrying IPv4 are dropped.
pub struct GtpuDecap {
    src_mac: Mac,
    dst_mac: Mac,
}

impl GtpuDecap {
    /// A decapsulator writing these inner Ethernet addresses.
    pub fn new(src_mac: Mac, dst_mac: Mac) -> Self {
        Self { src_mac, dst_mac }
    }

    /// Offset of the inner IPv4 packet and the tunnel id.
    fn locate(frame: &[u8]) -> Option<(usize, u32)> {
        let at = payload_offset(frame, gtpu::PORT)?;
        let (teid, gtp_len) = gtpu::parse(&frame[at..]).ok()?;
        Header::new_checked(&frame[at + gtp_len..]).ok()?;
        Some((at + gtp_len, teid))
    }
}

impl NetworkFunction for GtpuDecap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            let Some((inner_at, teid)) = Self::locate(ctx.pool.data(id)) else {
                ctx.drop_packet(id);
                continue;
            };
            ctx.pool.strip(id, inner_at - ETH_LEN);
            let frame = ctx.pool.data_mut(id);
            frame[0..6].copy_from_slice(&self.dst_mac);
            frame[6..12].copy_from_slice(&self.src_mac);
            frame[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
            ctx.pool.meta_mut(id).mark = teid;
            out.push(0, id);
        }
        input.clear();
    }
}

/// `gtpu_encap`: tunnels IPv4 packets in GTP-U from `src_ip` to `dst_ip`,
/// tunnel id = the packet's mark.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GtpuEncapSpec {
    /// Outer source IPv4 address.
    pub src_ip: String,
    /// Outer destination IPv4 address.
    pub dst_ip: String,
    /// Outer source MAC.
    pub src_mac: String,
    /// Outer destination MAC.
    pub dst_mac: String,
}

impl crate::NfConfig for GtpuEncapSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        let (src_ip, dst_ip) = (parse_ip(&self.src_ip)?, parse_ip(&self.dst_ip)?);
        Ok(Box::new(GtpuEncap::new(src_ip, dst_ip, parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?)))
    }

    fn fuzz_samples() -> Vec<Self> {
        let mac = |m: &str| m.to_string();
        vec![Self { src_ip: "1.1.1.1".into(), dst_ip: "2.2.2.2".into(), src_mac: mac("02:00:00:00:00:01"), dst_mac: mac("02:00:00:00:00:02") }]
    }
}

/// `gtpu_decap`: takes IPv4 packets out of GTP-U and puts a new Ethernet
/// header on them; mark = tunnel id.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GtpuDecapSpec {
    /// Inner source MAC.
    pub src_mac: String,
    /// Inner destination MAC.
    pub dst_mac: String,
}

impl crate::NfConfig for GtpuDecapSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(GtpuDecap::new(parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?)))
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { src_mac: "02:00:00:00:00:01".into(), dst_mac: "02:00:00:00:00:02".into() }]
    }
}
