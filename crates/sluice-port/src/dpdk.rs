//! DPDK ethdev ports through a small C shim (`dpdk_shim.c`; the burst
//! calls are static inline), built where libdpdk is (`build.rs`). A port
//! is named by its DPDK device: a virtual device with its arguments
//! (`dpdk:net_ring0`, `dpdk:net_null0`, `dpdk:net_pcap0,rx_pcap=in.pcap`,
//! `dpdk:net_af_packet0,iface=veth1`), created when first opened, or a
//! NIC by its PCI address once the EAL may probe PCI. A port uses one
//! queue pair of its device (the i-th, where a pipeline spreads workers
//! that name the device alike); the device starts once, at the first port
//! to attach, with as many queue pairs as the process's ports joined, and
//! stops when the last of them goes.
//!
//! Frames are copied both ways: a received mbuf into a pool buffer (the
//! mbuf goes back to DPDK at once), a packet into a fresh mbuf of the
//! port's own mempool to transmit. Wrapping mbufs as packets would save
//! the copies but tie the pool's buffers to DPDK's allocator; the ports
//! experiment measures what the copies cost against DPDK's bare loop.
//!
//! DPDK's environment (EAL) starts once per process, at the first port,
//! with the arguments in `SLUICE_DPDK_EAL` (default [`DEFAULT_EAL`]).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

use sluice_core::batch::MAX_BURST;
use sluice_core::packet::{PacketId, PacketMeta, MAX_LARGE_LEN};
use sluice_core::PacketPool;

use crate::error::{Error, Result};
use crate::shared::{Joined, Registry, Shared, Side};

/// The EAL's arguments unless `SLUICE_DPDK_EAL` gives others: no huge
/// pages, no PCI probing, no files shared with other DPDK processes, no
/// telemetry socket, 512 MiB of memory, library logs at error level; the
/// lcore list is added (the thread that starts the EAL stays free to run
/// on any CPU, where the EAL would pin it to one).
pub const DEFAULT_EAL: &str = "--no-huge --no-pci --no-shconf --no-telemetry -m 512 --log-level=lib.*:error";

/// Descriptors per queue asked of the device (it may round them).
pub(crate) const DESCRIPTORS: u16 = 1024;
/// mbufs in a device's mempool per queue pair: its receive ring, a transmit ring and bursts in flight.
const MBUFS_PER_QUEUE: u32 = 4 * DESCRIPTORS as u32 + 2 * MAX_BURST as u32;

extern "C" {
    fn sluice_dpdk_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    fn sluice_dpdk_strerror(error: c_int) -> *const c_char;
    fn sluice_dpdk_find(name: *const c_char, devargs: *const c_char, port: *mut u16) -> c_int;
    fn sluice_dpdk_max_queues(port: u16) -> c_int;
    fn sluice_dpdk_start(port: u16, queues: u16, descs: u16, mbufs: u32, pool: *mut *mut c_void) -> c_int;
    fn sluice_dpdk_stop(port: u16, name: *const c_char, pool: *mut c_void);
    fn sluice_dpdk_rx(port: u16, queue: u16, mbufs: *mut *mut c_void, data: *mut *const u8, lens: *mut u16, n: u16) -> u16;
    fn sluice_dpdk_free(mbufs: *mut *mut c_void, n: u16);
    fn sluice_dpdk_tx(port: u16, queue: u16, pool: *mut c_void, frames: *const *const u8, lens: *const u16, n: u16) -> c_int;
    fn sluice_dpdk_stats(port: u16, out: *mut u64) -> c_int;
    fn sluice_dpdk_thread_join() -> c_int;
    fn sluice_dpdk_thread_leave();
    fn sluice_dpdk_forward_bare(rx: u16, tx: u16, burst: u16, seconds: f64, forwarded: *mut u64, refused: *mut u64);
}

/// DPDK's text for error `rc` (negative).
fn strerror(rc: c_int) -> String {
    // SAFETY: rte_strerror returns a NUL-terminated static or thread-local string.
    unsafe { CStr::from_ptr(sluice_dpdk_strerror(-rc)) }.to_string_lossy().into_owned()
}

/// Starts the EAL once; every port reports how that went.
fn eal(port: &str) -> Result<()> {
    static STARTED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let given = std::env::var("SLUICE_DPDK_EAL").unwrap_or_else(|_| DEFAULT_EAL.into());
        let line = format!("sluice {given} --lcores=0@(0-{})", cpus - 1);
        let args: Vec<CString> = line.split_whitespace().map(|a| CString::new(a).expect("no NUL in an environment variable")).collect();
        let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        // SAFETY: argc and argv describe NUL-terminated strings that outlive the call (the EAL copies what it keeps).
        let rc = unsafe { sluice_dpdk_init(argv.len() as c_int, argv.as_mut_ptr()) };
        if rc < 0 {
            return Err(format!("DPDK's EAL would not start with `{given}` (SLUICE_DPDK_EAL): {}", strerror(rc)));
        }
        Ok(())
    });
    started.clone().map_err(|reason| Error::Name { port: port.into(), reason })
}

/// The calling thread's lcore, if it took one (see `sluice_dpdk_thread_join`).
/// A thread the EAL did not start has none, and DPDK's mempools then
/// serve each mbuf it receives or sends from their shared ring, an atomic
/// operation apiece, where an lcore's cache serves a burst (a worker
/// forwarding between null devices spent 15% of its time in that ring).
/// Where no lcore is free the thread goes on without one, slower.
struct Lcore {
    taken: bool,
}

impl Drop for Lcore {
    fn drop(&mut self) {
        if self.taken {
            // SAFETY: the thread that joined leaves, once, at its exit.
            unsafe { sluice_dpdk_thread_leave() };
        }
    }
}

thread_local! {
    // SAFETY: the EAL runs (a port is attached before its first burst).
    static LCORE: Lcore = Lcore { taken: unsafe { sluice_dpdk_thread_join() } == 1 };
}

/// Gives the calling thread an lcore for its bursts, once, until it ends.
fn join_lcore() {
    LCORE.with(|_| ());
}

/// A started DPDK device and its mempool, stopped when the last port on it goes.
struct Device {
    port: u16,
    name: CString,
    /// Receive and transmit queues it was started with.
    queues: u16,
    mempool: *mut c_void,
}

// SAFETY: the port id and mempool are DPDK's, usable from any thread; each queue has one user (see `shared`).
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: a port this process started and its mempool, stopped once.
        unsafe { sluice_dpdk_stop(self.port, self.name.as_ptr(), self.mempool) };
    }
}

/// One queue pair of a started device: what a port receives or transmits on.
struct Queue {
    device: Arc<Device>,
    queue: u16,
}

impl Queue {
    /// The device's counters (see `sluice_dpdk_stats`) as this queue
    /// reports them: the device counts its drops and errors for all its
    /// queues at once, so queue 0 reports them and the others none.
    fn stats(&self) -> [u64; 8] {
        let mut out = [0; 8];
        if self.queue == 0 {
            // SAFETY: the shim writes eight counters.
            unsafe { sluice_dpdk_stats(self.device.port, out.as_mut_ptr()) };
        }
        out
    }
}

/// The queues ports of this process have open.
static OPEN: Registry<Queue> = Mutex::new(Vec::new());
/// The devices started, by name: a device's queues share it.
static DEVICES: Mutex<Vec<std::sync::Weak<Device>>> = Mutex::new(Vec::new());

/// A port's end of a device queue: the queue as the port names it, its
/// place on it among the ports of this process, and the queue itself once
/// the port is attached.
struct Endpoint {
    port: String,
    name: CString,
    devargs: CString,
    queue: u16,
    joined: Joined<Queue>,
    attached: Option<Arc<Queue>>,
}

impl Endpoint {
    /// Starts the EAL if need be and joins queue `queue` of the device on `side`.
    fn join(port: &str, device: &str, queue: u32, side: Side) -> Result<Self> {
        eal(port)?;
        let name = device.split(',').next().unwrap_or(device);
        let c = |s: &str| CString::new(s).map_err(|_| Error::Name { port: port.into(), reason: "device name holds a NUL byte".into() });
        let queue = u16::try_from(queue).map_err(|_| Error::Name { port: port.into(), reason: format!("queue {queue} is beyond any DPDK device's") })?;
        let joined = Shared::join(&OPEN, port, name, u32::from(queue), side)?;
        Ok(Self { port: port.into(), name: c(name)?, devargs: c(device)?, queue, joined, attached: None })
    }

    /// Attaches the port on `worker` to the queue, its device started by the
    /// first port to ask, with as many queues as the ports of this process joined.
    fn attach(&mut self, worker: usize) -> Result<()> {
        let queue = self.joined.get(&self.port, worker, |_, _| Ok(Queue { device: self.device()?, queue: self.queue }))?;
        self.attached = Some(queue);
        Ok(())
    }

    /// The device, started if no port started it yet.
    fn device(&self) -> Result<Arc<Device>> {
        let fail = |reason: String| Error::Name { port: self.port.clone(), reason };
        let name = self.name.to_string_lossy();
        let mut devices = DEVICES.lock().expect("no port panics while holding the list");
        devices.retain(|d| d.strong_count() > 0);
        if let Some(d) = devices.iter().filter_map(std::sync::Weak::upgrade).find(|d| d.name == self.name) {
            if self.queue >= d.queues {
                return Err(fail(format!("device '{name}' runs with {} queue(s) for other ports; stop them to add queue {}", d.queues, self.queue)));
            }
            return Ok(d);
        }
        let mut port = 0;
        // SAFETY: NUL-terminated strings; the shim writes the port id.
        let rc = unsafe { sluice_dpdk_find(self.name.as_ptr(), self.devargs.as_ptr(), &mut port) };
        if rc < 0 {
            return Err(fail(format!(
                "no DPDK device '{name}' (a virtual one is net_ring0, net_null0, net_pcap0,rx_pcap=F…; a NIC needs PCI probing in SLUICE_DPDK_EAL)"
            )));
        }
        let queues = crate::shared::queues_joined(&OPEN, &name) as u16;
        // SAFETY: a port id DPDK gave.
        let most = unsafe { sluice_dpdk_max_queues(port) };
        if most < 0 {
            return Err(fail(format!("read the device's limits: {}", strerror(most))));
        }
        if i32::from(queues) > most {
            return Err(fail(format!(
                "device '{name}' has {most} queue(s) and {queues} workers need one each (a virtual device may take more, e.g. net_af_packet's qpairs={queues})"
            )));
        }
        let mut mempool = std::ptr::null_mut();
        // SAFETY: a port id DPDK gave; the shim writes the mempool.
        let rc = unsafe { sluice_dpdk_start(port, queues, DESCRIPTORS, MBUFS_PER_QUEUE * u32::from(queues), &mut mempool) };
        if rc < 0 {
            return Err(fail(format!("start the device: {}", strerror(rc))));
        }
        let d = Arc::new(Device { port, name: self.name.clone(), queues, mempool });
        devices.push(Arc::downgrade(&d));
        Ok(d)
    }
}

/// The receive side: a burst of mbufs copied into the pool.
pub struct DpdkRx {
    end: Endpoint,
    mbufs: Box<[*mut c_void]>,
    data: Box<[*const u8]>,
    lens: Box<[u16]>,
    /// Frames in more than one segment or longer than a pool buffer, dropped (pkt).
    oversize: u64,
}

// SAFETY: the burst arrays hold pointers only between a receive and the frees that follow it.
unsafe impl Send for DpdkRx {}

impl DpdkRx {
    /// Starts the EAL if need be; the device starts at [`Self::attach`].
    pub fn open(port: &str, device: &str, queue: u32) -> Result<Self> {
        Ok(Self {
            end: Endpoint::join(port, device, queue, Side::Receive)?,
            mbufs: vec![std::ptr::null_mut(); MAX_BURST].into(),
            data: vec![std::ptr::null(); MAX_BURST].into(),
            lens: vec![0; MAX_BURST].into(),
            oversize: 0,
        })
    }

    /// Starts the device (or joins it) for the worker of `pool`.
    pub fn attach(&mut self, pool: &PacketPool) -> Result<()> {
        self.end.attach(pool.worker())
    }

    /// Receives up to `max` frames into `pool`, passing each to `take`; returns how many.
    pub fn poll(&mut self, pool: &mut PacketPool, max: usize, mut take: impl FnMut(&mut PacketPool, PacketId)) -> usize {
        let Some(Queue { device, queue }) = self.end.attached.as_deref() else { return 0 };
        join_lcore();
        let max = max.min(MAX_BURST).min(pool.available());
        // SAFETY: the arrays hold MAX_BURST entries; the shim fills `n` of each.
        let n = unsafe { sluice_dpdk_rx(device.port, *queue, self.mbufs.as_mut_ptr(), self.data.as_mut_ptr(), self.lens.as_mut_ptr(), max as u16) } as usize;
        let mut taken = 0;
        for i in 0..n {
            let len = self.lens[i] as usize;
            // (A frame of several segments comes with the length u16::MAX.)
            if len >= MAX_LARGE_LEN {
                self.oversize += 1;
                continue;
            }
            // SAFETY: the mbuf's data, `len` bytes, valid until it is freed below.
            let frame = unsafe { std::slice::from_raw_parts(self.data[i], len) };
            // A small buffer is there (no more frames than the pool had); a large one, for a frame past a small one, may not be.
            let Some(id) = pool.alloc_copy(frame, PacketMeta::default()) else {
                self.oversize += 1;
                continue;
            };
            take(pool, id);
            taken += 1;
        }
        // SAFETY: the `n` mbufs received above, each freed once.
        unsafe { sluice_dpdk_free(self.mbufs.as_mut_ptr(), n as u16) };
        taken
    }

    /// Frames the device dropped at a full receive queue or for want of an
    /// mbuf (pkt, cumulative; on queue 0, for all its queues, see [`Queue::stats`]).
    pub fn ring_dropped(&self) -> u64 {
        let s = self.end.attached.as_deref().map_or([0; 8], Queue::stats);
        s[4] + s[7]
    }

    /// Frames too long to take (of several segments, or past a small
    /// buffer when no large one was free), dropped here (pkt, cumulative).
    pub fn oversize(&self) -> u64 {
        self.oversize
    }
}

/// The transmit side: packets copied into fresh mbufs.
pub struct DpdkTx {
    end: Endpoint,
    frames: Box<[*const u8]>,
    lens: Box<[u16]>,
}

// SAFETY: the burst arrays hold pointers only during one transmit.
unsafe impl Send for DpdkTx {}

impl DpdkTx {
    /// Starts the EAL if need be; the device starts at [`Self::attach`].
    pub fn open(port: &str, device: &str, queue: u32) -> Result<Self> {
        Ok(Self { end: Endpoint::join(port, device, queue, Side::Transmit)?, frames: vec![std::ptr::null(); MAX_BURST].into(), lens: vec![0; MAX_BURST].into() })
    }

    /// Starts the device (or joins it) for the worker of `pool`.
    pub fn attach(&mut self, pool: &PacketPool) -> Result<()> {
        self.end.attach(pool.worker())
    }

    /// Copies the packets of `ids` into mbufs and transmits them, as far as
    /// the device takes them; returns how many it took.
    pub fn push(&mut self, pool: &PacketPool, ids: &[PacketId]) -> usize {
        let Some(Queue { device, queue }) = self.end.attached.as_deref() else { return 0 };
        join_lcore();
        let mut sent = 0;
        for chunk in ids.chunks(MAX_BURST) {
            for (i, &id) in chunk.iter().enumerate() {
                let frame = pool.data(id);
                self.frames[i] = frame.as_ptr();
                self.lens[i] = frame.len() as u16;
            }
            // SAFETY: `chunk.len()` frames of the pool, valid during the call; the shim copies them.
            let rc = unsafe { sluice_dpdk_tx(device.port, *queue, device.mempool, self.frames.as_ptr(), self.lens.as_ptr(), chunk.len() as u16) };
            let took = rc.max(0) as usize;
            sent += took;
            if took < chunk.len() {
                break;
            }
        }
        sent
    }

    /// Frames the device failed to send (pkt, cumulative; on queue 0, for all its queues).
    pub fn errors(&self) -> u64 {
        self.end.attached.as_deref().map_or(0, |q| q.stats()[6])
    }
}

/// DPDK's own forwarding loop between the devices of `rx` and `tx` (port
/// names with their devices; see [`crate::dpdk_forward_bare`]).
pub fn forward_bare(rx: (&str, &str), tx: (&str, &str), burst: usize, seconds: f64) -> Result<(u64, u64, f64)> {
    let pool = PacketPool::new(2 * MAX_BURST);
    let (mut from, mut to) = (DpdkRx::open(rx.0, rx.1, 0)?, DpdkTx::open(tx.0, tx.1, 0)?);
    from.attach(&pool)?;
    to.attach(&pool)?;
    let (Some(a), Some(b)) = (from.end.attached.as_deref().map(|q| &q.device), to.end.attached.as_deref().map(|q| &q.device)) else { unreachable!("attached above") };
    let (mut forwarded, mut refused) = (0, 0);
    let start = std::time::Instant::now();
    // SAFETY: two started ports; the shim writes the two counts.
    unsafe { sluice_dpdk_forward_bare(a.port, b.port, burst.min(MAX_BURST) as u16, seconds, &mut forwarded, &mut refused) };
    Ok((forwarded, refused, start.elapsed().as_secs_f64()))
}
