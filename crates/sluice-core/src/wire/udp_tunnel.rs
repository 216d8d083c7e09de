//! The outer Ethernet/IP/UDP headers UDP tunnels (GTP-U, VXLAN) share,
//! over IPv4 or IPv6.

use super::ethernet::{Frame, Mac, ETHERTYPE_IPV4, ETHERTYPE_IPV6, HEADER_LEN as ETH_LEN};
use super::ip_protocol::UDP;
use super::ipv4;
use super::ipv6;
use super::l4::{ports, UDP_LEN};
use super::{ip_of, Endpoints};

/// Hop limit (IPv4: TTL) of the outer header.
const OUTER_HOP_LIMIT: u8 = 64;

/// The outer headers of one tunnel.
#[derive(Clone, Copy, Debug)]
pub struct Outer {
    /// Outer source MAC.
    pub src_mac: Mac,
    /// Outer destination MAC.
    pub dst_mac: Mac,
    /// The tunnel's ends.
    pub ends: Endpoints,
}

impl Outer {
    /// Bytes of the outer Ethernet, IP and UDP headers.
    pub fn headers_len(&self) -> usize {
        ETH_LEN + self.ends.ip_header_len() + UDP_LEN
    }

    /// Writes the Ethernet, IP and UDP headers into `frame[..self.headers_len()]`
    /// for the `udp_payload` bytes after them, which must be in place:
    /// over IPv4 the header checksum is filled and UDP's left zero
    /// (allowed); over IPv6, where zero is not allowed (RFC 8200 §8.1),
    /// UDP's is computed over the payload.
    pub fn write(&self, frame: &mut [u8], src_port: u16, dst_port: u16, udp_payload: usize) {
        frame[0..6].copy_from_slice(&self.dst_mac);
        frame[6..12].copy_from_slice(&self.src_mac);
        let ip_len = self.ends.ip_header_len();
        let udp_len = UDP_LEN + udp_payload;
        let ip = &mut frame[ETH_LEN..ETH_LEN + ip_len];
        ip.fill(0);
        match self.ends {
            Endpoints::V4(src, dst) => {
                ip[0] = 0x45;
                ip[2..4].copy_from_slice(&((ip_len + udp_len) as u16).to_be_bytes());
                ip[6] = 0x40; // don't fragment
                ip[8] = OUTER_HOP_LIMIT;
                ip[9] = UDP;
                ip[12..16].copy_from_slice(&src.to_be_bytes());
                ip[16..20].copy_from_slice(&dst.to_be_bytes());
            }
            Endpoints::V6(src, dst) => {
                ip[0] = 0x60;
                ip[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
                ip[6] = UDP;
                ip[7] = OUTER_HOP_LIMIT;
                ip[8..24].copy_from_slice(&src.to_be_bytes());
                ip[24..40].copy_from_slice(&dst.to_be_bytes());
            }
        }
        let ether_type = if matches!(self.ends, Endpoints::V4(..)) { ETHERTYPE_IPV4 } else { ETHERTYPE_IPV6 };
        frame[12..14].copy_from_slice(&ether_type.to_be_bytes());
        let udp = &mut frame[ETH_LEN + ip_len..self.headers_len()];
        udp[0..2].copy_from_slice(&src_port.to_be_bytes());
        udp[2..4].copy_from_slice(&dst_port.to_be_bytes());
        udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        udp[6..8].copy_from_slice(&[0, 0]);
        match self.ends {
            Endpoints::V4(..) => ipv4::Header::new_checked(&mut frame[ETH_LEN..]).expect("a header just written").fill_checksum(),
            Endpoints::V6(..) => ipv6::Header::new_checked(&mut frame[ETH_LEN..]).expect("a header just written").fill_upper_checksum(),
        }
    }
}

/// Offset of the UDP payload of an Ethernet/IP/UDP frame sent to `port`
/// (IPv6: past its extension headers), or `None` when the frame is not one.
pub fn payload_offset(frame: &[u8], port: u16) -> Option<usize> {
    let eth = Frame::new_checked(frame).ok()?;
    let (protocol, at) = ip_of(frame).ok()?.upper_offset().ok()?;
    let udp = eth.payload_offset() + at;
    if protocol != UDP || ports(UDP, &frame[udp..]).ok()?.1 != port {
        return None;
    }
    Some(udp + UDP_LEN)
}
