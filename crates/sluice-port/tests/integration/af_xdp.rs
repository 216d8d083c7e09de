//! AF_XDP ports on a veth pair in a network namespace of the test's own
//! (skipped, with a message, where the machine does not allow one, or
//! where this build has no AF_XDP).

use std::net::Ipv4Addr;
use std::process::Command;

use sluice_core::{Batch, PacketMeta, PacketPool, PacketSink, PacketSource, NO_FLOW};
use sluice_port::{PortName, RingConfig, RxPort, TxPort};
use sluice_traffic::{FlowRules, PrefixRule};

use crate::common;
use common::{frame, veth_pair_in_own_namespace};

/// Whether `iface` has an XDP program attached.
fn has_xdp_program(iface: &str) -> bool {
    let out = Command::new("ip").args(["link", "show", iface]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).contains("xdp")
}

#[test]
fn frames_cross_in_the_pools_own_buffers_whole_in_order_and_classified_and_the_program_goes_with_the_socket() {
    let handle = std::thread::spawn(|| {
        if !veth_pair_in_own_namespace("frames_cross_in_the_pools_own_buffers_whole_in_order_and_classified_and_the_program_goes_with_the_socket") {
            return;
        }
        let ring = RingConfig { descriptors: 512, ..RingConfig::default() };
        let (rx_name, tx_name) = (PortName::parse("af_xdp:vrx0").unwrap(), PortName::parse("af_xdp:vtx0").unwrap());
        let mut pool = PacketPool::new(4096 + rx_name.lends(&ring) + tx_name.lends(&ring));
        let rules = vec![PrefixRule { prefix: Ipv4Addr::new(10, 0, 1, 0).into(), len: 24, flow: 0 }];
        let mut rx = RxPort::open(&rx_name, ring, FlowRules::of_prefixes(&rules).unwrap(), None, sluice_core::packet::NO_PORT).unwrap();
        rx.bind(&mut pool).unwrap();
        let mut tx = TxPort::open(&tx_name, ring).unwrap();
        tx.bind(&mut pool).unwrap();
        assert!(tx.zero_copy(), "AF_XDP sends from the pool's own buffers");
        assert!(has_xdp_program("vrx0"), "the receiving socket loaded its redirect program");

        let sent: Vec<Vec<u8>> = (0..3000).map(|i| frame(1 + (i % 2) as u8, i)).collect();
        let mut received = Vec::new();
        let mut out = Batch::default();
        for chunk in sent.chunks(32) {
            let ids: Vec<_> = chunk.iter().map(|f| pool.alloc_copy(f, PacketMeta::default()).unwrap()).collect();
            let mut at = 0;
            while at < ids.len() {
                let n = tx.transmit(&mut pool, &ids[at..]);
                tx.let_go(&mut pool, &ids[at..at + n]);
                at += n;
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(20);
            while received.len() < sent.len() && std::time::Instant::now() < deadline {
                rx.fill(&mut pool, 7, &mut out, 32);
                for &id in out.as_slice() {
                    let meta = pool.meta(id);
                    received.push((pool.data(id).to_vec(), meta.flow, meta.ts_ns));
                    pool.free(id);
                }
                out.clear();
                if received.len() % 512 == 0 {
                    std::thread::yield_now();
                }
            }
        }
        // The veth peer also sees what the kernel itself sends: keep the frames we sent.
        received.retain(|(f, _, _)| f.len() == sent[0].len() && f[..12] == sent[0][..12]);
        assert_eq!(received.len(), sent.len(), "every frame arrived, {} missed at rx", rx.missed());
        for (i, ((got, flow, ts), want)) in received.iter().zip(&sent).enumerate() {
            assert_eq!(got, want, "frame {i} arrived whole and in order");
            assert_eq!(*flow, if i % 2 == 0 { 0 } else { NO_FLOW }, "frame {i}'s flow by its destination /24");
            assert_eq!(*ts, 7, "frame {i} stamped with the last poll that left the ring empty");
        }
        assert_eq!(rx.missed(), 0);
        assert_eq!(pool.in_use(), 0, "every packet received was freed, every packet sent handed over");
        drop(rx);
        assert!(!has_xdp_program("vrx0"), "the redirect program left with the last socket");
    });
    handle.join().unwrap();
}

#[test]
fn a_fill_ring_the_pool_cannot_stock_and_a_ring_size_out_of_range_are_named_in_the_error() {
    let handle = std::thread::spawn(|| {
        if !veth_pair_in_own_namespace("a_fill_ring_the_pool_cannot_stock_and_a_ring_size_out_of_range_are_named_in_the_error") {
            return;
        }
        let name = PortName::parse("af_xdp:vrx0").unwrap();
        let bad = RingConfig { descriptors: 1000, ..RingConfig::default() };
        let e = RxPort::open(&name, bad, FlowRules::default(), None, sluice_core::packet::NO_PORT).err().unwrap().to_string();
        assert!(e.contains("port 'af_xdp:vrx0'") && e.contains("power of two"), "{e}");
        let mut rx = RxPort::open(&name, RingConfig::default(), FlowRules::default(), None, sluice_core::packet::NO_PORT).unwrap();
        let e = rx.bind(&mut PacketPool::new(256)).unwrap_err().to_string();
        assert!(e.contains("port 'af_xdp:vrx0'") && e.contains("fill ring"), "{e}");
        let e = PortName::parse("af_xdp:vrx0@x").unwrap_err().to_string();
        assert!(e.contains("queue 'x'"), "{e}");
    });
    handle.join().unwrap();
}
