//! The reset a closed port answers a TCP segment with (RFC 9293 §3.10.7.1,
//! "If the state is CLOSED"): a host, and a router for its own addresses,
//! refuses a connection this way rather than letting it time out.

use super::l4::{tcp_flags, TCP_MIN_LEN};
use super::Malformed;

/// The header of a reset (20 bytes, no options, no data), its checksum
/// left to the IP header that carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reset {
    /// Source port: the segment's destination port.
    pub src_port: u16,
    /// Destination port: the segment's source port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (0 where ACK is not set).
    pub ack: u32,
    /// RST, with ACK where the segment had none.
    pub flags: u8,
}

impl Reset {
    /// The reset that answers `segment` (a TCP header and its data, `len`
    /// bytes as its IP header says); `Ok(None)` for a segment that is
    /// itself a reset, which is never answered.
    pub fn answering(segment: &[u8]) -> Result<Option<Self>, Malformed> {
        if segment.len() < TCP_MIN_LEN {
            return Err(Malformed::Truncated);
        }
        let header_len = usize::from(segment[12] >> 4) * 4;
        if header_len < TCP_MIN_LEN || header_len > segment.len() {
            return Err(Malformed::Unexpected);
        }
        let flags = tcp_flags(segment)?;
        if flags & tcp_flags::RST != 0 {
            return Ok(None);
        }
        let word = |at: usize| u32::from_be_bytes([segment[at], segment[at + 1], segment[at + 2], segment[at + 3]]);
        let (src_port, dst_port) = (u16::from_be_bytes([segment[2], segment[3]]), u16::from_be_bytes([segment[0], segment[1]]));
        Ok(Some(if flags & tcp_flags::ACK != 0 {
            // <SEQ=SEG.ACK><CTL=RST>
            Self { src_port, dst_port, seq: word(8), ack: 0, flags: tcp_flags::RST }
        } else {
            // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>: SYN and FIN each take a sequence number.
            let seg_len = (segment.len() - header_len) as u32 + u32::from(flags & tcp_flags::SYN != 0) + u32::from(flags & tcp_flags::FIN != 0);
            Self { src_port, dst_port, seq: 0, ack: word(4).wrapping_add(seg_len), flags: tcp_flags::RST | tcp_flags::ACK }
        }))
    }

    /// Writes the header into the first [`TCP_MIN_LEN`] bytes of `out`, checksum zero.
    pub fn emit(&self, out: &mut [u8]) {
        let h = &mut out[..TCP_MIN_LEN];
        h[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        h[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        h[4..8].copy_from_slice(&self.seq.to_be_bytes());
        h[8..12].copy_from_slice(&self.ack.to_be_bytes());
        h[12] = (TCP_MIN_LEN as u8 / 4) << 4;
        h[13] = self.flags;
        // Window, checksum and urgent pointer.
        h[14..].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{TcpHeader, TcpHeaderSlice};

    fn segment(flags: impl FnOnce(&mut TcpHeader), data: &[u8]) -> Vec<u8> {
        let mut h = TcpHeader::new(40000, 22, 1000, 64240);
        flags(&mut h);
        let mut bytes = h.to_bytes().to_vec();
        bytes.extend_from_slice(data);
        bytes
    }

    fn answer(seg: &[u8]) -> TcpHeader {
        let mut out = [0xaa; 20];
        Reset::answering(seg).unwrap().expect("answered").emit(&mut out);
        TcpHeaderSlice::from_slice(&out).unwrap().to_header()
    }

    #[test]
    fn a_syn_is_refused_with_a_reset_that_acknowledges_it() {
        let r = answer(&segment(|h| h.syn = true, &[]));
        assert_eq!((r.source_port, r.destination_port), (22, 40000));
        assert!(r.rst && r.ack && !r.syn && !r.fin);
        assert_eq!((r.sequence_number, r.acknowledgment_number), (0, 1001));
        assert_eq!((r.window_size, r.urgent_pointer, r.checksum), (0, 0, 0));
    }

    #[test]
    fn data_without_ack_is_acknowledged_through_its_last_byte_and_fin() {
        let r = answer(&segment(|h| h.fin = true, &[7; 10]));
        assert_eq!((r.sequence_number, r.acknowledgment_number, r.ack), (0, 1011, true));
    }

    #[test]
    fn a_segment_with_ack_gets_a_reset_from_the_sequence_it_acknowledged() {
        let r = answer(&segment(
            |h| {
                h.ack = true;
                h.acknowledgment_number = 0xffff_fff0;
            },
            &[1, 2, 3],
        ));
        assert_eq!((r.sequence_number, r.acknowledgment_number, r.rst, r.ack), (0xffff_fff0, 0, true, false));
    }

    #[test]
    fn a_reset_is_never_answered_and_a_short_or_lying_header_is_malformed() {
        assert_eq!(Reset::answering(&segment(|h| h.rst = true, &[])), Ok(None));
        let seg = segment(|h| h.syn = true, &[]);
        assert_eq!(Reset::answering(&seg[..19]), Err(Malformed::Truncated));
        let mut lying = seg.clone();
        lying[12] = 0xf0;
        assert_eq!(Reset::answering(&lying), Err(Malformed::Unexpected));
        lying[12] = 0x40;
        assert_eq!(Reset::answering(&lying), Err(Malformed::Unexpected));
    }
}
