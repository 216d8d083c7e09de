//! ICMPv6 (RFC 4443) and the neighbour-discovery messages a router answers
//! and sends (RFC 4861): solicitations, advertisements and their
//! link-layer address options.

use super::ethernet::Mac;
use super::Malformed;

/// Bytes of an ICMPv6 header (type, code, checksum, four bytes that depend on the type).
pub const HEADER_LEN: usize = 8;

/// Destination unreachable (code 0: no route).
pub const DEST_UNREACHABLE: u8 = 1;
/// Packet too big (the MTU in the header's last word).
pub const PACKET_TOO_BIG: u8 = 2;
/// Time exceeded (code 0: hop limit exceeded in transit).
pub const TIME_EXCEEDED: u8 = 3;
/// Parameter problem (the offset of the field at fault in the header's last word).
pub const PARAMETER_PROBLEM: u8 = 4;
/// Echo request.
pub const ECHO_REQUEST: u8 = 128;
/// Echo reply.
pub const ECHO_REPLY: u8 = 129;
/// Router solicitation.
pub const ROUTER_SOLICIT: u8 = 133;
/// Router advertisement.
pub const ROUTER_ADVERT: u8 = 134;
/// Neighbour solicitation.
pub const NEIGHBOR_SOLICIT: u8 = 135;
/// Neighbour advertisement.
pub const NEIGHBOR_ADVERT: u8 = 136;
/// Redirect.
pub const REDIRECT: u8 = 137;

/// Destination unreachable: no route to the destination.
pub const NO_ROUTE: u8 = 0;
/// Destination unreachable: the address does not answer neighbour discovery.
pub const ADDRESS_UNREACHABLE: u8 = 3;
/// Destination unreachable: no one listens on the port.
pub const PORT_UNREACHABLE: u8 = 4;
/// Parameter problem: a next header the destination does not know.
pub const UNKNOWN_NEXT_HEADER: u8 = 1;
/// Time exceeded: a packet's fragments did not all come in time.
pub const REASSEMBLY_TIME_EXCEEDED: u8 = 1;

/// The hop limit neighbour discovery is sent with, and the only one it is
/// accepted with (RFC 4861 §7.1: proof that it was not forwarded).
pub const ND_HOP_LIMIT: u8 = 255;

/// An advertisement's flags (the first byte of its last header word).
pub mod advert_flags {
    /// Sent by a router.
    pub const ROUTER: u8 = 0x80;
    /// In answer to a solicitation.
    pub const SOLICITED: u8 = 0x40;
    /// Overrides a cached link-layer address.
    pub const OVERRIDE: u8 = 0x20;
}

/// Option type: the sender's link-layer address.
const SOURCE_LINK_ADDRESS: u8 = 1;
/// Option type: the target's link-layer address.
const TARGET_LINK_ADDRESS: u8 = 2;
/// Bytes of a solicitation or advertisement before its options.
pub const ND_LEN: usize = 24;
/// Bytes of a link-layer address option for Ethernet.
pub const LINK_ADDRESS_OPTION_LEN: usize = 8;

/// Whether messages of `kind` report an error (types below 128), which
/// are never answered with another (RFC 4443 §2.4 e.1).
pub fn is_error(kind: u8) -> bool {
    kind < 128
}

/// The link's all-nodes multicast address (ff02::1).
pub const ALL_NODES: u128 = 0xff02 << 112 | 1;
/// The link's all-routers multicast address (ff02::2).
pub const ALL_ROUTERS: u128 = 0xff02 << 112 | 2;

/// The solicited-node multicast address of `address` (ff02::1:ffXX:XXXX).
pub fn solicited_node(address: u128) -> u128 {
    0xff02_0000_0000_0000_0000_0001_ff00_0000 | (address & 0xff_ffff)
}

/// The Ethernet multicast address of IPv6 multicast address `group` (33:33 and its last 32 bits).
pub fn multicast_mac(group: u128) -> Mac {
    let low = (group as u32).to_be_bytes();
    [0x33, 0x33, low[0], low[1], low[2], low[3]]
}

/// Whether `address` is a multicast address (ff00::/8).
pub fn is_multicast(address: u128) -> bool {
    address >> 120 == 0xff
}

/// A neighbour solicitation or advertisement, checked as RFC 4861 §7.1
/// says one must be before anything is taken from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neighbor {
    /// [`NEIGHBOR_SOLICIT`] or [`NEIGHBOR_ADVERT`].
    pub kind: u8,
    /// The address asked about or advertised.
    pub target: u128,
    /// An advertisement's flags (see [`advert_flags`]); 0 for a solicitation.
    pub flags: u8,
    /// The link-layer address option it carries: the sender's in a
    /// solicitation, the target's in an advertisement.
    pub mac: Option<Mac>,
}

impl Neighbor {
    /// Reads a solicitation or advertisement from its ICMPv6 bytes
    /// (`message`, checksum already verified), sent with `hop_limit` from
    /// `src` to `dst`. Refused: another type, a hop limit other than 255, a
    /// code other than 0, a short message, a multicast target, an option
    /// of length 0 or running past the end, a solicitation from the
    /// unspecified address that is not to a solicited-node group or that
    /// carries a source address option, an advertisement to a multicast
    /// group that claims to answer a solicitation.
    pub fn parse(message: &[u8], hop_limit: u8, src: u128, dst: u128) -> Result<Self, Malformed> {
        if message.len() < ND_LEN {
            return Err(Malformed::Truncated);
        }
        let (kind, code) = (message[0], message[1]);
        if !matches!(kind, NEIGHBOR_SOLICIT | NEIGHBOR_ADVERT) || code != 0 || hop_limit != ND_HOP_LIMIT {
            return Err(Malformed::Unexpected);
        }
        let target = u128::from_be_bytes(message[8..24].try_into().expect("checked length"));
        if is_multicast(target) {
            return Err(Malformed::Unexpected);
        }
        let wanted = if kind == NEIGHBOR_SOLICIT { SOURCE_LINK_ADDRESS } else { TARGET_LINK_ADDRESS };
        let mut mac = None;
        let mut options = &message[ND_LEN..];
        while !options.is_empty() {
            let len = 8 * *options.get(1).ok_or(Malformed::Truncated)? as usize;
            if len == 0 {
                return Err(Malformed::Unexpected);
            }
            let option = options.get(..len).ok_or(Malformed::Truncated)?;
            if option[0] == wanted && len == LINK_ADDRESS_OPTION_LEN {
                mac = Some(option[2..8].try_into().expect("an 8-byte option"));
            }
            options = &options[len..];
        }
        let flags = if kind == NEIGHBOR_ADVERT { message[4] } else { 0 };
        let anonymous = src == 0;
        if kind == NEIGHBOR_SOLICIT && anonymous && (dst != solicited_node(target) || mac.is_some()) {
            return Err(Malformed::Unexpected);
        }
        if kind == NEIGHBOR_ADVERT && is_multicast(dst) && flags & advert_flags::SOLICITED != 0 {
            return Err(Malformed::Unexpected);
        }
        Ok(Self { kind, target, flags, mac })
    }
}

/// Writes a neighbour solicitation for `target` from `mac` (with its
/// source link-layer address option) into `message`, which must hold
/// [`ND_LEN`] + [`LINK_ADDRESS_OPTION_LEN`] bytes; the checksum is the
/// caller's (it covers the IPv6 pseudo-header).
pub fn write_solicit(message: &mut [u8], target: u128, mac: Mac) {
    write_neighbor(message, NEIGHBOR_SOLICIT, 0, target, SOURCE_LINK_ADDRESS, mac);
}

/// Writes a neighbour advertisement of `target` at `mac` with `flags`
/// (with its target link-layer address option), as [`write_solicit`].
pub fn write_advert(message: &mut [u8], flags: u8, target: u128, mac: Mac) {
    write_neighbor(message, NEIGHBOR_ADVERT, flags, target, TARGET_LINK_ADDRESS, mac);
}

fn write_neighbor(message: &mut [u8], kind: u8, flags: u8, target: u128, option: u8, mac: Mac) {
    let message = &mut message[..ND_LEN + LINK_ADDRESS_OPTION_LEN];
    message.fill(0);
    message[0] = kind;
    message[4] = flags;
    message[8..24].copy_from_slice(&target.to_be_bytes());
    message[24] = option;
    message[25] = 1;
    message[26..32].copy_from_slice(&mac);
}

/// Writes an ICMPv6 header of `kind`, `code` and last word `rest` into the
/// first eight bytes of `message`, checksum zero (the caller fills it over
/// the pseudo-header once the IPv6 header is written).
pub fn write_header(message: &mut [u8], kind: u8, code: u8, rest: u32) {
    message[0] = kind;
    message[1] = code;
    message[2..4].fill(0);
    message[4..8].copy_from_slice(&rest.to_be_bytes());
}
