//! IP protocol numbers (IANA's registry), as IPv4's protocol field and
//! IPv6's next header carry them: the one place every header view and NF
//! takes them from.

/// ICMP for IPv4.
pub const ICMP: u8 = 1;
/// TCP.
pub const TCP: u8 = 6;
/// UDP.
pub const UDP: u8 = 17;
/// ICMPv6.
pub const ICMPV6: u8 = 58;
