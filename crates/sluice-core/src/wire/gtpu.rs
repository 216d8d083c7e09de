//! GTP-U (3GPP TS 29.281): the user-plane tunnel of 4G/5G, over UDP port 2152.

use super::Malformed;

/// UDP port of GTP-U.
pub const PORT: u16 = 2152;
/// Bytes of the mandatory GTP-U header.
pub const HEADER_LEN: usize = 8;
/// Message type of a G-PDU (a tunnelled user packet).
pub const G_PDU: u8 = 0xff;
/// Flags byte of a version-1 GTP header without optional fields.
const FLAGS_V1: u8 = 0x30;

/// Writes a G-PDU header for `payload_len` bytes of payload and tunnel `teid` into `out[..8]`.
pub fn write_header(out: &mut [u8], payload_len: u16, teid: u32) {
    out[0] = FLAGS_V1;
    out[1] = G_PDU;
    out[2..4].copy_from_slice(&payload_len.to_be_bytes());
    out[4..8].copy_from_slice(&teid.to_be_bytes());
}

/// The tunnel id and header length of a G-PDU, checked.
pub fn parse(bytes: &[u8]) -> Result<(u32, usize), Malformed> {
    if bytes.len() < HEADER_LEN {
        return Err(Malformed::Truncated);
    }
    if bytes[0] >> 5 != 1 || bytes[1] != G_PDU {
        return Err(Malformed::Unexpected);
    }
    // Sequence, N-PDU or extension flags add 4 bytes (extension headers are not followed).
    let len = if bytes[0] & 0x07 != 0 { HEADER_LEN + 4 } else { HEADER_LEN };
    if bytes.len() < len || bytes[0] & 0x04 != 0 {
        return Err(if bytes.len() < len { Malformed::Truncated } else { Malformed::Unexpected });
    }
    Ok((u32::from_be_bytes(bytes[4..8].try_into().expect("checked length")), len))
}
