//! `lpm(routes)`: longest-prefix match on the destination, IPv4 by the
//! DIR-24-8 table of [`crate::lpm4`] and IPv6 by the multibit trie of
//! [`crate::lpm6`], both of which the control plane changes in place
//! while it runs ([`LiveLpm`]). With `unreachable`, a packet no route
//! matches is answered with a destination unreachable (no route) from the
//! interface it came in on, by a gate after the routes' (see
//! [`crate::icmp_error`]). A multipath route spreads its packets over
//! several gates by flow (see [`crate::multipath`]).

use sluice_core::DropReason;
use std::any::Any;
use std::sync::Arc;

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, MAX_BURST};

use sluice_core::wire::five_tuple::FiveTuple;
use sluice_core::wire::{ip_of, Ip, IpPrefix};

use crate::icmp_error::{self, ErrorSource, IcmpError};
use crate::interfaces::Interfaces;
use crate::multipath::PathSet;

pub use crate::lpm4::{LiveRoutes, LpmTable};
pub use crate::route_rules::MAX_GATE;
pub use crate::lpm6::{LiveRoutes6, Lpm6Table};

/// A packet's place in [`Lpm`]'s lookups: an index into the IPv4 runs,
/// [`V6_RUNS`] + an index into the IPv6 runs, or [`NOT_IP`].
type Slot = u16;
/// Slots from here on are IPv6 runs.
const V6_RUNS: Slot = MAX_BURST as Slot;
/// The slot of a packet that is neither (or malformed).
const NOT_IP: Slot = Slot::MAX;

/// Routes each IP packet by its destination's longest matching prefix in
/// its family's table; misses, non-IP and malformed packets go to the drop
/// gate. Packets in a row to one destination (one flow's, behind a
/// Reframer) are looked up once.
pub struct Lpm {
    v4: Option<Arc<LpmTable>>,
    v6: Option<Arc<Lpm6Table>>,
    /// The tables' writers, for the control plane.
    live: Arc<LiveLpm>,
    /// The routes' gates. A table entry of `gates` + i is multipath
    /// route set `paths[i]`.
    gates: usize,
    /// The multipath routes' sets of paths, and the seed of their flow hash.
    paths: Vec<PathSet>,
    hash_seed: u64,
    hash_flow_label: bool,
    /// Where misses' errors come from (they leave by gate `gates`); `None`: misses are dropped.
    icmp: Option<Arc<Interfaces>>,
    /// The IPv4 identification of its next error.
    ident: u16,
    /// Per run of packets to one destination in a batch, by family: the
    /// address and its gate (a run is looked up once).
    addrs4: [u32; MAX_BURST],
    found4: [Option<u16>; MAX_BURST],
    addrs6: [u128; MAX_BURST],
    found6: [Option<u16>; MAX_BURST],
    /// Per packet, its run.
    slot_of: [Slot; MAX_BURST],
    /// Per packet, its flow hash (an LPM with multipath routes only).
    flow_of: [u64; MAX_BURST],
}

/// The writers of an LPM's tables, for the control plane: each family's
/// that has routes (a family without routes has no table to change).
pub struct LiveLpm {
    /// The IPv4 table's writer.
    pub v4: Option<LiveRoutes>,
    /// The IPv6 table's writer.
    pub v6: Option<LiveRoutes6>,
}

impl Lpm {
    /// An LPM over IPv4 routes `v4` and IPv6 routes `v6` (network, length,
    /// gate); a family without routes has no table and its packets miss.
    pub fn new(v4: &[(u32, u8, u16)], v6: &[(u128, u8, u16)]) -> Result<Self, String> {
        let gates = crate::nf_config::gate_count(v4.iter().map(|r| r.2).chain(v6.iter().map(|r| r.2)), None);
        Self::answering(v4, v6, gates, Multipath::default(), None)
    }

    /// An LPM of `gates` gates whose routes' entries at `gates` and above
    /// are the multipath route sets of `multipath`, its misses answered
    /// with a destination unreachable from their interface of `icmp` (if
    /// given), out of the gate after the routes'.
    pub fn answering(v4: &[(u32, u8, u16)], v6: &[(u128, u8, u16)], gates: usize, multipath: Multipath, icmp: Option<Arc<Interfaces>>) -> Result<Self, String> {
        if gates == 0 {
            return Err("an LPM needs at least one route".into());
        }
        let live = LiveLpm {
            v4: if v4.is_empty() { None } else { Some(LiveRoutes::new(v4, gates)?) },
            v6: if v6.is_empty() { None } else { Some(LiveRoutes6::new(v6, gates)?) },
        };
        Ok(Self {
            v4: live.v4.as_ref().map(|l| l.table().clone()),
            v6: live.v6.as_ref().map(|l| l.table().clone()),
            live: Arc::new(live),
            gates,
            paths: multipath.sets,
            hash_seed: multipath.hash_seed,
            hash_flow_label: multipath.hash_flow_label,
            icmp,
            ident: 0x3300,
            addrs4: [0; MAX_BURST],
            found4: [None; MAX_BURST],
            addrs6: [0; MAX_BURST],
            found6: [None; MAX_BURST],
            slot_of: [NOT_IP; MAX_BURST],
            flow_of: [0; MAX_BURST],
        })
    }
}

impl NetworkFunction for Lpm {
    fn outgates(&self) -> usize {
        self.gates + usize::from(self.icmp.is_some())
    }

    /// Its tables' writers ([`LiveLpm`]).
    fn live(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        Some(self.live.clone() as Arc<dyn Any + Send + Sync>)
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let ids = input.as_slice();
        let Self { v4, v6, addrs4, found4, addrs6, found6, slot_of, flow_of, icmp, gates, ident, paths, hash_seed, hash_flow_label, .. } = self;
        let (mut runs4, mut runs6, mut last) = (0, 0, NOT_IP);
        let multipath = !paths.is_empty();
        for ((&id, slot), flow) in ids.iter().zip(slot_of.iter_mut()).zip(flow_of.iter_mut()) {
            let ip = ip_of(ctx.pool.data(id));
            if multipath {
                // Hashed here, where the header is parsed once for the lookup too.
                *flow = ip.as_ref().ok().and_then(|ip| {
                    let label = match ip {
                        Ip::V6(h) if *hash_flow_label => u64::from(h.flow_label()),
                        _ => 0,
                    };
                    // The label (20 bits) above the seed's low bits it is folded into.
                    FiveTuple::of_ip(ip).map(|t| t.hash(*hash_seed ^ label << 40))
                }).unwrap_or(0);
            }
            last = match ip {
                Ok(Ip::V4(h)) if runs4 > 0 && last == runs4 as Slot - 1 && addrs4[runs4 - 1] == h.dst() => last,
                Ok(Ip::V4(h)) => {
                    addrs4[runs4] = h.dst();
                    runs4 += 1;
                    runs4 as Slot - 1
                }
                Ok(Ip::V6(h)) if runs6 > 0 && last == V6_RUNS + runs6 as Slot - 1 && addrs6[runs6 - 1] == h.dst() => last,
                Ok(Ip::V6(h)) => {
                    addrs6[runs6] = h.dst();
                    runs6 += 1;
                    V6_RUNS + runs6 as Slot - 1
                }
                Err(_) => NOT_IP,
            };
            *slot = last;
        }
        match v4 {
            Some(t) => t.lookup_bulk(&addrs4[..runs4], &mut found4[..runs4]),
            None => found4[..runs4].fill(None),
        }
        match v6 {
            Some(t) => t.lookup_bulk(&addrs6[..runs6], &mut found6[..runs6]),
            None => found6[..runs6].fill(None),
        }
        for ((&id, &slot), &flow) in ids.iter().zip(slot_of.iter()).zip(flow_of.iter()) {
            let gate = match slot {
                NOT_IP => None,
                s if s >= V6_RUNS => found6[(s - V6_RUNS) as usize],
                s => found4[s as usize],
            };
            match gate {
                Some(gate) if (gate as usize) < *gates => out.push(gate as usize, id),
                Some(set) => out.push(paths[set as usize - *gates].gate(flow) as usize, id),
                None if slot != NOT_IP && icmp.is_some() => {
                    let interfaces = icmp.as_deref().expect("checked");
                    let answered = interfaces.get(ctx.pool.meta(id).port).is_some_and(|interface| {
                        let from = ErrorSource { interface, address: None, ident: &mut *ident };
                        icmp_error::report(ctx, id, IcmpError::NoRoute, from, &interfaces.icmp).is_ok()
                    });
                    if answered {
                        out.push(*gates, id);
                    } else {
                        ctx.drop_packet(id, DropReason::NoRoute);
                    }
                }
                None => ctx.drop_packet(id, if slot == NOT_IP { DropReason::Malformed } else { DropReason::NoRoute }),
            }
        }
        input.clear();
    }
}

/// The multipath routes' sets of paths, for [`Lpm::answering`].
#[derive(Default)]
pub struct Multipath {
    /// Each set, in the order of their entries.
    pub sets: Vec<PathSet>,
    /// The seed of the flow hash.
    pub hash_seed: u64,
    /// Whether an IPv6 flow label is hashed too (see [`LpmSpec::hash_flow_label`]).
    pub hash_flow_label: bool,
}

/// `lpm`: longest-prefix match on the IPv4 or IPv6 destination; misses go to the drop gate.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LpmSpec {
    /// (prefix, gate) routes, IPv4 ("20.0.1.0/24") and IPv6 ("2001:db8::/32") alike.
    pub routes: Vec<(String, u16)>,
    /// Answer a packet no route matches with a destination unreachable
    /// from the interface it came in on, out of the gate after the routes'
    /// (the description's `interfaces` say their addresses); else drop it.
    #[serde(default)]
    pub unreachable: bool,
    /// (prefix, [(gate, weight)]) routes spread over several gates by a
    /// hash of each packet's 5-tuple, so that a flow keeps its path; each
    /// path's share of the flows follows its weight (≥ 1), and removing
    /// a path moves only its flows. A prefix is a route or a multipath
    /// route, not both.
    #[serde(default)]
    pub multipath: Vec<(String, Vec<(u16, u32)>)>,
    /// The seed of the multipath routes' flow hash: routers in a row given
    /// different seeds split one set of flows differently.
    #[serde(default)]
    pub hash_seed: u64,
    /// Hash an IPv6 packet's flow label with its 5-tuple (Linux's
    /// `fib_multipath_hash_fields` flowlabel): the packets of one 5-tuple
    /// whose sender gave them different labels may take different paths.
    #[serde(default)]
    pub hash_flow_label: bool,
}

impl crate::NfConfig for LpmSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(&Interfaces::none())
    }

    fn build_on(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        let gates = self.route_gates();
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        // Each prefix parsed once, into its family's table.
        let mut entry = |prefix: &str, value: u16| {
            let parsed = IpPrefix::parse(prefix)?;
            match parsed {
                IpPrefix::V4(net, len) => v4.push((net, len, value)),
                IpPrefix::V6(net, len) => v6.push((net, len, value)),
            }
            Ok::<IpPrefix, String>(parsed)
        };
        // The routes' prefixes are kept only where multipath routes must differ from them.
        let mut routed = std::collections::HashSet::new();
        for (prefix, gate) in &self.routes {
            let parsed = entry(prefix, *gate)?;
            if !self.multipath.is_empty() {
                routed.insert(parsed);
            }
        }
        // One set of paths for the multipath routes that name the same.
        let mut multipath = Multipath { sets: Vec::new(), hash_seed: self.hash_seed, hash_flow_label: self.hash_flow_label };
        let mut named: std::collections::HashMap<&[(u16, u32)], usize> = std::collections::HashMap::new();
        for (i, (prefix, paths)) in self.multipath.iter().enumerate() {
            let set = match named.get(&paths[..]) {
                Some(&set) => set,
                None => {
                    multipath.sets.push(PathSet::new(paths).map_err(|e| format!("multipath[{i}]: {e}"))?);
                    named.insert(paths, multipath.sets.len() - 1);
                    multipath.sets.len() - 1
                }
            };
            let value = u16::try_from(gates + set).ok().filter(|&v| v <= MAX_GATE).ok_or_else(|| format!("multipath[{i}]: more gates and sets of paths than an LPM's {MAX_GATE}"))?;
            if routed.contains(&entry(prefix, value)?) {
                return Err(format!("multipath[{i}]: prefix {prefix} is a route too"));
            }
        }
        Ok(Box::new(Lpm::answering(&v4, &v6, gates, multipath, self.unreachable.then(|| interfaces.clone()))?))
    }

    fn outgates(&self) -> usize {
        let routes = self.route_gates();
        routes + usize::from(self.unreachable && routes > 0)
    }

    fn table_entries(&self) -> usize {
        self.routes.len()
    }

    /// The reference pipelines' 500 routes, every one to gate 0.
    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { routes: sample_routes(crate::PROFILE_FLOWS, 500).into_iter().map(|(p, _)| (p, 0)).collect(), ..Self::default() })
    }

    fn fuzz_samples() -> Vec<Self> {
        let routes = [("10.0.0.0/8", 0), ("10.1.0.0/16", 1), ("0.0.0.0/0", 2), ("2001:db8::/32", 0), ("2001:db8:1::/48", 1)];
        let routes: Vec<(String, u16)> = routes.iter().map(|&(p, g)| (p.into(), g)).collect();
        let multipath = vec![("20.0.0.0/8".into(), vec![(0, 1), (1, 2), (2, 1)]), ("2001:db8:2::/48".into(), vec![(1, 1), (2, 1)])];
        vec![Self { routes: routes.clone(), ..Self::default() }, Self { routes: routes.clone(), unreachable: true, ..Self::default() }, Self { routes, multipath, hash_seed: 5, unreachable: true, hash_flow_label: true }]
    }
}

impl LpmSpec {
    /// The gates its routes and multipath routes name.
    fn route_gates(&self) -> usize {
        let multipath = self.multipath.iter().flat_map(|(_, paths)| paths.iter().map(|p| p.0));
        crate::nf_config::gate_count(self.routes.iter().map(|r| r.1).chain(multipath), None)
    }
}

/// One /24 per flow (20.0.(i+1).0/24 → gate i) plus filler prefixes
/// (30.x.y.0/24) up to `total` routes: the reference pipelines' table.
pub fn sample_routes(flows: usize, total: usize) -> Vec<(String, u16)> {
    let mut routes: Vec<(String, u16)> = (0..flows).map(|i| (format!("20.0.{}.0/24", i + 1), i as u16)).collect();
    let filler = total.saturating_sub(flows);
    routes.extend((0..filler).map(|j| (format!("30.{}.{}.0/24", j / 256, j % 256), (j % flows.max(1)) as u16)));
    routes
}
