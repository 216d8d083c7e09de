//! VXLAN (RFC 7348): Ethernet frames in UDP port 4789 with a 24-bit network id.

use super::Malformed;

/// UDP port of VXLAN.
pub const PORT: u16 = 4789;
/// Bytes of the VXLAN header.
pub const HEADER_LEN: usize = 8;
/// The I flag: the VNI is valid.
const FLAG_VNI: u8 = 0x08;

/// Writes a VXLAN header for network `vni` (24 bits) into `out[..8]`.
pub fn write_header(out: &mut [u8], vni: u32) {
    out[..8].copy_from_slice(&[FLAG_VNI, 0, 0, 0, (vni >> 16) as u8, (vni >> 8) as u8, vni as u8, 0]);
}

/// The network id of a VXLAN header, checked.
pub fn parse(bytes: &[u8]) -> Result<u32, Malformed> {
    if bytes.len() < HEADER_LEN {
        return Err(Malformed::Truncated);
    }
    if bytes[0] & FLAG_VNI == 0 {
        return Err(Malformed::Unexpected);
    }
    Ok(u32::from_be_bytes([0, bytes[4], bytes[5], bytes[6]]))
}
