//! AF_XDP through libxdp. The UMEM a socket registers is the packet
//! pool's arena itself (unaligned chunks of one pool buffer each), so
//! neither side copies: receive lends the pool's free buffers to the
//! kernel's fill ring and takes them back filled as packets; transmit puts
//! a packet's own buffer on the transmit ring and takes it back from the
//! completion ring once sent. Where the driver has no zero-copy mode
//! (veth) the kernel copies into the UMEM (copy mode); where it has, the
//! NIC writes there itself.
//!
//! A queue has one socket, which the ports on it share (see [`crate::shared`]):
//! the receive side uses only the fill and receive rings, the transmit
//! side only the transmit and completion rings.
//!
//! libxdp loads its redirect program (frames of the queue to the socket)
//! when the first receiving socket on an interface binds, and removes it
//! when the last one closes.

use std::cell::UnsafeCell;
use std::ffi::CString;
use std::io;
use std::sync::{Arc, Mutex};

use libc::{xdp_desc, xdp_statistics};
use sluice_core::packet::{PacketId, PacketMeta};
use sluice_core::batch::MAX_BURST;
use sluice_core::pool::Region;
use sluice_core::PacketPool;

use crate::error::{Error, Result};
use crate::interface;
use crate::shared::{Joined, Registry, Shared, Side};
use crate::xsk::{self, Opaque, Ring, SocketConfig, UmemConfig};

/// Where the kernel puts a received frame in a buffer it was lent (bytes):
/// its own `XDP_PACKET_HEADROOM`, which becomes the packet's headroom.
const RX_HEADROOM: u16 = crate::XDP_HEADROOM;

/// How long a socket waits for a queue the kernel is still releasing.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Frames the kernel sends per wake in copy mode (its `TX_BATCH_SIZE`).
const TX_BATCH: u32 = 32;

/// The four rings of a socket and its UMEM, boxed: libxdp keeps pointers
/// to the fill and completion rings until the socket is deleted. The
/// receive side alone uses `fill` and `rx`, the transmit side alone `tx`
/// and `comp`: each ring has one user.
#[derive(Default)]
struct Rings {
    fill: UnsafeCell<Ring>,
    comp: UnsafeCell<Ring>,
    rx: UnsafeCell<Ring>,
    tx: UnsafeCell<Ring>,
}

/// An AF_XDP socket on one queue of an interface, over its own UMEM
/// registration of the pool's arena.
struct Socket {
    umem: *mut Opaque,
    xsk: *mut Opaque,
    rings: Box<Rings>,
    fd: libc::c_int,
    /// The arena the UMEM is: kept allocated while the kernel may write into it.
    _region: Region,
}

// SAFETY: libxdp's handles are used only to delete them, once; each ring
// is used by one side only (see `Rings`), which holds it on one thread.
unsafe impl Send for Socket {}
unsafe impl Sync for Socket {}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: both were created by libxdp and are deleted once, socket first.
        unsafe {
            xsk::xsk_socket__delete(self.xsk);
            xsk::xsk_umem__delete(self.umem);
        }
    }
}

fn failed(port: &str, step: &'static str, rc: libc::c_int) -> Error {
    Error::Os { port: port.into(), step, source: io::Error::from_raw_os_error(-rc) }
}

impl Socket {
    /// Opens a socket on `queue` over `pool`'s arena with the rings it
    /// needs: zero-copy where the driver has it, else copy mode.
    /// A queue a socket closed on a moment ago stays busy until the kernel
    /// has released its UMEM (deferred work): that is waited out, up to
    /// [`BUSY_WAIT`].
    fn open(queue: &Queue, pool: &PacketPool, receive: bool, transmit: bool) -> Result<Self> {
        let since = std::time::Instant::now();
        loop {
            let opened = Self::bind(queue, pool, receive, transmit, libc::XDP_ZEROCOPY).or_else(|_| Self::bind(queue, pool, receive, transmit, libc::XDP_COPY));
            match opened {
                Err(Error::Os { source, .. }) if source.raw_os_error() == Some(libc::EBUSY) && since.elapsed() < BUSY_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                opened => return opened,
            }
        }
    }

    fn bind(queue: &Queue, pool: &PacketPool, receive: bool, transmit: bool, mode: u16) -> Result<Self> {
        xsk::quiet();
        let (port, n) = (queue.port.as_str(), queue.descriptors);
        let region = pool.region();
        let rings = Box::<Rings>::default();
        let umem_config = UmemConfig {
            fill_size: n,
            comp_size: n,
            frame_size: sluice_core::packet::BUF_SIZE as u32,
            frame_headroom: 0,
            flags: libc::XDP_UMEM_UNALIGNED_CHUNK_FLAG,
        };
        let mut umem = std::ptr::null_mut();
        // SAFETY: the region is the arena's page-aligned memory, kept alive
        // by the socket; libxdp writes the UMEM handle and the fill and completion rings.
        let rc = unsafe { xsk::xsk_umem__create(&mut umem, region.start.cast(), region.len as u64, rings.fill.get(), rings.comp.get(), &umem_config) };
        if rc != 0 {
            return Err(failed(port, "register the packet pool as UMEM", rc));
        }
        let config = SocketConfig {
            rx_size: if receive { n } else { 0 },
            tx_size: if transmit { n } else { 0 },
            libxdp_flags: if receive { 0 } else { xsk::INHIBIT_PROG_LOAD },
            xdp_flags: 0,
            bind_flags: mode | libc::XDP_USE_NEED_WAKEUP,
        };
        let rx = if receive { rings.rx.get() } else { std::ptr::null_mut() };
        let tx = if transmit { rings.tx.get() } else { std::ptr::null_mut() };
        let mut xsk = std::ptr::null_mut();
        // SAFETY: the name is NUL-terminated; the rings are boxed and outlive the socket.
        let rc = unsafe { xsk::xsk_socket__create(&mut xsk, queue.iface.as_ptr(), queue.queue, umem, rx, tx, &config) };
        if rc != 0 {
            // SAFETY: the UMEM has no socket.
            unsafe { xsk::xsk_umem__delete(umem) };
            let step = match (receive, -rc) {
                (_, libc::EPERM) => "open an AF_XDP socket (needs root, or CAP_NET_RAW and CAP_BPF)",
                (true, _) => "bind an AF_XDP socket to the queue (and load its XDP program)",
                (false, _) => "bind an AF_XDP socket to the queue",
            };
            return Err(failed(port, step, rc));
        }
        // SAFETY: a socket libxdp created.
        let fd = unsafe { xsk::xsk_socket__fd(xsk) };
        Ok(Self { umem, xsk, rings, fd, _region: region })
    }

    /// The receive side's rings: fill and receive.
    ///
    /// # Safety
    /// Only the receive side calls it, on one thread, one borrow at a time.
    #[allow(clippy::mut_from_ref)]
    unsafe fn receive_rings(&self) -> (&mut Ring, &mut Ring) {
        (&mut *self.rings.fill.get(), &mut *self.rings.rx.get())
    }

    /// The transmit side's rings: transmit and completion.
    ///
    /// # Safety
    /// Only the transmit side calls it, on one thread, one borrow at a time.
    #[allow(clippy::mut_from_ref)]
    unsafe fn transmit_rings(&self) -> (&mut Ring, &mut Ring) {
        (&mut *self.rings.tx.get(), &mut *self.rings.comp.get())
    }

    /// Wakes the kernel to send what the transmit ring holds, where it asks for it.
    fn wake_tx(&self, tx: &Ring) {
        if tx.needs_wakeup() {
            // SAFETY: an empty send on our socket only kicks its transmit queue.
            unsafe { libc::sendto(self.fd, std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
        }
    }

    /// Wakes the kernel to take the buffers the fill ring holds, where it asks for it.
    fn wake_rx(&self, fill: &Ring) {
        if fill.needs_wakeup() {
            // SAFETY: an empty receive on our socket only kicks its receive queue.
            unsafe { libc::recvfrom(self.fd, std::ptr::null_mut(), 0, libc::MSG_DONTWAIT, std::ptr::null_mut(), std::ptr::null_mut()) };
        }
    }

    /// The kernel's counters of this socket.
    fn statistics(&self) -> xdp_statistics {
        // SAFETY: all-zero is a valid xdp_statistics.
        let mut stats: xdp_statistics = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<xdp_statistics>() as libc::socklen_t;
        // SAFETY: XDP_STATISTICS writes at most `len` bytes into `stats`.
        unsafe { libc::getsockopt(self.fd, libc::SOL_XDP, libc::XDP_STATISTICS, (&mut stats as *mut xdp_statistics).cast(), &mut len) };
        stats
    }
}

/// A queue of an interface to open an AF_XDP socket on once the worker's pool is known.
struct Queue {
    port: String,
    iface: CString,
    queue: u32,
    descriptors: u32,
}

/// The queues AF_XDP ports of this process have open.
static OPEN: Registry<Socket> = Mutex::new(Vec::new());

impl Queue {
    /// Checks the ring size and the interface, and joins the queue on `side`.
    fn join(port: &str, iface: &str, queue: u32, descriptors: u32, side: Side) -> Result<(Self, Joined<Socket>)> {
        if !descriptors.is_power_of_two() || !(64..=1 << 16).contains(&descriptors) {
            return Err(Error::Ring { port: port.into(), reason: format!("{descriptors} descriptors per ring: must be a power of two from 64 to 65536") });
        }
        let (name, index) = interface::find(port, iface)?;
        interface::check_queue(port, iface, index, queue)?;
        // One name is one device per network namespace.
        let device = format!("{iface} (net namespace {})", interface::namespace());
        let shared = Shared::join(&OPEN, port, &device, queue, side)?;
        Ok((Self { port: port.into(), iface: name, queue, descriptors }, shared))
    }

    /// The queue's socket, opened over `pool`'s arena by the first side to ask.
    fn socket(&self, shared: &Joined<Socket>, pool: &PacketPool) -> Result<Arc<Socket>> {
        shared.get(&self.port, pool.worker(), |receive, transmit| Socket::open(self, pool, receive, transmit))
    }
}

/// The receive side: frames arrive in buffers the pool lent to the kernel.
pub struct XdpRx {
    queue: Queue,
    shared: Joined<Socket>,
    socket: Option<Arc<Socket>>,
    /// Fill-ring slots waiting for a buffer the pool had none for.
    unfilled: u32,
}

impl XdpRx {
    /// Checks that `iface` is there and up; the socket opens at [`Self::attach`].
    pub fn open(port: &str, iface: &str, queue: u32, descriptors: u32) -> Result<Self> {
        let (queue, shared) = Queue::join(port, iface, queue, descriptors, Side::Receive)?;
        Ok(Self { queue, shared, socket: None, unfilled: 0 })
    }

    /// Opens the socket over `pool`'s arena and lends it a fill ring of buffers.
    pub fn attach(&mut self, pool: &mut PacketPool) -> Result<()> {
        let q = &self.queue;
        if pool.available() < q.descriptors as usize + MAX_BURST {
            return Err(Error::Ring {
                port: q.port.clone(),
                reason: format!("the pool has {} free buffers; a fill ring of {} needs as many and a batch more", pool.available(), q.descriptors),
            });
        }
        self.socket = Some(q.socket(&self.shared, pool)?);
        self.unfilled = q.descriptors;
        self.refill(pool);
        Ok(())
    }

    /// Lends the fill ring what it is missing, as far as the pool has buffers.
    fn refill(&mut self, pool: &mut PacketPool) {
        let Some(socket) = self.socket.as_deref() else { return };
        // SAFETY: this is the receive side.
        let (fill, _) = unsafe { socket.receive_rings() };
        let (at, n) = fill.reserve_up_to(self.unfilled.min(pool.available() as u32));
        for i in 0..n {
            let id = pool.lend().expect("the pool said it had the buffers");
            // SAFETY: the fill ring's entries are u64 UMEM addresses; `at..at+n` is reserved.
            unsafe { *fill.entry::<u64>(at.wrapping_add(i)) = PacketPool::offset_of(id) };
        }
        fill.submit(n);
        self.unfilled -= n;
        socket.wake_rx(fill);
    }

    /// Takes up to `max` received frames as packets of `pool`, passing each
    /// to `take` with its metadata's offset and length set; returns how many.
    pub fn poll(&mut self, pool: &mut PacketPool, max: usize, mut take: impl FnMut(&mut PacketPool, PacketId)) -> usize {
        let Some(socket) = self.socket.as_deref() else { return 0 };
        // SAFETY: this is the receive side.
        let (_, rx) = unsafe { socket.receive_rings() };
        let (at, n) = rx.peek(max as u32);
        for i in 0..n {
            // SAFETY: the receive ring's entries are descriptors; `at..at+n` are ready.
            let desc = unsafe { *rx.entry::<xdp_desc>(at.wrapping_add(i)) };
            // Unaligned chunks: the offset into the chunk rides in the top 16 bits.
            let addr = (desc.addr & ((1 << 48) - 1)) + (desc.addr >> 48);
            let (id, off) = pool.buffer_at(addr).expect("the kernel writes only into the UMEM it was given");
            debug_assert_eq!(off, RX_HEADROOM);
            pool.adopt(id, PacketMeta { data_off: off, len: desc.len as u16, ..PacketMeta::default() });
            take(pool, id);
        }
        rx.release(n);
        self.unfilled += n;
        if self.unfilled > 0 {
            self.refill(pool);
        }
        n as usize
    }

    /// The socket (readable when frames wait in the receive ring).
    pub fn fd(&self) -> Option<std::os::fd::RawFd> {
        self.socket.as_ref().map(|s| s.fd)
    }

    /// Frames the kernel dropped for want of a fill buffer or of room in
    /// the receive ring (pkt, cumulative).
    pub fn ring_dropped(&self) -> u64 {
        self.socket.as_ref().map_or(0, |s| {
            let stats = s.statistics();
            stats.rx_dropped + stats.rx_ring_full
        })
    }
}

/// The transmit side: packets leave in their own buffers.
pub struct XdpTx {
    queue: Queue,
    shared: Joined<Socket>,
    socket: Option<Arc<Socket>>,
}

impl XdpTx {
    /// Checks that `iface` is there and up; the socket opens at [`Self::attach`].
    pub fn open(port: &str, iface: &str, queue: u32, descriptors: u32) -> Result<Self> {
        let (queue, shared) = Queue::join(port, iface, queue, descriptors, Side::Transmit)?;
        Ok(Self { queue, shared, socket: None })
    }

    /// Opens the socket over `pool`'s arena (or joins the queue's).
    pub fn attach(&mut self, pool: &PacketPool) -> Result<()> {
        self.socket = Some(self.queue.socket(&self.shared, pool)?);
        Ok(())
    }

    /// Gives the buffers of frames the kernel has sent back to their pools.
    fn complete(socket: &Socket, pool: &mut PacketPool) {
        // SAFETY: this is the transmit side.
        let (_, comp) = unsafe { socket.transmit_rings() };
        let (at, n) = comp.peek(u32::MAX);
        for i in 0..n {
            // SAFETY: the completion ring's entries are the u64 addresses transmitted.
            let addr = unsafe { *comp.entry::<u64>(at.wrapping_add(i)) };
            let (id, _) = pool.buffer_at(addr).expect("the kernel completes only what it was given");
            pool.reclaim(id);
        }
        comp.release(n);
    }

    /// Puts the packets of `ids` on the transmit ring, in order, as far as
    /// it has room, and has the kernel send them; returns how many it took.
    /// Those stay in their buffers until sent: the caller hands them over
    /// (see [`PacketPool::hand_over`]), they come back here.
    pub fn push(&mut self, pool: &mut PacketPool, ids: &[PacketId]) -> usize {
        let Some(socket) = self.socket.as_deref() else { return 0 };
        Self::complete(socket, pool);
        // SAFETY: this is the transmit side.
        let (tx, _) = unsafe { socket.transmit_rings() };
        let (at, n) = tx.reserve_up_to(ids.len() as u32);
        for (i, &id) in ids[..n as usize].iter().enumerate() {
            let meta = pool.meta(id);
            let desc = xdp_desc { addr: PacketPool::offset_of(id) + u64::from(meta.data_off), len: u32::from(meta.len), options: 0 };
            // SAFETY: the transmit ring's entries are descriptors; `at..at+n` is reserved.
            unsafe { *tx.entry::<xdp_desc>(at.wrapping_add(i as u32)) = desc };
        }
        tx.submit(n);
        // In copy mode a wake sends at most TX_BATCH frames (32): wake
        // until the kernel has taken them all, so none waits for the next push.
        for _ in 0..=n / TX_BATCH {
            socket.wake_tx(tx);
            if tx.untaken() == 0 {
                break;
            }
        }
        n as usize
    }

    /// Has the kernel send what waits on the ring, and takes back what it sent.
    pub fn flush(&mut self, pool: &mut PacketPool) {
        if let Some(socket) = self.socket.as_deref() {
            // SAFETY: this is the transmit side.
            socket.wake_tx(unsafe { socket.transmit_rings() }.0);
            Self::complete(socket, pool);
        }
    }

    /// Invalid descriptors the kernel refused (pkt, cumulative).
    pub fn invalid(&self) -> u64 {
        self.socket.as_ref().map_or(0, |s| s.statistics().tx_invalid_descs)
    }
}
