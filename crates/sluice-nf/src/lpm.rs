//! `lpm(routes)`: longest-prefix match on the destination, IPv4 by
//! DIR-24-8 here and IPv6 by the multibit trie of [`crate::lpm6`].
//!
//! A 2^24-entry first-level table indexed by the top 24 address bits holds
//! either a next hop or, for /24s with longer prefixes inside, the index of
//! a 256-entry second-level group: one memory access for prefixes up to
//! /24, two beyond (Gupta, Lin & McKeown 1998; DPDK's rte_lpm).

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, MAX_BURST};

use sluice_core::wire::{ip_of, Ip, IpPrefix};

use crate::lpm6::Lpm6Table;

/// Marks a first-level entry that points to a second-level group.
const GROUP: u16 = 0x8000;
/// Entry value of "no route".
const MISS: u16 = 0;
/// Highest gate a route may name (entries store gate + 1 below `GROUP`).
pub const MAX_GATE: u16 = GROUP - 2;

/// A DIR-24-8 table from prefixes to gates.
pub struct LpmTable {
    tbl24: Vec<u16>,
    tbl8: Vec<u16>,
}

impl LpmTable {
    /// Builds the table from (network, length, gate) routes; duplicates: last wins.
    pub fn new(routes: &[(u32, u8, u16)]) -> Result<Self, String> {
        if let Some(r) = routes.iter().find(|r| r.1 > 32 || r.2 > MAX_GATE) {
            return Err(format!("route {:?} has a prefix length over 32 or a gate over {MAX_GATE}", r));
        }
        let mut sorted = routes.to_vec();
        sorted.sort_by_key(|r| r.1);
        let mut t = Self { tbl24: vec![MISS; 1 << 24], tbl8: Vec::new() };
        for (net, len, gate) in sorted {
            let net = net & sluice_core::wire::ipv4::mask(len);
            let value = gate + 1;
            if len <= 24 {
                let first = (net >> 8) as usize;
                for i in first..first + (1usize << (24 - len)) {
                    match t.tbl24[i] {
                        e if e & GROUP != 0 => t.tbl8[group_range(e)].fill(value),
                        _ => t.tbl24[i] = value,
                    }
                }
            } else {
                let i = (net >> 8) as usize;
                if t.tbl24[i] & GROUP == 0 {
                    let group = (t.tbl8.len() / 256) as u16;
                    if group >= GROUP {
                        return Err("more than 32767 prefixes longer than /24".into());
                    }
                    t.tbl8.extend(std::iter::repeat_n(t.tbl24[i], 256));
                    t.tbl24[i] = GROUP | group;
                }
                let base = ((t.tbl24[i] & !GROUP) as usize) << 8;
                let first = base + (net & 0xff) as usize;
                t.tbl8[first..first + (1usize << (32 - len))].fill(value);
            }
        }
        Ok(t)
    }

    /// The gate of `addr`'s longest matching prefix.
    #[inline]
    pub fn lookup(&self, addr: u32) -> Option<u16> {
        let e = self.tbl24[(addr >> 8) as usize];
        let e = if e & GROUP != 0 { self.tbl8[(((e & !GROUP) as usize) << 8) | (addr & 0xff) as usize] } else { e };
        (e != MISS).then(|| e - 1)
    }

    /// Looks up every address of `addrs` into `gates` (same length), four
    /// at a time: the four first-level loads are independent, so their cache
    /// misses overlap.
    #[inline]
    pub fn lookup_bulk(&self, addrs: &[u32], gates: &mut [Option<u16>]) {
        let (quads, rest) = addrs.split_at(addrs.len() / 4 * 4);
        for (a, g) in quads.chunks_exact(4).zip(gates.chunks_exact_mut(4)) {
            let e = [0, 1, 2, 3].map(|i| self.tbl24[(a[i] >> 8) as usize]);
            for i in 0..4 {
                let e = if e[i] & GROUP != 0 { self.tbl8[(((e[i] & !GROUP) as usize) << 8) | (a[i] & 0xff) as usize] } else { e[i] };
                g[i] = (e != MISS).then(|| e - 1);
            }
        }
        for (g, &a) in gates[quads.len()..].iter_mut().zip(rest) {
            *g = self.lookup(a);
        }
    }
}

fn group_range(entry: u16) -> std::ops::Range<usize> {
    let base = ((entry & !GROUP) as usize) << 8;
    base..base + 256
}

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
    v4: Option<LpmTable>,
    v6: Option<Lpm6Table>,
    gates: usize,
    /// Per run of packets to one destination in a batch, by family: the
    /// address and its gate (a run is looked up once).
    addrs4: [u32; MAX_BURST],
    found4: [Option<u16>; MAX_BURST],
    addrs6: [u128; MAX_BURST],
    found6: [Option<u16>; MAX_BURST],
    /// Per packet, its run.
    slot_of: [Slot; MAX_BURST],
}

impl Lpm {
    /// An LPM over IPv4 routes `v4` and IPv6 routes `v6` (network, length,
    /// gate); a family without routes has no table and its packets miss.
    pub fn new(v4: &[(u32, u8, u16)], v6: &[(u128, u8, u16)]) -> Result<Self, String> {
        let gates = crate::nf_config::gate_count(v4.iter().map(|r| r.2).chain(v6.iter().map(|r| r.2)), None);
        if gates == 0 {
            return Err("an LPM needs at least one route".into());
        }
        Ok(Self {
            v4: if v4.is_empty() { None } else { Some(LpmTable::new(v4)?) },
            v6: if v6.is_empty() { None } else { Some(Lpm6Table::new(v6)?) },
            gates,
            addrs4: [0; MAX_BURST],
            found4: [None; MAX_BURST],
            addrs6: [0; MAX_BURST],
            found6: [None; MAX_BURST],
            slot_of: [NOT_IP; MAX_BURST],
        })
    }
}

impl NetworkFunction for Lpm {
    fn outgates(&self) -> usize {
        self.gates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let ids = input.as_slice();
        let Self { v4, v6, addrs4, found4, addrs6, found6, slot_of, .. } = self;
        let (mut runs4, mut runs6, mut last) = (0, 0, NOT_IP);
        for (&id, slot) in ids.iter().zip(slot_of.iter_mut()) {
            last = match ip_of(ctx.pool.data(id)) {
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
        for (&id, &slot) in ids.iter().zip(slot_of.iter()) {
            let gate = match slot {
                NOT_IP => None,
                s if s >= V6_RUNS => found6[(s - V6_RUNS) as usize],
                s => found4[s as usize],
            };
            match gate {
                Some(gate) => out.push(gate as usize, id),
                None => ctx.drop_packet(id),
            }
        }
        input.clear();
    }
}

/// `lpm`: longest-prefix match on the IPv4 or IPv6 destination; misses go to the drop gate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LpmSpec {
    /// (prefix, gate) routes, IPv4 ("20.0.1.0/24") and IPv6 ("2001:db8::/32") alike.
    pub routes: Vec<(String, u16)>,
}

impl crate::NfConfig for LpmSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        for (prefix, gate) in &self.routes {
            match IpPrefix::parse(prefix)? {
                IpPrefix::V4(net, len) => v4.push((net, len, *gate)),
                IpPrefix::V6(net, len) => v6.push((net, len, *gate)),
            }
        }
        Ok(Box::new(Lpm::new(&v4, &v6)?))
    }

    fn outgates(&self) -> usize {
        crate::nf_config::gate_count(self.routes.iter().map(|r| r.1), None)
    }

    fn table_entries(&self) -> usize {
        self.routes.len()
    }

    /// The reference pipelines' 500 routes, every one to gate 0.
    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { routes: sample_routes(crate::PROFILE_FLOWS, 500).into_iter().map(|(p, _)| (p, 0)).collect() })
    }

    fn fuzz_samples() -> Vec<Self> {
        let routes = [("10.0.0.0/8", 0), ("10.1.0.0/16", 1), ("0.0.0.0/0", 2), ("2001:db8::/32", 0), ("2001:db8:1::/48", 1)];
        vec![Self { routes: routes.iter().map(|&(p, g)| (p.into(), g)).collect() }]
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
