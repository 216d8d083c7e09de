//! The per-flow table of a trace as Parquet, for pandas, polars or DuckDB:
//! one row per flow (5-tuple, packets, bytes, first and last timestamp),
//! written as flows end, in row groups of [`ROWS_PER_GROUP`], so memory
//! stays bounded by one group however long the trace.

use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;

use parquet::data_type::Int64Type;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::error::{Error, Result};

/// Rows buffered before they are written as one row group.
pub const ROWS_PER_GROUP: usize = 1 << 16;

/// The table's columns, in order (all INT64; addresses as integers, host order).
pub const COLUMNS: [&str; 9] = ["src", "dst", "proto", "sport", "dport", "packets", "bytes", "first_ns", "last_ns"];

/// One flow: its 5-tuple and what it carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowRow {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
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

impl FlowRow {
    fn column(&self, c: usize) -> i64 {
        let v: u64 = match c {
            0 => self.src.into(),
            1 => self.dst.into(),
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
    column: Vec<i64>,
    path: String,
}

impl FlowTableWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &str) -> Result<Self> {
        let bad = |e: &dyn std::fmt::Display| Error::Pcap { path: path.into(), reason: format!("flow table: {e}") };
        let fields: String = COLUMNS.iter().map(|c| format!("REQUIRED INT64 {c}; ")).collect();
        let schema = Arc::new(parse_message_type(&format!("message flows {{ {fields}}}")).map_err(|e| bad(&e))?);
        let file = File::create(path).map_err(|e| bad(&e))?;
        let writer = SerializedFileWriter::new(BufWriter::new(file), schema, Arc::new(WriterProperties::builder().build())).map_err(|e| bad(&e))?;
        Ok(Self { writer, rows: Vec::with_capacity(ROWS_PER_GROUP), column: Vec::with_capacity(ROWS_PER_GROUP), path: path.into() })
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
            self.column.clear();
            self.column.extend(self.rows.iter().map(|r| r.column(c)));
            writer.typed::<Int64Type>().write_batch(&self.column, None, None).map_err(bad)?;
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
