//! `gtpu_encap` and `gtpu_decap`: GTP-U tunnelling (3GPP TS 29.281) of IP
//! packets, IPv4 or IPv6, in outer Ethernet/IPv4 or IPv6/UDP (port 2152),
//! the tunnel id in the packet's mark.

use sluice_core::DropReason;
use sluice_core::wire::ethernet::{parse_mac, Mac, ETHERTYPE_IPV4, ETHERTYPE_IPV6, HEADER_LEN as ETH_LEN};
use sluice_core::wire::udp_tunnel::{payload_offset, Outer};
use sluice_core::wire::{gtpu, ip_of, ipv4, ipv6, Endpoints, Ip};
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs, PacketId};

/// Puts each IP packet (its Ethernet header replaced) into a GTP-U tunnel
/// with tunnel id = the packet's mark. Non-IP, malformed and oversize
/// packets are dropped.
pub struct GtpuEncap {
    outer: Outer,
}

impl GtpuEncap {
    /// A tunnel between `ends` and the outer Ethernet addresses.
    pub fn new(ends: Endpoints, src_mac: Mac, dst_mac: Mac) -> Self {
        Self { outer: Outer { src_mac, dst_mac, ends } }
    }

    fn encap(&self, ctx: &mut NfContext<'_>, id: PacketId) -> bool {
        let stated = match ip_of(ctx.pool.data(id)) {
            Ok(Ip::V4(h)) => h.total_len() as usize,
            Ok(Ip::V6(h)) => ipv6::HEADER_LEN + h.payload_len() as usize,
            Err(_) => return false,
        };
        // An untagged frame's packet: what its IP header says, no more, no less.
        let inner_len = ctx.pool.data(id).len() - ETH_LEN;
        // Bytes GTP-U puts in front of the inner packet, in place of its Ethernet header.
        let added = self.outer.headers_len() + gtpu::HEADER_LEN - ETH_LEN;
        if stated != inner_len || inner_len + added + ETH_LEN > u16::MAX as usize {
            return false;
        }
        let teid = ctx.pool.meta(id).mark;
        if !ctx.pool.prepend(id, added) {
            return false;
        }
        let frame = ctx.pool.data_mut(id);
        let at = self.outer.headers_len();
        gtpu::write_header(&mut frame[at..at + gtpu::HEADER_LEN], inner_len as u16, teid);
        self.outer.write(frame, gtpu::PORT, gtpu::PORT, gtpu::HEADER_LEN + inner_len);
        true
    }
}

impl NetworkFunction for GtpuEncap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, DropReason::NoBuffer, |ctx, id| self.encap(ctx, id));
    }
}

/// Takes the IP packet out of a GTP-U tunnel, puts a new Ethernet header
/// (`src_mac` → `dst_mac`, the inner packet's EtherType) on it and the
/// tunnel id into its mark. Frames that are not GTP-U G-PDUs carrying IP
/// are dropped.
pub struct GtpuDecap {
    src_mac: Mac,
    dst_mac: Mac,
}

impl GtpuDecap {
    /// A decapsulator writing these inner Ethernet addresses.
    pub fn new(src_mac: Mac, dst_mac: Mac) -> Self {
        Self { src_mac, dst_mac }
    }

    /// Offset of the inner IP packet, its EtherType and the tunnel id.
    fn locate(frame: &[u8]) -> Option<(usize, u16, u32)> {
        let at = payload_offset(frame, gtpu::PORT)?;
        let (teid, gtp_len) = gtpu::parse(&frame[at..]).ok()?;
        let inner = &frame[at + gtp_len..];
        let ether_type = match inner.first()? >> 4 {
            4 => ipv4::Header::new_checked(inner).map(|_| ETHERTYPE_IPV4),
            6 => ipv6::Header::new_checked(inner).map(|_| ETHERTYPE_IPV6),
            _ => return None,
        };
        Some((at + gtp_len, ether_type.ok()?, teid))
    }
}

impl NetworkFunction for GtpuDecap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            let Some((inner_at, ether_type, teid)) = Self::locate(ctx.pool.data(id)) else {
                ctx.drop_packet(id, DropReason::Malformed);
                continue;
            };
            ctx.pool.strip(id, inner_at - ETH_LEN);
            let frame = ctx.pool.data_mut(id);
            frame[0..6].copy_from_slice(&self.dst_mac);
            frame[6..12].copy_from_slice(&self.src_mac);
            frame[12..14].copy_from_slice(&ether_type.to_be_bytes());
            ctx.pool.meta_mut(id).mark = teid;
            out.push(0, id);
        }
        input.clear();
    }
}

/// `gtpu_encap`: tunnels IP packets in GTP-U from `src_ip` to `dst_ip`,
/// tunnel id = the packet's mark.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GtpuEncapSpec {
    /// Outer source address, IPv4 or IPv6.
    pub src_ip: String,
    /// Outer destination address, of the source's family.
    pub dst_ip: String,
    /// Outer source MAC.
    pub src_mac: String,
    /// Outer destination MAC.
    pub dst_mac: String,
}

impl crate::NfConfig for GtpuEncapSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(GtpuEncap::new(Endpoints::parse(&self.src_ip, &self.dst_ip)?, parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?)))
    }

    fn fuzz_samples() -> Vec<Self> {
        let mac = |m: &str| m.to_string();
        let tunnel = |src: &str, dst: &str| Self { src_ip: src.into(), dst_ip: dst.into(), src_mac: mac("02:00:00:00:00:01"), dst_mac: mac("02:00:00:00:00:02") };
        vec![tunnel("1.1.1.1", "2.2.2.2"), tunnel("2001:db8::1", "2001:db8::2")]
    }
}

/// `gtpu_decap`: takes IP packets out of GTP-U and puts a new Ethernet
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
