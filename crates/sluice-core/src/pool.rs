//! Preallocated packet buffers: one arena shared by all workers, one pool
//! (a partition of the arena and its free list) per worker.
//!
//! Handles move between workers through SPSC rings (zero copy). Whoever
//! holds a handle owns its buffer, as with DPDK mbufs: only the holder reads
//! or writes it, and handing a handle over a ring (release/acquire) hands
//! over the buffer. A worker that frees a handle of another worker's
//! partition sends it home on a return ring; the owner takes returns back
//! when its own free list runs dry. Nothing here allocates after creation.
//!
//! A device that shares the buffers (an AF_XDP port registers the arena
//! as its UMEM) is lent free buffers to receive into, which become packets
//! when it hands them back filled, and is handed packets to send, which
//! come back when sent: a buffer lent or handed over is neither free nor
//! a packet in flight.
//!
//! Buffers come in two sizes: [`BUF_SIZE`] for frames up to
//! [`MAX_PACKET_LEN`], and large ones of [`LARGE_SPAN`] times that for
//! jumbo and GSO frames up to [`MAX_LARGE_LEN`]. The large buffers follow
//! the small ones in the arena, and large buffer `k` takes the handles and
//! the place of `LARGE_SPAN` small ones: buffer `id` starts at `id ·
//! BUF_SIZE` whatever its size, so finding a packet's bytes costs what it
//! did with one size, and only allocation and freeing tell the sizes
//! apart. The handles in between are never given out. A large buffer also
//! carries its packet's [`Offload`] (how its sender left segmentation and
//! checksums to the wire); a small one has none.

use std::cell::UnsafeCell;
use std::sync::Arc;

use crate::packet::{Offload, PacketId, PacketMeta, BUF_SIZE, HEADROOM, LARGE_SPAN, MAX_LARGE_LEN, MAX_PACKET_LEN};
use crate::ring::{spsc, Consumer, Producer};

/// Large buffers a worker's pool has by default: a round's batch of GSO
/// or jumbo frames and as many more in flight (256 KiB of metadata and
/// 8.3 MiB of address space a worker, touched only as they are used).
pub const LARGE_BUFFERS: usize = 128;

/// Where a buffer's data may end (bytes from its start): small (a device
/// that receives into it may fill it to its end), large.
const SMALL_END: usize = BUF_SIZE;
const LARGE_END: usize = LARGE_SPAN * BUF_SIZE;

/// Buffers and metadata of every packet of a run: the small buffers, then
/// the large ones, each over [`LARGE_SPAN`] handles; one metadata slot a
/// handle, one [`Offload`] a large buffer.
struct Arena {
    bufs: Buffers,
    meta: Box<[UnsafeCell<PacketMeta>]>,
    offload: Box<[UnsafeCell<Offload>]>,
}

/// The arena's packet buffers: one page-aligned run of memory (what a
/// device registers must start on a page), buffer `i` at `i · BUF_SIZE`.
struct Buffers {
    ptr: *mut UnsafeCell<[u8; BUF_SIZE]>,
    /// Bytes mapped (0: nothing).
    len: usize,
}

impl Drop for Buffers {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: mapped in `zeroed_buffers` with this length; nothing
            // points into it once the arena goes.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

// SAFETY: a buffer is only touched by the holder of its handle (see the
// module docs); handles cross threads only through release/acquire rings.
unsafe impl Sync for Arena {}
// SAFETY: `Buffers` owns its memory; who may touch it is as above.
unsafe impl Send for Buffers {}

// SAFETY: the raw pointers point into the arena this pool keeps alive, and
// a pool is used by one thread at a time (it moves to its worker once).
unsafe impl Send for PacketPool {}

/// The arena's buffer memory as a device registers it: it stays allocated
/// as long as this lives, so a device may write into it until it is dropped.
pub struct Region {
    /// The first byte (page-aligned).
    pub start: *mut u8,
    /// Its length (bytes).
    pub len: usize,
    _arena: Arc<Arena>,
}

// SAFETY: a region is an address range and a keep-alive; who may touch the buffers is as for the arena.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

/// One worker's packet buffers: allocation from its partition of the arena,
/// and access to any buffer whose handle it holds.
pub struct PacketPool {
    /// Keeps the arena alive; the pointers below point into it.
    _arena: Arc<Arena>,
    /// First buffer and first metadata slot of the arena, cached so that an
    /// access is one indexed load (the handle invariant makes it in bounds).
    bufs: *const UnsafeCell<[u8; BUF_SIZE]>,
    meta: *const UnsafeCell<PacketMeta>,
    offload: *const UnsafeCell<Offload>,
    /// Handles in the whole arena, large buffers' spans included.
    total: u32,
    /// Small buffers per partition (pkt): a small handle's owner is `id / partition`.
    partition: u32,
    /// First handle of this worker's small partition.
    base: u32,
    free: Vec<PacketId>,
    /// First handle of the large buffers (the small ones' count).
    large_start: u32,
    /// Handles per large partition (its large buffers × [`LARGE_SPAN`]).
    large_partition: u32,
    /// First handle of this worker's large partition.
    large_base: u32,
    large_free: Vec<PacketId>,
    /// Return rings to every other worker (`None` at our own index).
    returns_out: Vec<Option<Producer<PacketId>>>,
    /// Return rings from every other worker.
    returns_in: Vec<Consumer<PacketId>>,
    /// Buffers allocated by this worker (cumulative).
    allocated: u64,
    /// Buffers freed by this worker, of any partition (cumulative).
    freed: u64,
}

/// `n` zeroed packet buffers in an anonymous mapping of their own: its
/// pages are zero until first written and never touched before, so a pool
/// sized for the worst case costs memory only as far as packets reach, and
/// all of it goes back to the system when the arena is dropped. (The
/// allocator's zeroed allocation writes every byte when asked for page
/// alignment: a 64 Ki-buffer pool cost 140 MB resident at its start.)
fn zeroed_buffers(n: usize) -> Buffers {
    let len = n * BUF_SIZE;
    if len == 0 {
        return Buffers { ptr: std::ptr::NonNull::dangling().as_ptr(), len };
    }
    // SAFETY: a fresh private anonymous mapping, page-aligned and zeroed by
    // the kernel; `Buffers` unmaps it with the same length.
    let ptr = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
    };
    if ptr == libc::MAP_FAILED {
        let layout = std::alloc::Layout::from_size_align(len, 4096).expect("the arena size is bounded by the limits");
        std::alloc::handle_alloc_error(layout);
    }
    Buffers { ptr: ptr.cast(), len }
}

impl PacketPool {
    /// A pool of `capacity` buffers of [`BUF_SIZE`] bytes for a single
    /// worker, and [`LARGE_BUFFERS`] large ones.
    pub fn new(capacity: usize) -> Self {
        Self::shared(1, capacity).pop().expect("one pool")
    }

    /// Pools for `workers` workers of `capacity` buffers each and
    /// [`LARGE_BUFFERS`] large ones, over one arena, with return rings
    /// between every pair.
    pub fn shared(workers: usize, capacity: usize) -> Vec<Self> {
        Self::shared_with(workers, capacity, LARGE_BUFFERS)
    }

    /// [`Self::shared`] with `large` large buffers a worker.
    pub fn shared_with(workers: usize, capacity: usize, large: usize) -> Vec<Self> {
        let small = workers * capacity;
        let total = small + workers * large * LARGE_SPAN;
        assert!(workers > 0 && capacity > 0 && total <= u32::MAX as usize, "pool size out of range");
        let arena = Arc::new(Arena {
            bufs: zeroed_buffers(total),
            meta: (0..total).map(|_| UnsafeCell::new(PacketMeta::default())).collect(),
            offload: (0..workers * large).map(|_| UnsafeCell::new(Offload::default())).collect(),
        });
        let mut outs: Vec<Vec<Option<Producer<PacketId>>>> = (0..workers).map(|_| (0..workers).map(|_| None).collect()).collect();
        let mut ins: Vec<Vec<Consumer<PacketId>>> = (0..workers).map(|_| Vec::new()).collect();
        for (from, out) in outs.iter_mut().enumerate() {
            for owner in (0..workers).filter(|&o| o != from) {
                let (tx, rx) = spsc(capacity + large);
                out[owner] = Some(tx);
                ins[owner].push(rx);
            }
        }
        let large_partition = (large * LARGE_SPAN) as u32;
        outs.into_iter()
            .zip(ins)
            .enumerate()
            .map(|(w, (returns_out, returns_in))| {
                let base = (w * capacity) as u32;
                let large_base = small as u32 + w as u32 * large_partition;
                Self {
                    bufs: arena.bufs.ptr,
                    meta: arena.meta.as_ptr(),
                    offload: arena.offload.as_ptr(),
                    total: total as u32,
                    partition: capacity as u32,
                    base,
                    free: (base..base + capacity as u32).rev().map(PacketId).collect(),
                    large_start: small as u32,
                    large_partition,
                    large_base,
                    large_free: (0..large as u32).rev().map(|k| PacketId(large_base + k * LARGE_SPAN as u32)).collect(),
                    _arena: arena.clone(),
                    returns_out,
                    returns_in,
                    allocated: 0,
                    freed: 0,
                }
            })
            .collect()
    }

    /// The worker whose pool this is (its partition of the arena).
    pub fn worker(&self) -> usize {
        (self.base / self.partition) as usize
    }

    /// Handles over the whole arena, every worker's and both sizes (a
    /// [`PacketId`] is below it).
    pub fn handles(&self) -> usize {
        self.total as usize
    }

    /// Buffers in this worker's partition (pkt).
    pub fn capacity(&self) -> usize {
        self.partition as usize
    }

    /// Packets this worker allocated minus packets it freed (pkt); summed
    /// over all workers, the packets in flight.
    pub fn in_use(&self) -> i64 {
        self.allocated as i64 - self.freed as i64
    }

    /// Buffers this worker can allocate now (pkt), after taking back returns.
    pub fn available(&mut self) -> usize {
        self.take_returns();
        self.free.len()
    }

    /// Large buffers this worker can allocate now (pkt), after taking back returns.
    pub fn large_available(&mut self) -> usize {
        self.take_returns();
        self.large_free.len()
    }

    /// Takes back what other workers freed of this worker's buffers.
    #[inline(always)]
    fn take_returns(&mut self) {
        // A pool no other worker frees into has nothing to take back: no call.
        if !self.returns_in.is_empty() {
            self.drain_returns();
        }
    }

    #[inline(never)]
    fn drain_returns(&mut self) {
        for ring in &mut self.returns_in {
            while let Some(id) = ring.pop() {
                if id.0 < self.large_start {
                    self.free.push(id);
                } else {
                    self.large_free.push(id);
                }
            }
        }
    }

    /// A free buffer that holds `len` bytes after the headroom, or `None`
    /// when there is none of that size (or `len` is over [`MAX_LARGE_LEN`]).
    #[inline]
    fn take(&mut self, len: usize) -> Option<PacketId> {
        let id = if len <= MAX_PACKET_LEN {
            if self.free.is_empty() {
                self.take_returns();
            }
            self.free.pop()?
        } else {
            self.take_large(len)?
        };
        self.allocated += 1;
        Some(id)
    }

    /// A free large buffer (its offload cleared), for `len` bytes.
    #[cold]
    fn take_large(&mut self, len: usize) -> Option<PacketId> {
        if len > MAX_LARGE_LEN {
            return None;
        }
        if self.large_free.is_empty() {
            self.take_returns();
        }
        let id = self.large_free.pop()?;
        // SAFETY: a large handle of this arena; the buffer is ours, just taken from the free list.
        unsafe { *(*self.offload.add(self.large_index(id))).get() = Offload::default() };
        Some(id)
    }

    /// Takes a buffer with `len` bytes of data after the headroom (a large
    /// one above [`MAX_PACKET_LEN`]), or `None` when there is none.
    #[inline]
    pub fn alloc(&mut self, len: usize) -> Option<PacketId> {
        let id = self.take(len)?;
        *self.meta_mut(id) = PacketMeta { data_off: HEADROOM as u16, len: len as u16, ..PacketMeta::default() };
        Some(id)
    }

    /// Takes a buffer holding a copy of `frame`, with metadata `meta` (its
    /// offset and length set here), or `None` when there is none of its size.
    #[inline]
    pub fn alloc_copy(&mut self, frame: &[u8], meta: PacketMeta) -> Option<PacketId> {
        let id = self.take(frame.len())?;
        let m = self.meta_mut(id);
        *m = PacketMeta { data_off: HEADROOM as u16, len: frame.len() as u16, ..meta };
        // SAFETY: `meta_mut` checked the handle; the buffer is ours, just
        // taken from the free list, and `take` chose one that holds `frame`
        // after the headroom.
        unsafe { std::ptr::copy_nonoverlapping(frame.as_ptr(), (*self.bufs.add(id.0 as usize)).get().cast::<u8>().add(HEADROOM), frame.len()) };
        Some(id)
    }

    /// Whether `id` is a large buffer.
    #[inline]
    pub fn is_large(&self, id: PacketId) -> bool {
        id.0 >= self.large_start
    }

    /// The most bytes packet `id` may hold from where its data starts now.
    #[inline]
    pub fn room(&self, id: PacketId) -> usize {
        let end = if self.is_large(id) { LARGE_END } else { SMALL_END };
        end - self.meta(id).data_off as usize
    }

    /// Sets packet `id`'s length (bytes from where its data starts), within
    /// its [`Self::room`] and [`MAX_LARGE_LEN`]; false if it does not fit.
    #[inline]
    pub fn set_len(&mut self, id: PacketId, len: usize) -> bool {
        if len > self.room(id) || len > MAX_LARGE_LEN {
            return false;
        }
        self.meta_mut(id).len = len as u16;
        true
    }

    fn large_index(&self, id: PacketId) -> usize {
        ((id.0 - self.large_start) / LARGE_SPAN as u32) as usize
    }

    /// How packet `id`'s sender left segmentation and checksums (none for a small buffer).
    #[inline]
    pub fn offload(&self, id: PacketId) -> Offload {
        if !self.is_large(id) {
            return Offload::default();
        }
        if id.0 >= self.total {
            not_a_handle(id);
        }
        // SAFETY: a large handle in bounds; the caller holds it.
        unsafe { *(*self.offload.add(self.large_index(id))).get() }
    }

    /// Sets how packet `id`'s sender left segmentation and checksums; false
    /// for a small buffer, which carries none (unless `offload` is none).
    #[inline]
    pub fn set_offload(&mut self, id: PacketId, offload: Offload) -> bool {
        if !self.is_large(id) {
            return offload == Offload::default();
        }
        if id.0 >= self.total {
            not_a_handle(id);
        }
        // SAFETY: as in `offload`; `&mut self` makes this the only reference made through this pool.
        unsafe { *(*self.offload.add(self.large_index(id))).get() = offload };
        true
    }

    /// Copies packet `from`'s bytes (and offload) into packet `to`, whose length must already match.
    #[inline]
    pub fn copy_data(&mut self, from: PacketId, to: PacketId) {
        let (f, t) = (*self.meta(from), *self.meta(to));
        debug_assert_eq!(f.len, t.len);
        assert_ne!(from, to, "a packet cannot be copied onto itself");
        // SAFETY: both handles were bounds-checked by `meta`; they are
        // different buffers, both held by the caller.
        let (src, dst) = unsafe { (&*(*self.bufs.add(from.0 as usize)).get(), &mut *(*self.bufs.add(to.0 as usize)).get()) };
        let (fo, to_off, n) = (f.data_off as usize, t.data_off as usize, f.len as usize);
        dst[to_off..to_off + n].copy_from_slice(&src[fo..fo + n]);
        let offload = self.offload(from);
        self.set_offload(to, offload);
    }

    /// Copies `n` bytes of packet `from`'s data from byte `at` to packet
    /// `to`'s data from byte `to_at`; both ranges must lie in their packets.
    #[inline]
    pub fn copy_range(&mut self, from: PacketId, at: usize, to: PacketId, to_at: usize, n: usize) {
        assert_ne!(from, to, "a packet cannot be copied onto itself");
        let ((src, src_len), (dst, dst_len)) = (self.span(from), self.span(to));
        assert!(at + n <= src_len && to_at + n <= dst_len, "copy of {n} bytes from {at} to {to_at} passes a packet's end");
        // SAFETY: two different buffers the caller holds, the ranges checked within their data.
        unsafe { std::ptr::copy_nonoverlapping(src.add(at), dst.add(to_at), n) };
    }

    /// Returns a buffer to its owner's pool. The handle must not be used afterwards.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.hand_over(id);
        self.reclaim(id);
    }

    /// The arena's small buffers' memory, buffer `id` at
    /// [`Self::offset_of`]: what a device sharing the buffers registers
    /// (the large buffers it never sees).
    pub fn region(&self) -> Region {
        Region { start: self.bufs.cast_mut().cast(), len: self.large_start as usize * BUF_SIZE, _arena: self._arena.clone() }
    }

    /// Where buffer `id` starts in the [`Self::region`] (bytes).
    #[inline]
    pub fn offset_of(id: PacketId) -> u64 {
        u64::from(id.0) * BUF_SIZE as u64
    }

    /// The buffer that byte `offset` of the region lies in, and where in
    /// it (bytes); `None` past the arena.
    #[inline]
    pub fn buffer_at(&self, offset: u64) -> Option<(PacketId, u16)> {
        let id = offset / BUF_SIZE as u64;
        (id < u64::from(self.large_start)).then(|| (PacketId(id as u32), (offset % BUF_SIZE as u64) as u16))
    }

    /// Lends a free buffer of this worker's to a device to receive into;
    /// it is no packet until [`Self::adopt`]ed.
    #[inline]
    pub fn lend(&mut self) -> Option<PacketId> {
        if self.free.is_empty() {
            self.take_returns();
        }
        self.free.pop()
    }

    /// Makes buffer `id`, lent to a device and handed back filled, a packet
    /// with metadata `meta` (its data offset and length as the device wrote them).
    #[inline]
    pub fn adopt(&mut self, id: PacketId, meta: PacketMeta) {
        debug_assert!(meta.data_off as usize + meta.len as usize <= BUF_SIZE);
        self.allocated += 1;
        *self.meta_mut(id) = meta;
    }

    /// Hands packet `id` to a device that sends it: no longer a packet in
    /// flight, its buffer comes back with [`Self::reclaim`] once sent.
    #[inline]
    pub fn hand_over(&mut self, _id: PacketId) {
        self.freed += 1;
    }

    /// Takes back a buffer that was handed over: onto its owner's free list.
    #[inline]
    pub fn reclaim(&mut self, id: PacketId) {
        if id.0.wrapping_sub(self.base) < self.partition {
            debug_assert!(self.free.len() < self.capacity(), "double free of {id:?}");
            self.free.push(id);
        } else {
            self.reclaim_elsewhere(id);
        }
    }

    /// [`Self::reclaim`] of a large buffer or another worker's, out of
    /// line: the common case, a small buffer of this worker's, stays short.
    #[inline(never)]
    fn reclaim_elsewhere(&mut self, id: PacketId) {
        if id.0.wrapping_sub(self.large_base) < self.large_partition {
            debug_assert!(self.large_free.len() < self.large_partition as usize / LARGE_SPAN, "double free of {id:?}");
            self.large_free.push(id);
        } else {
            let owner = if id.0 < self.large_start { id.0 / self.partition } else { (id.0 - self.large_start) / self.large_partition } as usize;
            let ring = self.returns_out[owner].as_mut().expect("a return ring to every other worker");
            assert!(ring.push(id).is_ok(), "a return ring holds a whole partition");
        }
    }

    /// The packet's metadata.
    #[inline]
    pub fn meta(&self, id: PacketId) -> &PacketMeta {
        if id.0 >= self.total {
            not_a_handle(id);
        }
        // SAFETY: in bounds (checked above); the caller holds `id`, so nobody
        // else touches this cell.
        unsafe { &*(*self.meta.add(id.0 as usize)).get() }
    }

    /// The packet's metadata, mutable.
    #[inline]
    pub fn meta_mut(&mut self, id: PacketId) -> &mut PacketMeta {
        if id.0 >= self.total {
            not_a_handle(id);
        }
        // SAFETY: as in `meta`; `&mut self` keeps this the only reference made through this pool.
        unsafe { &mut *(*self.meta.add(id.0 as usize)).get() }
    }

    /// Starts fetching the metadata and the first header line (at the
    /// allocation headroom, where a packet not en- or decapsulated starts)
    /// of `ids` into the cache: for packets that waited in a buffer while
    /// later rounds' packets went through, and are no longer in L1.
    #[inline]
    pub fn prefetch(&self, ids: &[PacketId]) {
        #[cfg(target_arch = "x86_64")]
        for id in ids {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let meta = self.meta.wrapping_add(id.0 as usize).cast::<i8>();
            let head = self.bufs.wrapping_add(id.0 as usize).cast::<i8>().wrapping_add(HEADROOM);
            // SAFETY: a prefetch is a hint: it reads nothing and never faults.
            unsafe {
                _mm_prefetch(meta, _MM_HINT_T0);
                _mm_prefetch(head, _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ids;
    }

    /// The packet's bytes.
    #[inline]
    pub fn data(&self, id: PacketId) -> &[u8] {
        let (start, len) = self.span(id);
        // SAFETY: `span` checked that the bytes lie in buffer `id`, whose holder the caller is.
        unsafe { std::slice::from_raw_parts(start, len) }
    }

    /// The packet's bytes, mutable.
    #[inline]
    pub fn data_mut(&mut self, id: PacketId) -> &mut [u8] {
        let (start, len) = self.span(id);
        // SAFETY: as in `data`; `&mut self` makes this the only reference made through this pool.
        unsafe { std::slice::from_raw_parts_mut(start, len) }
    }

    /// Where packet `id`'s bytes start and how many there are, checked to
    /// lie within its buffer (a metadata slot is public: a bad length panics
    /// here rather than reach into the next buffer). No branch on the
    /// buffer's size: its end is picked arithmetically.
    #[inline(always)]
    fn span(&self, id: PacketId) -> (*mut u8, usize) {
        let m = *self.meta(id);
        let end = SMALL_END + usize::from(self.is_large(id)) * (LARGE_END - SMALL_END);
        let (off, len) = (m.data_off as usize, m.len as usize);
        if off + len > end {
            past_the_end(id, off, len, end);
        }
        // SAFETY: in bounds of the arena (`meta` checked the handle; the span of a large one lies in it).
        (unsafe { (*self.bufs.add(id.0 as usize)).get().cast::<u8>().add(off) }, len)
    }

    /// Grows the packet at the front by `n` bytes taken from the headroom
    /// (for encapsulation); `false` when the headroom is too small or the
    /// length would pass [`MAX_LARGE_LEN`]. A large packet's offload
    /// offsets move with its start.
    #[inline]
    pub fn prepend(&mut self, id: PacketId, n: usize) -> bool {
        let m = self.meta_mut(id);
        if (m.data_off as usize) < n || m.len as usize + n > MAX_LARGE_LEN {
            return false;
        }
        m.data_off -= n as u16;
        m.len += n as u16;
        if self.is_large(id) {
            let shifted = self.offload(id).shifted(n as i32);
            self.set_offload(id, shifted);
        }
        true
    }

    /// Shrinks the packet at the front by `n` bytes (for decapsulation);
    /// `false` when the packet is shorter than `n`.
    #[inline]
    pub fn strip(&mut self, id: PacketId, n: usize) -> bool {
        let m = self.meta_mut(id);
        if (m.len as usize) < n {
            return false;
        }
        m.data_off += n as u16;
        m.len -= n as u16;
        if self.is_large(id) {
            let shifted = self.offload(id).shifted(-(n as i32));
            self.set_offload(id, shifted);
        }
        true
    }
}

/// Panics for `id`, a handle of no buffer of this arena. Out of line, so
/// that the checks on the packet path keep no panic message's arguments.
#[cold]
#[inline(never)]
#[track_caller]
fn not_a_handle(id: PacketId) -> ! {
    panic!("{id:?} is not a handle of this arena")
}

/// Panics for packet `id`, whose `len` bytes from `off` pass its buffer's
/// `end` (a metadata slot set wrong); out of line as [`not_a_handle`].
#[cold]
#[inline(never)]
#[track_caller]
fn past_the_end(id: PacketId, off: usize, len: usize, end: usize) -> ! {
    panic!("{id:?}: {len} bytes from {off} pass its buffer's end ({end})")
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

    #[test]
    fn a_frame_over_a_small_buffer_takes_a_large_one_of_its_own() {
        let mut pool = PacketPool::shared_with(1, 4, 2).pop().unwrap();
        let jumbo: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
        let (small, large) = (pool.alloc(60).unwrap(), pool.alloc_copy(&jumbo, PacketMeta::default()).unwrap());
        assert!(!pool.is_large(small) && pool.is_large(large));
        assert_eq!(pool.data(large), &jumbo[..]);
        assert_eq!(pool.room(large), LARGE_SPAN * BUF_SIZE - HEADROOM);
        let gso = pool.alloc(MAX_LARGE_LEN).unwrap();
        assert!(pool.is_large(gso) && pool.alloc(MAX_LARGE_LEN).is_none(), "two large buffers");
        assert!(pool.alloc(MAX_LARGE_LEN + 1).is_none());
        assert_eq!(pool.alloc(60).map(|id| pool.is_large(id)), Some(false), "small ones are still there");
        pool.data_mut(gso).fill(7);
        assert!(pool.data(large) == &jumbo[..], "buffers do not overlap");
        pool.free(large);
        assert_eq!(pool.large_available(), 1);
        assert_eq!(pool.in_use(), 3);
    }

    #[test]
    fn a_large_packet_carries_its_offload_and_its_offsets_follow_its_start() {
        let mut pool = PacketPool::shared_with(1, 4, 1).pop().unwrap();
        let small = pool.alloc(60).unwrap();
        let gso = Offload { gso: crate::packet::Gso::TcpV4, gso_size: 1448, hdr_len: 66, csum_partial: true, csum_start: 34, csum_offset: 16 };
        assert!(!pool.set_offload(small, gso), "a small buffer carries none");
        let id = pool.alloc(30_000).unwrap();
        assert!(pool.set_offload(id, gso));
        assert!(pool.prepend(id, 4));
        assert_eq!(pool.offload(id), Offload { csum_start: 38, hdr_len: 70, ..gso });
        assert!(pool.strip(id, 4));
        assert_eq!(pool.offload(id), gso);
        pool.free(id);
        let again = pool.alloc(20_000).unwrap();
        assert_eq!(pool.offload(again), Offload::default(), "a new packet starts with none");
    }

    #[test]
    fn a_length_is_set_within_its_buffer_and_a_bad_one_panics_rather_than_reach_past_it() {
        let mut pool = PacketPool::shared_with(1, 2, 1).pop().unwrap();
        let id = pool.alloc(60).unwrap();
        assert!(pool.set_len(id, 1000) && !pool.set_len(id, BUF_SIZE));
        pool.meta_mut(id).len = 4000;
        let past = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.data(id).len()));
        assert!(past.is_err());
    }

    #[test]
    fn large_buffers_freed_by_another_worker_go_home() {
        let mut pools = PacketPool::shared_with(2, 2, 1);
        let (a, b) = pools.split_at_mut(1);
        let (a, b) = (&mut a[0], &mut b[0]);
        let big = a.alloc(5000).unwrap();
        assert!(a.alloc(5000).is_none());
        b.free(big);
        assert_eq!(b.large_available(), 1, "b's own large buffer is untouched");
        assert_eq!(a.large_available(), 1, "a took its large buffer back");
        assert!(a.region().len == 4 * BUF_SIZE, "a device sees the small buffers only");
    }

    #[test]
    fn buffers_freed_by_another_worker_go_home() {
        let mut pools = PacketPool::shared(2, 2);
        let (a, b) = pools.split_at_mut(1);
        let (a, b) = (&mut a[0], &mut b[0]);
        let x = a.alloc(60).unwrap();
        let y = a.alloc(60).unwrap();
        a.data_mut(x).fill(9);
        assert!(a.alloc(60).is_none());
        assert_eq!(b.data(x), &[9; 60][..], "any pool reads a buffer whose handle it holds");
        b.free(x);
        b.free(y);
        assert_eq!((a.in_use(), b.in_use()), (2, -2), "in flight is the sum over workers");
        assert_eq!(b.available(), 2, "b's own partition is untouched");
        assert_eq!(a.available(), 2, "a took its buffers back");
    }
}
