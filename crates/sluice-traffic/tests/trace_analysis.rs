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
    assert_eq!((a.packets, a.not_ipv4, a.flows), (33, 1, 4));
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
fn a_file_that_is_no_capture_is_refused_by_name() {
    let e = analyze(&b"hello, not a pcap at all"[..], "notes.txt").unwrap_err().to_string();
    assert!(e.contains("notes.txt") && e.contains("not a pcap"), "{e}");
}
