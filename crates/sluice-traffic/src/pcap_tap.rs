//! A pass-through NF that writes every packet to a pcap file (for debugging
//! an egress: it does file I/O on the packet path, so it is not for speed).

use std::fs::File;
use std::io::BufWriter;
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapWriter};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

use crate::error::{Error, Result};

/// Copies each packet to a pcap file (ns timestamps: ingress time), then forwards it on gate 0.
pub struct PcapTap {
    writer: Option<PcapWriter<BufWriter<File>>>,
    /// Packets that could not be written (pkt).
    pub write_errors: u64,
}

impl PcapTap {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &str) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::Pcap { path: path.into(), reason: e.to_string() })?;
        let header = pcap_file::pcap::PcapHeader {
            ts_resolution: pcap_file::TsResolution::NanoSecond,
            endianness: pcap_file::Endianness::Little,
            ..Default::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header)
            .map_err(|e| Error::Pcap { path: path.into(), reason: e.to_string() })?;
        Ok(Self { writer: Some(writer), write_errors: 0 })
    }
}

impl NetworkFunction for PcapTap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        if let Some(w) = &mut self.writer {
            for &id in input.as_slice() {
                let data = ctx.pool.data(id);
                let ts = Duration::from_nanos(ctx.pool.meta(id).ts_ns);
                if w.write_packet(&PcapPacket::new(ts, data.len() as u32, data)).is_err() {
                    self.write_errors += 1;
                }
            }
        }
        out.forward(0, input);
    }
}
