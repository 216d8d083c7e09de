//! The header views on arbitrary bytes: they parse or say why not, never
//! panic, and what they return lies inside the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_core::wire::{ethernet, gtpu, ipv4, ipv4_of, l4, udp_tunnel, vxlan};

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
});
