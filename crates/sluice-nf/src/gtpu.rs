//! `gtpu_encap` and `gtpu_decap`: GTP-U tunnelling (3GPP TS 29.281) of IPv4
//! packets in outer Ethernet/IPv4/UDP (port 2152), the tunnel id in the
//! packet's mark.

use sluice_core::wire::ethernet::{Frame, Mac, ETHERTYPE_IPV4, HEADER_LEN as ETH_LEN};
use sluice_core::wire::ipv4::{Header, MIN_HEADER_LEN, PROTO_UDP};
use sluice_core::wire::l4::{ports, UDP_LEN};
use sluice_core::wire::{gtpu, ipv4_of};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Bytes of the outer headers: Ethernet, IPv4, UDP, GTP-U.
const OUTER_LEN: usize = ETH_LEN + MIN_HEADER_LEN + UDP_LEN + gtpu::HEADER_LEN;
/// TTL of the outer IPv4 header.
const OUTER_TTL: u8 = 64;

fn write_ethernet(frame: &mut [u8], src: Mac, dst: Mac) {
    frame[0..6].copy_from_slice(&dst);
    frame[6..12].copy_from_slice(&src);
    frame[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
}

/// Puts each IPv4 packet (its Ethernet header replaced) into a GTP-U tunnel
/// from `src_ip` to `dst_ip` with tunnel id = the packet's mark.
/// Non-IPv4, malformed and oversize packets are dropped.
pub struct GtpuEncap {
    src_ip: u32,
    dst_ip: u32,
    src_mac: Mac,
    dst_mac: Mac,
}

impl GtpuEncap {
    /// A tunnel endpoint pair and the outer Ethernet addresses.
    pub fn new(src_ip: u32, dst_ip: u32, src_mac: Mac, dst_mac: Mac) -> Self {
        Self { src_ip, dst_ip, src_mac, dst_mac }
    }

    fn encap(&self, ctx: &mut NfContext<'_>, id: sluice_core::PacketId) -> bool {
        let Ok(inner) = ipv4_of(ctx.pool.data(id)) else { return false };
        let inner_len = ctx.pool.data(id).len() - ETH_LEN;
        if inner.total_len() as usize != inner_len || inner_len + OUTER_LEN > u16::MAX as usize {
            return false;
        }
        let teid = ctx.pool.meta(id).mark;
        if !ctx.pool.prepend(id, OUTER_LEN - ETH_LEN) {
            return false;
        }
        let frame = ctx.pool.data_mut(id);
        write_ethernet(frame, self.src_mac, self.dst_mac);
        let ip = &mut frame[ETH_LEN..ETH_LEN + MIN_HEADER_LEN];
        ip.fill(0);
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((MIN_HEADER_LEN + UDP_LEN + gtpu::HEADER_LEN + inner_len) as u16).to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = OUTER_TTL;
        ip[9] = PROTO_UDP;
        ip[12..16].copy_from_slice(&self.src_ip.to_be_bytes());
        ip[16..20].copy_from_slice(&self.dst_ip.to_be_bytes());
        Header::new_checked(&mut frame[ETH_LEN..]).expect("a header just written").fill_checksum();
        let udp = &mut frame[ETH_LEN + MIN_HEADER_LEN..ETH_LEN + MIN_HEADER_LEN + UDP_LEN];
        udp[0..2].copy_from_slice(&gtpu::PORT.to_be_bytes());
        udp[2..4].copy_from_slice(&gtpu::PORT.to_be_bytes());
        udp[4..6].copy_from_slice(&((UDP_LEN + gtpu::HEADER_LEN + inner_len) as u16).to_be_bytes());
        udp[6..8].copy_from_slice(&[0, 0]); // no UDP checksum (allowed over IPv4)
        gtpu::write_header(&mut frame[OUTER_LEN - gtpu::HEADER_LEN..OUTER_LEN], inner_len as u16, teid);
        true
    }
}

impl NetworkFunction for GtpuEncap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            if self.encap(ctx, id) {
                out.push(0, id);
            } else {
                ctx.drop_packet(id);
            }
        }
        input.clear();
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
        let eth = Frame::new_checked(frame).ok()?;
        let outer = ipv4_of(frame).ok()?;
        if outer.protocol() != PROTO_UDP || ports(PROTO_UDP, outer.payload()).ok()?.1 != gtpu::PORT {
            return None;
        }
        let gtp_at = eth.payload_offset() + outer.header_len() + UDP_LEN;
        let (teid, gtp_len) = gtpu::parse(&frame[gtp_at..]).ok()?;
        let inner_at = gtp_at + gtp_len;
        Header::new_checked(&frame[inner_at..]).ok()?;
        Some((inner_at, teid))
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
            write_ethernet(ctx.pool.data_mut(id), self.src_mac, self.dst_mac);
            ctx.pool.meta_mut(id).mark = teid;
            out.push(0, id);
        }
        input.clear();
    }
}
