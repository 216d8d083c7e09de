//! `lpm(routes)`: IPv4 longest-prefix match on the destination, DIR-24-8.
//!
//! A 2^24-entry first-level table indexed by the top 24 address bits holds
//! either a next hop or, for /24s with longer prefixes inside, the index of
//! a 256-entry second-level group: one memory access for prefixes up to
//! /24, two beyond (Gupta, Lin & McKeown 1998; DPDK's rte_lpm).

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, MAX_BURST};

use sluice_core::wire::ipv4::parse_prefix;
use sluice_core::wire::ipv4_of;

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

/// Routes each IPv4 packet by its destination's longest matching prefix;
/// misses, non-IPv4 and malformed packets go to the drop gate. Packets in a
/// row to one destination (one flow's, behind a Reframer) are looked up once.
pub struct Lpm {
    table: LpmTable,
    gates: usize,
    /// Per run of packets to one destination in a batch: the address,
    /// whether it parsed, its gate (a run is looked up once).
    addrs: [u32; MAX_BURST],
    valid: [bool; MAX_BURST],
    found: [Option<u16>; MAX_BURST],
    /// Per packet, its run.
    run_of: [u16; MAX_BURST],
}

impl Lpm {
    /// An LPM over `routes` (network, length, gate).
    pub fn new(routes: &[(u32, u8, u16)]) -> Result<Self, String> {
        let gates = crate::nf_config::gate_count(routes.iter().map(|r| r.2), None);
        if gates == 0 {
            return Err("an LPM needs at least one route".into());
        }
        Ok(Self { table: LpmTable::new(routes)?, gates, addrs: [0; MAX_BURST], valid: [false; MAX_BURST], found: [None; MAX_BURST], run_of: [0; MAX_BURST] })
    }
}

impl NetworkFunction for Lpm {
    fn outgates(&self) -> usize {
        self.gates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let ids = input.as_slice();
        let Self { table, addrs, valid, found, run_of, .. } = self;
        let mut runs = 0;
        for (&id, run) in ids.iter().zip(run_of.iter_mut()) {
            let ip = ipv4_of(ctx.pool.data(id));
            let (ok, addr) = (ip.is_ok(), ip.map_or(0, |h| h.dst()));
            if runs == 0 || addrs[runs - 1] != addr || valid[runs - 1] != ok {
                (addrs[runs], valid[runs]) = (addr, ok);
                runs += 1;
            }
            *run = (runs - 1) as u16;
        }
        table.lookup_bulk(&addrs[..runs], &mut found[..runs]);
        for (&id, &run) in ids.iter().zip(run_of.iter()) {
            match found[run as usize].filter(|_| valid[run as usize]) {
                Some(gate) => out.push(gate as usize, id),
                None => ctx.drop_packet(id),
            }
        }
        input.clear();
    }
}

/// `lpm`: IPv4 longest-prefix match on the destination; misses go to the drop gate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LpmSpec {
    /// ("a.b.c.d/len", gate) routes.
    pub routes: Vec<(String, u16)>,
}

impl crate::NfConfig for LpmSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        let routes = self.routes.iter().map(|(p, g)| parse_prefix(p).map(|(net, len)| (net, len, *g))).collect::<Result<Vec<_>, String>>()?;
        Ok(Box::new(Lpm::new(&routes)?))
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
        vec![Self { routes: vec![("10.0.0.0/8".into(), 0), ("10.1.0.0/16".into(), 1), ("0.0.0.0/0".into(), 2)] }]
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
