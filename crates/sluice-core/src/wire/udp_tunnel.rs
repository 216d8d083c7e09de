//! The outer Ethernet/IPv4/UDP headers UDP tunnels (GTP-U, VXLAN) share.

use super::ethernet::{Frame, Mac, ETHERTYPE_IPV4, HEADER_LEN as ETH_LEN};
use super::ipv4::{Header, MIN_HEADER_LEN, PROTO_UDP};
use super::l4::{ports, UDP_LEN};
use super::ipv4_of;

/// Bytes of the outer Ethernet, IPv4 and UDP headers.
pub const OUTER_LEN: usize = ETH_LEN + MIN_HEADER_LEN + UDP_LEN;
/// TTL of the outer IPv4 header.
const OUTER_TTL: u8 = 64;

/// The outer headers of one tunnel.
#[derive(Clone, Copy, Debug)]
pub struct Outer {
    /// Outer source MAC.
    pub src_mac: Mac,
    /// Outer destination MAC.
    pub dst_mac: Mac,
    /// Tunnel source address.
    pub src_ip: u32,
    /// Tunnel destination address.
    pub dst_ip: u32,
}

impl Outer {
    /// Writes Ethernet, IPv4 (checksum filled, don't fragment) and UDP (no
    /// checksum, allowed over IPv4) headers into `frame[..OUTER_LEN]` for
    /// `udp_payload` bytes of UDP payload.
    pub fn write(&self, frame: &mut [u8], src_port: u16, dst_port: u16, udp_payload: usize) {
        frame[0..6].copy_from_slice(&self.dst_mac);
        frame[6..12].copy_from_slice(&self.src_mac);
        frame[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut frame[ETH_LEN..ETH_LEN + MIN_HEADER_LEN];
        ip.fill(0);
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((MIN_HEADER_LEN + UDP_LEN + udp_payload) as u16).to_be_bytes());
        ip[6] = 0x40;
        ip[8] = OUTER_TTL;
        ip[9] = PROTO_UDP;
        ip[12..16].copy_from_slice(&self.src_ip.to_be_bytes());
        ip[16..20].copy_from_slice(&self.dst_ip.to_be_bytes());
        Header::new_checked(&mut frame[ETH_LEN..]).expect("a header just written").fill_checksum();
        let udp = &mut frame[ETH_LEN + MIN_HEADER_LEN..OUTER_LEN];
        udp[0..2].copy_from_slice(&src_port.to_be_bytes());
        udp[2..4].copy_from_slice(&dst_port.to_be_bytes());
        udp[4..6].copy_from_slice(&((UDP_LEN + udp_payload) as u16).to_be_bytes());
        udp[6..8].copy_from_slice(&[0, 0]);
    }
}

/// Offset of the UDP payload of an Ethernet/IPv4/UDP frame sent to `port`,
/// or `None` when the frame is not one.
pub fn payload_offset(frame: &[u8], port: u16) -> Option<usize> {
    let eth = Frame::new_checked(frame).ok()?;
    let ip = ipv4_of(frame).ok()?;
    if ip.protocol() != PROTO_UDP || ports(PROTO_UDP, ip.payload()).ok()?.1 != port {
        return None;
    }
    Some(eth.payload_offset() + ip.header_len() + UDP_LEN)
}
