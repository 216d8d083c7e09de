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

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{fence, Ordering};

use libc::{c_int, c_void, sockaddr_ll, tpacket2_hdr, tpacket3_hdr, tpacket_req, tpacket_req3, tpacket_stats};
use sluice_core::packet::MAX_PACKET_LEN;

use crate::error::{Error, Result};
use crate::interface;

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
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    check(unsafe { libc::setsockopt(fd.as_raw_fd(), libc::SOL_PACKET, option, (value as *const T).cast(), len) })
}

impl Socket {
    /// Opens a packet socket on `iface` with a ring of `ring_option`
    /// shaped by `config`: receive (TPACKET_V2) or transmit (TPACKET_V3);
    /// `protocol` (host order) is what it receives (0: nothing).
    fn open(port: &str, iface: &str, protocol: u16, ring_option: c_int, config: &RingConfig) -> Result<Self> {
        config.check(port)?;
        let (_, ifindex) = interface::find(port, iface)?;
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, c_int::from(protocol.to_be())) };
        if raw < 0 {
            let e = io::Error::last_os_error();
            let step = if e.kind() == io::ErrorKind::PermissionDenied { "open a packet socket (needs root or CAP_NET_RAW)" } else { "open a packet socket" };
            return Err(Error::Os { port: port.into(), step, source: e });
        }
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        if ring_option == libc::PACKET_RX_RING {
            set(&fd, libc::PACKET_VERSION, &(libc::tpacket_versions::TPACKET_V2 as c_int)).map_err(os(port, "select TPACKET_V2"))?;
            // Not what this socket's own transmit side (or another's on the interface) sends.
            set(&fd, libc::PACKET_IGNORE_OUTGOING, &1 as &c_int).map_err(os(port, "ignore outgoing packets"))?;
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
        let mut addr: sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol.to_be();
        addr.sll_ifindex = ifindex as c_int;
        let addr_len = std::mem::size_of::<sockaddr_ll>() as libc::socklen_t;
        check(unsafe { libc::bind(socket.fd.as_raw_fd(), (&addr as *const sockaddr_ll).cast(), addr_len) }).map_err(os(port, "bind to the interface"))?;
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
    /// Frames longer than a pool buffer, dropped here (pkt).
    oversize: u64,
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
        Ok(Self { socket, next: SlotCursor::new(&config), ring_dropped: Cell::new(0), oversize: 0 })
    }

    /// Passes up to `max` received frames to `take` with the time the
    /// kernel put each in the ring (ns, CLOCK_REALTIME) and whether its
    /// sender left its UDP/TCP checksum to the NIC (a frame a local stack
    /// sent over a veth: the field holds only the pseudo-header's sum), in
    /// order, until it returns false (that frame stays for the next poll);
    /// returns how many it took. Frames longer than a pool buffer are
    /// dropped and counted.
    pub fn poll(&mut self, max: usize, mut take: impl FnMut(&[u8], u64, bool) -> bool) -> usize {
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
            if outgoing {
                // A frame this host sent: a fanout group's sockets see those, whatever
                // PACKET_IGNORE_OUTGOING says (it is each socket's own hook's).
            } else if snap as usize > MAX_PACKET_LEN || snap < len {
                self.oversize += 1;
            } else {
                let frame = unsafe { std::slice::from_raw_parts(hdr.cast::<u8>().add(usize::from(mac)), snap as usize) };
                if !take(frame, arrived_ns, status & libc::TP_STATUS_CSUMNOTREADY != 0) {
                    return n;
                }
                n += 1;
            }
            fence(Ordering::Release);
            unsafe { std::ptr::write_volatile(status_at, libc::TP_STATUS_KERNEL) };
            self.next.advance();
        }
        n
    }

    /// The socket: readable once the kernel has put a frame in the ring.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.socket.fd.as_raw_fd()
    }

    /// Frames lost before the pipeline saw them (pkt, cumulative): those the
    /// kernel dropped at a full ring, and those too long for a pool buffer.
    pub fn missed(&self) -> u64 {
        self.ring_dropped() + self.oversize
    }

    /// Frames too long for a pool buffer, dropped here (pkt, cumulative).
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

/// The transmit side: fills frame slots in ring order and kicks the kernel.
pub struct AfPacketTx {
    socket: Socket,
    /// The next slot to fill.
    next: SlotCursor,
    /// Frames the kernel refused as malformed (pkt).
    pub refused: u64,
}

impl AfPacketTx {
    /// Opens the transmit ring on `iface` (`port` names it in errors).
    pub fn open(port: &str, iface: &str, config: RingConfig) -> Result<Self> {
        Ok(Self { socket: Socket::open(port, iface, 0, libc::PACKET_TX_RING, &config)?, next: SlotCursor::new(&config), refused: 0 })
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
