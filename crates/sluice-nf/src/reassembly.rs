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
//!
//! The packet of a datagram's first fragment is kept with it (the others'
//! are taken in at once): should the datagram not come whole within
//! [`TIMEOUT_NS`], the time exceeded that tells its sender so quotes that
//! fragment (RFC 792, RFC 4443 §3.3; Linux sends one only where the first
//! fragment came, as here). The table says when the next is due, and hands
//! back every packet it stops keeping.

use sluice_core::packet::MAX_LARGE_LEN;
use sluice_core::PacketId;

/// Datagrams put together at once (per interface).
pub const DATAGRAMS: usize = 4;
/// How long a datagram may take to come whole (ns): then its sender is
/// told (where its first fragment came) and its place given to another.
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
    /// Its bytes are held; the datagram waits for more.
    Waiting,
    /// A duplicate of what was held already: nothing changed.
    Duplicate,
    /// The datagram is whole, in place `slot` (see [`Reassembly::whole`]).
    Whole(usize),
    /// The datagram was discarded: its fragments overlap or contradict one
    /// another, or it would be longer than the largest packet or its headers than [`MAX_HEAD`].
    Discarded,
}

/// What [`Reassembly::add`] did with a fragment and its packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub added: Added,
    /// Whether the table keeps the fragment's packet (a waiting datagram's first fragment).
    pub kept: bool,
    /// A first fragment the table kept and keeps no more: its datagram
    /// discarded, or its place given to another datagram.
    pub released: Option<PacketId>,
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
    /// The packet of the fragment at offset 0, once it came.
    first: Option<PacketId>,
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
            first: None,
            data: vec![0; MAX_LARGE_LEN].into_boxed_slice(),
            blocks: vec![0; MAX_LARGE_LEN.div_ceil(8).div_ceil(64)].into_boxed_slice(),
            got: 0,
            total: None,
        };
        Self { places: (0..DATAGRAMS).map(|_| place()).collect() }
    }
}

impl Reassembly {
    /// Adds `piece`, the fragment in packet `id`, arrived at `now_ns`, to its datagram.
    pub fn add(&mut self, now_ns: u64, piece: &Piece<'_>, id: PacketId) -> Outcome {
        let (at, released) = self.place_of(piece.key, now_ns);
        let place = &mut self.places[at];
        let added = place.add(piece, id, at);
        // A discarded datagram frees its place. (A place just given to it
        // kept nothing yet, so at most one first fragment is released.)
        let discarded = if added == Added::Discarded { place.clear() } else { None };
        Outcome { added, kept: place.first == Some(id), released: released.or(discarded) }
    }

    /// The headers and fragmentable part of the datagram made whole in
    /// place `at`, and its first fragment's packet, which the table keeps
    /// no more; the place is free again once they are read.
    pub fn whole(&mut self, at: usize) -> (&[u8], &[u8], PacketId) {
        let place = &mut self.places[at];
        let first = place.clear().expect("a whole datagram's first fragment came");
        (&place.head[..place.head_len], &place.data[..place.total.expect("whole")], first)
    }

    /// The first fragment, and the key, of a datagram that did not come
    /// whole by `now_ns`, its place freed; `None` when there is none.
    /// (One whose first fragment never came leaves nothing to answer: its
    /// place goes to the next datagram.)
    pub fn timed_out(&mut self, now_ns: u64) -> Option<(PacketId, Key)> {
        let place = self.places.iter_mut().find(|p| p.first.is_some() && p.due_ns() <= now_ns)?;
        let key = place.key.expect("a place that keeps a fragment has a datagram");
        Some((place.clear().expect("found keeping one"), key))
    }

    /// When the next datagram whose first fragment is kept times out (ns).
    pub fn due_ns(&self) -> Option<u64> {
        self.places.iter().filter(|p| p.first.is_some()).map(Place::due_ns).min()
    }

    /// First fragments kept (pkt).
    pub fn kept(&self) -> usize {
        self.places.iter().filter(|p| p.first.is_some()).count()
    }

    /// The place of `key`'s datagram, a new one made where it has none, and
    /// the first fragment the place kept for the datagram it was given away from.
    fn place_of(&mut self, key: Key, now_ns: u64) -> (usize, Option<PacketId>) {
        if let Some(at) = self.places.iter().position(|p| p.key == Some(key) && now_ns < p.due_ns()) {
            return (at, None);
        }
        let stale = |p: &Place| p.key.is_none() || now_ns >= p.due_ns();
        let at = self.places.iter().position(stale).unwrap_or_else(|| {
            let oldest = self.places.iter().enumerate().min_by_key(|(_, p)| p.since_ns);
            oldest.map_or(0, |(at, _)| at)
        });
        let place = &mut self.places[at];
        let released = place.clear();
        (place.key, place.since_ns, place.head_len, place.got, place.total) = (Some(key), now_ns, 0, 0, None);
        place.blocks.fill(0);
        (at, released)
    }
}

impl Place {
    /// Adds `piece`, in packet `id`, to the datagram in this place, place `at`.
    fn add(&mut self, piece: &Piece<'_>, id: PacketId, at: usize) -> Added {
        let end = piece.offset + piece.data.len();
        let contradicts = match self.total {
            _ if piece.more && !piece.data.len().is_multiple_of(8) => true,
            _ if end > MAX_LARGE_LEN || (piece.offset == 0 && piece.head.len() > MAX_HEAD) => true,
            Some(total) => end > total || (!piece.more && end != total),
            None => !piece.more && self.got > 0 && self.highest() > end,
        };
        if contradicts || piece.data.is_empty() && piece.more {
            return Added::Discarded;
        }
        let blocks = piece.offset / 8..end.div_ceil(8);
        let had = blocks.clone().filter(|&b| self.has(b)).count();
        if had == blocks.len() && (piece.more || self.total.is_some()) {
            return Added::Duplicate;
        }
        if had > 0 {
            return Added::Discarded;
        }
        self.data[piece.offset..end].copy_from_slice(piece.data);
        for b in blocks {
            self.blocks[b / 64] |= 1 << (b % 64);
        }
        self.got += piece.data.len();
        if !piece.more {
            self.total = Some(end);
        }
        if piece.offset == 0 {
            self.head[..piece.head.len()].copy_from_slice(piece.head);
            self.head_len = piece.head.len();
            if let Some((byte, value)) = piece.patch {
                self.head[byte] = value;
            }
            self.first = Some(id);
        }
        match self.total {
            Some(total) if self.got == total && self.head_len > 0 => Added::Whole(at),
            _ => Added::Waiting,
        }
    }

    /// Frees the place; returns the first fragment it kept.
    fn clear(&mut self) -> Option<PacketId> {
        self.key = None;
        self.first.take()
    }

    /// When its datagram times out (ns).
    fn due_ns(&self) -> u64 {
        self.since_ns.saturating_add(TIMEOUT_NS)
    }

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

    /// What adding `piece` in packet `id` at `now_ns` did to its datagram.
    fn add(r: &mut Reassembly, now_ns: u64, piece: &Piece<'_>, id: u32) -> Added {
        r.add(now_ns, piece, PacketId(id)).added
    }

    #[test]
    fn fragments_in_any_order_make_the_datagram_whole() {
        let bytes: Vec<u8> = (0..100u8).collect();
        let mut r = Reassembly::default();
        assert_eq!(add(&mut r, 0, &piece(48, true, &bytes[48..96]), 1), Added::Waiting);
        assert_eq!(add(&mut r, 1, &piece(96, false, &bytes[96..]), 2), Added::Waiting);
        assert_eq!(add(&mut r, 2, &piece(48, true, &bytes[48..96]), 3), Added::Duplicate);
        let Added::Whole(at) = add(&mut r, 3, &piece(0, true, &bytes[..48]), 4) else { panic!() };
        assert_eq!(r.whole(at), (&b"headers"[..], &bytes[..], PacketId(4)));
        assert_eq!(add(&mut r, 4, &piece(0, true, &bytes[..48]), 5), Added::Waiting, "its place is free again: a new datagram");
    }

    #[test]
    fn overlapping_or_contradicting_fragments_discard_their_datagram() {
        let bytes = [9u8; 64];
        let mut r = Reassembly::default();
        add(&mut r, 0, &piece(0, true, &bytes[..16]), 1);
        let discarded = r.add(0, &piece(8, true, &bytes[..16]), PacketId(2));
        assert_eq!(discarded, Outcome { added: Added::Discarded, kept: false, released: Some(PacketId(1)) }, "overlaps the first, which goes");
        assert_eq!(add(&mut r, 0, &piece(0, true, &bytes[..12]), 3), Added::Discarded, "not a multiple of 8 bytes with more to come");
        add(&mut r, 0, &piece(32, true, &bytes[..8]), 4);
        assert_eq!(add(&mut r, 0, &piece(16, false, &bytes[..8]), 5), Added::Discarded, "ends before data that came");
        assert_eq!(add(&mut r, 0, &piece(MAX_LARGE_LEN, false, &bytes[..8]), 6), Added::Discarded, "longer than the largest packet");
        assert_eq!(r.kept(), 0);
    }

    #[test]
    fn a_new_datagram_takes_a_timed_out_place_else_the_oldest() {
        let mut r = Reassembly::default();
        for (t, ident) in (10..).zip(0..DATAGRAMS as u32) {
            add(&mut r, t, &Piece { key: Key { ident, ..KEY }, ..piece(8, true, &[1; 8]) }, ident);
        }
        let held = |r: &Reassembly| r.places.iter().filter_map(|p| p.key.map(|k| k.ident)).collect::<Vec<_>>();
        // The table is full: the oldest (ident 0) gives its place.
        add(&mut r, 20, &Piece { key: Key { ident: 99, ..KEY }, ..piece(8, true, &[1; 8]) }, 99);
        assert_eq!(held(&r), [99, 1, 2, 3]);
        // Idents 1 and 2 came 30 s ago: the first of them gives its place.
        add(&mut r, 12 + TIMEOUT_NS, &Piece { key: Key { ident: 100, ..KEY }, ..piece(8, true, &[1; 8]) }, 100);
        assert_eq!(held(&r), [99, 100, 2, 3]);
    }

    #[test]
    fn a_first_fragment_is_kept_until_its_datagram_is_whole_discarded_evicted_or_timed_out() {
        let mut r = Reassembly::default();
        let first = |ident| Piece { key: Key { ident, ..KEY }, ..piece(0, true, &[1; 8]) };
        let outcome = r.add(10, &first(1), PacketId(1));
        assert_eq!(outcome, Outcome { added: Added::Waiting, kept: true, released: None });
        assert!(!r.add(11, &first(1), PacketId(2)).kept, "a duplicate of the first is not kept: the first is");
        assert_eq!((r.kept(), r.due_ns()), (1, Some(10 + TIMEOUT_NS)));
        // A datagram whose first fragment never came says nothing when it times out.
        add(&mut r, 5, &Piece { key: Key { ident: 2, ..KEY }, ..piece(8, true, &[1; 8]) }, 3);
        assert_eq!(r.timed_out(10 + TIMEOUT_NS - 1), None, "not yet");
        assert_eq!(r.timed_out(10 + TIMEOUT_NS), Some((PacketId(1), Key { ident: 1, ..KEY })));
        assert_eq!((r.timed_out(u64::MAX), r.kept(), r.due_ns()), (None, 0, None));
        // The table full of datagrams that wait with their first fragments: a new one evicts the oldest's.
        for ident in 10..10 + DATAGRAMS as u32 {
            r.add(u64::from(ident), &first(ident), PacketId(ident));
        }
        let evicting = r.add(100, &Piece { key: Key { ident: 99, ..KEY }, ..piece(8, true, &[1; 8]) }, PacketId(99));
        assert_eq!((evicting.kept, evicting.released), (false, Some(PacketId(10))));
        assert_eq!(r.kept(), DATAGRAMS - 1);
    }

    #[test]
    fn a_datagram_discarded_by_its_first_fragment_frees_the_place_it_took_from_another() {
        let mut r = Reassembly::default();
        let first = |ident| Piece { key: Key { ident, ..KEY }, ..piece(0, true, &[1; 8]) };
        for ident in 0..DATAGRAMS as u32 {
            r.add(u64::from(ident), &first(ident), PacketId(ident));
        }
        // Not a multiple of 8 bytes with more to come: it evicts the oldest, and is discarded.
        let bad = r.add(10, &Piece { key: Key { ident: 99, ..KEY }, ..piece(0, true, &[1; 12]) }, PacketId(99));
        assert_eq!(bad, Outcome { added: Added::Discarded, kept: false, released: Some(PacketId(0)) });
        assert_eq!(r.places.iter().filter(|p| p.key.is_some()).count(), DATAGRAMS - 1, "its place is free");
    }
}
