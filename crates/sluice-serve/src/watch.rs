//! Traces and captures attached to the running pipeline (`/v1/trace`,
//! `/v1/captures`): read from their requests, attached to the workers at a
//! period boundary (see [`sluice_core::Backend::watch`]), a trace's
//! records shown as JSON, a capture's packets written to a pcap file by
//! a thread of its own.

use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use serde::Deserialize;
use serde_json::{json, Value};
use sluice_control::Boundary;
use sluice_core::capture::{capture, CaptureReader, SNAP_LEN};
use sluice_core::trace::{Hop, Way};
use sluice_core::wire::five_tuple::FiveTuple;
use sluice_core::{ModuleId, PacketFilter, Trace, TracedPacket};

use crate::bpf::Bpf;
use crate::error::ApiError;
use crate::status::Status;

/// The most packets a capture takes.
const MAX_CAPTURED: u64 = 1_000_000;
/// How long a capture's writer sleeps when no packet waits.
const WRITER_IDLE: Duration = Duration::from_millis(2);

/// What a trace or capture request asks for.
#[derive(Debug)]
pub enum WatchChange {
    /// Follow the next `count` packets at `module` that `filter` takes (replacing any trace).
    Trace { module: ModuleId, count: usize, filter: Option<Filter> },
    /// Show the trace's records (not a change: read where the workers are held).
    Show,
    /// End the trace.
    EndTrace,
    /// Copy the next `count` packets at `module` (leaving by `gate`) to
    /// pcap file `file` in the run directory.
    Capture { module: ModuleId, gate: Option<u16>, count: u64, filter: Option<Filter>, file: String },
    /// End every capture.
    EndCaptures,
}

/// A compiled filter and its text.
#[derive(Clone)]
pub struct Filter(Arc<Bpf>);

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0.text)
    }
}

impl Filter {
    fn compile(text: Option<String>) -> Result<Option<Self>, ApiError> {
        text.map(|t| Bpf::compile(&t).map(|b| Self(Arc::new(b))).map_err(|e| ApiError::bad(format!("filter: {e}")))).transpose()
    }

    fn shared(&self) -> Arc<dyn PacketFilter> {
        self.0.clone()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TraceBody {
    module: String,
    count: usize,
    #[serde(default)]
    filter: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureBody {
    module: String,
    /// An outgate's name or number; none: what arrives at the module.
    #[serde(default)]
    gate: Option<Value>,
    /// A new file's name in the run directory.
    file: String,
    count: u64,
    #[serde(default)]
    filter: Option<String>,
}

impl WatchChange {
    /// A trace request, read against `status`.
    pub(crate) fn trace(b: TraceBody, status: &Status) -> Result<Self, ApiError> {
        let module = status.module(&b.module).ok_or_else(|| ApiError::bad(format!("module: no module '{}'", b.module)))?;
        if b.count == 0 || b.count > sluice_core::trace::MAX_TRACED {
            return Err(ApiError::bad(format!("count: {} packets; a trace follows 1 to {}", b.count, sluice_core::trace::MAX_TRACED)));
        }
        Ok(Self::Trace { module, count: b.count, filter: Filter::compile(b.filter)? })
    }

    /// A capture request, read against `status` (its file is made when it is).
    pub(crate) fn capture(b: CaptureBody, status: &Status) -> Result<Self, ApiError> {
        let module = status.module(&b.module).ok_or_else(|| ApiError::bad(format!("module: no module '{}'", b.module)))?;
        let gates = &status.gates[module];
        let outgates = status.model.modules[module].outgates;
        let gate = match &b.gate {
            None => None,
            Some(Value::Number(n)) => Some(n.as_u64().filter(|&g| (g as usize) < outgates).ok_or_else(|| ApiError::bad(format!("gate: '{}' has outgates 0 to {}", b.module, outgates.saturating_sub(1))))? as u16),
            Some(Value::String(name)) => Some(gates.iter().position(|g| g == name).ok_or_else(|| ApiError::bad(format!("gate: '{}' has no outgate '{name}' (it has {gates:?})", b.module)))? as u16),
            Some(other) => return Err(ApiError::bad(format!("gate: {other} is not an outgate's name or number"))),
        };
        if b.count == 0 || b.count > MAX_CAPTURED {
            return Err(ApiError::bad(format!("count: {} packets; a capture takes 1 to {MAX_CAPTURED}", b.count)));
        }
        let file = &b.file;
        if file.is_empty() || file.len() > 255 || file.contains('/') || file.starts_with('.') || file.contains('\0') {
            return Err(ApiError::bad(format!("file: '{file}' is not a file name: a capture writes a new file of the run directory, named without '/' and not hidden")));
        }
        Ok(Self::Capture { module, gate, count: b.count, filter: Filter::compile(b.filter)?, file: b.file })
    }

    /// Whether it is a change (logged, kept), not a read.
    pub fn changes(&self) -> bool {
        !matches!(self, Self::Show)
    }

    /// Makes it at `at`: returns the line that logs it, or for
    /// [`Self::Show`] the records as JSON.
    pub fn make(self, at: &mut Boundary<'_>, status: &mut Status, log: &Arc<dyn Fn(&str) + Send + Sync>) -> Result<String, ApiError> {
        let refused = |e: sluice_core::Error| ApiError::conflict(e.to_string());
        let name = |m: ModuleId| status.model.modules[m].name.clone();
        match self {
            Self::Trace { module, count, filter } => {
                let trace = Trace::new(module, count, filter.as_ref().map(Filter::shared), at.backend().packet_handles());
                at.backend().watch(&mut |_, w| w.set_trace(Some(trace.clone()))).map_err(refused)?;
                let filtered = filter.map_or(String::new(), |f| format!(" that match '{}'", f.0.text));
                status.trace = Some(format!("the next {count} packets at '{}'{filtered}", name(module)));
                Ok(format!("trace of {}", status.trace.as_deref().unwrap_or_default()))
            }
            Self::Show => {
                let mut records = None;
                at.backend().watch(&mut |w, watch| if w == 0 { records = watch.trace() }).map_err(refused)?;
                let packets: Vec<Value> = records.unwrap_or_default().iter().map(|p| packet_json(p, status)).collect();
                Ok(json!({ "trace": status.trace, "packets": packets }).to_string())
            }
            Self::EndTrace => {
                at.backend().watch(&mut |_, w| w.set_trace(None)).map_err(refused)?;
                let ended = status.trace.take().ok_or_else(|| ApiError::not_found("no trace is attached"))?;
                Ok(format!("trace of {ended} ended"))
            }
            Self::Capture { module, gate, count, filter, file } => {
                let file = CaptureFile::create(&status.run_dir.join(file))?;
                let worker = at.model().worker_of[module];
                let (tap, reader) = capture(module, gate, filter.as_ref().map(Filter::shared), count);
                let mut tap = Some(tap);
                at.backend().watch(&mut |w, watch| if w == worker { watch.add_capture(tap.take().expect("one worker holds the module")) }).map_err(refused)?;
                let at_gate = gate.map_or(String::new(), |g| format!(" gate {}", status.gates[module].get(g as usize).cloned().unwrap_or_else(|| g.to_string())));
                let what = format!("capture of {count} packets at '{}'{at_gate}{} to {}", name(module), filter.map_or(String::new(), |f| format!(" that match '{}'", f.0.text)), file.path.display());
                file.write_from(reader, what.clone(), log.clone());
                Ok(what)
            }
            Self::EndCaptures => {
                at.backend().watch(&mut |_, w| w.end_captures(None)).map_err(refused)?;
                Ok("captures ended".into())
            }
        }
    }
}

/// One traced packet as `GET /v1/trace` shows it.
fn packet_json(p: &TracedPacket, status: &Status) -> Value {
    let hops: Vec<Value> = p.hops.iter().map(|h| hop_json(h, status)).collect();
    json!({
        "number": p.number,
        "len": p.len,
        "summary": summary(&p.head),
        "hops": hops,
        "hops_left_out": p.hops_left_out,
    })
}

fn hop_json(h: &Hop, status: &Status) -> Value {
    let module = &status.model.modules[h.module].name;
    let (way, detail) = match h.way {
        Way::Gate(g) => ("gate", status.gates[h.module].get(g as usize).cloned().unwrap_or_else(|| g.to_string())),
        Way::Dropped(reasons) => ("dropped", reasons.iter().map(|r| r.name()).collect::<Vec<_>>().join(" or ")),
        Way::Kept => ("kept", String::new()),
        Way::QueueFull => ("dropped", "queue_full".to_owned()),
        Way::Sent => ("sent", String::new()),
    };
    json!({ "module": module, "worker": h.worker, "since_arrival_us": h.since_arrival_ns as f64 / 1e3, "way": way, "detail": detail })
}

/// A line that says what a packet is, from its first bytes.
fn summary(head: &[u8]) -> String {
    let Some(t) = FiveTuple::of(head) else {
        return match head.get(12..14) {
            Some(&[0x08, 0x06]) => "ARP".into(),
            Some(&[a, b]) => format!("ethertype 0x{:04x}", u16::from_be_bytes([a, b])),
            _ => "a runt frame".into(),
        };
    };
    let proto = match t.proto {
        1 => "ICMP".to_owned(),
        6 => "TCP".to_owned(),
        17 => "UDP".to_owned(),
        58 => "ICMPv6".to_owned(),
        p => format!("proto {p}"),
    };
    let address = |a: u128| if t.v6 { std::net::Ipv6Addr::from(a).to_string() } else { std::net::Ipv4Addr::from(a as u32).to_string() };
    let (src, dst) = (address(t.src), address(t.dst));
    if t.sport | t.dport == 0 {
        format!("{proto} {src} > {dst}")
    } else {
        format!("{proto} {src}.{} > {dst}.{}", t.sport, t.dport)
    }
}

/// A capture's pcap file, made new in the run directory (which only the
/// daemon's user may write, see `run_dir::prepare`): never a file that is
/// there already, never through a link.
struct CaptureFile {
    path: PathBuf,
    file: File,
}

impl CaptureFile {
    fn create(path: &Path) -> Result<Self, ApiError> {
        let file = OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path).map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::AlreadyExists { "it exists: a capture writes a new file".to_owned() } else { e.to_string() };
            ApiError::conflict(format!("file: {}: {why}", path.display()))
        })?;
        Ok(Self { path: path.to_owned(), file })
    }

    /// Writes what `reader` gives until the capture ends, on a thread of
    /// its own; logs `what` with the packets written and missed.
    fn write_from(self, mut reader: CaptureReader, what: String, log: Arc<dyn Fn(&str) + Send + Sync>) {
        let header = PcapHeader { ts_resolution: pcap_file::TsResolution::NanoSecond, endianness: pcap_file::Endianness::Little, snaplen: SNAP_LEN as u32, ..PcapHeader::default() };
        let path = self.path.display().to_string();
        let write = move || {
            let mut written = 0u64;
            let mut failed = None;
            match PcapWriter::with_header(BufWriter::new(self.file), header) {
                Ok(mut w) => loop {
                    let Some(frame) = reader.next_frame() else {
                        if reader.ended() {
                            break;
                        }
                        std::thread::sleep(WRITER_IDLE);
                        continue;
                    };
                    let packet = PcapPacket::new(Duration::from_nanos(frame.wall_ns), frame.len as u32, &frame.data);
                    if let Err(e) = w.write_packet(&packet) {
                        failed.get_or_insert(e.to_string());
                    }
                    written += 1;
                    reader.give_back(frame);
                },
                Err(e) => failed = Some(e.to_string()),
            }
            let end = failed.map_or(String::new(), |e| format!(", cannot write {path}: {e}"));
            log(&format!("{what}: {written} written, {} missed (the writer fell behind){end}", reader.missed()));
        };
        let _ = std::thread::Builder::new().name("sluice-capture".into()).spawn(write);
    }
}
