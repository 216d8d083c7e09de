//! A packet capture read into memory once: classic pcap (µs or ns
//! timestamps, either byte order) or pcapng, from a file, a pipe or a
//! FIFO, read in one pass. Records taken with a snap length (captured
//! shorter than the packet was) are kept at their captured length, their
//! original length beside them for byte counts.

use std::collections::HashMap;
use std::io::Read;
use std::net::IpAddr;

use pcap_parser::pcapng::Block;
use pcap_parser::{create_reader, PcapBlockOwned, PcapError};

use crate::link_layer::Link;
use crate::prefix_rules::destination;
use sluice_core::packet::MAX_PACKET_LEN;
use sluice_core::wire::{ipv4, ipv6};

use crate::error::{Error, Result};

/// One packet of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Where its captured bytes start in [`Capture::bytes`].
    pub offset: usize,
    /// Bytes captured.
    pub len: usize,
    /// Bytes the packet had on the wire (≥ `len`).
    pub wire_len: usize,
}

/// The packets of a capture, in order.
#[derive(Debug, Default)]
pub struct Capture {
    /// Every record's captured bytes, back to back.
    pub bytes: Vec<u8>,
    /// The records.
    pub records: Vec<Record>,
}

/// Bytes the reader buffers at a time; a record must fit (64 KiB frames do).
const READ_BUFFER: usize = 1 << 20;

/// Packets read between two looks at whether to stop (about 10 ms of reading).
pub const STOP_EVERY: usize = 1 << 16;

impl Capture {
    /// Reads the capture at `path` (a file, a pipe or a FIFO: read once).
    pub fn open(path: &str) -> Result<Self> {
        Self::open_until(path, &|| false)
    }

    /// [`Self::open`], given up with an error once `stop` says so (asked
    /// every [`STOP_EVERY`] packets): a large capture takes seconds.
    pub fn open_until(path: &str, stop: &dyn Fn() -> bool) -> Result<Self> {
        let file = open(path)?;
        // A file's size bounds its packets' bytes: room for them at once, not by doubling.
        let size = file.metadata().map_or(0, |m| m.len() as usize);
        Self::read_into(Capture { bytes: Vec::with_capacity(size), records: Vec::new() }, file, path, stop)
    }

    /// Reads a capture of Ethernet frames from `reader`; `name` labels errors,
    /// which give the number of the record at fault.
    pub fn read(reader: impl Read + Send, name: &str) -> Result<Self> {
        Self::read_into(Capture::default(), reader, name, &|| false)
    }

    fn read_into(mut capture: Capture, reader: impl Read + Send, name: &str, stop: &dyn Fn() -> bool) -> Result<Self> {
        stream(reader, name, |data, wire_len, _| {
            if capture.records.len() % STOP_EVERY == STOP_EVERY - 1 && stop() {
                return Err("reading stopped".into());
            }
            capture.push(data, wire_len)
        })?;
        if capture.records.is_empty() {
            return Err(Error::Pcap { path: name.into(), reason: "holds no packet".into() });
        }
        Ok(capture)
    }

    fn push(&mut self, data: &[u8], wire_len: usize) -> std::result::Result<(), String> {
        if data.len() > MAX_PACKET_LEN {
            return Err(format!("{} bytes captured, more than the {MAX_PACKET_LEN} a buffer holds", data.len()));
        }
        self.records.push(Record { offset: self.bytes.len(), len: data.len(), wire_len: wire_len.max(data.len()) });
        self.bytes.extend_from_slice(data);
        Ok(())
    }

    /// The captured bytes of `record`.
    pub fn data(&self, record: &Record) -> &[u8] {
        &self.bytes[record.offset..record.offset + record.len]
    }
}

/// Opens the capture at `path` for reading; a folder is refused by name
/// (opening one succeeds, reading it fails without a reason to give).
pub fn open(path: &str) -> Result<std::fs::File> {
    let refused = |reason: String| Error::Pcap { path: path.into(), reason };
    let file = std::fs::File::open(path).map_err(|e| refused(e.to_string()))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(refused("a folder, not a capture".into()));
    }
    Ok(file)
}

/// Reads a capture from `reader` in one pass, handing each packet's
/// captured bytes as an Ethernet frame (Linux cooked, raw IP and BSD
/// loopback link headers rewritten as Ethernet's), its wire length
/// (bytes) and timestamp (ns since the epoch) to `each`, whose error stops
/// the pass; returns the packets read. Memory is the read buffer's,
/// whatever the file's size.
pub fn stream(
    reader: impl Read + Send,
    name: &str,
    mut each: impl FnMut(&[u8], usize, u64) -> std::result::Result<(), String>,
) -> Result<u64> {
    let err = |reason: String| Error::Pcap { path: name.into(), reason };
    let mut pcap = create_reader(READ_BUFFER, reader).map_err(|e| match e {
        PcapError::Eof | PcapError::UnexpectedEof | PcapError::Incomplete(_) => err("not a pcap or pcapng file: shorter than either's header (empty?)".into()),
        e => err(format!("not a pcap or pcapng file: {}", describe(&e))),
    })?;
    let mut packets = 0u64;
    // Classic pcap: whether timestamps are in ns (else µs).
    let mut nanos = false;
    // Classic pcap: the file's link layer.
    let mut link = Link::Ethernet;
    // pcapng: per interface id, its link layer, ticks per second and offset (s).
    let mut interfaces: Vec<(Result<Link, String>, u64, i64)> = Vec::new();
    // A frame whose link header is rewritten as Ethernet's.
    let mut scratch = Vec::new();
    loop {
        let record = packets + 1;
        match pcap.next() {
            Ok((consumed, block)) => {
                let packet = match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        link = Link::of(h.network).map_err(err)?;
                        nanos = h.is_nanosecond_precision();
                        None
                    }
                    PcapBlockOwned::Legacy(b) => {
                        let fraction = u64::from(b.ts_usec) * if nanos { 1 } else { 1000 };
                        Some((link, b.data, b.origlen, u64::from(b.ts_sec) * 1_000_000_000 + fraction))
                    }
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        let resolution = idb.ts_resolution().ok_or_else(|| err(format!("interface {}: invalid time resolution", interfaces.len())))?;
                        // An interface of a link type we cannot read is an error only if a packet of it is read.
                        interfaces.push((Link::of(idb.linktype), resolution, idb.ts_offset()));
                        None
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        let (link, resolution, offset) =
                            interfaces.get(epb.if_id as usize).ok_or_else(|| err(format!("packet {record}: interface {} was never described", epb.if_id)))?;
                        let link = link.clone().map_err(err)?;
                        let data = &epb.data[..(epb.caplen as usize).min(epb.data.len())];
                        let ticks = (u128::from(epb.ts_high) << 32) | u128::from(epb.ts_low);
                        let ns = (ticks * 1_000_000_000 / u128::from((*resolution).max(1))) as i128 + i128::from(*offset) * 1_000_000_000;
                        Some((link, data, epb.origlen, ns.max(0) as u64))
                    }
                    PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                        let link = interfaces.first().map_or(Ok(Link::Ethernet), |i| i.0.clone()).map_err(err)?;
                        let data = &spb.data[..(spb.origlen as usize).min(spb.data.len())];
                        Some((link, data, spb.origlen, 0))
                    }
                    PcapBlockOwned::NG(_) => None,
                };
                if let Some((link, data, wire_len, ts_ns)) = packet {
                    packets += 1;
                    let at = |e: String| err(format!("packet {record}: {e}"));
                    let frame = link.to_ethernet(data, &mut scratch).map_err(at)?;
                    each(frame, link.wire_len((wire_len as usize).max(data.len())), ts_ns).map_err(at)?;
                }
                pcap.consume(consumed);
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => {
                pcap.refill().map_err(|e| err(format!("packet {record}: {}", describe(&e))))?;
            }
            Err(e) => return Err(err(format!("packet {record}: {}", describe(&e)))),
        }
    }
    Ok(packets)
}

/// Prefix length a capture's IPv4 destinations are counted by.
pub const V4_SITE_LEN: u8 = 24;
/// Prefix length a capture's IPv6 destinations are counted by (a site's usual allocation).
pub const V6_SITE_LEN: u8 = 48;

/// Packets per destination prefix (IPv4 /24, IPv6 /48) of the capture
/// `reader` gives (`name` labels errors), most packets first: (network,
/// length, count), in one pass without keeping the packets. Packets
/// without an IP destination are not counted.
pub fn destinations_by_prefix(reader: impl Read + Send, name: &str) -> Result<Vec<(IpAddr, u8, u64)>> {
    let mut counts: HashMap<IpAddr, u64> = HashMap::new();
    stream(reader, name, |frame, _, _| {
        let site = match destination(frame) {
            Some(IpAddr::V4(a)) => IpAddr::V4((u32::from(a) & ipv4::mask(V4_SITE_LEN)).into()),
            Some(IpAddr::V6(a)) => IpAddr::V6((u128::from(a) & ipv6::mask(V6_SITE_LEN)).into()),
            None => return Ok(()),
        };
        *counts.entry(site).or_insert(0) += 1;
        Ok(())
    })?;
    let mut sites: Vec<(IpAddr, u8, u64)> = counts.into_iter().map(|(net, n)| (net, if net.is_ipv4() { V4_SITE_LEN } else { V6_SITE_LEN }, n)).collect();
    sites.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    Ok(sites)
}

fn describe<I>(e: &PcapError<I>) -> String {
    match e {
        PcapError::Eof | PcapError::UnexpectedEof | PcapError::Incomplete(_) => "the file ends inside a record".into(),
        PcapError::ReadError => "the file could not be read".into(),
        PcapError::BufferTooSmall => format!("a record longer than {READ_BUFFER} bytes"),
        PcapError::HeaderNotRecognized => "its header is neither pcap's nor pcapng's".into(),
        PcapError::NomError(_, kind) => format!("malformed ({kind:?})"),
        PcapError::OwnedNomError(_, kind) => format!("malformed ({kind:?})"),
    }
}
