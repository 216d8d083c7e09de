//! IPv4 fragmentation (RFC 791 §3.2, RFC 1812 §5.2.6): a packet longer than
//! an MTU, without DF, split into fragments of at most the MTU. The packet
//! becomes the first fragment and keeps its options; the others are new
//! packets of its flow (counted made, and generated for the flow), each
//! with the options RFC 791 marks to be copied. A fragment is fragmented
//! again the same way, its offsets and last MF kept.
//!
//! IPv6 packets are fragmented only by their source (RFC 8200 §4.5): the
//! router's own, an answer as long as the datagram it answers.

use sluice_core::packet::{PacketId, MAX_LARGE_LEN, MAX_PACKET_LEN};
use sluice_core::wire::ethernet::Frame;
use sluice_core::wire::ipv6::{self, Fragment, FRAGMENT_HEADER_LEN};
use sluice_core::wire::ipv4;
use sluice_core::NfContext;

/// Why a packet was not fragmented (the caller drops it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unfragmented {
    /// Not an IPv4 packet whose header and length parse.
    Malformed,
    /// The pool had no buffers for every fragment: none was made.
    NoBuffers,
}

/// Splits IPv4 packet `id` (longer than `mtu` bytes of IP packet, DF
/// clear) into fragments that fit `mtu` and passes them to `send` in
/// order, `id` first (which `send` may rewrite but not shorten: the later
/// fragments are copied from it after). Returns how many there are.
pub fn fragment(ctx: &mut NfContext<'_>, id: PacketId, mtu: usize, mut send: impl FnMut(&mut NfContext<'_>, PacketId)) -> Result<usize, Unfragmented> {
    let frame = ctx.pool.data(id);
    let l3 = Frame::new_checked(frame).map_err(|_| Unfragmented::Malformed)?.payload_offset();
    let h = ipv4::Header::new_checked(&frame[l3..]).map_err(|_| Unfragmented::Malformed)?;
    let (ihl, total) = (h.header_len(), usize::from(h.total_len()));
    if total <= ihl || l3 + total > frame.len() {
        return Err(Unfragmented::Malformed);
    }
    let (offset, last_more) = (usize::from(h.fragment_offset()) * 8, h.more_fragments());
    let copied = copied_options(&frame[l3 + ipv4::MIN_HEADER_LEN..l3 + ihl]);
    let later_ihl = ipv4::MIN_HEADER_LEN + copied.len;
    let (first_data, later_data) = (mtu.saturating_sub(ihl) & !7, mtu.saturating_sub(later_ihl) & !7);
    if first_data == 0 || later_data == 0 {
        return Err(Unfragmented::Malformed);
    }
    let payload = total - ihl;
    let first_data = first_data.min(payload);
    let later = (payload - first_data).div_ceil(later_data);
    let chunk = |k: usize| later_data.min(payload - first_data - k * later_data);
    // Every buffer first, so that a packet is sent whole or not at all.
    let big = (0..later).filter(|&k| l3 + later_ihl + chunk(k) > MAX_PACKET_LEN).count();
    if ctx.pool.available() < later - big || ctx.pool.large_available() < big {
        return Err(Unfragmented::NoBuffers);
    }
    let meta = *ctx.pool.meta(id);
    send(ctx, id);
    for k in 0..later {
        let start = first_data + k * later_data;
        let f = ctx.make_packet(l3 + later_ihl + chunk(k), meta.flow).expect("buffers counted above");
        let m = ctx.pool.meta_mut(f);
        (m.ts_ns, m.seq, m.port, m.mark) = (meta.ts_ns, meta.seq, meta.port, meta.mark);
        copy_fragment(ctx, id, f, l3, ihl, &copied, start, chunk(k));
        let more = k + 1 < later || last_more;
        ipv4::Header::new_checked(&mut ctx.pool.data_mut(f)[l3..]).expect("just written").set_fragment((later_ihl + chunk(k)) as u16, more, ((offset + start) / 8) as u16);
        send(ctx, f);
    }
    ctx.pool.set_len(id, l3 + ihl + first_data);
    let mut header = ipv4::Header::new_checked(&mut ctx.pool.data_mut(id)[l3..]).expect("parsed above");
    header.set_fragment((ihl + first_data) as u16, later > 0 || last_more, (offset / 8) as u16);
    Ok(1 + later)
}

/// The most fragments an IPv6 packet is cut into (at the least MTU, 1280).
const MOST_V6_FRAGMENTS: usize = MAX_LARGE_LEN.div_ceil(1280 - ipv6::HEADER_LEN - FRAGMENT_HEADER_LEN);

/// Splits IPv6 packet `id`, one of the router's own, into fragments that
/// fit `mtu` (bytes of IP packet, 1280 or more), each with a fragment
/// header numbered `ident`: the fixed header is the unfragmentable part,
/// all behind it fragmentable (the router's packets carry no hop-by-hop or
/// routing header). Passes them to `send` in order, `id` first. Returns
/// how many there are.
pub fn fragment_v6(ctx: &mut NfContext<'_>, id: PacketId, mtu: usize, ident: u32, mut send: impl FnMut(&mut NfContext<'_>, PacketId)) -> Result<usize, Unfragmented> {
    let frame = ctx.pool.data(id);
    let l3 = Frame::new_checked(frame).map_err(|_| Unfragmented::Malformed)?.payload_offset();
    let h = ipv6::Header::new_checked(&frame[l3..]).map_err(|_| Unfragmented::Malformed)?;
    let (next_header, payload) = (h.next_header(), usize::from(h.payload_len()));
    let chunk = mtu.saturating_sub(ipv6::HEADER_LEN + FRAGMENT_HEADER_LEN) & !7;
    if chunk < 8 || payload.div_ceil(chunk) > MOST_V6_FRAGMENTS {
        return Err(Unfragmented::Malformed);
    }
    let count = payload.div_ceil(chunk);
    let head = l3 + ipv6::HEADER_LEN;
    let big = (1..count).filter(|&k| head + FRAGMENT_HEADER_LEN + chunk.min(payload - k * chunk) > MAX_PACKET_LEN).count();
    if ctx.pool.available() < count - 1 - big || ctx.pool.large_available() < big {
        return Err(Unfragmented::NoBuffers);
    }
    // `id` becomes the first: its headers move forward to make room for the fragment header.
    assert!(ctx.pool.prepend(id, FRAGMENT_HEADER_LEN), "the headroom holds a fragment header");
    ctx.pool.data_mut(id).copy_within(FRAGMENT_HEADER_LEN..FRAGMENT_HEADER_LEN + head, 0);
    let meta = *ctx.pool.meta(id);
    let mut later = [PacketId(0); MOST_V6_FRAGMENTS];
    for (k, slot) in later.iter_mut().enumerate().take(count).skip(1) {
        let len = chunk.min(payload - k * chunk);
        let f = ctx.make_packet(head + FRAGMENT_HEADER_LEN + len, meta.flow).expect("buffers counted above");
        let m = ctx.pool.meta_mut(f);
        (m.ts_ns, m.port, m.mark) = (meta.ts_ns, meta.port, meta.mark);
        ctx.pool.copy_range(id, 0, f, 0, head);
        ctx.pool.copy_range(id, head + FRAGMENT_HEADER_LEN + k * chunk, f, head + FRAGMENT_HEADER_LEN, len);
        write_v6_fragment(ctx.pool.data_mut(f), l3, len, (next_header, k * chunk, k + 1 < count), ident);
        *slot = f;
    }
    let first = chunk.min(payload);
    ctx.pool.set_len(id, head + FRAGMENT_HEADER_LEN + first);
    write_v6_fragment(ctx.pool.data_mut(id), l3, first, (next_header, 0, count > 1), ident);
    send(ctx, id);
    for &f in &later[1..count] {
        send(ctx, f);
    }
    Ok(count)
}

/// Writes into `frame` (whose IP header starts at `l3`) the fragment
/// header of an IPv6 fragment of `len` bytes of data — the header its data
/// starts, its offset (bytes) and whether more follow — and the fixed
/// header's fields that say it.
fn write_v6_fragment(frame: &mut [u8], l3: usize, len: usize, (next_header, offset, more): (u8, usize, bool), ident: u32) {
    let at = l3 + ipv6::HEADER_LEN;
    Fragment::emit(next_header, offset, more, ident, &mut frame[at..at + FRAGMENT_HEADER_LEN]);
    ipv6::set_next_header(&mut frame[l3..], ipv6::FRAGMENT);
    ipv6::set_payload_len(&mut frame[l3..], (FRAGMENT_HEADER_LEN + len) as u16);
}

/// The options of an IPv4 header every fragment carries (those whose
/// type has the copied flag), padded to whole words.
struct Copied {
    bytes: [u8; 40],
    len: usize,
}

fn copied_options(options: &[u8]) -> Copied {
    let mut out = Copied { bytes: [0; 40], len: 0 };
    // A malformed option ends what is copied (the router drops such a packet before it gets here).
    for (at, len) in ipv4::options(options).map_while(Result::ok) {
        if options[at] & ipv4::option::COPIED != 0 {
            out.bytes[out.len..out.len + len].copy_from_slice(&options[at..at + len]);
            out.len += len;
        }
    }
    out.len = out.len.next_multiple_of(4);
    out
}

/// Writes into fragment `f` the Ethernet header and fixed IP header of
/// `id`, the copied options, and `chunk` bytes of its payload from `start`.
#[allow(clippy::too_many_arguments)]
fn copy_fragment(ctx: &mut NfContext<'_>, id: PacketId, f: PacketId, l3: usize, ihl: usize, copied: &Copied, start: usize, chunk: usize) {
    let mut head = [0u8; 18 + ipv4::MIN_HEADER_LEN];
    head[..l3 + ipv4::MIN_HEADER_LEN].copy_from_slice(&ctx.pool.data(id)[..l3 + ipv4::MIN_HEADER_LEN]);
    let later_ihl = ipv4::MIN_HEADER_LEN + copied.len;
    {
        let dst = ctx.pool.data_mut(f);
        dst[..l3 + ipv4::MIN_HEADER_LEN].copy_from_slice(&head[..l3 + ipv4::MIN_HEADER_LEN]);
        dst[l3] = 0x40 | (later_ihl / 4) as u8;
        dst[l3 + ipv4::MIN_HEADER_LEN..l3 + later_ihl].copy_from_slice(&copied.bytes[..copied.len]);
    }
    ctx.pool.copy_range(id, l3 + ihl + start, f, l3 + later_ihl, chunk);
}
