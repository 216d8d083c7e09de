//! A batch: a fixed-capacity array of packet handles plus a length.

use crate::packet::PacketId;

/// Compile-time bound on any batch (pkt); the runtime batch size B is ≤ this.
pub const MAX_BURST: usize = 256;

/// Copies at most this many handles one by one (see [`copy_handles`]).
const SHORT_COPY: usize = 16;

/// Copies the handles of `src` into `dst` (same length). The runs that
/// reach a fractional buffer are often a packet or two: for those a loop
/// is cheaper than libc's memcpy, whose call costs more than the copy.
#[inline]
pub(crate) fn copy_handles(dst: &mut [PacketId], src: &[PacketId]) {
    if src.len() > SHORT_COPY {
        dst.copy_from_slice(src);
        return;
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
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
        self.extend_from_slice(other.as_slice());
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
