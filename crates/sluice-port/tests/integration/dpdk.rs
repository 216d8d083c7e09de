//! DPDK ports on virtual devices, in this process's one EAL (no huge
//! pages, no PCI): a ring device that loops what is sent back, a null
//! device that makes frames. Skipped where this build has no DPDK.

use std::net::Ipv4Addr;

use sluice_core::{Batch, PacketMeta, PacketPool, PacketSink, PacketSource, NO_FLOW};
use sluice_port::{PortName, RingConfig, RxPort, TxPort};
use sluice_traffic::{FlowRules, PrefixRule};

#[allow(dead_code)] // the namespace helper is not needed here
use crate::common;
use common::frame;

#[test]
fn a_ring_device_gives_back_what_was_sent_whole_in_order_and_classified() {
    let name = PortName::parse("dpdk:net_ring7").unwrap();
    let rules = vec![PrefixRule { prefix: Ipv4Addr::new(10, 0, 1, 0).into(), len: 24, flow: 0 }];
    let (mut rx, mut tx) = (RxPort::open(&name, RingConfig::default(), FlowRules::of_prefixes(&rules).unwrap(), None, sluice_core::packet::NO_PORT).unwrap(), TxPort::open(&name, RingConfig::default()).unwrap());
    let mut pool = PacketPool::new(4096);
    rx.bind(&mut pool).unwrap();
    tx.bind(&mut pool).unwrap();
    assert!(!tx.zero_copy(), "DPDK ports copy into mbufs");
    let sent: Vec<Vec<u8>> = (0..5000).map(|i| frame(1 + (i % 2) as u8, i)).collect();
    let mut received = Vec::new();
    let mut out = Batch::default();
    for chunk in sent.chunks(64) {
        let ids: Vec<_> = chunk.iter().map(|f| pool.alloc_copy(f, PacketMeta::default()).unwrap()).collect();
        assert_eq!(tx.transmit(&mut pool, &ids), ids.len(), "the ring has room for a burst");
        tx.let_go(&mut pool, &ids);
        rx.fill(&mut pool, 9, &mut out, 256);
        for &id in out.as_slice() {
            received.push((pool.data(id).to_vec(), pool.meta(id).flow, pool.meta(id).ts_ns));
            pool.free(id);
        }
        out.clear();
    }
    assert_eq!(received.len(), sent.len(), "{} missed", rx.missed());
    for (i, ((got, flow, ts), want)) in received.iter().zip(&sent).enumerate() {
        assert_eq!(got, want, "frame {i} came back whole and in order");
        assert_eq!(*flow, if i % 2 == 0 { 0 } else { NO_FLOW }, "frame {i}'s flow by its destination /24");
        assert_eq!(*ts, 9, "frame {i} stamped at the poll");
    }
    assert_eq!(pool.in_use(), 0, "every buffer back in the pool");
}

#[test]
fn a_null_device_makes_frames_and_a_missing_device_is_named_in_the_error() {
    let mut rx = RxPort::open(&PortName::parse("dpdk:net_null7,size=128").unwrap(), RingConfig::default(), FlowRules::default(), None, sluice_core::packet::NO_PORT).unwrap();
    let mut pool = PacketPool::new(1024);
    rx.bind(&mut pool).unwrap();
    let mut out = Batch::default();
    rx.fill(&mut pool, 0, &mut out, 32);
    assert_eq!(out.len(), 32, "a null device always has frames");
    assert!(out.as_slice().iter().all(|&id| pool.data(id).len() == 128), "of the size asked");

    let mut missing = RxPort::open(&PortName::parse("dpdk:0000:99:00.0").unwrap(), RingConfig::default(), FlowRules::default(), None, sluice_core::packet::NO_PORT).unwrap();
    let e = missing.bind(&mut pool).unwrap_err().to_string();
    assert!(e.contains("port 'dpdk:0000:99:00.0'") && e.contains("no DPDK device '0000:99:00.0'"), "{e}");
    let e = PortName::parse("dpdk:").unwrap_err().to_string();
    assert!(e.contains("dpdk:DEVICE"), "{e}");
}
