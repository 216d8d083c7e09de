//! ICMP for IPv4 (RFC 792): the message types a router sends and answers,
//! and the view of a message's first eight bytes.

use super::checksum;
use super::Malformed;

/// Bytes of an ICMP header (type, code, checksum, four bytes that depend on the type).
pub const HEADER_LEN: usize = 8;

/// Echo reply.
pub const ECHO_REPLY: u8 = 0;
/// Destination unreachable (codes below).
pub const DEST_UNREACHABLE: u8 = 3;
/// Redirect.
pub const REDIRECT: u8 = 5;
/// Echo request.
pub const ECHO_REQUEST: u8 = 8;
/// Time exceeded (code 0: TTL exceeded in transit).
pub const TIME_EXCEEDED: u8 = 11;
/// Parameter problem.
pub const PARAMETER_PROBLEM: u8 = 12;

/// Destination unreachable: no route to the network.
pub const NET_UNREACHABLE: u8 = 0;
/// Destination unreachable: the host does not answer ARP.
pub const HOST_UNREACHABLE: u8 = 1;
/// Destination unreachable: the destination does not speak the protocol.
pub const PROTOCOL_UNREACHABLE: u8 = 2;
/// Destination unreachable: no one listens on the port.
pub const PORT_UNREACHABLE: u8 = 3;
/// Destination unreachable: fragmentation needed and DF set (the
/// next-hop MTU in the low 16 bits of the header's last word, RFC 1191).
pub const FRAGMENTATION_NEEDED: u8 = 4;
/// Time exceeded: a datagram's fragments did not all come in time.
pub const REASSEMBLY_TIME_EXCEEDED: u8 = 1;

/// Whether messages of `kind` report an error (a router never answers one
/// with another, RFC 1812 §4.3.2.7): source quench (4) and the types above
/// that are not echo or information messages.
pub fn is_error(kind: u8) -> bool {
    matches!(kind, DEST_UNREACHABLE | 4 | REDIRECT | TIME_EXCEEDED | PARAMETER_PROBLEM)
}

/// A view of an ICMP message (header and data).
pub struct Message<T: AsRef<[u8]>>(T);

impl<T: AsRef<[u8]>> Message<T> {
    /// Checks that the bytes hold the header.
    pub fn new_checked(bytes: T) -> Result<Self, Malformed> {
        if bytes.as_ref().len() < HEADER_LEN {
            return Err(Malformed::Truncated);
        }
        Ok(Self(bytes))
    }

    /// Message type.
    pub fn kind(&self) -> u8 {
        self.0.as_ref()[0]
    }

    /// Message code.
    pub fn code(&self) -> u8 {
        self.0.as_ref()[1]
    }

    /// The header's last four bytes (an echo's identifier and sequence, a
    /// fragmentation-needed's MTU).
    pub fn rest(&self) -> u32 {
        u32::from_be_bytes(self.0.as_ref()[4..8].try_into().expect("checked length"))
    }

    /// Whether the checksum over the whole message verifies.
    pub fn checksum_ok(&self) -> bool {
        checksum::sum(self.0.as_ref()) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Message<T> {
    /// Turns an echo request into its reply: type 0, checksum updated
    /// (RFC 1624), identifier, sequence and data kept.
    pub fn make_echo_reply(&mut self) {
        let b = self.0.as_mut();
        let old = u16::from_be_bytes([b[0], b[1]]);
        b[0] = ECHO_REPLY;
        let c = checksum::update(u16::from_be_bytes([b[2], b[3]]), old, u16::from_be_bytes([b[0], b[1]]));
        b[2..4].copy_from_slice(&c.to_be_bytes());
    }
}

/// Writes an ICMP header of `kind`, `code` and last word `rest` into the
/// first eight bytes of `message` and its checksum over the whole of it
/// (the data after the header must be in place).
pub fn write(message: &mut [u8], kind: u8, code: u8, rest: u32) {
    message[0] = kind;
    message[1] = code;
    message[2..4].fill(0);
    message[4..8].copy_from_slice(&rest.to_be_bytes());
    let c = !checksum::sum(message);
    message[2..4].copy_from_slice(&c.to_be_bytes());
}
