//! Reassembly of datagrams sent to the router itself in fragments (RFC 791
//! §3.2, RFC 8200 §4.5), as a host reassembles before it answers: a ping
//! larger than the link's MTU to a gateway. A fragment's bytes are copied
//! into the datagram's place here and its packet is taken in at once, so
//! nothing waits in the pool. [`DATAGRAMS`] datagrams are put together at
//! once, each in a buffer of the largest packet's size, allocated when the
//! table is made; a new datagram takes a free place, else one whose first
//! fragment is older than [`TIMEOUT_NS`] (Linux's `ipfrag_time`), else the
//! oldest. Fragments that overlap discard their datagram (RFC 5722, and
//! Linux for IPv4 as well); a fragment wholly received before is a
//! duplicate, and ignored.

use sluice_core::packet::MAX_LARGE_LEN;

/// Datagrams put together at once (per interface).
pub const DATAGRAMS: usize = 4;
/// How long a datagram may take to come whole before its place is given to another (ns).
pub const TIMEOUT_NS: u64 = 30_000_000_000;
/// Bytes of headers kept from a datagram's first fragment: Ethernet with
/// a VLAN tag, then IPv4 with options, or IPv6's unfragmentable part.
pub const MAX_HEAD: usize = 256;

/// Which datagram a fragment is of (RFC 791: source, destination, protocol
/// and identification; RFC 8200: source, destination and identification).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// Whether it is IPv6.
    pub v6: bool,
    /// Its source and destination (IPv4 in the low 32 bits).
    pub src: u128,
    pub dst: u128,
    /// Its identification (IPv4's 16 bits in the low half).
    pub ident: u32,
    /// Its protocol (IPv4's field; 0 for IPv6, whose key has none).
    pub protocol: u8,
}

/// One fragment, as its packet says.
pub struct Piece<'a> {
    pub key: Key,
    /// Where its data lies in the datagram's fragmentable part (bytes).
    pub offset: usize,
    /// Whether more fragments follow it.
    pub more: bool,
    pub data: &'a [u8],
    /// The headers in front of its data: Ethernet through IPv4's header, or
    /// through IPv6's unfragmentable part. The first fragment's are the datagram's.
    pub head: &'a [u8],
    /// A byte of `head` the datagram has otherwise, and its value: IPv6's
    /// next-header field that named the fragment header, which names what
    /// the fragment header named.
    pub patch: Option<(usize, u8)>,
}

/// What a fragment did to its datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// It is held; the datagram waits for more.
    Waiting,
    /// A duplicate of what was held already: nothing changed.
    Duplicate,
    /// The datagram is whole, in place `slot` (see [`Reassembly::whole`]).
    Whole(usize),
    /// The datagram was discarded: its fragments overlap or contradict one
    /// another, or it would be longer than the largest packet or its headers than [`MAX_HEAD`].
    Discarded,
}

/// The datagrams being put together.
pub struct Reassembly {
    places: Vec<Place>,
}

struct Place {
    key: Option<Key>,
    /// When its first fragment to come came (ns).
    since_ns: u64,
    head: [u8; MAX_HEAD],
    /// Bytes of `head`; 0 until the fragment at offset 0 comes.
    head_len: usize,
    /// The fragmentable part.
    data: Box<[u8]>,
    /// Which 8-byte blocks of `data` came.
    blocks: Box<[u64]>,
    /// Bytes of `data` that came.
    got: usize,
    /// The fragmentable part's length, once its last fragment came.
    total: Option<usize>,
}

impl Default for Reassembly {
    fn default() -> Self {
        let place = || Place {
            key: None,
            since_ns: 0,
            head: [0; MAX_HEAD],
            head_len: 0,
            data: vec![0; MAX_LARGE_LEN].into_boxed_slice(),
            blocks: vec![0; MAX_LARGE_LEN.div_ceil(8).div_ceil(64)].into_boxed_slice(),
            got: 0,
            total: None,
        };
        Self { places: (0..DATAGRAMS).map(|_| place()).collect() }
    }
}

impl Reassembly {
    /// Adds `piece`, arrived at `now_ns`, to its datagram.
    pub fn add(&mut self, now_ns: u64, piece: &Piece<'_>) -> Added {
        let at = self.place_of(piece.key, now_ns);
        let place = &mut self.places[at];
        let end = piece.offset + piece.data.len();
        let contradicts = match place.total {
            _ if piece.more && !piece.data.len().is_multiple_of(8) => true,
            _ if end > MAX_LARGE_LEN || (piece.offset == 0 && piece.head.len() > MAX_HEAD) => true,
            Some(total) => end > total || (!piece.more && end != total),
            None => !piece.more && place.got > 0 && place.highest() > end,
        };
        if contradicts || piece.data.is_empty() && piece.more {
            place.key = None;
            return Added::Discarded;
        }
        let blocks = piece.offset / 8..end.div_ceil(8);
        let had = blocks.clone().filter(|&b| place.has(b)).count();
        if had == blocks.len() && (piece.more || place.total.is_some()) {
            return Added::Duplicate;
        }
        if had > 0 {
            place.key = None;
            return Added::Discarded;
        }
        place.data[piece.offset..end].copy_from_slice(piece.data);
        for b in blocks {
            place.blocks[b / 64] |= 1 << (b % 64);
        }
        place.got += piece.data.len();
        if !piece.more {
            place.total = Some(end);
        }
        if piece.offset == 0 {
            place.head[..piece.head.len()].copy_from_slice(piece.head);
            place.head_len = piece.head.len();
            if let Some((at, value)) = piece.patch {
                place.head[at] = value;
            }
        }
        match place.total {
            Some(total) if place.got == total && place.head_len > 0 => Added::Whole(at),
            _ => Added::Waiting,
        }
    }

    /// The headers and fragmentable part of the datagram made whole in
    /// place `at`, which is free again once they are read.
    pub fn whole(&mut self, at: usize) -> (&[u8], &[u8]) {
        let place = &mut self.places[at];
        place.key = None;
        (&place.head[..place.head_len], &place.data[..place.total.expect("whole")])
    }

    /// The place of `key`'s datagram, a new one made where it has none.
    fn place_of(&mut self, key: Key, now_ns: u64) -> usize {
        if let Some(at) = self.places.iter().position(|p| p.key == Some(key)) {
            return at;
        }
        let stale = |p: &Place| p.key.is_none() || now_ns.saturating_sub(p.since_ns) >= TIMEOUT_NS;
        let at = self.places.iter().position(stale).unwrap_or_else(|| {
            let oldest = self.places.iter().enumerate().min_by_key(|(_, p)| p.since_ns);
            oldest.map_or(0, |(at, _)| at)
        });
        let place = &mut self.places[at];
        (place.key, place.since_ns, place.head_len, place.got, place.total) = (Some(key), now_ns, 0, 0, None);
        place.blocks.fill(0);
        at
    }
}

impl Place {
    fn has(&self, block: usize) -> bool {
        self.blocks[block / 64] & (1 << (block % 64)) != 0
    }

    /// One past the last byte that came (bytes).
    fn highest(&self) -> usize {
        let last = self.blocks.iter().rposition(|&w| w != 0).map_or(0, |w| w * 64 + 63 - self.blocks[w].leading_zeros() as usize);
        (last + 1) * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: Key = Key { v6: false, src: 1, dst: 2, ident: 7, protocol: 1 };

    fn piece(offset: usize, more: bool, data: &[u8]) -> Piece<'_> {
        Piece { key: KEY, offset, more, data, head: b"headers", patch: None }
    }

    #[test]
    fn fragments_in_any_order_make_the_datagram_whole() {
        let bytes: Vec<u8> = (0..100u8).collect();
        let mut r = Reassembly::default();
        assert_eq!(r.add(0, &piece(48, true, &bytes[48..96])), Added::Waiting);
        assert_eq!(r.add(1, &piece(96, false, &bytes[96..])), Added::Waiting);
        assert_eq!(r.add(2, &piece(48, true, &bytes[48..96])), Added::Duplicate);
        let Added::Whole(at) = r.add(3, &piece(0, true, &bytes[..48])) else { panic!() };
        assert_eq!(r.whole(at), (&b"headers"[..], &bytes[..]));
        assert_eq!(r.add(4, &piece(0, true, &bytes[..48])), Added::Waiting, "its place is free again: a new datagram");
    }

    #[test]
    fn overlapping_or_contradicting_fragments_discard_their_datagram() {
        let bytes = [9u8; 64];
        let mut r = Reassembly::default();
        r.add(0, &piece(0, true, &bytes[..16]));
        assert_eq!(r.add(0, &piece(8, true, &bytes[..16])), Added::Discarded, "overlaps the first");
        assert_eq!(r.add(0, &piece(0, true, &bytes[..12])), Added::Discarded, "not a multiple of 8 bytes with more to come");
        r.add(0, &piece(32, true, &bytes[..8]));
        assert_eq!(r.add(0, &piece(16, false, &bytes[..8])), Added::Discarded, "ends before data that came");
        assert_eq!(r.add(0, &piece(MAX_LARGE_LEN, false, &bytes[..8])), Added::Discarded, "longer than the largest packet");
    }

    #[test]
    fn a_new_datagram_takes_a_timed_out_place_else_the_oldest() {
        let mut r = Reassembly::default();
        for (t, ident) in (10..).zip(0..DATAGRAMS as u32) {
            r.add(t, &Piece { key: Key { ident, ..KEY }, ..piece(8, true, &[1; 8]) });
        }
        let held = |r: &Reassembly| r.places.iter().filter_map(|p| p.key.map(|k| k.ident)).collect::<Vec<_>>();
        // The table is full: the oldest (ident 0) gives its place.
        r.add(20, &Piece { key: Key { ident: 99, ..KEY }, ..piece(8, true, &[1; 8]) });
        assert_eq!(held(&r), [99, 1, 2, 3]);
        // Idents 1 and 2 came 30 s ago: the first of them gives its place.
        r.add(12 + TIMEOUT_NS, &Piece { key: Key { ident: 100, ..KEY }, ..piece(8, true, &[1; 8]) });
        assert_eq!(held(&r), [99, 100, 2, 3]);
    }
}
