//! Live capture: copies of the packets that reach a module (or leave it by
//! one gate), taken in the worker and handed to a reader on another
//! thread (which writes them to a pcap file, say), as BESS's `tcpdump`
//! on a gate does.
//!
//! The copies go through preallocated [`Frame`]s: the worker takes a
//! spare one, fills it and hands it over a ring; the reader hands it back
//! once written. When the reader falls behind and no spare is left, the
//! packet is not copied, and counted as missed: a capture never holds up
//! or drops a packet of the pipeline.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::model::ModuleId;
use crate::ring::{spsc, Consumer, Producer};
use crate::packet_filter::PacketFilter;

/// Bytes of a packet a capture keeps (a jumbo frame whole; a GSO frame's head).
pub const SNAP_LEN: usize = 9216 + 22;
/// Frames a capture has in flight between the worker and its reader.
const FRAMES: usize = 512;

/// One captured packet.
pub struct Frame {
    /// When it was copied (ns since the Unix epoch).
    pub wall_ns: u64,
    /// Its length (bytes); `data` holds up to [`SNAP_LEN`] of it.
    pub len: usize,
    /// Its first bytes.
    pub data: Vec<u8>,
}

/// What a capture and its reader share.
struct Shared {
    /// Packets it would have copied but had no spare frame for.
    missed: AtomicU64,
    /// Set once the capture has taken its count, or was ended.
    ended: AtomicBool,
}

/// The worker's side of a capture.
pub struct Capture {
    /// The module it watches.
    pub module: ModuleId,
    /// The gate whose packets it copies (`None`: those arriving at the module).
    pub gate: Option<u16>,
    filter: Option<Arc<dyn PacketFilter>>,
    /// Packets still to copy.
    remaining: u64,
    full: Producer<Box<Frame>>,
    spare: Consumer<Box<Frame>>,
    shared: Arc<Shared>,
}

/// The reader's side of a capture.
pub struct CaptureReader {
    full: Consumer<Box<Frame>>,
    spare: Producer<Box<Frame>>,
    shared: Arc<Shared>,
}

/// A capture of the next `count` packets at `module` (leaving by `gate`,
/// if given) that `filter` takes, and its reader.
pub fn capture(module: ModuleId, gate: Option<u16>, filter: Option<Arc<dyn PacketFilter>>, count: u64) -> (Capture, CaptureReader) {
    let (full_tx, full_rx) = spsc(FRAMES);
    let (mut spare_tx, spare_rx) = spsc(FRAMES);
    for _ in 0..FRAMES {
        let frame = Box::new(Frame { wall_ns: 0, len: 0, data: Vec::with_capacity(SNAP_LEN) });
        if spare_tx.push(frame).is_err() {
            break;
        }
    }
    let shared = Arc::new(Shared { missed: AtomicU64::new(0), ended: AtomicBool::new(false) });
    let capture = Capture { module, gate, filter, remaining: count, full: full_tx, spare: spare_rx, shared: shared.clone() };
    (capture, CaptureReader { full: full_rx, spare: spare_tx, shared })
}

impl Capture {
    /// Whether it has copied its count.
    pub(crate) fn done(&self) -> bool {
        self.remaining == 0
    }

    /// Copies `data` if the filter takes it.
    pub(crate) fn copy(&mut self, data: &[u8]) {
        if self.remaining == 0 || self.filter.as_ref().is_some_and(|f| !f.matches(data)) {
            return;
        }
        let Some(mut frame) = self.spare.pop() else {
            self.shared.missed.fetch_add(1, Ordering::Relaxed);
            return;
        };
        frame.wall_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        frame.len = data.len();
        frame.data.clear();
        frame.data.extend_from_slice(&data[..data.len().min(SNAP_LEN)]);
        // The ring holds every frame there is: it has room for this one.
        let _ = self.full.push(frame);
        self.remaining -= 1;
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.shared.ended.store(true, Ordering::Release);
    }
}

impl CaptureReader {
    /// The next copied packet, if one waits.
    pub fn next_frame(&mut self) -> Option<Box<Frame>> {
        self.full.pop()
    }

    /// Hands a frame back once read.
    pub fn give_back(&mut self, frame: Box<Frame>) {
        // The ring holds every frame there is: it has room for this one.
        let _ = self.spare.push(frame);
    }

    /// Whether the capture has ended (its count taken, or ended by the
    /// control side) and every copy was read.
    pub fn ended(&self) -> bool {
        self.shared.ended.load(Ordering::Acquire) && self.full.is_empty()
    }

    /// Packets it had no spare frame for (the reader fell behind).
    pub fn missed(&self) -> u64 {
        self.shared.missed.load(Ordering::Relaxed)
    }
}
