//! The parsers of what a router hears from its neighbours, on arbitrary
//! bytes: ARP packets, IPv6 neighbour discovery (with whatever hop limit
//! and addresses the bytes say) and the virtio-net header a packet socket
//! puts before a frame. They parse or say why not, never panic, and what
//! they accept holds what RFC 826, RFC 4861 and the header's own bounds ask.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_core::wire::{arp, icmpv6};
use sluice_port::vnet;

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = arp::Packet::new_checked(data) {
        let _ = (a.operation(), a.sender_mac(), a.sender_ip(), a.target_mac(), a.target_ip(), a.is_gratuitous());
    }
    if data.len() >= 33 {
        let (head, message) = data.split_at(33);
        let src = u128::from_be_bytes(head[1..17].try_into().expect("16 bytes"));
        let dst = u128::from_be_bytes(head[17..33].try_into().expect("16 bytes"));
        if let Ok(nd) = icmpv6::Neighbor::parse(message, head[0], src, dst) {
            assert_eq!(head[0], icmpv6::ND_HOP_LIMIT, "only a hop limit of 255 is taken");
            assert!(!icmpv6::is_multicast(nd.target));
            assert!(matches!(nd.kind, icmpv6::NEIGHBOR_SOLICIT | icmpv6::NEIGHBOR_ADVERT));
        }
    }
    if let Some((header, rest)) = data.split_first_chunk::<{ vnet::LEN }>() {
        let frame_len = rest.len();
        if let Ok(o) = vnet::parse(header, frame_len) {
            assert!(!o.csum_partial || usize::from(o.csum_start) + usize::from(o.csum_offset) + 2 <= frame_len);
            assert!(o.gso == sluice_core::packet::Gso::None || (o.gso_size > 0 && usize::from(o.gso_size) < frame_len && usize::from(o.hdr_len) <= frame_len));
            assert_eq!(vnet::parse(&vnet::write(&o), frame_len), Ok(o), "what it reads it writes back");
        }
    }
});
