//! libxdp's AF_XDP socket API (`<xdp/xsk.h>`, libxdp ≥ 1.2), and the four
//! rings it maps, which the header gives as inline functions and which are
//! written here again: a ring is an array of entries and two counters, the
//! producer's and the consumer's, each side keeping a cached copy of the
//! other's so that it reads the shared one only when its copy says the
//! ring is full (producer) or empty (consumer).

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

/// `struct xsk_ring_prod` and `struct xsk_ring_cons` (the same layout).
#[repr(C)]
pub struct Ring {
    cached_prod: u32,
    cached_cons: u32,
    mask: u32,
    size: u32,
    producer: *mut u32,
    consumer: *mut u32,
    ring: *mut c_void,
    flags: *mut u32,
}

impl Default for Ring {
    fn default() -> Self {
        Self { cached_prod: 0, cached_cons: 0, mask: 0, size: 0, producer: std::ptr::null_mut(), consumer: std::ptr::null_mut(), ring: std::ptr::null_mut(), flags: std::ptr::null_mut() }
    }
}

/// `struct xsk_umem_config`.
#[repr(C)]
pub struct UmemConfig {
    pub fill_size: u32,
    pub comp_size: u32,
    pub frame_size: u32,
    pub frame_headroom: u32,
    pub flags: u32,
}

/// `struct xsk_socket_config`.
#[repr(C)]
pub struct SocketConfig {
    pub rx_size: u32,
    pub tx_size: u32,
    pub libxdp_flags: u32,
    pub xdp_flags: u32,
    pub bind_flags: u16,
}

/// Do not load the XDP program that redirects to the socket (a socket that only sends).
pub const INHIBIT_PROG_LOAD: u32 = 1;

/// An opaque `struct xsk_umem` or `struct xsk_socket`.
#[repr(C)]
pub struct Opaque {
    _private: [u8; 0],
}

#[link(name = "xdp")]
extern "C" {
    pub fn xsk_umem__create(umem: *mut *mut Opaque, area: *mut c_void, size: u64, fill: *mut Ring, comp: *mut Ring, config: *const UmemConfig) -> c_int;
    pub fn xsk_socket__create(xsk: *mut *mut Opaque, ifname: *const c_char, queue: u32, umem: *mut Opaque, rx: *mut Ring, tx: *mut Ring, config: *const SocketConfig) -> c_int;
    pub fn xsk_socket__fd(xsk: *const Opaque) -> c_int;
    pub fn xsk_socket__delete(xsk: *mut Opaque);
    pub fn xsk_umem__delete(umem: *mut Opaque) -> c_int;
}

/// A libbpf or libxdp message printer (`None`: print nothing).
type Printer = Option<unsafe extern "C" fn(level: c_int, format: *const c_char, args: *mut c_void) -> c_int>;

#[link(name = "xdp")]
extern "C" {
    fn libxdp_set_print(printer: Printer) -> Printer;
}

#[link(name = "bpf")]
extern "C" {
    fn libbpf_set_print(printer: Printer) -> Printer;
}

/// Silences libbpf and libxdp, which print their progress and fall-backs
/// on stderr (e.g. no bpffs: one program without libxdp's dispatcher);
/// what fails comes back as a return code, reported with the port's name.
pub fn quiet() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: setting a global printer to none; done once, before any socket.
    ONCE.call_once(|| unsafe {
        libxdp_set_print(None);
        libbpf_set_print(None);
    });
}

impl Ring {
    fn counter(p: *mut u32) -> &'static AtomicU32 {
        // SAFETY: the counters are u32s in the ring's mapping, which lives
        // as long as the socket (or UMEM) that owns this ring; the kernel
        // updates them concurrently, hence atomics.
        unsafe { AtomicU32::from_ptr(p) }
    }

    /// Entry `i` (taken modulo the ring's size) as a `T`.
    ///
    /// # Safety
    /// `T` must be the ring's entry type (u64 addresses for the fill and
    /// completion rings, `xdp_desc` for receive and transmit).
    pub unsafe fn entry<T>(&self, i: u32) -> *mut T {
        self.ring.cast::<T>().add((i & self.mask) as usize)
    }

    /// Producer: room for up to `most` entries from the returned index on
    /// (as many as the ring has free), to fill and then [`Self::submit`].
    pub fn reserve_up_to(&mut self, most: u32) -> (u32, u32) {
        // The consumer's counter is kept `size` ahead: free = cons + size − prod.
        if self.cached_cons.wrapping_sub(self.cached_prod) < most {
            self.cached_cons = Self::counter(self.consumer).load(Ordering::Acquire).wrapping_add(self.size);
        }
        let n = self.cached_cons.wrapping_sub(self.cached_prod).min(most);
        let at = self.cached_prod;
        self.cached_prod = at.wrapping_add(n);
        (at, n)
    }

    /// Producer: makes the `n` entries filled since the last submit the kernel's.
    pub fn submit(&mut self, n: u32) {
        let producer = Self::counter(self.producer);
        producer.store(producer.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }

    /// Producer: entries submitted that the kernel has not taken yet.
    pub fn untaken(&self) -> u32 {
        Self::counter(self.producer).load(Ordering::Relaxed).wrapping_sub(Self::counter(self.consumer).load(Ordering::Acquire))
    }

    /// Consumer: up to `most` entries ready from the returned index on.
    pub fn peek(&mut self, most: u32) -> (u32, u32) {
        let mut ready = self.cached_prod.wrapping_sub(self.cached_cons);
        if ready == 0 {
            self.cached_prod = Self::counter(self.producer).load(Ordering::Acquire);
            ready = self.cached_prod.wrapping_sub(self.cached_cons);
        }
        let n = ready.min(most);
        let at = self.cached_cons;
        self.cached_cons = at.wrapping_add(n);
        (at, n)
    }

    /// Consumer: hands the `n` entries read since the last release back to the kernel.
    pub fn release(&mut self, n: u32) {
        let consumer = Self::counter(self.consumer);
        consumer.store(consumer.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }

    /// Whether the kernel asks to be woken (by a `sendto` or `poll`) to
    /// process what was produced.
    pub fn needs_wakeup(&self) -> bool {
        Self::counter(self.flags).load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }
}
