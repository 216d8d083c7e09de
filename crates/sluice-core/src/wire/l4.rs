//! UDP and TCP ports and checksums.

use super::checksum;
use super::ip_protocol::{TCP, UDP};
use super::Malformed;

/// Bytes of a UDP header.
pub const UDP_LEN: usize = 8;
/// Bytes of a TCP header without options.
pub const TCP_MIN_LEN: usize = 20;

/// Offset of the checksum within the L4 header of `protocol`.
pub(crate) fn checksum_offset(protocol: u8) -> Option<usize> {
    match protocol {
        UDP => Some(6),
        TCP => Some(16),
        _ => None,
    }
}

/// Source and destination ports of a UDP or TCP header.
pub fn ports(protocol: u8, l4: &[u8]) -> Result<(u16, u16), Malformed> {
    let min = match protocol {
        UDP => UDP_LEN,
        TCP => TCP_MIN_LEN,
        _ => return Err(Malformed::Unexpected),
    };
    if l4.len() < min {
        return Err(Malformed::Truncated);
    }
    Ok((u16::from_be_bytes([l4[0], l4[1]]), u16::from_be_bytes([l4[2], l4[3]])))
}

/// TCP flag bits (byte 13 of the header).
pub mod tcp_flags {
    /// No more data from the sender.
    pub const FIN: u8 = 0x01;
    /// Synchronise sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset the connection.
    pub const RST: u8 = 0x04;
    /// Push the data to the application.
    pub const PSH: u8 = 0x08;
    /// The acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
}

/// The flag byte of a TCP header (see [`mod@tcp_flags`]).
pub fn tcp_flags(l4: &[u8]) -> Result<u8, Malformed> {
    l4.get(13).copied().ok_or(Malformed::Truncated)
}

/// Applies `update` to the UDP/TCP checksum of `l4`, if it has one. A UDP
/// checksum of zero means "none" and stays zero; a computed zero is sent as
/// 0xffff (RFC 768).
fn update_checksum(protocol: u8, l4: &mut [u8], update: impl FnOnce(u16) -> u16) {
    let Some(off) = checksum_offset(protocol) else { return };
    if l4.len() < off + 2 {
        return;
    }
    let c = u16::from_be_bytes([l4[off], l4[off + 1]]);
    if protocol == UDP && c == 0 {
        return;
    }
    let mut c = update(c);
    if protocol == UDP && c == 0 {
        c = 0xffff;
    }
    l4[off..off + 2].copy_from_slice(&c.to_be_bytes());
}

/// Where an upper layer's checksum is in an IP packet, and what the pseudo-header adds to it.
pub(crate) struct UpperChecksum {
    /// The upper layer's protocol.
    pub protocol: u8,
    /// Its first byte and one past its last, from the IP header's start.
    pub start: usize,
    pub end: usize,
    /// The checksum's offset from `start`.
    pub offset: usize,
    /// The pseudo-header's one's-complement sum.
    pub pseudo: u16,
}

impl UpperChecksum {
    /// Computes and writes the checksum into `ip` (the IP packet it is of).
    pub(crate) fn fill(&self, ip: &mut [u8]) {
        fill_checksum(&mut ip[self.start..self.end], self.offset, self.pseudo, self.protocol == UDP);
    }

    /// [`Self::fill`] if the field holds the pseudo-header's sum (a partial checksum); returns whether it did.
    pub(crate) fn complete_if_partial(&self, ip: &mut [u8]) -> bool {
        let at = self.start + self.offset;
        if at + 2 > self.end || u16::from_be_bytes([ip[at], ip[at + 1]]) != self.pseudo {
            return false;
        }
        self.fill(ip);
        true
    }
}

/// Computes the checksum of `upper` (an upper-layer header and its data)
/// whose checksum field sits at `offset`, over the pseudo-header whose
/// one's-complement sum is `pseudo`, and writes it there; a computed zero
/// is sent as 0xffff for UDP (`udp`), where zero means "none". Does nothing
/// if `upper` cannot hold the field.
pub(crate) fn fill_checksum(upper: &mut [u8], offset: usize, pseudo: u16, udp: bool) {
    if upper.len() < offset + 2 {
        return;
    }
    upper[offset..offset + 2].fill(0);
    let mut c = !checksum::add(pseudo, checksum::sum(upper));
    if c == 0 && udp {
        c = 0xffff;
    }
    upper[offset..offset + 2].copy_from_slice(&c.to_be_bytes());
}

/// Updates the UDP/TCP checksum for an address change in the pseudo-header (RFC 1624).
pub fn update_for_address(protocol: u8, l4: &mut [u8], old: u32, new: u32) {
    update_checksum(protocol, l4, |c| checksum::update32(c, old, new));
}

/// Sets the source (`which` = 0) or destination (`which` = 2) port at that
/// byte offset of a UDP/TCP header, updating its checksum (RFC 1624).
fn set_port(protocol: u8, l4: &mut [u8], which: usize, port: u16) {
    if checksum_offset(protocol).is_none() || l4.len() < which + 2 {
        return;
    }
    let old = u16::from_be_bytes([l4[which], l4[which + 1]]);
    l4[which..which + 2].copy_from_slice(&port.to_be_bytes());
    update_checksum(protocol, l4, |c| checksum::update(c, old, port));
}

/// Sets the source port of a UDP/TCP header, checksum updated.
pub fn set_src_port(protocol: u8, l4: &mut [u8], port: u16) {
    set_port(protocol, l4, 0, port);
}

/// Sets the destination port of a UDP/TCP header, checksum updated.
pub fn set_dst_port(protocol: u8, l4: &mut [u8], port: u16) {
    set_port(protocol, l4, 2, port);
}
