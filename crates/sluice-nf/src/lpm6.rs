//! The IPv6 longest-prefix-match table of `lpm`: a multibit trie with a
//! 24-bit first stride and 8-bit strides below (as DPDK's rte_lpm6),
//! changed in place while workers look up.
//!
//! The first level, indexed by the top 24 address bits, holds either a
//! next hop or the index of a 256-entry group for the next 8 bits, and so
//! on down to bit 128: a /24 or shorter prefix costs one memory access, a
//! /32 two, a /48 four. Prefixes are expanded into every entry they cover
//! at the level where they end, so a lookup never backtracks.
//!
//! Live updates ([`LiveRoutes6`]) as [`crate::lpm4`] makes them for IPv4:
//! entries are atomics; one writer at a time rewrites the entries a route
//! covers, each whole, so a lookup finds the route before a change or
//! after it; a prefix that needs a group a level down gets one filled
//! before the level above points to it (release; the lookup's acquire),
//! from room kept at build, never freed while the table lives. The writer
//! keeps each entry's prefix length and the rules, which find the route a
//! deleted one uncovers.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use sluice_core::wire::ipv6::mask;

use crate::route_rules::{RouteRules, MAX_GATE};

/// Marks an entry that points to a group.
const GROUP: u32 = 1 << 31;
/// Entry value of "no route".
const MISS: u32 = 0;
/// Address bits the first level takes.
const FIRST_BITS: u32 = 24;
/// Address bits each group takes.
const GROUP_BITS: u32 = 8;
/// Entries of a group.
const GROUP_LEN: usize = 1 << GROUP_BITS;
/// Most groups a table may hold (1 KiB each: 1 GiB in all).
pub const MAX_GROUPS: usize = 1 << 20;
/// Groups kept free at build for live updates (4 MiB).
const SPARE_GROUPS: usize = 4096;

/// Entries of the first level.
const FIRST_LEN: usize = 1 << FIRST_BITS;

/// A multibit trie from IPv6 prefixes to gates. The first level is an
/// array of a fixed length that a byte-built index cannot leave, and so
/// is each group, so a lookup's loads take no bounds checks but the
/// group's.
pub struct Lpm6Table {
    first: Box<[AtomicU32; FIRST_LEN]>,
    groups: Box<[[AtomicU32; GROUP_LEN]]>,
}

/// Where a group pointer is kept: a first-level entry, or an entry of a group.
#[derive(Clone, Copy)]
enum Slot {
    First(usize),
    Group(usize, usize),
}

/// Per entry the length + 1 of the prefix it holds (0: none), as the writer keeps it.
struct Depths {
    first: Vec<u8>,
    groups: Vec<[u8; GROUP_LEN]>,
}

/// A table being built, plain entries (and their depths, for a writer).
struct Builder {
    first: Vec<u32>,
    groups: Vec<[u32; GROUP_LEN]>,
    depths: Option<Depths>,
}

/// The entry index at the level that ends at bit `end` of `net`.
fn index(net: u128, end: u32) -> usize {
    (net >> (128 - end)) as usize & (if end == FIRST_BITS { FIRST_LEN - 1 } else { GROUP_LEN - 1 })
}

impl Builder {
    fn new(depths: bool) -> Self {
        // A zeroed allocation: the pages no route touches are never touched.
        let depths = depths.then(|| Depths { first: vec![0; FIRST_LEN], groups: Vec::new() });
        Self { first: vec![MISS; FIRST_LEN], groups: Vec::new(), depths }
    }

    /// Inserts a route (masked), over shorter ones inserted before.
    fn insert(&mut self, net: u128, len: u8, value: u32) -> Result<(), String> {
        let depth = len + 1;
        let len = len as u32;
        let top = index(net, FIRST_BITS);
        if len <= FIRST_BITS {
            let range = top..top + (1 << (FIRST_BITS - len));
            self.first[range.clone()].fill(value);
            if let Some(d) = &mut self.depths {
                d.first[range].fill(depth);
            }
            return Ok(());
        }
        let mut group = self.group_at(Slot::First(top))?;
        let mut end = FIRST_BITS + GROUP_BITS;
        loop {
            let at = index(net, end);
            if len <= end {
                let range = at..at + (1 << (end - len));
                self.groups[group][range.clone()].fill(value);
                if let Some(d) = &mut self.depths {
                    d.groups[group][range].fill(depth);
                }
                return Ok(());
            }
            group = self.group_at(Slot::Group(group, at))?;
            end += GROUP_BITS;
        }
    }

    /// The group `slot` points to, made (every entry the slot's value) if it points to none.
    fn group_at(&mut self, slot: Slot) -> Result<usize, String> {
        let group = self.groups.len();
        let entry = match slot {
            Slot::First(i) => &mut self.first[i],
            Slot::Group(g, at) => &mut self.groups[g][at],
        };
        if *entry & GROUP != 0 {
            return Ok((*entry & !GROUP) as usize);
        }
        if group >= MAX_GROUPS {
            return Err(format!("the IPv6 routes need more than {MAX_GROUPS} groups of the trie"));
        }
        let filled = std::mem::replace(entry, GROUP | group as u32);
        self.groups.push([filled; GROUP_LEN]);
        if let Some(d) = &mut self.depths {
            let depth = match slot {
                Slot::First(i) => d.first[i],
                Slot::Group(g, at) => d.groups[g][at],
            };
            d.groups.push([depth; GROUP_LEN]);
        }
        Ok(group)
    }

    /// The table, with room for `spare` groups more than it takes, and the depths if kept.
    fn finish(mut self, spare: usize) -> (Lpm6Table, Option<Depths>, usize) {
        let used = self.groups.len();
        let capacity = (used + spare).min(MAX_GROUPS);
        self.groups.resize(capacity, [MISS; GROUP_LEN]);
        if let Some(d) = &mut self.depths {
            d.groups.resize(capacity, [0; GROUP_LEN]);
        }
        let first = Box::into_raw(self.first.into_boxed_slice());
        let groups = Box::into_raw(self.groups.into_boxed_slice());
        // SAFETY: `AtomicU32` has the size and alignment of `u32` (as its
        // documentation guarantees); the first level has FIRST_LEN entries;
        // each allocation passes whole from one box to the other.
        let table = unsafe { Lpm6Table { first: Box::from_raw(first as *mut [AtomicU32; FIRST_LEN]), groups: Box::from_raw(groups as *mut [[AtomicU32; GROUP_LEN]]) } };
        (table, self.depths, used)
    }
}

/// The table of `routes` (duplicates: last wins), with room for `spare`
/// groups more; with `depths`, also each entry's prefix length, for the
/// writer; and the groups it takes.
fn build(routes: &[(u128, u8, u16)], spare: usize, depths: bool) -> Result<(Lpm6Table, Option<Depths>, usize), String> {
    if let Some(r) = routes.iter().find(|r| r.1 > 128 || r.2 > MAX_GATE) {
        return Err(format!("IPv6 route {r:?} has a prefix length over 128 or a gate over {MAX_GATE}"));
    }
    let mut sorted = routes.to_vec();
    // Shortest first: a range filled later never covers a group, since
    // a group comes from a prefix longer than the range's level.
    sorted.sort_by_key(|r| r.1);
    let mut b = Builder::new(depths);
    for (net, len, gate) in sorted {
        b.insert(net & mask(len), len, gate as u32 + 1)?;
    }
    Ok(b.finish(spare))
}

impl Lpm6Table {
    /// Builds the table from (network, length, gate) routes; duplicates: last wins.
    pub fn new(routes: &[(u128, u8, u16)]) -> Result<Self, String> {
        Ok(build(routes, SPARE_GROUPS, false)?.0)
    }

    /// Bytes the table takes.
    pub fn bytes(&self) -> usize {
        (FIRST_LEN + self.groups.len() * GROUP_LEN) * std::mem::size_of::<u32>()
    }

    /// The gate `addr` (its bytes, network order) ends at, from its
    /// first-level `entry` down a byte a level: a byte's index is cheaper to
    /// take than a 128-bit shift.
    #[inline]
    fn descend(&self, mut entry: u32, addr: &[u8; 16]) -> Option<u16> {
        for &byte in &addr[(FIRST_BITS / 8) as usize..] {
            if entry & GROUP == 0 {
                break;
            }
            entry = self.groups[(entry & !GROUP) as usize][byte as usize].load(Ordering::Acquire);
        }
        (entry != MISS).then(|| (entry - 1) as u16)
    }

    /// The first-level entry of `addr` (its bytes, network order).
    #[inline]
    fn first_entry(&self, addr: &[u8; 16]) -> u32 {
        self.first[(addr[0] as usize) << 16 | (addr[1] as usize) << 8 | addr[2] as usize].load(Ordering::Acquire)
    }

    /// The gate of `addr`'s longest matching prefix.
    #[inline]
    pub fn lookup(&self, addr: u128) -> Option<u16> {
        let bytes = addr.to_be_bytes();
        self.descend(self.first_entry(&bytes), &bytes)
    }

    /// Looks up every address of `addrs` into `gates` (same length), four
    /// at a time: the four first-level loads are independent, so their
    /// cache misses overlap.
    #[inline]
    pub fn lookup_bulk(&self, addrs: &[u128], gates: &mut [Option<u16>]) {
        let (quads, rest) = addrs.split_at(addrs.len() / 4 * 4);
        for (a, g) in quads.chunks_exact(4).zip(gates.chunks_exact_mut(4)) {
            let bytes = [0, 1, 2, 3].map(|i| a[i].to_be_bytes());
            let e = [0, 1, 2, 3].map(|i| self.first_entry(&bytes[i]));
            for i in 0..4 {
                g[i] = self.descend(e[i], &bytes[i]);
            }
        }
        for (g, &a) in gates[quads.len()..].iter_mut().zip(rest) {
            *g = self.lookup(a);
        }
    }
}

/// The writer's side of an IPv6 table that changes while it is looked up
/// (see the module's documentation).
pub struct LiveRoutes6 {
    table: Arc<Lpm6Table>,
    writer: Mutex<Writer>,
}

struct Writer {
    rules: RouteRules<u128>,
    /// Per entry, the length + 1 of the prefix it holds; built at the first change.
    depths: Option<Depths>,
    /// Groups taken.
    groups: usize,
    /// The routes the table was built from, until then.
    built_from: Vec<(u128, u8, u16)>,
}

impl LiveRoutes6 {
    /// The table of `routes` for an LPM of `gates` gates, with its writer.
    pub fn new(routes: &[(u128, u8, u16)], gates: usize) -> Result<Self, String> {
        let (table, _, groups) = build(routes, SPARE_GROUPS, false)?;
        let writer = Writer { rules: RouteRules::new(routes, gates), depths: None, groups, built_from: routes.to_vec() };
        Ok(Self { table: Arc::new(table), writer: Mutex::new(writer) })
    }

    /// The table lookups read.
    pub fn table(&self) -> &Arc<Lpm6Table> {
        &self.table
    }

    /// Deletes the routes of `delete` (each must exist), then adds those of
    /// `add` (replacing a route of the same prefix), in place. Everything
    /// is checked first: an error names the route, and nothing changed.
    pub fn apply(&self, add: &[(u128, u8, u16)], delete: &[(u128, u8)]) -> Result<(), String> {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        w.rules.check(add, delete)?;
        // Each added route takes at most a group a level below the first.
        let most: usize = add.iter().map(|r| (r.1 as u32).saturating_sub(FIRST_BITS).div_ceil(GROUP_BITS) as usize).sum();
        if w.groups + most > self.table.groups.len() {
            return Err(format!("no room for up to {most} more groups of the trie: rebuild the table"));
        }
        if w.depths.is_none() {
            w.depths = build(&w.built_from, SPARE_GROUPS, true)?.1;
            w.built_from = Vec::new();
        }
        let Writer { rules, depths, groups, .. } = &mut *w;
        let depths = depths.as_mut().expect("built above");
        for &(net, len) in delete {
            let (net, under) = rules.remove(net, len);
            let under = under.map_or((MISS, 0), |(gate, l)| (u32::from(gate) + 1, l + 1));
            self.rewrite(depths, net, len, |d| d == len + 1, under);
        }
        for &(net, len, gate) in add {
            let net = rules.insert(net, len, gate);
            self.split_down(depths, groups, net, len);
            self.rewrite(depths, net, len, |d| d <= len + 1, (u32::from(gate) + 1, len + 1));
        }
        Ok(())
    }

    /// Gives `net`/`len` a group at every level above the one where it ends.
    fn split_down(&self, depths: &mut Depths, groups: &mut usize, net: u128, len: u8) {
        let len = len as u32;
        if len <= FIRST_BITS {
            return;
        }
        let mut group = self.split(depths, groups, Slot::First(index(net, FIRST_BITS)));
        let mut end = FIRST_BITS + GROUP_BITS;
        while len > end {
            group = self.split(depths, groups, Slot::Group(group, index(net, end)));
            end += GROUP_BITS;
        }
    }

    /// The group `slot` points to; one holding what the slot holds, made
    /// whole before the slot points to it, if it points to none.
    fn split(&self, depths: &mut Depths, groups: &mut usize, slot: Slot) -> usize {
        let t = &self.table;
        let (entry, depth) = match slot {
            Slot::First(i) => (&t.first[i], depths.first[i]),
            Slot::Group(g, at) => (&t.groups[g][at], depths.groups[g][at]),
        };
        let e = entry.load(Ordering::Relaxed);
        if e & GROUP != 0 {
            return (e & !GROUP) as usize;
        }
        let group = *groups;
        for x in &t.groups[group] {
            x.store(e, Ordering::Relaxed);
        }
        depths.groups[group] = [depth; GROUP_LEN];
        entry.store(GROUP | group as u32, Ordering::Release);
        *groups += 1;
        group
    }

    /// Sets the entries of prefix `net`/`len` (its groups found by
    /// `split_down`) whose prefix length passes `takes` to `(entry, depth)`,
    /// down through the groups they point to.
    fn rewrite(&self, depths: &mut Depths, net: u128, len: u8, takes: impl Fn(u8) -> bool + Copy, value: (u32, u8)) {
        let t = &self.table;
        let len32 = len as u32;
        if len32 <= FIRST_BITS {
            let top = index(net, FIRST_BITS);
            for i in top..top + (1 << (FIRST_BITS - len32)) {
                let e = t.first[i].load(Ordering::Relaxed);
                if e & GROUP != 0 {
                    self.rewrite_group(depths, (e & !GROUP) as usize, 0..GROUP_LEN, takes, value);
                } else if takes(depths.first[i]) {
                    t.first[i].store(value.0, Ordering::Release);
                    depths.first[i] = value.1;
                }
            }
            return;
        }
        let mut group = (t.first[index(net, FIRST_BITS)].load(Ordering::Relaxed) & !GROUP) as usize;
        let mut end = FIRST_BITS + GROUP_BITS;
        while len32 > end {
            group = (t.groups[group][index(net, end)].load(Ordering::Relaxed) & !GROUP) as usize;
            end += GROUP_BITS;
        }
        let at = index(net, end);
        self.rewrite_group(depths, group, at..at + (1 << (end - len32)), takes, value);
    }

    /// `rewrite` on entries `range` of `group`, and every group below them.
    fn rewrite_group(&self, depths: &mut Depths, group: usize, range: std::ops::Range<usize>, takes: impl Fn(u8) -> bool + Copy, value: (u32, u8)) {
        for j in range {
            let entry = &self.table.groups[group][j];
            let e = entry.load(Ordering::Relaxed);
            if e & GROUP != 0 {
                self.rewrite_group(depths, (e & !GROUP) as usize, 0..GROUP_LEN, takes, value);
            } else if takes(depths.groups[group][j]) {
                entry.store(value.0, Ordering::Release);
                depths.groups[group][j] = value.1;
            }
        }
    }
}

/// Prefix lengths of [`sample_routes6`] and their shares (‰), shaped like
/// the public IPv6 BGP table's: about half /48s, an eighth /32s, the rest
/// spread from /29 to /47.
const LENGTH_SHARES: [(u8, u32); 12] = [(48, 480), (32, 130), (44, 90), (40, 65), (36, 40), (29, 30), (47, 30), (46, 30), (45, 15), (42, 15), (34, 40), (38, 35)];

/// `n` IPv6 routes drawn by `seed`, for benchmarks: prefixes of the
/// lengths of `LENGTH_SHARES` in 2000::/3, those longer than /32 inside
/// one of n/8 allocated /32s (as real /48s sit in their provider's /32),
/// to gates 0..16. With `n` ≥ 100 000 a lookup table's size and depth are
/// those of a full table.
pub fn sample_routes6(n: usize, seed: u64) -> Vec<(u128, u8, u16)> {
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(seed);
    let in_2000_3 = |rng: &mut SmallRng| (1u128 << 125) | (rng.gen::<u128>() >> 3);
    let allocations: Vec<u128> = (0..(n / 8).max(1)).map(|_| in_2000_3(&mut rng) & mask(32)).collect();
    let total: u32 = LENGTH_SHARES.iter().map(|s| s.1).sum();
    (0..n)
        .map(|i| {
            let mut pick = rng.gen_range(0..total);
            let mut len = 48;
            for &(l, share) in &LENGTH_SHARES {
                if pick < share {
                    len = l;
                    break;
                }
                pick -= share;
            }
            let base = if len > 32 { allocations[rng.gen_range(0..allocations.len())] | (rng.gen::<u128>() >> 32) } else { in_2000_3(&mut rng) };
            (base & mask(len), len, (i % 16) as u16)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route_rules::pick_route;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// The longest matching prefix by a scan of every route (last wins on ties).
    fn scan(routes: &[(u128, u8, u16)], addr: u128) -> Option<u16> {
        let mut best: Option<(u8, u16)> = None;
        for &(net, len, gate) in routes {
            if addr & mask(len) == net & mask(len) && best.is_none_or(|(l, _)| len >= l) {
                best = Some((len, gate));
            }
        }
        best.map(|(_, gate)| gate)
    }

    /// Routes that nest: prefixes of a few shared stems, so that long
    /// prefixes sit inside short ones at every level.
    fn routes() -> impl Strategy<Value = Vec<(u128, u8, u16)>> {
        let stems = proptest::collection::vec(any::<u128>(), 1..4);
        stems.prop_flat_map(|stems| {
            let n = stems.len();
            proptest::collection::vec((0..n, any::<u128>(), 0u8..=128, 0u16..8), 1..40).prop_map(move |picks| {
                picks.into_iter().map(|(s, noise, len, gate)| (stems[s] ^ (noise >> (len as u32 / 2 + 8).min(127)), len, gate)).collect()
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn lookups_agree_with_a_scan(routes in routes(), probes in proptest::collection::vec(any::<u128>(), 32)) {
            let table = Lpm6Table::new(&routes).unwrap();
            // Every route's own network and last address, and random ones.
            let mut addrs: Vec<u128> = routes.iter().flat_map(|&(net, len, _)| [net & mask(len), net | !mask(len)]).collect();
            addrs.extend(probes);
            let mut bulk = vec![None; addrs.len()];
            table.lookup_bulk(&addrs, &mut bulk);
            for (&a, &b) in addrs.iter().zip(&bulk) {
                prop_assert_eq!(table.lookup(a), scan(&routes, a), "{:x}", a);
                prop_assert_eq!(b, scan(&routes, a));
            }
        }
    }

    proptest! {
        // Each case builds a 16 M-entry first level (twice: the writer's depths): a few dozen cases.
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn live_changes_equal_a_scan_of_the_routes_that_remain(
            start in routes(),
            steps in proptest::collection::vec((any::<bool>(), routes(), any::<prop::sample::Index>()), 1..12),
            probes in proptest::collection::vec(any::<u128>(), 16),
        ) {
            let live = LiveRoutes6::new(&start, 8).unwrap();
            let mut rules: HashMap<(u128, u8), u16> = start.iter().map(|&(n, l, g)| ((n & mask(l), l), g)).collect();
            let mut addrs: Vec<u128> = probes;
            for (delete, more, pick) in steps {
                if delete && !rules.is_empty() {
                    let key = pick_route(&rules, &pick);
                    live.apply(&[], &[key]).unwrap();
                    rules.remove(&key);
                } else {
                    let (net, len, gate) = more[pick.index(more.len())];
                    live.apply(&[(net, len, gate)], &[]).unwrap();
                    rules.insert((net & mask(len), len), gate);
                }
                // Every route's first and last address (the deleted ones' too), and random ones.
                addrs.extend(start.iter().chain(&more).flat_map(|&(net, len, _)| [net & mask(len), net | !mask(len)]));
                let remaining: Vec<(u128, u8, u16)> = rules.iter().map(|(&(n, l), &g)| (n, l, g)).collect();
                for &a in &addrs {
                    prop_assert_eq!(live.table().lookup(a), scan(&remaining, a), "address {:x}", a);
                }
            }
        }
    }

    #[test]
    fn a_bad_change_names_its_route_and_changes_nothing() {
        let db8 = 0x2001_0db8u128 << 96;
        let live = LiveRoutes6::new(&[(db8, 32, 0)], 2).unwrap();
        assert_eq!(live.apply(&[(db8 | 1 << 64, 64, 1)], &[(db8 | 1 << 80, 48)]).unwrap_err(), "no route 2001:db8:1::/48 to delete");
        assert_eq!(live.apply(&[(db8, 48, 2)], &[]).unwrap_err(), "route 2001:db8::/48 to gate 2: the length must be ≤ 128 and the gate < 2");
        assert_eq!(live.apply(&[], &[(db8, 32), (db8, 32)]).unwrap_err(), "no route 2001:db8::/32 to delete");
        assert_eq!(live.table().lookup(db8 | 1 << 64), Some(0));
        live.apply(&[(db8 | 1 << 64, 64, 1)], &[]).unwrap();
        assert_eq!(live.table().lookup(db8 | 1 << 64), Some(1));
        live.apply(&[], &[(db8, 32)]).unwrap();
        assert_eq!((live.table().lookup(db8 | 1 << 64), live.table().lookup(db8)), (Some(1), None));
    }

    #[test]
    fn groups_run_out_with_an_error_that_asks_for_a_rebuild() {
        let live = LiveRoutes6::new(&[], 1).unwrap();
        // A /32 in a /24 of its own takes one group each.
        let many: Vec<(u128, u8, u16)> = (0..SPARE_GROUPS as u128 + 1).map(|i| (i << 104 | 1 << 96, 32, 0)).collect();
        assert!(live.apply(&many, &[]).unwrap_err().contains("rebuild"));
        assert!(live.apply(&many[..SPARE_GROUPS], &[]).is_ok());
        assert_eq!(live.table().lookup(5 << 104 | 1 << 96), Some(0));
    }

    #[test]
    fn a_default_route_a_32_and_a_128_nest() {
        let db8 = 0x2001_0db8u128 << 96;
        let table = Lpm6Table::new(&[(db8 | 1, 128, 2), (db8, 32, 1), (0, 0, 0)]).unwrap();
        assert_eq!(table.lookup(db8 | 1), Some(2));
        assert_eq!(table.lookup(db8 | 2), Some(1));
        assert_eq!(table.lookup(1), Some(0));
        assert_eq!(Lpm6Table::new(&[(db8, 32, 1)]).unwrap().lookup(1), None);
        assert!(Lpm6Table::new(&[(0, 129, 0)]).is_err());
    }
}
