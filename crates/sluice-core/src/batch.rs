//! A batch: a fixed-capacity array of packet handles plus a length.

use crate::packet::PacketId;

/// Compile-time bound on any batch (pkt); the runtime batch size B is ≤ this.
pub const MAX_BURST: usize = 256;

/// Copies at most this many handles one by one (see [`copy_handles`]).
const SHORT_COPY: usize = 16;

/// Copies the handles of `src` into `dst` (same length). The runs that
/// reach a fractional buffer or a gate are often a packet or two: for
/// those, moves inline are cheaper than libc's memcpy, whose call costs
/// more than the copy. They are pieces of fixed size, one per bit of the
/// length: the compiler turns a copy loop into a call to memcpy.
#[inline]
pub(crate) fn copy_handles(dst: &mut [PacketId], src: &[PacketId]) {
    let n = src.len();
    if n > SHORT_COPY {
        dst.copy_from_slice(src);
        return;
    }
    let (mut dst, mut src) = (&mut dst[..n], src);
    for piece in [16, 8, 4, 2, 1] {
        if n & piece != 0 {
            let (d, rest) = std::mem::take(&mut dst).split_at_mut(piece);
            d.copy_from_slice(&src[..piece]);
            (dst, src) = (rest, &src[piece..]);
        }
    }
}

/// A fixed-capacity batch of packet handles, allocated once and reused.
#[derive(Clone)]
pub struct Batch {
    len: usize,
    ids: [PacketId; MAX_BURST],
}

impl Default for Batch {
    fn default() -> Self {
        Self { len: 0, ids: [PacketId(0); MAX_BURST] }
    }
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Batch {
    /// An empty batch on the heap (batches are 1 KiB: keep them out of moves).
    pub fn boxed() -> Box<Self> {
        Box::default()
    }

    /// Packets in the batch (pkt).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch holds no packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a packet. Panics when full: callers size their batches by B ≤ [`MAX_BURST`].
    #[inline]
    pub fn push(&mut self, id: PacketId) {
        self.ids[self.len] = id;
        self.len += 1;
    }

    /// Appends packets in order.
    #[inline]
    pub fn extend_from_slice(&mut self, ids: &[PacketId]) {
        copy_handles(&mut self.ids[self.len..self.len + ids.len()], ids);
        self.len += ids.len();
    }

    /// Moves every packet of `other` to the end of this batch, leaving `other` empty.
    #[inline]
    pub fn append(&mut self, other: &mut Batch) {
        let (at, n) = (self.len, other.len);
        if n <= SHORT_COPY && at + SHORT_COPY <= MAX_BURST {
            // One block of SHORT_COPY handles, two vector moves: those past `n` are never read.
            self.ids[at..at + SHORT_COPY].copy_from_slice(&other.ids[..SHORT_COPY]);
            self.len = at + n;
        } else {
            self.extend_from_slice(other.as_slice());
        }
        other.clear();
    }

    /// The handles, in order.
    #[inline]
    pub fn as_slice(&self) -> &[PacketId] {
        &self.ids[..self.len]
    }

    /// Forgets the first `n` handles, keeping the rest in order.
    #[inline]
    pub fn drain_front(&mut self, n: usize) {
        self.ids.copy_within(n..self.len, 0);
        self.len -= n;
    }

    /// Forgets every handle (the caller has moved or freed the packets).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(ids: std::ops::Range<u32>) -> Batch {
        let mut b = Batch::default();
        for id in ids {
            b.push(PacketId(id));
        }
        b
    }

    #[test]
    fn append_and_extend_keep_every_handle_in_order_at_any_length() {
        // Short and long runs, onto batches with room and onto nearly full ones.
        for at in [0, 3, MAX_BURST - SHORT_COPY - 1, MAX_BURST - SHORT_COPY, MAX_BURST - 20] {
            for n in 0..=20u32.min((MAX_BURST - at) as u32) {
                let expected: Vec<PacketId> = (0..at as u32).chain(1000..1000 + n).map(PacketId).collect();
                let mut to = batch(0..at as u32);
                let mut from = batch(1000..1000 + n);
                to.append(&mut from);
                assert_eq!((to.as_slice(), from.len()), (&expected[..], 0), "append {n} onto {at}");
                let mut to = batch(0..at as u32);
                to.extend_from_slice(batch(1000..1000 + n).as_slice());
                assert_eq!(to.as_slice(), &expected[..], "extend {n} onto {at}");
            }
        }
    }
}
