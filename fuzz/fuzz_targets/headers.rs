//! The header views on arbitrary bytes: they parse or say why not, never
//! panic, and what they return lies inside the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_core::wire::{ethernet, gtpu, ip_of, ipv4, ipv4_of, ipv6, l4, udp_tunnel, vxlan};

fuzz_target!(|data: &[u8]| {
    if let Ok(eth) = ethernet::Frame::new_checked(data) {
        assert!(eth.payload_offset() <= data.len());
        let _ = (eth.dst(), eth.src(), eth.vlan_id(), eth.payload_type());
    }
    if let Ok(ip) = ipv4::Header::new_checked(data) {
        assert!(ip.header_len() <= data.len() && ip.payload().len() <= data.len());
        let _ = (ip.ttl(), ip.src(), ip.dst(), ip.checksum_ok());
        let _ = l4::ports(ip.protocol(), ip.payload());
    }
    if let Ok(ip) = ipv4_of(data) {
        let _ = l4::ports(ip.protocol(), ip.payload());
    }
    if let Ok(ip) = ipv6::Header::new_checked(data) {
        let _ = (ip.hop_limit(), ip.src(), ip.dst(), ip.dscp(), ip.flow_label(), ip.upper_checksum_ok());
        if let Ok((protocol, at)) = ip.upper() {
            assert!(at <= ipv6::HEADER_LEN + ip.payload_len() as usize && at <= data.len());
            let _ = l4::ports(protocol, &data[at..]);
        }
        // Filling the checksum makes it verify, wherever the walk lands
        // (18 bytes hold any upper header's checksum field).
        if ip.upper_payload().is_ok_and(|(_, upper)| upper.len() >= 18) {
            let mut copy = data.to_vec();
            let mut ip = ipv6::Header::new_checked(&mut copy[..]).expect("the same bytes");
            ip.fill_upper_checksum();
            assert_ne!(ip.upper_checksum_ok(), Some(false));
        }
    }
    if let Ok(ip) = ip_of(data) {
        let _ = (ip.hop_limit(), ip.upper());
    }
    if let Ok((_teid, len)) = gtpu::parse(data) {
        assert!(len <= data.len());
    }
    let _ = vxlan::parse(data);
    for port in [gtpu::PORT, vxlan::PORT] {
        if let Some(offset) = udp_tunnel::payload_offset(data, port) {
            assert!(offset <= data.len());
        }
    }
    // The mutable views must accept exactly what the read-only ones do.
    let mut copy = data.to_vec();
    assert_eq!(ipv4_of(data).is_ok(), sluice_core::wire::ipv4_of_mut(&mut copy).is_ok());
    assert_eq!(ip_of(data).is_ok(), sluice_core::wire::ip_of_mut(&mut copy).is_ok());
});
