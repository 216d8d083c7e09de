//! The IPv6 longest-prefix-match table of `lpm`: a multibit trie with a
//! 24-bit first stride and 8-bit strides below (as DPDK's rte_lpm6).
//!
//! The first level, indexed by the top 24 address bits, holds either a
//! next hop or the index of a 256-entry group for the next 8 bits, and so
//! on down to bit 128: a /24 or shorter prefix costs one memory access, a
//! /32 two, a /48 four. Prefixes are expanded into every entry they cover
//! at the level where they end, so a lookup never backtracks.

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

/// Entries of the first level.
const FIRST_LEN: usize = 1 << FIRST_BITS;

/// A multibit trie from IPv6 prefixes to gates. Both levels are arrays of
/// a fixed length that a byte-built index cannot leave, so a lookup's
/// loads take no bounds checks.
pub struct Lpm6Table {
    first: Box<[u32; FIRST_LEN]>,
    groups: Vec<[u32; GROUP_LEN]>,
}

impl Lpm6Table {
    /// Builds the table from (network, length, gate) routes; duplicates: last wins.
    pub fn new(routes: &[(u128, u8, u16)]) -> Result<Self, String> {
        if let Some(r) = routes.iter().find(|r| r.1 > 128 || r.2 > super::lpm::MAX_GATE) {
            return Err(format!("IPv6 route {r:?} has a prefix length over 128 or a gate over {}", super::lpm::MAX_GATE));
        }
        let mut sorted = routes.to_vec();
        // Shortest first: a range filled later never covers a group, since
        // a group comes from a prefix longer than the range's level.
        sorted.sort_by_key(|r| r.1);
        let first = vec![MISS; FIRST_LEN].into_boxed_slice().try_into().expect("FIRST_LEN entries");
        let mut t = Self { first, groups: Vec::new() };
        for (net, len, gate) in sorted {
            t.insert(net & sluice_core::wire::ipv6::mask(len), len, gate as u32 + 1)?;
        }
        Ok(t)
    }

    /// Bytes the table takes.
    pub fn bytes(&self) -> usize {
        (FIRST_LEN + self.groups.len() * GROUP_LEN) * std::mem::size_of::<u32>()
    }

    fn insert(&mut self, net: u128, len: u8, value: u32) -> Result<(), String> {
        let len = len as u32;
        let top = (net >> (128 - FIRST_BITS)) as usize;
        if len <= FIRST_BITS {
            self.first[top..top + (1 << (FIRST_BITS - len))].fill(value);
            return Ok(());
        }
        let mut group = self.group_at(Slot::First(top))?;
        let mut end = FIRST_BITS + GROUP_BITS;
        loop {
            let at = (net >> (128 - end)) as usize & (GROUP_LEN - 1);
            if len <= end {
                self.groups[group][at..at + (1 << (end - len))].fill(value);
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
        Ok(group)
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
            entry = self.groups[(entry & !GROUP) as usize][byte as usize];
        }
        (entry != MISS).then(|| (entry - 1) as u16)
    }

    /// The first-level entry of `addr` (its bytes, network order).
    #[inline]
    fn first_entry(&self, addr: &[u8; 16]) -> u32 {
        self.first[(addr[0] as usize) << 16 | (addr[1] as usize) << 8 | addr[2] as usize]
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
    let allocations: Vec<u128> = (0..(n / 8).max(1)).map(|_| in_2000_3(&mut rng) & sluice_core::wire::ipv6::mask(32)).collect();
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
            (base & sluice_core::wire::ipv6::mask(len), len, (i % 16) as u16)
        })
        .collect()
}

/// Where a group pointer is kept: a first-level entry, or an entry of a group.
#[derive(Clone, Copy)]
enum Slot {
    First(usize),
    Group(usize, usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sluice_core::wire::ipv6::mask;

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
