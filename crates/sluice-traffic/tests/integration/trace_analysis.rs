//! The trace analyzer on traces whose locality is known by construction.

use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::TsResolution;
use sluice_traffic::trace_analysis::analyze;
use sluice_traffic::TemplateSpec;

/// A UDP frame of flow `flow` (its own source port).
fn frame(flow: u16) -> Vec<u8> {
    TemplateSpec { src_port: 1000 + flow, ..TemplateSpec::default() }.build().unwrap()
}

/// A pcap of `frames` at their times (µs).
fn pcap(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let header = PcapHeader { ts_resolution: TsResolution::NanoSecond, ..PcapHeader::default() };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for (us, f) in frames {
        w.write_packet(&PcapPacket::new(Duration::from_micros(*us), f.len() as u32, f)).unwrap();
    }
    w.into_writer()
}

#[test]
fn runs_distances_sizes_and_the_reframer_slf_match_the_traces_construction() {
    // Four flows of 8 packets in runs of two, round robin, 1 µs apart, and one ARP frame.
    let mut frames: Vec<(u64, Vec<u8>)> = (0..32u64).map(|i| (i, frame(((i / 2) % 4) as u16))).collect();
    let mut arp = frame(0);
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    frames.push((32, arp));
    let a = analyze(&pcap(&frames)[..], "runs.pcap").unwrap();
    assert_eq!((a.packets, a.not_ip, a.flows), (33, 1, 4));
    assert_eq!(a.slf[0], (32, 2.0), "16 runs of 2 in one batch of 32");
    assert_eq!(a.switches_per_batch[0], (32, 15.0));
    // Between a flow's runs lie the other three flows' runs: 6 packets; within a run, none.
    assert_eq!((a.spatial_distance.p50, a.spatial_distance.max), (0, 6));
    assert_eq!(a.temporal_distance_us.max, 7);
    assert_eq!((a.flow_size.p50, a.flow_size.max), (8, 8));
    // A flow's packets come at 0, 1, 8, 9, 16, 17, 24, 25 µs after its first:
    // two bursts of a 16 µs hold, one of a longer one.
    assert_eq!(a.reframer_slf[0], (16, 4.0));
    assert_eq!(a.reframer_slf[1], (32, 8.0));
    assert_eq!(a.duration_ns, 31_000);
}

#[test]
fn ipv6_flows_count_beside_ipv4_ones_and_the_table_names_both_families() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    use sluice_traffic::flow_table::FlowTableWriter;
    use sluice_traffic::trace_analysis::analyze_flows;

    let v6 = |flow: u16| TemplateSpec { src_ip: "2001:db8::1".into(), dst_ip: "2001:db8:1::9".into(), src_port: 2000 + flow, size: 80, ..TemplateSpec::default() }.build().unwrap();
    // Runs of two: IPv4 flow 0, IPv6 flows 0 and 1, round robin.
    let frames: Vec<(u64, Vec<u8>)> = (0..12u64).map(|i| (i, [frame(0), v6(0), v6(1)][(i / 2 % 3) as usize].clone())).collect();
    let path = std::env::temp_dir().join(format!("sluice-flows6-{}.parquet", std::process::id()));
    let path = path.to_str().unwrap();
    let mut table = FlowTableWriter::create(path).unwrap();
    let a = analyze_flows(&pcap(&frames)[..], "dual.pcap", |row| table.push(row)).unwrap();
    table.finish().unwrap();
    assert_eq!((a.packets, a.not_ip, a.flows), (12, 0, 3));
    assert_eq!(a.slf[0], (32, 2.0));
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut rows: Vec<(String, String, i64)> =
        reader.get_row_iter(None).unwrap().map(|r| r.unwrap()).map(|r| (r.get_string(0).unwrap().clone(), r.get_string(1).unwrap().clone(), r.get_long(3).unwrap())).collect();
    rows.sort();
    let row = |src: &str, dst: &str, port: i64| (src.to_string(), dst.to_string(), port);
    assert_eq!(rows, vec![row("10.0.0.1", "20.0.1.1", 1000), row("2001:db8::1", "2001:db8:1::9", 2000), row("2001:db8::1", "2001:db8:1::9", 2001)]);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_file_that_is_no_capture_is_refused_by_name() {
    let e = analyze(&b"hello, not a pcap at all"[..], "notes.txt").unwrap_err().to_string();
    assert!(e.contains("notes.txt") && e.contains("not a pcap"), "{e}");
}

#[test]
fn the_flow_table_holds_one_row_per_flow_with_what_it_carried() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    use sluice_traffic::flow_table::{FlowTableWriter, COLUMNS};
    use sluice_traffic::trace_analysis::analyze_flows;

    // Flow f sends f + 1 packets, 10 µs apart.
    let frames: Vec<(u64, Vec<u8>)> = (0..5u16).flat_map(|f| (0..=f).map(move |i| (u64::from(f) * 100 + u64::from(i) * 10, frame(f)))).collect();
    let dir = std::env::temp_dir().join(format!("sluice-flows-{}.parquet", std::process::id()));
    let path = dir.to_str().unwrap();
    let mut table = FlowTableWriter::create(path).unwrap();
    let a = analyze_flows(&pcap(&frames)[..], "t", |row| table.push(row)).unwrap();
    table.finish().unwrap();
    assert_eq!(a.flows, 5);
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let fields: Vec<String> = reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    assert_eq!(fields, COLUMNS);
    let mut rows: Vec<(i64, i64, i64, i64)> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (r.get_long(3).unwrap(), r.get_long(5).unwrap(), r.get_long(6).unwrap(), r.get_long(8).unwrap() - r.get_long(7).unwrap())
        })
        .collect();
    rows.sort_unstable();
    let len = frame(0).len() as i64;
    let expect: Vec<(i64, i64, i64, i64)> = (0..5).map(|f| (1000 + f, f + 1, (f + 1) * len, f * 10_000)).collect();
    assert_eq!(rows, expect, "(source port, packets, bytes, last − first ns)");
    std::fs::remove_file(path).unwrap();
}
