//! CoDel on the rings between workers (a pipeline's `ring_codel`). A ring
//! queues where the worker it feeds is slower than the one filling it, up
//! to its slots, before it pushes back on the sources. Under CoDel each
//! packet leaving the ring is judged by how long it has been in the
//! pipeline (since its arrival stamp: the whole way to the ring's head,
//! upstream buffers included), and sent on, marked congestion experienced
//! or dropped as RFC 8289 says; a drop is counted at the module the ring
//! feeds, for the reason `aqm`, and in its flow.

use super::Node;
use crate::codel::{CoDel, Verdict};
use crate::nf::free_dropped;
use crate::packet::PacketId;
use crate::pool::PacketPool;
use crate::ring::Consumer;
use crate::telemetry::FlowRecorder;
use crate::wire::{ip_of, ip_of_mut};

/// Takes packets out of `ring` into `node`'s inbox at `now_ns` (ns since
/// the origin) until it holds `room`, each judged by `codel` on its way.
pub(super) fn take_judged(codel: &mut CoDel, ring: &mut Consumer<PacketId>, node: &mut Node, room: usize, now_ns: u64, pool: &mut PacketPool, flows: &mut [FlowRecorder]) {
    while node.inbox.len() < room {
        let Some(id) = ring.pop() else { break };
        let left = ring.len();
        let ect = codel.marks() && ip_of(pool.data(id)).is_ok_and(|ip| ip.ecn() != 0);
        let verdict = codel.verdict(now_ns, now_ns.saturating_sub(pool.meta(id).ts_ns), left, ect);
        if left == 0 {
            codel.emptied();
        }
        match verdict {
            Verdict::Send => {}
            Verdict::Mark => {
                if let Ok(mut ip) = ip_of_mut(pool.data_mut(id)) {
                    ip.set_ce();
                }
                node.counters.ecn_marked += 1;
            }
            Verdict::Drop => {
                node.counters.arrived_pkts += 1;
                node.counters.aqm_dropped += 1;
                free_dropped(pool, flows, id);
                continue;
            }
        }
        node.inbox.push(id);
    }
}

#[cfg(test)]
mod tests {
    use crate::codel::CoDelConfig;
    use crate::graph::tests::{ByFlow, Listed, Log, TestWorkers};
    use crate::model::{ModelBuilder, ModuleDecl, Role};
    use crate::nf::ModuleCode;
    use crate::telemetry::Counters;
    use crate::WalkerConfig;

    const SENT: usize = 20_000;

    /// `SENT` packets from a source on worker 0 across a ring to `a` on
    /// worker 1, on a mock clock: each millisecond the source's worker runs
    /// two rounds (64 packets) and the reader's one (32), so the ring fills
    /// and then pushes back. Returns the flow's packets generated,
    /// delivered and dropped, and `a`'s drops for the reason `aqm`.
    fn a_slow_reader(ring_codel: Option<CoDelConfig>) -> ([u64; 3], u64) {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1)).module(ModuleDecl::new("a", Role::Function, 1, 1)).module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "a", 0).connect("a", 0, "out", 0).flow("f", &["src", "a", "out"], None);
        b.place("src", 0).place("a", 1).place("out", 1);
        let a = ModuleCode::Function(Box::new(ByFlow { name: "a", gates: 1, log: Log::default() }));
        let code = vec![ModuleCode::Source(Box::new(Listed::new(&[0; SENT]))), a, ModuleCode::Egress];
        let (clock, mock) = quanta::Clock::mock();
        let mut w = TestWorkers::with_clock(&b, 32, code, WalkerConfig { timing: false, ring_codel, ..WalkerConfig::default() }, clock);
        for _ in 0..2_000 {
            w.graphs[0].round();
            w.graphs[0].round();
            w.graphs[1].round();
            mock.increment(1_000_000);
        }
        let (flows, in_flight) = w.tally();
        assert_eq!(in_flight, 0, "everything sent on or dropped");
        let mut c = Counters::for_model(&w.model, 2);
        w.graphs[1].read_counters(&mut c);
        (flows[0], c.modules[1].aqm_dropped)
    }

    #[test]
    fn codel_on_a_ring_drops_what_waited_too_long_and_accounts_for_it() {
        let all = SENT as u64;
        assert_eq!(a_slow_reader(None), ([all, all, 0], 0), "without CoDel a ring pushes back and loses nothing");
        let ([generated, delivered, dropped], aqm) = a_slow_reader(Some(CoDelConfig::default()));
        assert_eq!((generated, aqm), (all, dropped), "every drop is CoDel's, at the module the ring feeds");
        assert!(dropped > 0 && delivered + dropped == all, "{delivered} delivered, {dropped} dropped");
        // The ring holds 4 096 packets, 128 ms of the reader: under a target of 1 s nothing waits too long.
        let patient = CoDelConfig { target_us: 1_000_000, interval_us: 2_000_000, ecn: true };
        assert_eq!(a_slow_reader(Some(patient)), ([all, all, 0], 0));
    }
}
