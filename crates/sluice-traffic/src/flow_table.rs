//! The per-flow table of a trace as Parquet, for pandas, polars or DuckDB:
//! one row per flow (5-tuple, packets, bytes, first and last timestamp;
//! addresses as text, "10.0.0.1" or "2001:db8::1"),
//! written as flows end, in row groups of [`ROWS_PER_GROUP`], so memory
//! stays bounded by one group however long the trace.

use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::error::{Error, Result};

/// Rows buffered before they are written as one row group.
pub const ROWS_PER_GROUP: usize = 1 << 16;

/// The table's columns, in order: the addresses as UTF-8 text, the rest INT64.
pub const COLUMNS: [&str; 9] = ["src", "dst", "proto", "sport", "dport", "packets", "bytes", "first_ns", "last_ns"];
/// How many of the first columns hold addresses.
const ADDRESS_COLUMNS: usize = 2;

/// One flow: its 5-tuple and what it carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRow {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// IP protocol.
    pub proto: u8,
    /// Source port (0 for protocols without ports).
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Packets (pkt).
    pub packets: u64,
    /// Bytes of their frames as captured on the wire.
    pub bytes: u64,
    /// Timestamp of the first and the last packet (ns).
    pub first_ns: u64,
    /// See `first_ns`.
    pub last_ns: u64,
}

impl Default for FlowRow {
    fn default() -> Self {
        let any = IpAddr::from(Ipv4Addr::UNSPECIFIED);
        Self { src: any, dst: any, proto: 0, sport: 0, dport: 0, packets: 0, bytes: 0, first_ns: 0, last_ns: 0 }
    }
}

impl FlowRow {
    /// Address column `c` (0: src, 1: dst) as text.
    fn address(&self, c: usize) -> ByteArray {
        ByteArray::from(if c == 0 { self.src } else { self.dst }.to_string().into_bytes())
    }

    /// Integer column `c` (≥ [`ADDRESS_COLUMNS`]).
    fn integer(&self, c: usize) -> i64 {
        let v: u64 = match c {
            2 => self.proto.into(),
            3 => self.sport.into(),
            4 => self.dport.into(),
            5 => self.packets,
            6 => self.bytes,
            7 => self.first_ns,
            _ => self.last_ns,
        };
        v as i64
    }
}

/// Writes flow rows to a Parquet file.
pub struct FlowTableWriter {
    writer: SerializedFileWriter<BufWriter<File>>,
    rows: Vec<FlowRow>,
    integers: Vec<i64>,
    addresses: Vec<ByteArray>,
    path: String,
}

impl FlowTableWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &str) -> Result<Self> {
        let bad = |e: &dyn std::fmt::Display| Error::Pcap { path: path.into(), reason: format!("flow table: {e}") };
        let fields: String = COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| if i < ADDRESS_COLUMNS { format!("REQUIRED BYTE_ARRAY {c} (UTF8); ") } else { format!("REQUIRED INT64 {c}; ") })
            .collect();
        let schema = Arc::new(parse_message_type(&format!("message flows {{ {fields}}}")).map_err(|e| bad(&e))?);
        let file = File::create(path).map_err(|e| bad(&e))?;
        let writer = SerializedFileWriter::new(BufWriter::new(file), schema, Arc::new(WriterProperties::builder().build())).map_err(|e| bad(&e))?;
        let rows = Vec::with_capacity(ROWS_PER_GROUP);
        Ok(Self { writer, rows, integers: Vec::with_capacity(ROWS_PER_GROUP), addresses: Vec::with_capacity(ROWS_PER_GROUP), path: path.into() })
    }

    /// Adds a row (written with its group).
    pub fn push(&mut self, row: FlowRow) -> Result<()> {
        self.rows.push(row);
        if self.rows.len() == ROWS_PER_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let bad = |e: parquet::errors::ParquetError| Error::Pcap { path: path.clone(), reason: format!("flow table: {e}") };
        let mut group = self.writer.next_row_group().map_err(bad)?;
        let mut c = 0;
        while let Some(mut writer) = group.next_column().map_err(bad)? {
            if c < ADDRESS_COLUMNS {
                self.addresses.clear();
                self.addresses.extend(self.rows.iter().map(|r| r.address(c)));
                writer.typed::<ByteArrayType>().write_batch(&self.addresses, None, None).map_err(bad)?;
            } else {
                self.integers.clear();
                self.integers.extend(self.rows.iter().map(|r| r.integer(c)));
                writer.typed::<Int64Type>().write_batch(&self.integers, None, None).map_err(bad)?;
            }
            writer.close().map_err(bad)?;
            c += 1;
        }
        group.close().map_err(bad)?;
        self.rows.clear();
        Ok(())
    }

    /// Writes what is buffered and the file's footer.
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        let path = self.path.clone();
        self.writer.close().map(|_| ()).map_err(|e| Error::Pcap { path, reason: format!("flow table: {e}") })
    }
}
