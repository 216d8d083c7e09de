//! Zero-copy views over packet headers: field offsets as constants, a
//! checked constructor for untrusted bytes, accessors and setters that keep
//! checksums right. NFs parse with these and never panic on bad input.

pub mod checksum;
pub mod ethernet;
pub mod gtpu;
pub mod ipv4;
pub mod l4;
pub mod udp_tunnel;
pub mod vxlan;

/// Why a packet could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than its headers say.
    Truncated,
    /// Not the protocol expected (wrong EtherType, IP version or header length).
    Unexpected,
}

/// The IPv4 header of an Ethernet frame (one optional VLAN tag), checked.
#[inline]
pub fn ipv4_of(frame: &[u8]) -> Result<ipv4::Header<&[u8]>, Malformed> {
    let eth = ethernet::Frame::new_checked(frame)?;
    if eth.payload_type() != ethernet::ETHERTYPE_IPV4 {
        return Err(Malformed::Unexpected);
    }
    ipv4::Header::new_checked(&frame[eth.payload_offset()..])
}

/// [`ipv4_of`], mutable.
#[inline]
pub fn ipv4_of_mut(frame: &mut [u8]) -> Result<ipv4::Header<&mut [u8]>, Malformed> {
    let offset = ethernet::Frame::new_checked(&*frame).and_then(|eth| {
        if eth.payload_type() == ethernet::ETHERTYPE_IPV4 {
            Ok(eth.payload_offset())
        } else {
            Err(Malformed::Unexpected)
        }
    })?;
    ipv4::Header::new_checked(&mut frame[offset..])
}
