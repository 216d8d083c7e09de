//! The `virtio_net_hdr` a packet socket with `PACKET_VNET_HDR` puts before
//! each frame it hands over and takes before each frame it is given: how the
//! sender left segmentation (GSO) and its TCP or UDP checksum to the wire.
//! A local stack with its default offloads hands a veth 64 KiB TCP frames
//! with a partial checksum; read through this header, a port takes them as
//! they are ([`Offload`]) and passes them on whole, or cuts them itself.
//!
//! Its fields are little-endian here (the legacy virtio layout Linux uses
//! on a little-endian host). What arrives is checked before anything
//! trusts it: a GSO type Linux does not send, a GSO size of 0 or beyond
//! the frame, a checksum or header length that runs past it is refused.

use sluice_core::packet::{Gso, Offload};

/// Bytes of the header.
pub const LEN: usize = 10;

/// `flags`: the checksum is partial, to be completed from `csum_start`.
const NEEDS_CSUM: u8 = 1;
/// `gso_type` values.
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_TCPV6: u8 = 4;
const GSO_UDP_L4: u8 = 5;
/// `gso_type` flag: the sender set ECN's congestion-window-reduced on the segments.
const GSO_ECN: u8 = 0x80;

/// Why a header was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadHeader {
    /// A GSO type other than TCPv4, TCPv6 or UDP.
    GsoType,
    /// A GSO size of 0, or one at least the frame's length.
    GsoSize,
    /// Headers or a checksum that run past the frame.
    Offsets,
}

/// The offload a header of a `frame_len`-byte frame says, checked.
pub fn parse(header: &[u8; LEN], frame_len: usize) -> Result<Offload, BadHeader> {
    let word = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
    let (flags, gso_type) = (header[0], header[1] & !GSO_ECN);
    let (hdr_len, gso_size, csum_start, csum_offset) = (word(2), word(4), word(6), word(8));
    let gso = match gso_type {
        GSO_NONE => Gso::None,
        GSO_TCPV4 => Gso::TcpV4,
        GSO_TCPV6 => Gso::TcpV6,
        GSO_UDP_L4 => Gso::Udp,
        _ => return Err(BadHeader::GsoType),
    };
    let csum_partial = flags & NEEDS_CSUM != 0;
    if csum_partial && usize::from(csum_start) + usize::from(csum_offset) + 2 > frame_len {
        return Err(BadHeader::Offsets);
    }
    if gso != Gso::None {
        if gso_size == 0 || usize::from(gso_size) >= frame_len {
            return Err(BadHeader::GsoSize);
        }
        if usize::from(hdr_len) > frame_len {
            return Err(BadHeader::Offsets);
        }
    }
    let keep = |v: u16| if gso == Gso::None { 0 } else { v };
    Ok(Offload { gso, gso_size: keep(gso_size), hdr_len: keep(hdr_len), csum_partial, csum_start: if csum_partial { csum_start } else { 0 }, csum_offset: if csum_partial { csum_offset } else { 0 } })
}

/// The header that says `offload`.
pub fn write(offload: &Offload) -> [u8; LEN] {
    let mut h = [0u8; LEN];
    h[0] = if offload.csum_partial { NEEDS_CSUM } else { 0 };
    h[1] = match offload.gso {
        Gso::None => GSO_NONE,
        Gso::TcpV4 => GSO_TCPV4,
        Gso::TcpV6 => GSO_TCPV6,
        Gso::Udp => GSO_UDP_L4,
    };
    for (at, v) in [(2, offload.hdr_len), (4, offload.gso_size), (6, offload.csum_start), (8, offload.csum_offset)] {
        h[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_local_stack_sends_reads_back_and_writes_the_same() {
        // A 64 KiB TCPv4 GSO frame as Linux hands it over: MSS 1448, headers 66 bytes, checksum from byte 34, at 16.
        let header = [1, 1, 66, 0, 0xa8, 5, 34, 0, 16, 0];
        let o = parse(&header, 65_226).unwrap();
        assert_eq!(o, Offload { gso: Gso::TcpV4, gso_size: 1448, hdr_len: 66, csum_partial: true, csum_start: 34, csum_offset: 16 });
        assert_eq!(write(&o), header);
        assert_eq!(parse(&[0; LEN], 60).unwrap(), Offload::default());
    }

    #[test]
    fn a_header_that_lies_about_its_frame_is_refused() {
        assert_eq!(parse(&[0, 1, 66, 0, 0, 0, 0, 0, 0, 0], 9000), Err(BadHeader::GsoSize), "a GSO size of 0");
        assert_eq!(parse(&[0, 1, 66, 0, 0x28, 0x23, 0, 0, 0, 0], 9000), Err(BadHeader::GsoSize), "a GSO size beyond the frame");
        assert_eq!(parse(&[0, 3, 42, 0, 0xa8, 5, 0, 0, 0, 0], 9000), Err(BadHeader::GsoType), "UFO, which Linux no longer sends");
        assert_eq!(parse(&[1, 0, 0, 0, 0, 0, 0xff, 0xff, 16, 0], 60), Err(BadHeader::Offsets));
    }
}
