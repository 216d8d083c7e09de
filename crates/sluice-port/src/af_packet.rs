//! AF_PACKET with TPACKET_V3 memory-mapped rings: the receive ring is a
//! run of blocks the kernel fills with frames and hands over whole (full,
//! or retired after a timeout), the transmit ring a run of fixed frames
//! the worker fills and the kernel sends on a `send` call.
//!
//! Receive copies each frame from the ring into the packet pool (the ring
//! is the kernel's memory, reused as soon as the block goes back);
//! transmit copies from the pool into the ring.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{fence, Ordering};

use libc::{c_int, c_void, sockaddr_ll, tpacket3_hdr, tpacket_block_desc, tpacket_req3, tpacket_stats_v3};
use sluice_core::packet::MAX_PACKET_LEN;

use crate::error::{Error, Result};
use crate::interface;

/// The shape of a ring: `blocks` blocks of `block_size` bytes, cut into
/// frames of `frame_size` bytes (transmit; receive packs frames tightly
/// into a block and uses the frame size only as the largest frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingConfig {
    /// Bytes per block: a multiple of the page size.
    pub block_size: u32,
    /// Blocks in the ring.
    pub blocks: u32,
    /// Bytes per frame slot, header included: a multiple of 16.
    pub frame_size: u32,
    /// How long the kernel keeps a receive block that is not full before
    /// handing it over (ms, ≥ 1): the longest a packet waits in the ring
    /// at low load.
    pub retire_ms: u32,
    /// AF_XDP: descriptors in each of the socket's rings, a power of two
    /// (as many buffers are lent from the pool to the fill ring).
    pub descriptors: u32,
}

impl Default for RingConfig {
    /// 512 blocks of 4 KiB, frames of 2 KiB: small blocks fill (and are
    /// handed over) within tens of µs at 1 Mpps; AF_XDP rings of 2048.
    fn default() -> Self {
        Self { block_size: 4096, blocks: 512, frame_size: 2048, retire_ms: 1, descriptors: 2048 }
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
        if self.retire_ms == 0 {
            return bad("the retire timeout must be ≥ 1 ms".into());
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.block_size as usize * self.blocks as usize
    }

    /// Frames the ring holds at `frame_size` each (the fewest: receive packs small frames tighter).
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
    /// Opens a TPACKET_V3 socket on `iface` with a ring of `ring_option`
    /// (receive or transmit) shaped by `config`; `protocol` (host order)
    /// is what it receives (0: nothing).
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
        set(&fd, libc::PACKET_VERSION, &(libc::tpacket_versions::TPACKET_V3 as c_int)).map_err(os(port, "select TPACKET_V3"))?;
        if ring_option == libc::PACKET_RX_RING {
            // Not what this socket's own transmit side (or another's on the interface) sends.
            set(&fd, libc::PACKET_IGNORE_OUTGOING, &1 as &c_int).map_err(os(port, "ignore outgoing packets"))?;
        }
        let rx = ring_option == libc::PACKET_RX_RING;
        let req = tpacket_req3 {
            tp_block_size: config.block_size,
            tp_block_nr: config.blocks,
            tp_frame_size: config.frame_size,
            tp_frame_nr: config.frames(),
            tp_retire_blk_tov: if rx { config.retire_ms } else { 0 },
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        set(&fd, ring_option, &req).map_err(os(port, "set up the ring"))?;
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

/// The receive side: hands frames over block by block, in ring order.
pub struct AfPacketRx {
    socket: Socket,
    config: RingConfig,
    /// The block being read.
    block: u32,
    /// Packets of it taken, and the offset of the next (bytes).
    taken: u32,
    offset: u32,
    /// Frames the kernel dropped at a full ring, as counted so far (pkt).
    ring_dropped: Cell<u64>,
    /// Frames longer than a pool buffer, dropped here (pkt).
    oversize: u64,
}

/// Where a frame's `sockaddr_ll` sits after its header in the ring:
/// TPACKET_ALIGN(sizeof(struct tpacket3_hdr)).
const LINK_ADDRESS_OFFSET: usize = std::mem::size_of::<tpacket3_hdr>().next_multiple_of(libc::TPACKET_ALIGNMENT);

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
        Ok(Self { socket, config, block: 0, taken: 0, offset: 0, ring_dropped: Cell::new(0), oversize: 0 })
    }

    fn block_desc(&self) -> *mut tpacket_block_desc {
        unsafe { self.socket.ring.as_ptr().add(self.block as usize * self.config.block_size as usize).cast() }
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
            let desc = self.block_desc();
            // SAFETY: the descriptor lies in the mapped ring; the kernel
            // writes block_status last, and hands the block over with it.
            let bh = unsafe { std::ptr::addr_of_mut!((*desc).hdr.bh1) };
            let status = unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*bh).block_status)) };
            if status & libc::TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            let (count, first) = unsafe { ((*bh).num_pkts, (*bh).offset_to_first_pkt) };
            if self.taken == 0 {
                self.offset = first;
            }
            while self.taken < count && n < max {
                let hdr: *const tpacket3_hdr = unsafe { desc.cast::<u8>().add(self.offset as usize).cast() };
                let (mac, snap, len, next, status) = unsafe { ((*hdr).tp_mac, (*hdr).tp_snaplen, (*hdr).tp_len, (*hdr).tp_next_offset, (*hdr).tp_status) };
                let arrived_ns = unsafe { u64::from((*hdr).tp_sec) * 1_000_000_000 + u64::from((*hdr).tp_nsec) };
                // SAFETY: the kernel puts the frame's link address right after its header, aligned.
                let outgoing = unsafe { (*hdr.cast::<u8>().add(LINK_ADDRESS_OFFSET).cast::<sockaddr_ll>()).sll_pkttype == libc::PACKET_OUTGOING };
                if outgoing {
                    // A frame this host sent: a fanout group's sockets see those, whatever
                    // PACKET_IGNORE_OUTGOING says (it is each socket's own hook's).
                } else if snap as usize > MAX_PACKET_LEN || snap < len {
                    self.oversize += 1;
                } else {
                    let frame = unsafe { std::slice::from_raw_parts(hdr.cast::<u8>().add(mac as usize), snap as usize) };
                    if !take(frame, arrived_ns, status & libc::TP_STATUS_CSUMNOTREADY != 0) {
                        return n;
                    }
                    n += 1;
                }
                self.taken += 1;
                self.offset += next;
            }
            if self.taken == count {
                fence(Ordering::Release);
                unsafe { std::ptr::write_volatile(std::ptr::addr_of_mut!((*bh).block_status), libc::TP_STATUS_KERNEL) };
                self.block = (self.block + 1) % self.config.blocks;
                self.taken = 0;
            }
        }
        n
    }

    /// The socket: readable once the kernel has handed over a block (a
    /// full one, or one `retire_ms` old), which bounds how late a worker
    /// waiting on it wakes for a packet.
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
        let mut stats: tpacket_stats_v3 = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<tpacket_stats_v3>() as libc::socklen_t;
        // Reading the statistics resets them: they are added up here.
        let rc = unsafe {
            libc::getsockopt(self.socket.fd.as_raw_fd(), libc::SOL_PACKET, libc::PACKET_STATISTICS, (&mut stats as *mut tpacket_stats_v3).cast::<c_void>(), &mut len)
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
    config: RingConfig,
    /// The next slot to fill.
    next: u32,
    /// Frames the kernel refused as malformed (pkt).
    pub refused: u64,
}

impl AfPacketTx {
    /// Opens the transmit ring on `iface` (`port` names it in errors).
    pub fn open(port: &str, iface: &str, config: RingConfig) -> Result<Self> {
        Ok(Self { socket: Socket::open(port, iface, 0, libc::PACKET_TX_RING, &config)?, config, next: 0, refused: 0 })
    }

    fn slot(&self, i: u32) -> *mut tpacket3_hdr {
        let per_block = self.config.block_size / self.config.frame_size;
        let at = (i / per_block) as usize * self.config.block_size as usize + (i % per_block) as usize * self.config.frame_size as usize;
        unsafe { self.socket.ring.as_ptr().add(at).cast() }
    }

    /// Queues `frame` in the next slot; false when the ring is full.
    pub fn push(&mut self, frame: &[u8]) -> bool {
        let hdr = self.slot(self.next);
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
        self.next = (self.next + 1) % self.config.frames();
        true
    }

    /// Has the kernel send every queued frame (without waiting for the wire).
    pub fn flush(&mut self) {
        unsafe { libc::send(self.socket.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
    }
}
