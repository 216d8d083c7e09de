//! Segmentation in software, for a port that cannot send a GSO packet
//! whole (AF_XDP, DPDK): the packet cut into the segments its [`Offload`](sluice_core::packet::Offload)
//! says, as the kernel's GSO cuts them — each with the headers repeated,
//! IPv4's length, identification (counted up) and checksum, IPv6's payload
//! length, TCP's sequence number moved on, FIN and PSH on the last segment
//! only and CWR on the first, UDP's length, and every TCP or UDP checksum
//! computed whole.

use sluice_core::packet::{Gso, PacketId, PacketMeta, MAX_PACKET_LEN};
use sluice_core::wire::ethernet::Frame;
use sluice_core::wire::{ip_of, ip_of_mut, Ip};
use sluice_core::PacketPool;

/// TCP's flags that belong to the last segment only (FIN, PSH) and to the first (CWR).
const LAST_ONLY: u8 = 0x01 | 0x08;
const FIRST_ONLY: u8 = 0x80;

/// A packet's IP version.
enum Kind {
    V4,
    V6,
}

/// Why a packet was not cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uncut {
    /// Its headers do not parse as its offload says.
    Malformed,
    /// The pool has no small buffers for every segment: none was made.
    NoBuffers,
}

/// Cuts GSO packet `id` into its segments, new packets of `pool` (with
/// `id`'s metadata), passed to `send` in order; `id` itself is left as it
/// was, for the caller to let go. Returns how many segments there are.
pub fn segment(pool: &mut PacketPool, id: PacketId, mut send: impl FnMut(&mut PacketPool, PacketId)) -> Result<usize, Uncut> {
    let offload = pool.offload(id);
    let frame = pool.data(id);
    let l3 = Frame::new_checked(frame).map_err(|_| Uncut::Malformed)?.payload_offset();
    let ip = ip_of(frame).map_err(|_| Uncut::Malformed)?;
    let (protocol, l4) = ip.upper_offset().map_err(|_| Uncut::Malformed)?;
    let l4 = l3 + l4;
    let headers = match (offload.gso, protocol) {
        (Gso::TcpV4 | Gso::TcpV6, sluice_core::wire::ip_protocol::TCP) => l4 + usize::from(frame.get(l4 + 12).ok_or(Uncut::Malformed)? >> 4) * 4,
        (Gso::Udp, sluice_core::wire::ip_protocol::UDP) => l4 + sluice_core::wire::l4::UDP_LEN,
        _ => return Err(Uncut::Malformed),
    };
    let (ip_kind, ident) = match ip {
        Ip::V4(h) => (Kind::V4, h.ident()),
        Ip::V6(_) => (Kind::V6, 0),
    };
    let mss = usize::from(offload.gso_size);
    if headers >= frame.len() || mss == 0 || headers + mss > MAX_PACKET_LEN {
        return Err(Uncut::Malformed);
    }
    let payload = frame.len() - headers;
    let count = payload.div_ceil(mss);
    if pool.available() < count {
        return Err(Uncut::NoBuffers);
    }
    let meta = *pool.meta(id);
    for k in 0..count {
        let chunk = mss.min(payload - k * mss);
        let seg = pool.alloc(headers + chunk).expect("buffers counted above");
        let (data_off, len) = (pool.meta(seg).data_off, pool.meta(seg).len);
        *pool.meta_mut(seg) = PacketMeta { data_off, len, ..meta };
        pool.copy_range(id, 0, seg, 0, headers);
        pool.copy_range(id, headers + k * mss, seg, headers, chunk);
        let bytes = pool.data_mut(seg);
        if offload.gso == Gso::Udp {
            bytes[l4 + 4..l4 + 6].copy_from_slice(&((sluice_core::wire::l4::UDP_LEN + chunk) as u16).to_be_bytes());
        } else {
            let seq = u32::from_be_bytes(bytes[l4 + 4..l4 + 8].try_into().expect("a TCP header")).wrapping_add((k * mss) as u32);
            bytes[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
            let mut flags = bytes[l4 + 13];
            if k + 1 < count {
                flags &= !LAST_ONLY;
            }
            if k > 0 {
                flags &= !FIRST_ONLY;
            }
            bytes[l4 + 13] = flags;
        }
        if matches!(ip_kind, Kind::V6) {
            // Its length first: the header is checked against it.
            let len = (headers - l3 - sluice_core::wire::ipv6::HEADER_LEN + chunk) as u16;
            bytes[l3 + 4..l3 + 6].copy_from_slice(&len.to_be_bytes());
        }
        match ip_of_mut(bytes).map_err(|_| Uncut::Malformed)? {
            Ip::V4(mut h) => {
                h.set_length_and_ident((headers - l3 + chunk) as u16, ident.wrapping_add(k as u16));
                h.fill_upper_checksum();
            }
            Ip::V6(mut h) => h.fill_upper_checksum(),
        }
        send(pool, seg);
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TransportSlice};
    use sluice_core::packet::Offload;

    /// A GSO packet as a local stack hands it over: one TCP segment of
    /// `payload` with FIN, PSH and CWR set and the checksum left partial
    /// (the pseudo-header's sum in its field), in a large buffer.
    fn gso_packet(pool: &mut PacketPool, v6: bool, payload: &[u8], mss: u16) -> PacketId {
        let builder = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut frame = Vec::new();
        let tcp = |b: etherparse::PacketBuilderStep<etherparse::IpHeaders>| b.tcp(5000, 80, 1_000_000, 64_000).fin().psh().cwr();
        if v6 {
            tcp(builder.ipv6([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], 64)).write(&mut frame, payload).unwrap();
        } else {
            tcp(builder.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)).write(&mut frame, payload).unwrap();
        }
        let l4 = if v6 { 54 } else { 34 };
        frame[l4 + 16..l4 + 18].copy_from_slice(&[0x12, 0x34]);
        let id = pool.alloc(MAX_PACKET_LEN + 1).unwrap();
        pool.set_len(id, frame.len());
        pool.data_mut(id).copy_from_slice(&frame);
        let gso = if v6 { Gso::TcpV6 } else { Gso::TcpV4 };
        pool.set_offload(id, Offload { gso, gso_size: mss, hdr_len: (l4 + 20) as u16, csum_partial: true, csum_start: l4 as u16, csum_offset: 16 });
        id
    }

    #[test]
    fn a_tcp_gso_packet_is_cut_as_the_kernel_cuts_it() {
        for v6 in [false, true] {
            let mut pool = PacketPool::new(64);
            let payload: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
            let id = gso_packet(&mut pool, v6, &payload, 1448);
            let mut segments = Vec::new();
            assert_eq!(segment(&mut pool, id, |_, s| segments.push(s)), Ok(7));
            let mut joined = Vec::new();
            for (k, &s) in segments.iter().enumerate() {
                let p = SlicedPacket::from_ethernet(pool.data(s)).unwrap();
                let Some(TransportSlice::Tcp(tcp)) = &p.transport else { panic!() };
                assert_eq!(tcp.sequence_number(), 1_000_000 + 1448 * k as u32);
                assert_eq!((tcp.fin(), tcp.psh(), tcp.cwr()), (k == 6, k == 6, k == 0), "segment {k}");
                let expected = match &p.net {
                    Some(NetSlice::Ipv4(ip)) => {
                        assert_eq!(ip.header().identification(), k as u16, "IP ids counted up");
                        assert_eq!(ip.header().header_checksum(), ip.header().to_header().calc_header_checksum());
                        tcp.to_header().calc_checksum_ipv4(&ip.header().to_header(), tcp.payload()).unwrap()
                    }
                    Some(NetSlice::Ipv6(ip)) => tcp.to_header().calc_checksum_ipv6(&ip.header().to_header(), tcp.payload()).unwrap(),
                    _ => panic!(),
                };
                assert_eq!(tcp.checksum(), expected, "a whole checksum, the partial one completed");
                joined.extend_from_slice(tcp.payload());
            }
            assert_eq!(joined, payload, "the byte stream whole, in order");
        }
    }

    #[test]
    fn a_packet_whose_headers_do_not_say_its_offload_is_not_cut() {
        let mut pool = PacketPool::new(64);
        let id = gso_packet(&mut pool, false, &[0; 3000], 1448);
        let o = pool.offload(id);
        pool.set_offload(id, Offload { gso: Gso::Udp, ..o });
        assert_eq!(segment(&mut pool, id, |_, _| {}), Err(Uncut::Malformed));
        pool.set_offload(id, o);
        let mut few = PacketPool::shared_with(1, 2, 1).pop().unwrap();
        let big = gso_packet(&mut few, false, &[0; 3000], 1448);
        assert_eq!(segment(&mut few, big, |_, _| {}), Err(Uncut::NoBuffers), "three segments, two buffers: none cut");
        assert_eq!(few.available(), 2);
    }
}
