//! AF_PACKET with memory-mapped rings: the receive ring (TPACKET_V2) a
//! run of frame slots the kernel hands over one by one as each frame
//! arrives, the transmit ring (TPACKET_V3) a run of frame slots the worker
//! fills and the kernel sends on a `send` call. (A TPACKET_V3 receive ring
//! hands frames over a block at a time, when the block fills or its retire
//! timer fires, at least a millisecond: a lone packet through an idle
//! router would wait that long. DPDK's af_packet driver takes frames one by
//! one too.)
//!
//! Receive copies each frame from the ring into the packet pool (the slot
//! is the kernel's memory, reused as soon as it goes back); transmit copies
//! from the pool into the ring.
//!
//! Frames longer than a slot (a local stack's GSO frames of up to 64 KiB,
//! jumbo frames) take another way, as Linux offers it: the receive socket
//! reads the `virtio_net_hdr` before every frame (`PACKET_VNET_HDR`, see
//! [`crate::vnet`]) and has the kernel queue a frame its slot cannot hold
//! on the socket too (`PACKET_COPY_THRESH`), marking the slot; the port
//! reads it from there, in its turn, into a large pool buffer, its
//! offload kept. The transmit side sends such frames on a socket of their
//! own, with their header, after what the ring holds.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{fence, Ordering};

use libc::{c_int, c_void, sockaddr_ll, tpacket2_hdr, tpacket3_hdr, tpacket_req, tpacket_req3, tpacket_stats};
use sluice_core::packet::{Gso, Offload, PacketId, PacketMeta, MAX_LARGE_LEN, MAX_PACKET_LEN};
use sluice_core::PacketPool;

use crate::error::{Error, Result};
use crate::interface;
use crate::vnet;

/// Bytes of frames the kernel may queue on a receive socket beside its
/// ring (SO_RCVBUF, as root): some 64 GSO frames of 64 KiB.
const QUEUED_BYTES: c_int = 8 << 20;

/// The shape of a ring: `blocks` blocks of `block_size` bytes, cut into
/// frame slots of `frame_size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingConfig {
    /// Bytes per block: a multiple of the page size.
    pub block_size: u32,
    /// Blocks in the ring.
    pub blocks: u32,
    /// Bytes per frame slot, header included: a multiple of 16.
    pub frame_size: u32,
    /// AF_XDP: descriptors in each of the socket's rings, a power of two
    /// (as many buffers are lent from the pool to the fill ring).
    pub descriptors: u32,
}

impl Default for RingConfig {
    /// 1024 blocks of 4 KiB, frames of 2 KiB: 2048 frames, 2 ms at 1 Mpps;
    /// AF_XDP rings of 2048.
    fn default() -> Self {
        Self { block_size: 4096, blocks: 1024, frame_size: 2048, descriptors: 2048 }
    }
}

/// Where a frame's data starts in a transmit slot (bytes): the kernel
/// reads it after the aligned header (`TPACKET3_HDRLEN − sizeof(sockaddr_ll)`).
const TX_DATA_OFFSET: usize = libc::TPACKET3_HDRLEN - std::mem::size_of::<sockaddr_ll>();

impl RingConfig {
    fn check(&self, port: &str) -> Result<()> {
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u32;
        let bad = |reason: String| Err(Error::Ring { port: port.into(), reason });
        if self.block_size == 0 || !self.block_size.is_multiple_of(page) {
            return bad(format!("block size {} bytes is not a multiple of the page size ({page})", self.block_size));
        }
        if !self.frame_size.is_multiple_of(16) || self.frame_size < (TX_DATA_OFFSET + MAX_PACKET_LEN) as u32 {
            return bad(format!(
                "frame size {} bytes must be a multiple of 16 and hold the largest packet, {} bytes with its header",
                self.frame_size,
                TX_DATA_OFFSET + MAX_PACKET_LEN
            ));
        }
        if self.frame_size > self.block_size {
            return bad(format!("frame size {} bytes exceeds the block size {}", self.frame_size, self.block_size));
        }
        if self.blocks == 0 || (self.blocks as u64) * (self.block_size as u64) > 1 << 31 {
            return bad(format!("{} blocks of {} bytes: the ring must hold 1 block to 2 GiB", self.blocks, self.block_size));
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.block_size as usize * self.blocks as usize
    }

    /// Frames the ring holds.
    pub(crate) fn frames(&self) -> u32 {
        self.block_size / self.frame_size * self.blocks
    }
}

/// A packet socket bound to one interface, with its ring mapped.
struct Socket {
    fd: OwnedFd,
    ring: NonNull<u8>,
    len: usize,
}

// The ring is this socket's own memory: whoever holds the socket may use it.
unsafe impl Send for Socket {}

impl Drop for Socket {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.ring.as_ptr().cast(), self.len) };
    }
}

fn os<'a>(port: &'a str, step: &'static str) -> impl FnOnce(io::Error) -> Error + 'a {
    move |source| Error::Os { port: port.into(), step, source }
}

fn check(rc: c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn set<T>(fd: &OwnedFd, option: c_int, value: &T) -> io::Result<()> {
    set_at(fd, libc::SOL_PACKET, option, value)
}

fn set_at<T>(fd: &OwnedFd, level: c_int, option: c_int, value: &T) -> io::Result<()> {
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    check(unsafe { libc::setsockopt(fd.as_raw_fd(), level, option, (value as *const T).cast(), len) })
}

/// A packet socket on interface `ifindex` (`port` names it in errors) receiving `protocol` (host order; 0: nothing).
fn packet_socket(port: &str, protocol: u16) -> Result<OwnedFd> {
    let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, c_int::from(protocol.to_be())) };
    if raw < 0 {
        let e = io::Error::last_os_error();
        let step = if e.kind() == io::ErrorKind::PermissionDenied { "open a packet socket (needs root or CAP_NET_RAW)" } else { "open a packet socket" };
        return Err(Error::Os { port: port.into(), step, source: e });
    }
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Binds `fd` to interface `ifindex` for `protocol` (host order).
fn bind(port: &str, fd: &OwnedFd, ifindex: u32, protocol: u16) -> Result<()> {
    let mut addr: sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = protocol.to_be();
    addr.sll_ifindex = ifindex as c_int;
    let addr_len = std::mem::size_of::<sockaddr_ll>() as libc::socklen_t;
    check(unsafe { libc::bind(fd.as_raw_fd(), (&addr as *const sockaddr_ll).cast(), addr_len) }).map_err(os(port, "bind to the interface"))
}

impl Socket {
    /// Opens a packet socket on `iface` with a ring of `ring_option`
    /// shaped by `config`: receive (TPACKET_V2) or transmit (TPACKET_V3);
    /// `protocol` (host order) is what it receives (0: nothing).
    fn open(port: &str, iface: &str, protocol: u16, ring_option: c_int, config: &RingConfig) -> Result<Self> {
        config.check(port)?;
        let (_, ifindex) = interface::find(port, iface)?;
        let fd = packet_socket(port, protocol)?;
        if ring_option == libc::PACKET_RX_RING {
            set(&fd, libc::PACKET_VERSION, &(libc::tpacket_versions::TPACKET_V2 as c_int)).map_err(os(port, "select TPACKET_V2"))?;
            // Not what this socket's own transmit side (or another's on the interface) sends.
            set(&fd, libc::PACKET_IGNORE_OUTGOING, &1 as &c_int).map_err(os(port, "ignore outgoing packets"))?;
            // Each frame's offload before it; one longer than a slot queued on the socket too.
            set(&fd, libc::PACKET_VNET_HDR, &1 as &c_int).map_err(os(port, "read virtio-net headers"))?;
            set(&fd, libc::PACKET_COPY_THRESH, &(MAX_LARGE_LEN as c_int)).map_err(os(port, "queue frames longer than a slot"))?;
            if set_at(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &QUEUED_BYTES).is_err() {
                set_at(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &QUEUED_BYTES).map_err(os(port, "size the receive queue"))?;
            }
            let req = tpacket_req { tp_block_size: config.block_size, tp_block_nr: config.blocks, tp_frame_size: config.frame_size, tp_frame_nr: config.frames() };
            set(&fd, ring_option, &req).map_err(os(port, "set up the ring"))?;
        } else {
            set(&fd, libc::PACKET_VERSION, &(libc::tpacket_versions::TPACKET_V3 as c_int)).map_err(os(port, "select TPACKET_V3"))?;
            let req = tpacket_req3 {
                tp_block_size: config.block_size,
                tp_block_nr: config.blocks,
                tp_frame_size: config.frame_size,
                tp_frame_nr: config.frames(),
                tp_retire_blk_tov: 0,
                tp_sizeof_priv: 0,
                tp_feature_req_word: 0,
            };
            set(&fd, ring_option, &req).map_err(os(port, "set up the ring"))?;
        }
        let ring = unsafe { libc::mmap(std::ptr::null_mut(), config.len(), libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if ring == libc::MAP_FAILED {
            return Err(Error::Os { port: port.into(), step: "map the ring", source: io::Error::last_os_error() });
        }
        let socket = Socket { fd, ring: NonNull::new(ring.cast()).expect("mmap succeeded"), len: config.len() };
        bind(port, &socket.fd, ifindex, protocol)?;
        Ok(socket)
    }
}

/// The receive side: takes frames slot by slot, in ring order.
pub struct AfPacketRx {
    socket: Socket,
    /// The next slot to read.
    next: SlotCursor,
    /// Frames the kernel dropped at a full ring, as counted so far (pkt).
    ring_dropped: Cell<u64>,
    /// Frames longer than a pool buffer, or than a slot that the kernel
    /// could not queue beside it, dropped here (pkt).
    oversize: u64,
    /// GSO frames taken in whole (pkt).
    gso: u64,
    /// Frames whose virtio-net header did not hold (see [`vnet::parse`]), dropped here (pkt).
    bad_header: u64,
}

/// What a slot holds.
enum Slot<'a> {
    /// A frame, with the header before it.
    Frame(&'a [u8], [u8; vnet::LEN]),
    /// A frame too long for it, queued on the socket.
    Queued,
    /// A frame cut short (too long, and the socket's queue was full), or one this host sent.
    Lost,
}

/// Where a frame's `sockaddr_ll` sits after its header in a slot:
/// TPACKET_ALIGN(sizeof(struct tpacket2_hdr)).
const LINK_ADDRESS_OFFSET: usize = std::mem::size_of::<tpacket2_hdr>().next_multiple_of(libc::TPACKET_ALIGNMENT);

/// Walks a ring's frame slots in ring order, wrapping at its end (slots do
/// not straddle blocks), with no division per step.
struct SlotCursor {
    frame_size: usize,
    block_size: usize,
    per_block: u32,
    blocks: u32,
    /// The current slot: its block, its place in the block, and its offset
    /// from the ring's start (bytes).
    block: u32,
    in_block: u32,
    offset: usize,
}

impl SlotCursor {
    /// At the first slot of a ring of `config`'s shape.
    fn new(config: &RingConfig) -> Self {
        let per_block = config.block_size / config.frame_size;
        Self { frame_size: config.frame_size as usize, block_size: config.block_size as usize, per_block, blocks: config.blocks, block: 0, in_block: 0, offset: 0 }
    }

    /// The current slot in `socket`'s ring.
    #[inline]
    fn slot<T>(&self, socket: &Socket) -> *mut T {
        // SAFETY: the offset stays inside the mapped ring (see `advance`).
        unsafe { socket.ring.as_ptr().add(self.offset).cast() }
    }

    /// On to the next slot.
    #[inline]
    fn advance(&mut self) {
        self.in_block += 1;
        self.offset += self.frame_size;
        if self.in_block == self.per_block {
            self.in_block = 0;
            self.block = if self.block + 1 == self.blocks { 0 } else { self.block + 1 };
            self.offset = self.block as usize * self.block_size;
        }
    }
}

impl AfPacketRx {
    /// Opens the receive ring on `iface` (`port` names it in errors); with
    /// `fanout`, joins that fanout group, which spreads flows (by hash)
    /// over the sockets in it: one per worker.
    pub fn open(port: &str, iface: &str, config: RingConfig, fanout: Option<u16>) -> Result<Self> {
        let socket = Socket::open(port, iface, libc::ETH_P_ALL as u16, libc::PACKET_RX_RING, &config)?;
        if let Some(group) = fanout {
            let arg = c_int::from(group) | ((libc::PACKET_FANOUT_HASH as c_int) << 16);
            set(&socket.fd, libc::PACKET_FANOUT, &arg).map_err(os(port, "join the fanout group"))?;
        }
        Ok(Self { socket, next: SlotCursor::new(&config), ring_dropped: Cell::new(0), oversize: 0, gso: 0, bad_header: 0 })
    }

    /// Takes up to `max` received frames into `pool`, in order, and passes
    /// each to `take` with the time the kernel received it (ns,
    /// CLOCK_REALTIME); stops early when the pool has no buffer for the
    /// next (it stays for the next poll). A frame whose sender left its
    /// checksum partial (a local stack's, over a veth) has it completed
    /// here, as the NIC would have, unless it is a GSO frame, which keeps
    /// its [`Offload`] to be cut (see [`crate::vnet`]). Returns how many it
    /// took; frames that could not be (too long, bad headers) are dropped
    /// and counted.
    pub fn poll(&mut self, pool: &mut PacketPool, max: usize, mut take: impl FnMut(&mut PacketPool, PacketId, u64)) -> usize {
        let mut n = 0;
        while n < max {
            // SAFETY: the slot lies in the mapped ring; the kernel writes
            // tp_status last, and hands the slot over with it.
            let hdr: *mut tpacket2_hdr = self.next.slot(&self.socket);
            let status_at = unsafe { std::ptr::addr_of_mut!((*hdr).tp_status) };
            let status = unsafe { std::ptr::read_volatile(status_at) };
            if status & libc::TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            let (mac, snap, len) = unsafe { ((*hdr).tp_mac, (*hdr).tp_snaplen, (*hdr).tp_len) };
            let arrived_ns = unsafe { u64::from((*hdr).tp_sec) * 1_000_000_000 + u64::from((*hdr).tp_nsec) };
            // SAFETY: the kernel puts the frame's link address right after its header, aligned.
            let outgoing = unsafe { (*hdr.cast::<u8>().add(LINK_ADDRESS_OFFSET).cast::<sockaddr_ll>()).sll_pkttype == libc::PACKET_OUTGOING };
            // A frame this host sent: a fanout group's sockets see those, whatever
            // PACKET_IGNORE_OUTGOING says (it is each socket's own hook's).
            let slot = if status & libc::TP_STATUS_COPY != 0 {
                Slot::Queued
            } else if outgoing || snap < len || snap as usize > MAX_LARGE_LEN || usize::from(mac) < vnet::LEN {
                Slot::Lost
            } else {
                // SAFETY: the frame and, right before it, its virtio-net header lie in the slot.
                let frame = unsafe { std::slice::from_raw_parts(hdr.cast::<u8>().add(usize::from(mac)), snap as usize) };
                let header = unsafe { std::ptr::read_unaligned(hdr.cast::<u8>().add(usize::from(mac) - vnet::LEN).cast::<[u8; vnet::LEN]>()) };
                Slot::Frame(frame, header)
            };
            let taken = match slot {
                Slot::Frame(frame, header) => self.copy_in(pool, frame, &header),
                Slot::Queued => self.read_queued(pool),
                Slot::Lost => {
                    self.oversize += u64::from(!outgoing);
                    Ok(None)
                }
            };
            match taken {
                // No buffer: the frame stays in its slot (or on the queue, for the next poll to read).
                Err(NoBuffer) => return n,
                Ok(Some(id)) => {
                    take(pool, id, arrived_ns);
                    n += 1;
                }
                Ok(None) => {}
            }
            fence(Ordering::Release);
            unsafe { std::ptr::write_volatile(status_at, libc::TP_STATUS_KERNEL) };
            self.next.advance();
        }
        n
    }

    /// `frame` with `header` as a packet of `pool` (`None`: refused and counted).
    fn copy_in(&mut self, pool: &mut PacketPool, frame: &[u8], header: &[u8; vnet::LEN]) -> std::result::Result<Option<PacketId>, NoBuffer> {
        let offload = match vnet::parse(header, frame.len()) {
            Ok(o) => o,
            Err(_) => {
                self.bad_header += 1;
                return Ok(None);
            }
        };
        // A GSO frame takes a large buffer whatever its length: only those carry an offload.
        let id = if offload.gso == Gso::None { pool.alloc_copy(frame, PacketMeta::default()) } else { large_copy(pool, frame) };
        let Some(id) = id else { return Err(NoBuffer) };
        self.settle(pool, id, offload);
        Ok(Some(id))
    }

    /// The frame queued on the socket for the slot at hand, read into a
    /// large buffer (`None`: it was not there, or was refused and counted).
    fn read_queued(&mut self, pool: &mut PacketPool) -> std::result::Result<Option<PacketId>, NoBuffer> {
        let Some(id) = pool.alloc(MAX_LARGE_LEN) else { return Err(NoBuffer) };
        let mut header = [0u8; vnet::LEN];
        let data = pool.data_mut(id);
        let mut iov = [libc::iovec { iov_base: header.as_mut_ptr().cast(), iov_len: vnet::LEN }, libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: data.len() }];
        // SAFETY: a message header over the two buffers above, alive during the call.
        let got = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = iov.as_mut_ptr();
            msg.msg_iovlen = iov.len();
            libc::recvmsg(self.socket.fd.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT | libc::MSG_TRUNC)
        };
        let frame_len = (got.max(0) as usize).saturating_sub(vnet::LEN);
        if got < vnet::LEN as isize || frame_len > MAX_LARGE_LEN {
            // Gone (its queue was full when it came) or longer than any buffer: counted, the buffer back.
            self.oversize += 1;
            pool.free(id);
            return Ok(None);
        }
        pool.set_len(id, frame_len);
        match vnet::parse(&header, frame_len) {
            Ok(offload) => {
                self.settle(pool, id, offload);
                Ok(Some(id))
            }
            Err(_) => {
                self.bad_header += 1;
                pool.free(id);
                Ok(None)
            }
        }
    }

    /// Gives packet `id` its offload: a GSO frame keeps it whole, any other
    /// has a partial checksum completed here.
    fn settle(&mut self, pool: &mut PacketPool, id: PacketId, offload: Offload) {
        if offload.gso != Gso::None {
            self.gso += 1;
            pool.set_offload(id, offload);
        } else if offload.csum_partial {
            sluice_core::wire::checksum::complete(pool.data_mut(id), usize::from(offload.csum_start), usize::from(offload.csum_offset));
        }
    }

    /// The socket: readable once the kernel has put a frame in the ring.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.socket.fd.as_raw_fd()
    }

    /// Frames lost before the pipeline saw them (pkt, cumulative): those the
    /// kernel dropped at a full ring, those too long to take, those whose header did not hold.
    pub fn missed(&self) -> u64 {
        self.ring_dropped() + self.oversize + self.bad_header
    }

    /// GSO frames taken in whole (pkt, cumulative).
    pub fn gso(&self) -> u64 {
        self.gso
    }

    /// Frames whose virtio-net header did not hold, dropped (pkt, cumulative).
    pub fn bad_header(&self) -> u64 {
        self.bad_header
    }

    /// Frames too long to take, dropped here (pkt, cumulative).
    pub fn oversize(&self) -> u64 {
        self.oversize
    }

    /// Frames the kernel dropped at a full ring (pkt, cumulative).
    pub fn ring_dropped(&self) -> u64 {
        let mut stats: tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<tpacket_stats>() as libc::socklen_t;
        // Reading the statistics resets them: they are added up here.
        let rc = unsafe {
            libc::getsockopt(self.socket.fd.as_raw_fd(), libc::SOL_PACKET, libc::PACKET_STATISTICS, (&mut stats as *mut tpacket_stats).cast::<c_void>(), &mut len)
        };
        if rc == 0 {
            self.ring_dropped.set(self.ring_dropped.get() + u64::from(stats.tp_drops));
        }
        self.ring_dropped.get()
    }
}

/// The pool had no buffer for a frame.
struct NoBuffer;

/// A copy of `frame` in a large buffer of `pool`, whatever its length.
fn large_copy(pool: &mut PacketPool, frame: &[u8]) -> Option<PacketId> {
    let id = pool.alloc(MAX_PACKET_LEN + 1)?;
    pool.set_len(id, frame.len());
    pool.data_mut(id).copy_from_slice(frame);
    Some(id)
}

/// The transmit side: fills frame slots in ring order and kicks the kernel.
pub struct AfPacketTx {
    socket: Socket,
    /// Where frames longer than a slot go, each after its virtio-net header.
    long: OwnedFd,
    /// The next slot to fill.
    next: SlotCursor,
    /// Frames the kernel refused as malformed (pkt).
    pub refused: u64,
    /// GSO frames sent whole (pkt).
    pub gso: u64,
}

/// What became of a long frame (see [`AfPacketTx::send_long`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// On its way.
    Sent,
    /// The interface's queue was full: try later, or drop it.
    Full,
    /// Refused by the kernel (a header it does not take, longer than the device's MTU): counted.
    Refused,
}

impl AfPacketTx {
    /// Opens the transmit ring on `iface` (`port` names it in errors), and the socket for long frames.
    pub fn open(port: &str, iface: &str, config: RingConfig) -> Result<Self> {
        let socket = Socket::open(port, iface, 0, libc::PACKET_TX_RING, &config)?;
        let long = packet_socket(port, 0)?;
        set(&long, libc::PACKET_VNET_HDR, &1 as &c_int).map_err(os(port, "write virtio-net headers"))?;
        bind(port, &long, interface::find(port, iface)?.1, 0)?;
        Ok(Self { socket, long, next: SlotCursor::new(&config), refused: 0, gso: 0 })
    }

    /// Sends `frame`, longer than a slot (a GSO or jumbo frame), with its
    /// `offload` in its header, after the frames queued in the ring.
    pub fn send_long(&mut self, frame: &[u8], offload: &Offload) -> Sent {
        self.flush();
        let mut header = vnet::write(offload);
        let iov = [libc::iovec { iov_base: header.as_mut_ptr().cast(), iov_len: vnet::LEN }, libc::iovec { iov_base: frame.as_ptr() as *mut c_void, iov_len: frame.len() }];
        // SAFETY: a message over the two buffers above, only read during the call.
        let sent = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
            msg.msg_iovlen = iov.len();
            libc::sendmsg(self.long.as_raw_fd(), &msg, libc::MSG_DONTWAIT)
        };
        if sent >= 0 {
            self.gso += u64::from(offload.gso != Gso::None);
            return Sent::Sent;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EAGAIN | libc::ENOBUFS) => Sent::Full,
            _ => {
                self.refused += 1;
                Sent::Refused
            }
        }
    }

    /// Queues `frame` in the next slot; false when the ring is full.
    pub fn push(&mut self, frame: &[u8]) -> bool {
        let hdr: *mut tpacket3_hdr = self.next.slot(&self.socket);
        let status_at = unsafe { std::ptr::addr_of_mut!((*hdr).tp_status) };
        let status = unsafe { std::ptr::read_volatile(status_at) };
        if status & libc::TP_STATUS_WRONG_FORMAT != 0 {
            self.refused += 1;
        } else if status != libc::TP_STATUS_AVAILABLE {
            return false;
        }
        fence(Ordering::Acquire);
        debug_assert!(frame.len() <= MAX_PACKET_LEN, "the ring's frames hold any pool buffer");
        unsafe {
            std::ptr::copy_nonoverlapping(frame.as_ptr(), hdr.cast::<u8>().add(TX_DATA_OFFSET), frame.len());
            (*hdr).tp_len = frame.len() as u32;
            (*hdr).tp_snaplen = frame.len() as u32;
        }
        fence(Ordering::Release);
        unsafe { std::ptr::write_volatile(status_at, libc::TP_STATUS_SEND_REQUEST) };
        self.next.advance();
        true
    }

    /// Has the kernel send every queued frame (without waiting for the wire).
    pub fn flush(&mut self) {
        unsafe { libc::send(self.socket.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_cursor_visits_every_slot_in_ring_order_skips_each_block_s_tail_and_wraps() {
        // 3 slots of 2560 bytes a block of 8192: 512 bytes of every block unused.
        let config = RingConfig { block_size: 8192, blocks: 4, frame_size: 2560, ..RingConfig::default() };
        let mut cursor = SlotCursor::new(&config);
        let mut offsets = Vec::new();
        for _ in 0..2 * config.frames() {
            offsets.push(cursor.offset);
            cursor.advance();
        }
        let one_lap: Vec<usize> = (0..4).flat_map(|b| (0..3).map(move |i| b * 8192 + i * 2560)).collect();
        assert_eq!(offsets, [one_lap.clone(), one_lap].concat());
    }
}
