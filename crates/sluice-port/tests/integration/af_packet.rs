//! AF_PACKET ports on a veth pair in a network namespace of the test's own
//! (skipped, with a message, where the machine does not allow one).

use std::net::Ipv4Addr;

use sluice_core::{Batch, PacketMeta, PacketPool, PacketSink, PacketSource, NO_FLOW};
use sluice_port::{Error, PortName, RingConfig, RxPort, TxPort};
use sluice_traffic::{FlowRules, PrefixRule};

use crate::common;
use common::{frame, veth_pair_in_own_namespace};

#[test]
fn frames_sent_on_one_end_arrive_whole_in_order_and_classified_on_the_other() {
    let handle = std::thread::spawn(|| {
        if !veth_pair_in_own_namespace("frames_sent_on_one_end_arrive_whole_in_order_and_classified_on_the_other") {
            return;
        }
        let rules = vec![PrefixRule { prefix: Ipv4Addr::new(10, 0, 1, 0).into(), len: 24, flow: 0 }];
        let mut rx = RxPort::open(&PortName::parse("af_packet:vrx0").unwrap(), RingConfig::default(), FlowRules::of_prefixes(&rules).unwrap(), None, sluice_core::packet::NO_PORT).unwrap();
        let mut tx = TxPort::open(&PortName::parse("af_packet:vtx0").unwrap(), RingConfig::default()).unwrap();
        let mut pool = PacketPool::new(4096);
        let sent: Vec<Vec<u8>> = (0..2000).map(|i| frame(1 + (i % 2) as u8, i)).collect();
        let mut received = Vec::new();
        let mut out = Batch::default();
        for chunk in sent.chunks(32) {
            let ids: Vec<_> = chunk.iter().map(|f| pool.alloc_copy(f, PacketMeta::default()).unwrap()).collect();
            assert_eq!(tx.transmit(&mut pool, &ids), ids.len());
            for id in ids {
                pool.free(id);
            }
            // Drain what arrived so far.
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(20);
            while received.len() < sent.len() && std::time::Instant::now() < deadline {
                rx.fill(&mut pool, NOW_NS, &mut out, 32);
                for &id in out.as_slice() {
                    received.push((pool.data(id).to_vec(), pool.meta(id).flow, pool.meta(id).ts_ns));
                    pool.free(id);
                }
                out.clear();
            }
        }
        // The veth peer also sees what the kernel itself sends (IPv6 router
        // solicitations and the like): keep the frames we sent.
        received.retain(|(f, _, _)| f.len() == sent[0].len() && f[..12] == sent[0][..12]);
        assert_eq!(received.len(), sent.len(), "every frame arrived, {} missed at rx", rx.missed());
        for (i, ((got, flow, ts), want)) in received.iter().zip(&sent).enumerate() {
            assert_eq!(got, want, "frame {i} arrived whole and in order");
            assert_eq!(*flow, if i % 2 == 0 { 0 } else { NO_FLOW }, "frame {i}'s flow by its destination /24");
            // Stamped with the kernel's receive time on the poll's clock: a
            // little before the poll (the wait in the ring), never after it.
            assert!((NOW_NS - 100_000_000..=NOW_NS).contains(ts), "frame {i} stamped {ts} ns, the poll at {NOW_NS} ns");
        }
        assert_eq!(rx.missed(), 0);
    });
    handle.join().unwrap();
}

#[test]
fn a_lone_frame_is_in_the_ring_when_its_send_returns() {
    // A ring that handed frames over a block at a time would hold it back
    // until the block's timer fired (≥ 1 ms): a ping through an idle router would wait that long.
    let handle = std::thread::spawn(|| {
        if !veth_pair_in_own_namespace("a_lone_frame_is_in_the_ring_when_its_send_returns") {
            return;
        }
        let mut rx = RxPort::open(&PortName::parse("af_packet:vrx0").unwrap(), RingConfig::default(), FlowRules::default(), None, sluice_core::packet::NO_PORT).unwrap();
        let mut tx = TxPort::open(&PortName::parse("af_packet:vtx0").unwrap(), RingConfig::default()).unwrap();
        let mut pool = PacketPool::new(64);
        let mut out = Batch::default();
        for seq in 0..20 {
            let sent = frame(1, seq);
            let id = pool.alloc_copy(&sent, PacketMeta::default()).unwrap();
            assert_eq!(tx.transmit(&mut pool, &[id]), 1);
            pool.free(id);
            // veth delivers on the sender's CPU before its send returns; the
            // kernel's own frames (router solicitations) may come first.
            rx.fill(&mut pool, NOW_NS, &mut out, 32);
            let here = out.as_slice().iter().any(|&id| pool.data(id) == sent.as_slice());
            for &id in out.as_slice() {
                pool.free(id);
            }
            out.clear();
            assert!(here, "frame {seq} was not in the ring when its send returned");
        }
    });
    handle.join().unwrap();
}

/// The engine's clock at every poll in the test (ns).
const NOW_NS: u64 = 10_000_000_000;

#[test]
fn a_missing_interface_and_an_unknown_backend_are_named_in_the_error() {
    let e = RxPort::open(&PortName::parse("af_packet:nosuch0").unwrap(), RingConfig::default(), FlowRules::default(), None, sluice_core::packet::NO_PORT).err().unwrap();
    assert!(matches!(e, Error::Name { .. }) && e.to_string().contains("no interface named 'nosuch0'"), "{e}");
    let e = PortName::parse("netmap:veth1").unwrap_err().to_string();
    assert!(e.contains("port 'netmap:veth1'") && e.contains("unknown backend 'netmap'"), "{e}");
    let e = PortName::parse("veth1").unwrap_err().to_string();
    assert!(e.contains("BACKEND:INTERFACE"), "{e}");
    let bad = RingConfig { block_size: 1000, ..RingConfig::default() };
    let e = TxPort::open(&PortName::parse("af_packet:lo").unwrap(), bad).err().unwrap().to_string();
    assert!(e.contains("page size"), "{e}");
}
