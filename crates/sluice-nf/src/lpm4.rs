//! The IPv4 longest-prefix-match table of `lpm`: DIR-24-8 (Gupta, Lin &
//! McKeown 1998; DPDK's rte_lpm), changed in place while workers look up.
//!
//! A 2^24-entry first-level table indexed by the top 24 address bits holds
//! either a next hop or, for /24s with longer prefixes inside, the index of
//! a 256-entry second-level group: one memory access for prefixes up to
//! /24, two beyond.
//!
//! Live updates ([`LiveRoutes`]), as rte_lpm makes them: entries are
//! atomics, which x86 loads and stores as plain 16-bit moves; one writer at
//! a time (a mutex, on the control side) adds and deletes routes by
//! rewriting the entries they cover, each entry whole, so a lookup finds
//! the route before a change or after it. A /24 that gains a longer prefix
//! gets a group filled before the first level points to it (release, and
//! the lookup's acquire load), from room kept at build; groups are never
//! freed while the table lives, so no lookup can meet a reused one. The
//! writer keeps, beside the table, each entry's prefix length and the
//! rules, which find the route a deleted one uncovers.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use sluice_core::wire::ipv4::mask;

use crate::route_rules::{RouteRules, MAX_GATE};

/// Marks a first-level entry that points to a second-level group.
const GROUP: u16 = 0x8000;
/// Entry value of "no route".
const MISS: u16 = 0;
// Entries store gate + 1 below `GROUP`.
const _: () = assert!(MAX_GATE == GROUP - 2);
/// Most groups a table may hold.
const MAX_GROUPS: usize = GROUP as usize - 1;
/// Groups kept free at build for live updates to give /24s that gain a longer prefix.
const SPARE_GROUPS: usize = 1024;

/// A DIR-24-8 table from prefixes to gates.
pub struct LpmTable {
    tbl24: Box<[AtomicU16]>,
    tbl8: Box<[AtomicU16]>,
}

/// What the writer keeps beside the table: per entry, the length of the
/// prefix it holds + 1 (0: none), and how many groups are taken.
struct Depths {
    depth24: Vec<u8>,
    depth8: Vec<u8>,
    groups: usize,
}

/// Builds the entries of `routes` (sorted by length, so longer prefixes
/// overwrite shorter ones; among equal ones the last wins), with room for
/// `spare` groups more than it takes; with `depths`, also each entry's
/// prefix length, for the writer.
fn build(routes: &[(u32, u8, u16)], spare: usize, depths: bool) -> Result<(LpmTable, Option<Depths>), String> {
    if let Some(r) = routes.iter().find(|r| r.1 > 32 || r.2 > MAX_GATE) {
        return Err(format!("route {:?} has a prefix length over 32 or a gate over {MAX_GATE}", r));
    }
    let mut sorted = routes.to_vec();
    sorted.sort_by_key(|r| r.1);
    // Zeroed allocations: the pages no route touches are never touched.
    let mut tbl24 = vec![MISS; 1 << 24];
    let mut depth24 = if depths { vec![0u8; 1 << 24] } else { Vec::new() };
    let (mut tbl8, mut depth8): (Vec<u16>, Vec<u8>) = (Vec::new(), Vec::new());
    for (net, len, gate) in sorted {
        let net = net & mask(len);
        let first = (net >> 8) as usize;
        if len <= 24 {
            let range = first..first + (1usize << (24 - len));
            tbl24[range.clone()].fill(gate + 1);
            if depths {
                depth24[range].fill(len + 1);
            }
            continue;
        }
        if tbl24[first] & GROUP == 0 {
            let group = tbl8.len() / 256;
            if group >= MAX_GROUPS {
                return Err(format!("more than {MAX_GROUPS} /24s hold prefixes longer than /24"));
            }
            tbl8.extend(std::iter::repeat_n(tbl24[first], 256));
            if depths {
                depth8.extend(std::iter::repeat_n(depth24[first], 256));
            }
            tbl24[first] = GROUP | group as u16;
        }
        let at = group_base(tbl24[first]) + (net & 0xff) as usize;
        let range = at..at + (1usize << (32 - len));
        tbl8[range.clone()].fill(gate + 1);
        if depths {
            depth8[range].fill(len + 1);
        }
    }
    let groups = tbl8.len() / 256;
    let capacity = (groups + spare).min(MAX_GROUPS);
    tbl8.resize(capacity * 256, MISS);
    let depths = depths.then(|| {
        depth8.resize(capacity * 256, 0);
        Depths { depth24, depth8, groups }
    });
    Ok((LpmTable { tbl24: atomics(tbl24), tbl8: atomics(tbl8) }, depths))
}

/// `v` as atomics, in place: no copy, so the pages of a zeroed allocation
/// that nothing wrote stay untouched (a sparse table costs what it holds).
fn atomics(v: Vec<u16>) -> Box<[AtomicU16]> {
    let slice = Box::into_raw(v.into_boxed_slice());
    // SAFETY: `AtomicU16` has the size and alignment of `u16` (as its
    // documentation guarantees), and the allocation passes whole from one box to the other.
    unsafe { Box::from_raw(slice as *mut [AtomicU16]) }
}

fn group_base(entry: u16) -> usize {
    ((entry & !GROUP) as usize) << 8
}

impl LpmTable {
    /// Builds the table from (network, length, gate) routes; duplicates: last wins.
    pub fn new(routes: &[(u32, u8, u16)]) -> Result<Self, String> {
        Ok(build(routes, SPARE_GROUPS, false)?.0)
    }

    #[inline]
    fn resolve(&self, e: u16, addr: u32) -> Option<u16> {
        let e = if e & GROUP != 0 { self.tbl8[group_base(e) | (addr & 0xff) as usize].load(Ordering::Relaxed) } else { e };
        (e != MISS).then(|| e - 1)
    }

    /// The gate of `addr`'s longest matching prefix.
    #[inline]
    pub fn lookup(&self, addr: u32) -> Option<u16> {
        self.resolve(self.tbl24[(addr >> 8) as usize].load(Ordering::Acquire), addr)
    }

    /// Looks up every address of `addrs` into `gates` (same length), four
    /// at a time: the four first-level loads are independent, so their cache
    /// misses overlap.
    #[inline]
    pub fn lookup_bulk(&self, addrs: &[u32], gates: &mut [Option<u16>]) {
        let (quads, rest) = addrs.split_at(addrs.len() / 4 * 4);
        for (a, g) in quads.chunks_exact(4).zip(gates.chunks_exact_mut(4)) {
            let e = [0, 1, 2, 3].map(|i| self.tbl24[(a[i] >> 8) as usize].load(Ordering::Acquire));
            for i in 0..4 {
                g[i] = self.resolve(e[i], a[i]);
            }
        }
        for (g, &a) in gates[quads.len()..].iter_mut().zip(rest) {
            *g = self.lookup(a);
        }
    }
}

/// The writer's side of a table that changes while it is looked up: the
/// control plane adds and deletes routes through it (see the module's
/// documentation).
pub struct LiveRoutes {
    table: Arc<LpmTable>,
    writer: Mutex<Writer>,
}

struct Writer {
    rules: RouteRules<u32>,
    /// Per entry, the length + 1 of the prefix it holds; built at the first change.
    depths: Option<Depths>,
    /// The routes the table was built from, until then.
    built_from: Vec<(u32, u8, u16)>,
}

impl LiveRoutes {
    /// The table of `routes` for an LPM of `gates` gates, with its writer.
    pub fn new(routes: &[(u32, u8, u16)], gates: usize) -> Result<Self, String> {
        let table = LpmTable::new(routes)?;
        let writer = Writer { rules: RouteRules::new(routes, gates), depths: None, built_from: routes.to_vec() };
        Ok(Self { table: Arc::new(table), writer: Mutex::new(writer) })
    }

    /// The table lookups read.
    pub fn table(&self) -> &Arc<LpmTable> {
        &self.table
    }

    /// Deletes the routes of `delete` (each must exist), then adds those of
    /// `add` (replacing a route of the same prefix), in place. Everything
    /// is checked first: an error names the route, and nothing changed.
    pub fn apply(&self, add: &[(u32, u8, u16)], delete: &[(u32, u8)]) -> Result<(), String> {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        w.rules.check(add, delete)?;
        if w.depths.is_none() {
            w.depths = build(&w.built_from, SPARE_GROUPS, true)?.1;
            w.built_from = Vec::new();
        }
        let Writer { rules, depths, .. } = &mut *w;
        let depths = depths.as_mut().expect("built above");
        let mut new_groups: Vec<usize> = add.iter().filter(|r| r.1 > 24).map(|r| (r.0 >> 8) as usize).filter(|&i| self.table.tbl24[i].load(Ordering::Relaxed) & GROUP == 0).collect();
        new_groups.sort_unstable();
        new_groups.dedup();
        if depths.groups + new_groups.len() > self.table.tbl8.len() / 256 {
            return Err(format!("no room for {} more groups of longer-than-/24 prefixes: rebuild the table", new_groups.len()));
        }
        for &(net, len) in delete {
            let (net, under) = rules.remove(net, len);
            let under = under.map_or((MISS, 0), |(gate, l)| (gate + 1, l + 1));
            self.rewrite(depths, net, len, |d| d == len + 1, under);
        }
        for &(net, len, gate) in add {
            let net = rules.insert(net, len, gate);
            if len > 24 {
                self.split(depths, (net >> 8) as usize);
            }
            self.rewrite(depths, net, len, |d| d <= len + 1, (gate + 1, len + 1));
        }
        Ok(())
    }

    /// Gives first-level entry `i` a group holding what it holds, if it has none.
    fn split(&self, depths: &mut Depths, i: usize) {
        let e = self.table.tbl24[i].load(Ordering::Relaxed);
        if e & GROUP != 0 {
            return;
        }
        let base = depths.groups * 256;
        for j in base..base + 256 {
            self.table.tbl8[j].store(e, Ordering::Relaxed);
        }
        depths.depth8[base..base + 256].fill(depths.depth24[i]);
        // The group is whole before the first level points to it.
        self.table.tbl24[i].store(GROUP | depths.groups as u16, Ordering::Release);
        depths.groups += 1;
    }

    /// Sets the entries of prefix `net`/`len` whose prefix length passes
    /// `takes` to `(entry, depth)`.
    fn rewrite(&self, depths: &mut Depths, net: u32, len: u8, takes: impl Fn(u8) -> bool, (entry, depth): (u16, u8)) {
        let t = &self.table;
        let mut set8 = |j: usize| {
            if takes(depths.depth8[j]) {
                t.tbl8[j].store(entry, Ordering::Relaxed);
                depths.depth8[j] = depth;
            }
        };
        let first = (net >> 8) as usize;
        if len > 24 {
            let base = group_base(t.tbl24[first].load(Ordering::Relaxed)) + (net & 0xff) as usize;
            (base..base + (1usize << (32 - len))).for_each(&mut set8);
            return;
        }
        for i in first..first + (1usize << (24 - len)) {
            let e = t.tbl24[i].load(Ordering::Relaxed);
            if e & GROUP != 0 {
                (group_base(e)..group_base(e) + 256).for_each(&mut set8);
            } else if takes(depths.depth24[i]) {
                t.tbl24[i].store(entry, Ordering::Release);
                depths.depth24[i] = depth;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route_rules::pick_route;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn naive(rules: &HashMap<(u32, u8), u16>, addr: u32) -> Option<u16> {
        rules.iter().filter(|(&(net, len), _)| addr & mask(len) == net).max_by_key(|(&(_, len), _)| len).map(|(_, &g)| g)
    }

    /// Addresses in 10.0.0.0/16 and 10.1.0.0/16, where the routes are.
    fn addr() -> impl Strategy<Value = u32> {
        (0u32..2, 0u32..65536).prop_map(|(b, low)| (10 << 24) | (b << 16) | low)
    }

    fn route() -> impl Strategy<Value = (u32, u8, u16)> {
        (addr(), prop_oneof![Just(8u8), 14u8..=18, 22u8..=26, 29u8..=32], 0u16..4)
    }

    proptest! {
        // Each case builds a 16 M-entry table: a few dozen cases, not the default 256.
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn live_changes_equal_a_table_built_from_the_routes_that_remain(
            start in proptest::collection::vec(route(), 0..20),
            steps in proptest::collection::vec((any::<bool>(), route(), any::<prop::sample::Index>()), 1..40),
            probes in proptest::collection::vec(addr(), 64),
        ) {
            let live = LiveRoutes::new(&start, 4).unwrap();
            let mut rules: HashMap<(u32, u8), u16> = start.iter().map(|&(n, l, g)| ((n & mask(l), l), g)).collect();
            for (delete, (net, len, gate), pick) in steps {
                if delete && !rules.is_empty() {
                    let key = pick_route(&rules, &pick);
                    live.apply(&[], &[key]).unwrap();
                    rules.remove(&key);
                } else {
                    live.apply(&[(net, len, gate)], &[]).unwrap();
                    rules.insert((net & mask(len), len), gate);
                }
                for &a in &probes {
                    prop_assert_eq!(live.table().lookup(a), naive(&rules, a), "address {:#x}", a);
                }
            }
        }
    }

    #[test]
    fn a_bad_change_names_its_route_and_changes_nothing() {
        let live = LiveRoutes::new(&[(10 << 24, 8, 0)], 2).unwrap();
        assert_eq!(live.apply(&[(11 << 24, 8, 1)], &[(12 << 24, 8)]).unwrap_err(), "no route 12.0.0.0/8 to delete");
        assert_eq!(live.apply(&[(11 << 24, 8, 2)], &[]).unwrap_err(), "route 11.0.0.0/8 to gate 2: the length must be ≤ 32 and the gate < 2");
        assert_eq!(live.apply(&[], &[(10 << 24, 8), (10 << 24, 8)]).unwrap_err(), "no route 10.0.0.0/8 to delete");
        assert_eq!(live.table().lookup(11 << 24), None);
        assert_eq!(live.table().lookup(10 << 24), Some(0));
    }

    #[test]
    fn groups_run_out_with_an_error_that_asks_for_a_rebuild() {
        let live = LiveRoutes::new(&[], 1).unwrap();
        let many: Vec<(u32, u8, u16)> = (0..SPARE_GROUPS as u32 + 1).map(|i| ((i << 8) | 1, 32, 0)).collect();
        assert!(live.apply(&many, &[]).unwrap_err().contains("rebuild"));
        assert!(live.apply(&many[..SPARE_GROUPS], &[]).is_ok());
    }
}
