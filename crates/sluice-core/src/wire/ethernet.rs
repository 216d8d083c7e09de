//! Ethernet II frames with at most one 802.1Q tag.

use super::Malformed;

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// EtherType of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// The broadcast address.
pub const BROADCAST: Mac = [0xff; 6];
/// Bytes of an untagged Ethernet header.
pub const HEADER_LEN: usize = 14;
/// Bytes of one 802.1Q tag.
pub const VLAN_LEN: usize = 4;

const DST: usize = 0;
const SRC: usize = 6;
const TYPE: usize = 12;

/// A MAC address.
pub type Mac = [u8; 6];

/// Parses "aa:bb:cc:dd:ee:ff".
pub fn parse_mac(s: &str) -> Result<Mac, String> {
    let bad = || format!("'{s}' is not a MAC address like 02:00:00:00:00:01");
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut mac = [0u8; 6];
    for (b, p) in mac.iter_mut().zip(parts) {
        *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    Ok(mac)
}

/// Whether `mac` is a group (multicast or broadcast) address: its first byte's lowest bit.
pub fn is_group(mac: Mac) -> bool {
    mac[0] & 1 == 1
}

/// Writes an untagged Ethernet header into the first [`HEADER_LEN`] bytes of `out`.
pub fn write_header(out: &mut [u8], dst: Mac, src: Mac, ethertype: u16) {
    out[DST..DST + 6].copy_from_slice(&dst);
    out[SRC..SRC + 6].copy_from_slice(&src);
    out[TYPE..TYPE + 2].copy_from_slice(&ethertype.to_be_bytes());
}

/// A view of an Ethernet frame.
pub struct Frame<T: AsRef<[u8]>>(T);

impl<T: AsRef<[u8]>> Frame<T> {
    /// Checks that the frame holds its Ethernet header (and tag, if any).
    #[inline(always)]
    pub fn new_checked(bytes: T) -> Result<Self, Malformed> {
        let b = bytes.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Malformed::Truncated);
        }
        let f = Self(bytes);
        if f.outer_type() == ETHERTYPE_VLAN && f.0.as_ref().len() < HEADER_LEN + VLAN_LEN {
            return Err(Malformed::Truncated);
        }
        Ok(f)
    }

    /// Destination MAC.
    pub fn dst(&self) -> Mac {
        self.0.as_ref()[DST..DST + 6].try_into().expect("checked length")
    }

    /// Source MAC.
    pub fn src(&self) -> Mac {
        self.0.as_ref()[SRC..SRC + 6].try_into().expect("checked length")
    }

    /// The EtherType right after the addresses (0x8100 for a tagged frame).
    pub fn outer_type(&self) -> u16 {
        let b = self.0.as_ref();
        u16::from_be_bytes([b[TYPE], b[TYPE + 1]])
    }

    /// VLAN id (12 bits) of a tagged frame.
    pub fn vlan_id(&self) -> Option<u16> {
        let b = self.0.as_ref();
        (self.outer_type() == ETHERTYPE_VLAN).then(|| u16::from_be_bytes([b[14], b[15]]) & 0x0fff)
    }

    /// EtherType of the payload, behind the tag if there is one.
    pub fn payload_type(&self) -> u16 {
        let b = self.0.as_ref();
        match self.outer_type() {
            ETHERTYPE_VLAN => u16::from_be_bytes([b[16], b[17]]),
            t => t,
        }
    }

    /// Offset of the payload (the L3 header).
    pub fn payload_offset(&self) -> usize {
        if self.outer_type() == ETHERTYPE_VLAN {
            HEADER_LEN + VLAN_LEN
        } else {
            HEADER_LEN
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets the destination MAC.
    pub fn set_dst(&mut self, mac: Mac) {
        self.0.as_mut()[DST..DST + 6].copy_from_slice(&mac);
    }

    /// Sets the source MAC.
    pub fn set_src(&mut self, mac: Mac) {
        self.0.as_mut()[SRC..SRC + 6].copy_from_slice(&mac);
    }
}
