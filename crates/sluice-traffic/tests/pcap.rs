//! Pcap replay and tap against files written by the pcap-file crate.

use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::TsResolution;
use sluice_core::{Batch, PacketPool, PacketSource, NO_FLOW};
use sluice_traffic::{PcapReplay, PrefixRule, TemplateSpec};

fn capture(resolution: TsResolution, dsts: &[&str]) -> Vec<u8> {
    let header = PcapHeader { ts_resolution: resolution, ..Default::default() };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for (i, dst) in dsts.iter().enumerate() {
        let frame = TemplateSpec { dst_ip: dst.to_string(), ..TemplateSpec::default() }.build().unwrap();
        w.write_packet(&PcapPacket::new(Duration::from_micros(i as u64), frame.len() as u32, &frame)).unwrap();
    }
    w.into_writer()
}

fn rules() -> Vec<PrefixRule> {
    vec![
        PrefixRule { prefix: "20.0.1.0".parse().unwrap(), len: 24, flow: 0 },
        PrefixRule { prefix: "20.0.2.0".parse().unwrap(), len: 24, flow: 1 },
    ]
}

#[test]
fn replays_in_a_loop_with_flows_by_prefix_for_both_resolutions() {
    for res in [TsResolution::MicroSecond, TsResolution::NanoSecond] {
        let bytes = capture(res, &["20.0.1.9", "20.0.2.9", "30.0.0.1"]);
        let mut replay = PcapReplay::from_reader(&bytes[..], "mem", &rules(), f64::INFINITY).unwrap();
        assert_eq!(replay.flows().collect::<Vec<_>>(), vec![0, 1, NO_FLOW]);
        let mut pool = PacketPool::new(16);
        let mut b = Batch::default();
        replay.fill(&mut pool, 5, &mut b, 7);
        let flows: Vec<_> = b.as_slice().iter().map(|&id| pool.meta(id).flow).collect();
        assert_eq!(flows, vec![0, 1, NO_FLOW, 0, 1, NO_FLOW, 0]);
        assert_eq!(pool.data(b.as_slice()[3])[30..34], [20, 0, 1, 9]);
    }
}

#[test]
fn malformed_captures_are_refused_by_name() {
    let e = PcapReplay::from_reader(&b"not a pcap at all"[..], "junk.pcap", &[], f64::INFINITY).err().unwrap();
    assert!(e.to_string().starts_with("pcap file 'junk.pcap': not a classic pcap file"), "{e}");
    let mut bytes = capture(TsResolution::MicroSecond, &["20.0.1.1", "20.0.1.2"]);
    bytes.truncate(bytes.len() - 10);
    let e = PcapReplay::from_reader(&bytes[..], "cut.pcap", &[], f64::INFINITY).err().unwrap();
    assert!(e.to_string().starts_with("pcap file 'cut.pcap': packet 2:"), "{e}");
    let empty = capture(TsResolution::MicroSecond, &[]);
    let e = PcapReplay::from_reader(&empty[..], "empty.pcap", &[], f64::INFINITY).err().unwrap();
    assert_eq!(e.to_string(), "pcap file 'empty.pcap': holds no packet");
}
