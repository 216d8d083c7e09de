//! Ports that several workers name alike, spread over their interface so
//! that each worker has a queue of its own and no frame is taken twice.
//!
//! - AF_XDP: an interface named without a queue on k workers gives the
//!   i-th of them (by worker number) the i-th queue that no port names
//!   outright, to its receive and transmit ports alike (they share the
//!   queue's socket).
//! - AF_PACKET: receive ports of one interface on several workers join one
//!   fanout group (the one a port names, if one does), over which the
//!   kernel spreads the flows by hash; each socket would otherwise receive
//!   every frame.
//! - DPDK: likewise, a device named alike on k workers is started with k
//!   queue pairs (spread by RSS where the device hashes; net_af_packet
//!   needs `qpairs=k`), the i-th worker's ports on the i-th.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sluice_port::{Backend, PortName};

use crate::error::Result;

/// A port a module names.
pub(crate) struct Named<'a> {
    /// The module.
    pub module: &'a str,
    /// Its worker.
    pub worker: usize,
    /// The port as named.
    pub port: &'a str,
    /// The fanout group a receive port names (`None` for a transmit port).
    pub fanout: Option<u16>,
    /// Whether it receives (a source) or transmits (an egress).
    pub receives: bool,
}

/// Per port module, by name: the port it opens and the fanout group it joins.
pub(crate) type Spread = HashMap<String, (PortName, Option<u16>)>;

/// The fanout group of the `n`-th interface this process spreads: the
/// process's low byte beside the interface's number, so that pipelines of
/// other processes on the machine pick other groups.
fn fanout_group(n: usize) -> u16 {
    (((std::process::id() & 0xff) << 8) as u16) | (n & 0xff) as u16
}

/// What each of the `named` ports opens (see the module doc).
pub(crate) fn spread(named: &[Named<'_>]) -> Result<Spread> {
    let mut ports: Vec<PortName> = named.iter().map(|n| PortName::parse(n.port)).collect::<std::result::Result<_, _>>()?;
    let mut fanout: Vec<Option<u16>> = named.iter().map(|n| n.fanout).collect();
    let mut interfaces: BTreeMap<(Backend, &str), Vec<usize>> = BTreeMap::new();
    for (i, p) in ports.iter().enumerate() {
        interfaces.entry((p.backend, p.interface.as_str())).or_default().push(i);
    }
    let interfaces: Vec<Vec<usize>> = interfaces.into_values().collect();
    for (n, at) in interfaces.iter().enumerate() {
        let backend = ports[at[0]].backend;
        match backend {
            Backend::AfXdp | Backend::Dpdk => {
                let named_queues: BTreeSet<u32> = at.iter().filter_map(|&i| ports[i].queue).collect();
                let unnamed: Vec<usize> = at.iter().copied().filter(|&i| ports[i].queue.is_none()).collect();
                let workers: BTreeSet<usize> = unnamed.iter().map(|&i| named[i].worker).collect();
                if workers.len() > 1 {
                    let queues = (0..).filter(|q| !named_queues.contains(q));
                    let queue_of: HashMap<usize, u32> = workers.into_iter().zip(queues).collect();
                    for i in unnamed {
                        ports[i] = ports[i].on_queue(queue_of[&named[i].worker]);
                    }
                }
            }
            Backend::AfPacket => {
                let unnamed: Vec<usize> = at.iter().copied().filter(|&i| named[i].receives && named[i].fanout.is_none()).collect();
                let workers: BTreeSet<usize> = at.iter().filter(|&&i| named[i].receives).map(|&i| named[i].worker).collect();
                if workers.len() > 1 {
                    // The group a port names, where one does: one group an interface.
                    let group = at.iter().find_map(|&i| named[i].fanout).unwrap_or_else(|| fanout_group(n));
                    for i in unnamed {
                        fanout[i] = Some(group);
                    }
                }
            }
        }
    }
    Ok(named.iter().zip(ports).zip(fanout).map(|((n, port), fanout)| (n.module.to_string(), (port, fanout))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx<'a>(module: &'a str, worker: usize, port: &'a str) -> Named<'a> {
        Named { module, worker, port, fanout: None, receives: true }
    }

    fn tx<'a>(module: &'a str, worker: usize, port: &'a str) -> Named<'a> {
        Named { module, worker, port, fanout: None, receives: false }
    }

    #[test]
    fn one_worker_keeps_its_port_as_named() {
        let s = spread(&[rx("in", 0, "af_packet:veth1"), tx("out", 0, "af_packet:veth1")]).unwrap();
        assert_eq!((s["in"].0.name.as_str(), s["in"].1), ("af_packet:veth1", None));
    }

    #[test]
    fn workers_naming_an_af_packet_interface_alike_join_one_fanout_group() {
        let s = spread(&[rx("a", 0, "af_packet:veth1"), rx("b", 1, "af_packet:veth1"), rx("c", 1, "af_packet:veth2")]).unwrap();
        assert!(s["a"].1.is_some() && s["a"].1 == s["b"].1, "one group for veth1");
        assert_eq!(s["c"].1, None, "veth2 has one worker");
        let named = spread(&[Named { fanout: Some(7), ..rx("a", 0, "af_packet:veth1") }, rx("b", 1, "af_packet:veth1")]).unwrap();
        assert_eq!((named["a"].1, named["b"].1), (Some(7), Some(7)), "a group one port names is the interface's");
    }

    #[test]
    fn workers_naming_an_af_xdp_interface_alike_take_its_queues_in_turn() {
        if !sluice_port::Backend::AfXdp.built() {
            return;
        }
        let s = spread(&[
            rx("rx2", 2, "af_xdp:veth1"),
            rx("rx0", 0, "af_xdp:veth1"),
            tx("tx0", 0, "af_xdp:veth1"),
            rx("rx1", 1, "af_xdp:veth1@0"),
            rx("rx3", 3, "af_xdp:veth1"),
        ])
        .unwrap();
        let queue = |m: &str| (s[m].0.queue, s[m].0.name.clone());
        // Queue 0 is named by worker 1: workers 0, 2 and 3 take 1, 2 and 3; a worker's rx and tx share one.
        assert_eq!(queue("rx0"), (Some(1), "af_xdp:veth1@1".into()));
        assert_eq!(queue("tx0"), queue("rx0"));
        assert_eq!((queue("rx2").0, queue("rx3").0, queue("rx1").0), (Some(2), Some(3), Some(0)));
    }

    #[test]
    fn workers_naming_a_dpdk_device_alike_take_its_queues_in_turn() {
        if !sluice_port::Backend::Dpdk.built() {
            return;
        }
        let dev = "dpdk:net_af_packet0,iface=veth1,qpairs=2";
        let s = spread(&[rx("rx1", 1, dev), tx("tx1", 1, dev), rx("rx0", 0, dev), rx("one", 0, "dpdk:net_ring0")]).unwrap();
        let queue = |m: &str| s[m].0.queue;
        assert_eq!((queue("rx0"), queue("rx1"), queue("tx1"), queue("one")), (Some(0), Some(1), Some(1), None));
        assert_eq!(s["rx1"].0.name, "dpdk:net_af_packet0,iface=veth1,qpairs=2@1");
    }
}
