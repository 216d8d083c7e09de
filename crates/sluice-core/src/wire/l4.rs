//! UDP and TCP ports and checksums.

use super::checksum;
use super::ipv4::{PROTO_TCP, PROTO_UDP};
use super::Malformed;

/// Bytes of a UDP header.
pub const UDP_LEN: usize = 8;
/// Bytes of a TCP header without options.
pub const TCP_MIN_LEN: usize = 20;

/// Offset of the checksum within the L4 header of `protocol`.
fn checksum_offset(protocol: u8) -> Option<usize> {
    match protocol {
        PROTO_UDP => Some(6),
        PROTO_TCP => Some(16),
        _ => None,
    }
}

/// Source and destination ports of a UDP or TCP header.
pub fn ports(protocol: u8, l4: &[u8]) -> Result<(u16, u16), Malformed> {
    let min = match protocol {
        PROTO_UDP => UDP_LEN,
        PROTO_TCP => TCP_MIN_LEN,
        _ => return Err(Malformed::Unexpected),
    };
    if l4.len() < min {
        return Err(Malformed::Truncated);
    }
    Ok((u16::from_be_bytes([l4[0], l4[1]]), u16::from_be_bytes([l4[2], l4[3]])))
}

/// Updates the UDP/TCP checksum for an address change in the pseudo-header
/// (RFC 1624). A UDP checksum of zero means "none" and stays zero.
pub fn update_for_address(protocol: u8, l4: &mut [u8], old: u32, new: u32) {
    let Some(off) = checksum_offset(protocol) else { return };
    if l4.len() < off + 2 {
        return;
    }
    let c = u16::from_be_bytes([l4[off], l4[off + 1]]);
    if protocol == PROTO_UDP && c == 0 {
        return;
    }
    let mut c = checksum::update32(c, old, new);
    if protocol == PROTO_UDP && c == 0 {
        c = 0xffff;
    }
    l4[off..off + 2].copy_from_slice(&c.to_be_bytes());
}
