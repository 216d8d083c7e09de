//! Synthetic traces: valid packets, repeatable, with the locality of a real
//! trace at one segment and less as segments are multiplexed.

use etherparse::{SlicedPacket, TransportSlice};
use sluice_traffic::trace_analysis::analyze;
use sluice_traffic::trace_synth::{synthesize, SynthConfig};

fn synth(config: &SynthConfig) -> Vec<u8> {
    let mut out = Vec::new();
    let summary = synthesize(config, &mut out).unwrap();
    assert_eq!(summary.packets, config.packets);
    out
}

#[test]
fn one_segment_has_the_locality_of_a_real_trace_and_more_segments_less() {
    let config = SynthConfig { packets: 300_000, ..SynthConfig::default() };
    let one = analyze(&synth(&config)[..], "k=1").unwrap();
    let slf = one.slf[0].1;
    assert!((1.1..=1.4).contains(&slf), "SLF at B = 32: {slf:.2} (a real trace: about 1.2)");
    assert!((20.0..=120.0).contains(&one.flow_size.mean), "mean flow {:.1} packets", one.flow_size.mean);
    let eight = analyze(&synth(&SynthConfig { segments: 8, ..config })[..], "k=8").unwrap();
    assert!(eight.slf[0].1 < 1.05, "eight segments interleave: SLF {:.2}", eight.slf[0].1);
    assert!(eight.reframer_slf[2].1 > 2.0, "a Reframer holding 64 µs still finds runs: {:?}", eight.reframer_slf);
}

#[test]
fn packets_are_valid_tcp_and_udp_and_the_trace_repeats_by_seed() {
    let config = SynthConfig { packets: 5_000, ..SynthConfig::default() };
    let bytes = synth(&config);
    assert_eq!(bytes, synth(&config), "same seed, same trace");
    assert_ne!(bytes, synth(&SynthConfig { seed: 2, ..config.clone() }));
    let mut reader = pcap_file::pcap::PcapReader::new(&bytes[..]).unwrap();
    let (mut tcp, mut udp, mut acks) = (0, 0, 0);
    while let Some(packet) = reader.next_packet() {
        let packet = packet.unwrap();
        let p = SlicedPacket::from_ethernet(&packet.data).unwrap();
        let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else { panic!("not IPv4") };
        let h = ip.header().to_header();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        assert_eq!(usize::from(h.total_len), packet.data.len() - 14, "IP length matches the frame");
        match p.transport {
            Some(TransportSlice::Tcp(t)) => {
                assert_eq!(t.to_header().calc_checksum_ipv4(&h, t.payload()).unwrap(), t.checksum());
                tcp += 1;
                acks += usize::from(t.payload().is_empty());
            }
            Some(TransportSlice::Udp(u)) => {
                assert_eq!(u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap(), u.checksum());
                udp += 1;
            }
            _ => panic!("neither TCP nor UDP"),
        }
    }
    assert!(tcp > udp && udp > 0 && acks > 0, "{tcp} TCP ({acks} pure ACKs), {udp} UDP");
}

#[test]
fn an_ipv6_share_of_the_flows_is_valid_ipv6_and_the_analyzer_counts_them() {
    let bytes = synth(&SynthConfig { packets: 5_000, ipv6_share: 0.5, ..SynthConfig::default() });
    let mut reader = pcap_file::pcap::PcapReader::new(&bytes[..]).unwrap();
    let (mut v4, mut v6) = (0, 0);
    while let Some(packet) = reader.next_packet() {
        let packet = packet.unwrap();
        let p = SlicedPacket::from_ethernet(&packet.data).unwrap();
        match (&p.net, &p.transport) {
            (Some(etherparse::NetSlice::Ipv6(ip)), transport) => {
                let h = ip.header().to_header();
                assert_eq!(usize::from(h.payload_length), packet.data.len() - 54, "IP length matches the frame");
                let ok = match transport {
                    Some(TransportSlice::Tcp(t)) => t.to_header().calc_checksum_ipv6(&h, t.payload()).unwrap() == t.checksum(),
                    Some(TransportSlice::Udp(u)) => u.to_header().calc_checksum_ipv6(&h, u.payload()).unwrap() == u.checksum(),
                    _ => false,
                };
                assert!(ok, "a valid TCP or UDP checksum over IPv6");
                v6 += 1;
            }
            (Some(etherparse::NetSlice::Ipv4(_)), _) => v4 += 1,
            other => panic!("neither IPv4 nor IPv6: {other:?}"),
        }
    }
    assert!(v4 > 100 && v6 > 100, "{v4} IPv4, {v6} IPv6 packets (flows are shared, packets follow their heavy-tailed sizes)");
    let a = analyze(&bytes[..], "dual").unwrap();
    assert_eq!((a.packets, a.not_ip), (5_000, 0));
}

#[test]
fn bad_settings_are_refused() {
    let e = synthesize(&SynthConfig { ipv6_share: 1.5, ..SynthConfig::default() }, Vec::new()).unwrap_err().to_string();
    assert!(e.contains("ipv6_share 1.5"), "{e}");
    for config in [SynthConfig { segments: 0, ..SynthConfig::default() }, SynthConfig { flows_per_s: 0.0, ..SynthConfig::default() }] {
        assert!(synthesize(&config, Vec::new()).is_err());
    }
    // So few flows a second that their arrival times would overflow a u64 of ns.
    for flows_per_s in [1e-300, f64::NAN] {
        let e = synthesize(&SynthConfig { flows_per_s, ..SynthConfig::default() }, Vec::new()).unwrap_err().to_string();
        assert!(e.contains("flows_per_s") && e.contains("[0.001, 1e8]"), "{e}");
    }
}
