//! `vxlan_encap` and `vxlan_decap`: Ethernet frames tunnelled in
//! Ethernet/IPv4/UDP(4789)/VXLAN (RFC 7348), the network id in the mark.

use sluice_core::wire::ethernet::{Frame, Mac, ETHERTYPE_IPV4, HEADER_LEN as ETH_LEN};
use sluice_core::wire::ipv4::{Header, MIN_HEADER_LEN, PROTO_UDP};
use sluice_core::wire::l4::{ports, UDP_LEN};
use sluice_core::wire::{ipv4_of, vxlan};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, PacketId};

/// Bytes of the outer headers: Ethernet, IPv4, UDP, VXLAN.
const OUTER_LEN: usize = ETH_LEN + MIN_HEADER_LEN + UDP_LEN + vxlan::HEADER_LEN;

/// Tunnels each Ethernet frame to `dst_ip`, network id = the packet's mark
/// (24 bits); frames that do not fit the headroom are dropped.
pub struct VxlanEncap {
    src_ip: u32,
    dst_ip: u32,
    src_mac: Mac,
    dst_mac: Mac,
}

impl VxlanEncap {
    /// A tunnel endpoint pair and the outer Ethernet addresses.
    pub fn new(src_ip: u32, dst_ip: u32, src_mac: Mac, dst_mac: Mac) -> Self {
        Self { src_ip, dst_ip, src_mac, dst_mac }
    }

    fn encap(&self, ctx: &mut NfContext<'_>, id: PacketId) -> bool {
        let inner_len = ctx.pool.data(id).len();
        if Frame::new_checked(ctx.pool.data(id)).is_err() || inner_len + OUTER_LEN > u16::MAX as usize {
            return false;
        }
        let vni = ctx.pool.meta(id).mark & 0x00ff_ffff;
        if !ctx.pool.prepend(id, OUTER_LEN) {
            return false;
        }
        let f = ctx.pool.data_mut(id);
        f[0..6].copy_from_slice(&self.dst_mac);
        f[6..12].copy_from_slice(&self.src_mac);
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[ETH_LEN..ETH_LEN + MIN_HEADER_LEN];
        ip.fill(0);
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((MIN_HEADER_LEN + UDP_LEN + vxlan::HEADER_LEN + inner_len) as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = PROTO_UDP;
        ip[12..16].copy_from_slice(&self.src_ip.to_be_bytes());
        ip[16..20].copy_from_slice(&self.dst_ip.to_be_bytes());
        Header::new_checked(&mut f[ETH_LEN..]).expect("a header just written").fill_checksum();
        let udp = &mut f[ETH_LEN + MIN_HEADER_LEN..ETH_LEN + MIN_HEADER_LEN + UDP_LEN];
        // Source port from the network id spreads tunnels over receive queues (RFC 7348 §5).
        udp[0..2].copy_from_slice(&(49152 | (vni as u16 & 0x3fff)).to_be_bytes());
        udp[2..4].copy_from_slice(&vxlan::PORT.to_be_bytes());
        udp[4..6].copy_from_slice(&((UDP_LEN + vxlan::HEADER_LEN + inner_len) as u16).to_be_bytes());
        udp[6..8].copy_from_slice(&[0, 0]);
        vxlan::write_header(&mut f[OUTER_LEN - vxlan::HEADER_LEN..OUTER_LEN], vni);
        true
    }
}

impl NetworkFunction for VxlanEncap {
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

/// Takes the Ethernet frame out of a VXLAN tunnel, the network id into
/// the mark; anything else is dropped.
#[derive(Default)]
pub struct VxlanDecap;

impl VxlanDecap {
    fn locate(frame: &[u8]) -> Option<(usize, u32)> {
        let eth = Frame::new_checked(frame).ok()?;
        let outer = ipv4_of(frame).ok()?;
        if outer.protocol() != PROTO_UDP || ports(PROTO_UDP, outer.payload()).ok()?.1 != vxlan::PORT {
            return None;
        }
        let at = eth.payload_offset() + outer.header_len() + UDP_LEN;
        let vni = vxlan::parse(&frame[at..]).ok()?;
        let inner = at + vxlan::HEADER_LEN;
        Frame::new_checked(&frame[inner..]).ok()?;
        Some((inner, vni))
    }
}

impl NetworkFunction for VxlanDecap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            match Self::locate(ctx.pool.data(id)) {
                Some((inner, vni)) => {
                    ctx.pool.strip(id, inner);
                    ctx.pool.meta_mut(id).mark = vni;
                    out.push(0, id);
                }
                None => ctx.drop_packet(id),
            }
        }
        input.clear();
    }
}
