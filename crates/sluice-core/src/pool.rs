//! A preallocated pool of fixed-size packet buffers.

use crate::packet::{PacketId, PacketMeta, BUF_SIZE, HEADROOM, MAX_PACKET_LEN};

/// Fixed-size packet buffers and their metadata, allocated once.
///
/// `alloc` and `free` are a LIFO free list (recently freed buffers are still
/// warm in cache); neither allocates. One pool belongs to one worker.
pub struct PacketPool {
    data: Box<[u8]>,
    meta: Box<[PacketMeta]>,
    free: Vec<PacketId>,
}

impl PacketPool {
    /// A pool of `capacity` buffers of [`BUF_SIZE`] bytes each.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0 && capacity <= u32::MAX as usize, "pool capacity out of range");
        let free = (0..capacity as u32).rev().map(PacketId).collect();
        Self {
            data: vec![0u8; capacity * BUF_SIZE].into_boxed_slice(),
            meta: vec![PacketMeta::default(); capacity].into_boxed_slice(),
            free,
        }
    }

    /// Number of buffers in the pool (pkt).
    pub fn capacity(&self) -> usize {
        self.meta.len()
    }

    /// Buffers currently handed out (pkt): the packets in flight on this pool.
    pub fn in_use(&self) -> usize {
        self.capacity() - self.free.len()
    }

    /// Buffers free to allocate (pkt).
    pub fn available(&self) -> usize {
        self.free.len()
    }

    /// Takes a buffer with `len` bytes of data after the headroom, or `None` when empty.
    #[inline]
    pub fn alloc(&mut self, len: usize) -> Option<PacketId> {
        debug_assert!(len <= MAX_PACKET_LEN);
        let id = self.free.pop()?;
        let m = &mut self.meta[id.0 as usize];
        *m = PacketMeta { data_off: HEADROOM as u16, len: len as u16, ..PacketMeta::default() };
        Some(id)
    }

    /// Returns a buffer to the pool. The handle must not be used afterwards.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.free.len() < self.capacity(), "double free of {id:?}");
        self.free.push(id);
    }

    /// The packet's metadata.
    #[inline]
    pub fn meta(&self, id: PacketId) -> &PacketMeta {
        &self.meta[id.0 as usize]
    }

    /// The packet's metadata, mutable.
    #[inline]
    pub fn meta_mut(&mut self, id: PacketId) -> &mut PacketMeta {
        &mut self.meta[id.0 as usize]
    }

    /// The packet's bytes.
    #[inline]
    pub fn data(&self, id: PacketId) -> &[u8] {
        let m = &self.meta[id.0 as usize];
        let base = id.0 as usize * BUF_SIZE + m.data_off as usize;
        &self.data[base..base + m.len as usize]
    }

    /// The packet's bytes, mutable.
    #[inline]
    pub fn data_mut(&mut self, id: PacketId) -> &mut [u8] {
        let m = &self.meta[id.0 as usize];
        let base = id.0 as usize * BUF_SIZE + m.data_off as usize;
        &mut self.data[base..base + m.len as usize]
    }

    /// Grows the packet at the front by `n` bytes taken from the headroom
    /// (for encapsulation); `false` when the headroom is too small.
    #[inline]
    pub fn prepend(&mut self, id: PacketId, n: usize) -> bool {
        let m = &mut self.meta[id.0 as usize];
        if (m.data_off as usize) < n {
            return false;
        }
        m.data_off -= n as u16;
        m.len += n as u16;
        true
    }

    /// Shrinks the packet at the front by `n` bytes (for decapsulation);
    /// `false` when the packet is shorter than `n`.
    #[inline]
    pub fn strip(&mut self, id: PacketId, n: usize) -> bool {
        let m = &mut self.meta[id.0 as usize];
        if (m.len as usize) < n {
            return false;
        }
        m.data_off += n as u16;
        m.len -= n as u16;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_counts_and_bounds() {
        let mut pool = PacketPool::new(4);
        let ids: Vec<_> = (0..4).map(|_| pool.alloc(60).unwrap()).collect();
        assert_eq!(pool.in_use(), 4);
        assert!(pool.alloc(60).is_none());
        pool.data_mut(ids[1]).copy_from_slice(&[7u8; 60]);
        assert_eq!(pool.data(ids[1]), &[7u8; 60][..]);
        assert_eq!(pool.data(ids[0]), &[0u8; 60][..]);
        for id in ids {
            pool.free(id);
        }
        assert_eq!(pool.in_use(), 0);
    }

    #[test]
    fn prepend_and_strip_move_the_data_start() {
        let mut pool = PacketPool::new(1);
        let id = pool.alloc(10).unwrap();
        pool.data_mut(id).copy_from_slice(&[1; 10]);
        assert!(pool.prepend(id, 8));
        assert_eq!(pool.data(id).len(), 18);
        assert_eq!(&pool.data(id)[8..], &[1; 10]);
        assert!(!pool.prepend(id, HEADROOM));
        assert!(pool.strip(id, 8));
        assert_eq!(pool.data(id), &[1; 10]);
        assert!(!pool.strip(id, 11));
    }
}
