//! Captures as people take them, written by the pcap-file crate: classic
//! pcap in both byte orders and both timestamp resolutions, pcapng, records
//! cut to a snap length; and malformed files refused by name and record.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness, TsResolution};
use sluice_core::{Batch, PacketPool, PacketSource, NO_FLOW};
use sluice_traffic::{Capture, FlowRules, PcapReplay, PrefixRule, TemplateSpec};

fn frame(dst: &str) -> Vec<u8> {
    TemplateSpec { dst_ip: dst.to_string(), size: 100, ..TemplateSpec::default() }.build().unwrap()
}

/// A classic pcap of frames to `dsts`, each cut to `snaplen` bytes.
fn pcap(resolution: TsResolution, endianness: Endianness, snaplen: usize, dsts: &[&str]) -> Vec<u8> {
    let header = PcapHeader { ts_resolution: resolution, endianness, snaplen: snaplen as u32, ..Default::default() };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for (i, dst) in dsts.iter().enumerate() {
        let f = frame(dst);
        let cut = &f[..f.len().min(snaplen)];
        w.write_packet(&PcapPacket::new(Duration::from_micros(i as u64), f.len() as u32, cut)).unwrap();
    }
    w.into_writer()
}

fn pcapng(dsts: &[&str]) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock { linktype: DataLink::ETHERNET, snaplen: 0, options: vec![] }).unwrap();
    for (i, dst) in dsts.iter().enumerate() {
        let f = frame(dst);
        let epb = EnhancedPacketBlock { interface_id: 0, timestamp: Duration::from_micros(i as u64), original_len: f.len() as u32, data: Cow::Owned(f), options: vec![] };
        w.write_pcapng_block(epb).unwrap();
    }
    w.into_inner()
}

fn rules() -> Vec<PrefixRule> {
    vec![
        PrefixRule { prefix: "20.0.1.0".parse().unwrap(), len: 24, flow: 0 },
        PrefixRule { prefix: "20.0.2.0".parse().unwrap(), len: 24, flow: 1 },
    ]
}

fn replay(bytes: &[u8]) -> PcapReplay {
    PcapReplay::new(Arc::new(Capture::read(bytes, "mem").unwrap()), "mem", FlowRules::of_prefixes(&rules()).unwrap(), f64::INFINITY).unwrap()
}

const DSTS: [&str; 3] = ["20.0.1.9", "20.0.2.9", "30.0.0.1"];

#[test]
fn replays_pcap_of_both_resolutions_and_byte_orders_and_pcapng_in_a_loop_with_flows_by_prefix() {
    let mut captures = vec![pcapng(&DSTS)];
    for res in [TsResolution::MicroSecond, TsResolution::NanoSecond] {
        for end in [Endianness::Little, Endianness::Big] {
            captures.push(pcap(res, end, 65535, &DSTS));
        }
    }
    for bytes in captures {
        let mut replay = replay(&bytes);
        assert_eq!(replay.flows().collect::<Vec<_>>(), vec![0, 1, NO_FLOW]);
        let mut pool = PacketPool::new(16);
        let mut b = Batch::default();
        replay.fill(&mut pool, 5, &mut b, 7);
        let flows: Vec<_> = b.as_slice().iter().map(|&id| pool.meta(id).flow).collect();
        assert_eq!(flows, vec![0, 1, NO_FLOW, 0, 1, NO_FLOW, 0]);
        assert_eq!(pool.data(b.as_slice()[3])[30..34], [20, 0, 1, 9]);
        assert_eq!(pool.data(b.as_slice()[3]).len(), 100);
    }
}

#[test]
fn records_cut_to_a_snap_length_run_at_their_captured_length_and_count_their_wire_length() {
    let bytes = pcap(TsResolution::MicroSecond, Endianness::Little, 64, &DSTS);
    let mut replay = replay(&bytes);
    let mut pool = PacketPool::new(16);
    let mut b = Batch::default();
    replay.fill(&mut pool, 0, &mut b, 3);
    assert!(b.as_slice().iter().all(|&id| pool.data(id).len() == 64), "processed at the captured length");
    assert_eq!(replay.flows().collect::<Vec<_>>(), vec![0, 1, NO_FLOW], "the IPv4 header is inside the 64 bytes");
    assert_eq!(replay.wire_bytes(), 300, "byte counts use the original length");
}

#[test]
fn a_capture_is_read_once_from_a_pipe() {
    let bytes = pcap(TsResolution::MicroSecond, Endianness::Little, 65535, &DSTS);
    let (mut reader, mut writer) = std::io::pipe().unwrap();
    let feeder = std::thread::spawn(move || std::io::Write::write_all(&mut writer, &bytes));
    let capture = Capture::read(&mut reader, "pipe").unwrap();
    feeder.join().unwrap().unwrap();
    assert_eq!(capture.records.len(), 3);
}

#[test]
fn malformed_captures_are_refused_by_name_and_record() {
    let refused = |bytes: &[u8], name: &str| Capture::read(bytes, name).expect_err("refused").to_string();
    assert_eq!(refused(b"not a pcap at all", "junk.pcap"), "pcap file 'junk.pcap': not a pcap or pcapng file: its header is neither pcap's nor pcapng's");
    let mut bytes = pcap(TsResolution::MicroSecond, Endianness::Little, 65535, &["20.0.1.1", "20.0.1.2"]);
    bytes.truncate(bytes.len() - 10);
    assert_eq!(refused(&bytes, "cut.pcap"), "pcap file 'cut.pcap': packet 2: the file ends inside a record");
    assert_eq!(refused(b"", "zero.pcap"), "pcap file 'zero.pcap': not a pcap or pcapng file: shorter than either's header (empty?)");
    let folder = std::env::temp_dir();
    let folder = folder.to_str().unwrap();
    assert_eq!(Capture::open(folder).expect_err("refused").to_string(), format!("pcap file '{folder}': a folder, not a capture"));
    let empty = pcap(TsResolution::MicroSecond, Endianness::Little, 65535, &[]);
    assert_eq!(refused(&empty, "empty.pcap"), "pcap file 'empty.pcap': holds no packet");
    let header = PcapHeader { datalink: DataLink::IEEE802_11, ..Default::default() };
    let wifi = PcapWriter::with_header(Vec::new(), header).unwrap().into_writer();
    let refusal = refused(&wifi, "wifi.pcap");
    assert!(refusal.starts_with("pcap file 'wifi.pcap': link type 105 (") && refusal.ends_with("is not one Sluice reads (Ethernet, Linux cooked v1 and v2, raw IP, BSD loopback)"), "{refusal}");
}

#[test]
fn captures_of_raw_ip_and_of_linux_any_device_are_read_as_ethernet() {
    let frames: Vec<Vec<u8>> = DSTS.iter().map(|d| frame(d)).collect();
    // Raw IP, classic pcap: the frames without their Ethernet header.
    let header = PcapHeader { datalink: DataLink::RAW, ..Default::default() };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for f in &frames {
        w.write_packet(&PcapPacket::new(Duration::ZERO, f.len() as u32 - 14, &f[14..])).unwrap();
    }
    let raw = Capture::read(w.into_writer().as_slice(), "raw.pcap").unwrap();
    // Linux cooked (the "any" device), pcapng: a 16-byte header with the sender's address and the ethertype.
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock { linktype: DataLink::LINUX_SLL, snaplen: 0, options: vec![] }).unwrap();
    for f in &frames {
        let mut cooked = vec![0, 4, 0, 1, 0, 6];
        cooked.extend_from_slice(&f[6..12]);
        cooked.extend_from_slice(&[0, 0]);
        cooked.extend_from_slice(&f[12..]);
        let epb = EnhancedPacketBlock { interface_id: 0, timestamp: Duration::ZERO, original_len: cooked.len() as u32, data: Cow::Owned(cooked), options: vec![] };
        w.write_pcapng_block(epb).unwrap();
    }
    let cooked = Capture::read(w.into_inner().as_slice(), "any.pcapng").unwrap();
    for (i, f) in frames.iter().enumerate() {
        let (r, c) = (&raw.records[i], &cooked.records[i]);
        // Raw IP has no addresses to keep; a cooked header has the source's.
        assert_eq!((&raw.data(r)[12..], r.wire_len), (&f[12..], f.len()), "raw frame {i}");
        assert_eq!((&raw.data(r)[..12], &cooked.data(c)[..6]), (&[0u8; 12][..], &[0u8; 6][..]), "frame {i}: no addresses made up");
        assert_eq!((&cooked.data(c)[6..], c.wire_len), (&f[6..], f.len()), "cooked frame {i}");
    }
}

#[test]
fn loading_a_capture_stops_when_asked_and_counts_destinations_in_one_pass() {
    let dsts: Vec<&str> = (0..sluice_traffic::capture::STOP_EVERY + 10).map(|i| DSTS[i % 2]).collect();
    let path = std::env::temp_dir().join(format!("sluice-stop-{}.pcap", std::process::id()));
    std::fs::write(&path, pcap(TsResolution::MicroSecond, Endianness::Little, 65535, &dsts)).unwrap();
    let path = path.to_str().unwrap();
    let asked = std::cell::Cell::new(0);
    let e = Capture::open_until(path, &|| {
        asked.set(asked.get() + 1);
        true
    })
    .err()
    .unwrap();
    assert!(e.to_string().contains("reading stopped") && asked.get() == 1, "{e}");
    assert_eq!(Capture::open_until(path, &|| false).unwrap().records.len(), dsts.len());
    let sites = sluice_traffic::capture::destinations_by_prefix(std::fs::File::open(path).unwrap(), path).unwrap();
    let half = dsts.len() as u64 / 2;
    assert_eq!(sites, vec![("20.0.1.0".parse().unwrap(), 24, half), ("20.0.2.0".parse().unwrap(), 24, half)]);
    std::fs::remove_file(path).unwrap();
}
