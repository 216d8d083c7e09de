//! ARP for IPv4 over Ethernet (RFC 826): the 28-byte packet after the
//! Ethernet header, requests and replies.

use super::ethernet::Mac;
use super::Malformed;

/// Bytes of an ARP packet for IPv4 over Ethernet.
pub const LEN: usize = 28;
/// Operation of a request ("who has …").
pub const REQUEST: u16 = 1;
/// Operation of a reply ("… is at").
pub const REPLY: u16 = 2;

const HTYPE: usize = 0;
const PTYPE: usize = 2;
const HLEN: usize = 4;
const PLEN: usize = 5;
const OPER: usize = 6;
const SHA: usize = 8;
const SPA: usize = 14;
const THA: usize = 18;
const TPA: usize = 24;

/// Hardware type of Ethernet.
const HTYPE_ETHERNET: u16 = 1;

/// A view of an ARP packet (from its first byte, after the Ethernet header).
pub struct Packet<T: AsRef<[u8]>>(T);

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks that the bytes hold an ARP packet for IPv4 over Ethernet
    /// (hardware type 1, protocol 0x0800, address lengths 6 and 4).
    pub fn new_checked(bytes: T) -> Result<Self, Malformed> {
        let b = bytes.as_ref();
        if b.len() < LEN {
            return Err(Malformed::Truncated);
        }
        let word = |at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
        if word(HTYPE) != HTYPE_ETHERNET || word(PTYPE) != super::ethernet::ETHERTYPE_IPV4 || b[HLEN] != 6 || b[PLEN] != 4 {
            return Err(Malformed::Unexpected);
        }
        Ok(Self(bytes))
    }

    fn b(&self) -> &[u8] {
        self.0.as_ref()
    }

    /// [`REQUEST`], [`REPLY`] or another operation.
    pub fn operation(&self) -> u16 {
        u16::from_be_bytes([self.b()[OPER], self.b()[OPER + 1]])
    }

    /// The sender's MAC.
    pub fn sender_mac(&self) -> Mac {
        self.b()[SHA..SHA + 6].try_into().expect("checked length")
    }

    /// The sender's IPv4 address (0 in a probe, RFC 5227).
    pub fn sender_ip(&self) -> u32 {
        u32::from_be_bytes(self.b()[SPA..SPA + 4].try_into().expect("checked length"))
    }

    /// The target's MAC (zero in a request).
    pub fn target_mac(&self) -> Mac {
        self.b()[THA..THA + 6].try_into().expect("checked length")
    }

    /// The target's IPv4 address.
    pub fn target_ip(&self) -> u32 {
        u32::from_be_bytes(self.b()[TPA..TPA + 4].try_into().expect("checked length"))
    }

    /// Whether it announces its sender (a gratuitous ARP: sender and target address alike).
    pub fn is_gratuitous(&self) -> bool {
        self.sender_ip() == self.target_ip()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Turns a request into the reply of `mac`, the owner of its target
    /// address: operation 2, the asker becomes the target.
    pub fn make_reply(&mut self, mac: Mac) {
        let (asker_mac, asker_ip, owned) = (self.sender_mac(), self.sender_ip(), self.target_ip());
        write(self.0.as_mut(), REPLY, mac, owned, asker_mac, asker_ip);
    }
}

/// Writes an ARP packet for IPv4 over Ethernet into the first [`LEN`] bytes of `out`.
pub fn write(out: &mut [u8], operation: u16, sender_mac: Mac, sender_ip: u32, target_mac: Mac, target_ip: u32) {
    let out = &mut out[..LEN];
    out[HTYPE..HTYPE + 2].copy_from_slice(&HTYPE_ETHERNET.to_be_bytes());
    out[PTYPE..PTYPE + 2].copy_from_slice(&super::ethernet::ETHERTYPE_IPV4.to_be_bytes());
    out[HLEN] = 6;
    out[PLEN] = 4;
    out[OPER..OPER + 2].copy_from_slice(&operation.to_be_bytes());
    out[SHA..SHA + 6].copy_from_slice(&sender_mac);
    out[SPA..SPA + 4].copy_from_slice(&sender_ip.to_be_bytes());
    out[THA..THA + 6].copy_from_slice(&target_mac);
    out[TPA..TPA + 4].copy_from_slice(&target_ip.to_be_bytes());
}
