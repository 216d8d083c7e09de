//! TCP ACK coalescing, as a Reframer does it: of a flow's pure ACKs sent
//! back to back, an ACK that the next one makes redundant is dropped. The
//! next one makes it redundant when it acknowledges more with the same
//! window. Kept always: the last ACK, duplicate ACKs (they signal loss to
//! the sender), ACKs carrying SACK blocks, ACKs after which the window
//! changes, and anything with data or SYN, FIN, RST. Packets are not
//! rewritten, so every checksum stays valid.

use sluice_core::wire::ip_protocol;
use sluice_core::wire::ipv4_of;
use sluice_core::wire::l4::{tcp_flags, TCP_MIN_LEN};

/// TCP option kinds.
const OPT_END: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_SACK: u8 = 5;

/// What coalescing needs of a pure ACK (no data; ACK, perhaps PSH, and no other flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PureAck {
    /// Acknowledgment number.
    pub ack: u32,
    /// Advertised window (unscaled).
    pub window: u16,
    /// Whether it carries SACK blocks.
    pub sack: bool,
}

impl PureAck {
    /// The pure ACK in an Ethernet frame, if it is one.
    pub fn of(frame: &[u8]) -> Option<Self> {
        let ip = ipv4_of(frame).ok()?;
        if ip.protocol() != ip_protocol::TCP {
            return None;
        }
        let tcp = ip.payload();
        let header_len = usize::from(*tcp.get(12)? >> 4) * 4;
        let flags = *tcp.get(13)?;
        let payload = usize::from(ip.total_len()).checked_sub(ip.header_len() + header_len)?;
        if header_len < TCP_MIN_LEN || tcp.len() < header_len || payload != 0 || flags & !(tcp_flags::ACK | tcp_flags::PSH) != 0 || flags & tcp_flags::ACK == 0 {
            return None;
        }
        Some(Self {
            ack: u32::from_be_bytes(tcp[8..12].try_into().ok()?),
            window: u16::from_be_bytes([tcp[14], tcp[15]]),
            sack: has_sack(&tcp[TCP_MIN_LEN..header_len]),
        })
    }

    /// Whether `next`, the flow's next packet and a pure ACK, makes this one
    /// redundant; `previous` is the flow's pure ACK before this one, if it
    /// was the packet just before (this one then duplicates it when equal).
    pub fn superseded_by(&self, next: &PureAck, previous: Option<&PureAck>) -> bool {
        let duplicate = previous.is_some_and(|p| p.ack == self.ack);
        let advances = (next.ack.wrapping_sub(self.ack) as i32) > 0;
        !self.sack && !duplicate && advances && next.window == self.window
    }
}

/// Whether TCP options `options` hold a SACK option.
fn has_sack(options: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&kind) = options.get(i) {
        match kind {
            OPT_END => return false,
            OPT_NOP => i += 1,
            OPT_SACK => return true,
            _ => match options.get(i + 1) {
                Some(&len) if len >= 2 => i += usize::from(len),
                _ => return false,
            },
        }
    }
    false
}
