//! An index from 5-tuples to the entries of a flow table that keeps its
//! keys itself (a Reframer's flows, a FlowStats record's owner): open
//! addressing with linear probing over 4-byte slots, sized once. A hash map
//! of (key, entry) pairs spreads 20-byte buckets over megabytes, and a
//! lookup with many flows then misses the cache twice, on the bucket and on
//! the entry; here the slots of 65 536 flows fill 512 KiB, and the key is
//! compared where the entry is, which the caller reads next anyway.

use crate::five_tuple::FiveTuple;

/// An empty slot.
const EMPTY: u32 = u32::MAX;

/// Slots holding entry numbers (< `u32::MAX`), at most half of them full.
pub(crate) struct FlowIndex {
    slots: Box<[u32]>,
    /// Bits of the slot number (slots = 2^bits).
    bits: u32,
}

impl FlowIndex {
    /// An index for up to `flows` entries.
    pub(crate) fn with_capacity(flows: usize) -> Self {
        let slots = (2 * flows).next_power_of_two().max(16);
        Self { slots: vec![EMPTY; slots].into(), bits: slots.trailing_zeros() }
    }

    /// The home slot of `key`: the top bits of a multiplicative hash of its
    /// fields packed into two words (an IPv6 address's upper half folded
    /// into its lower one first; an IPv4 one has none).
    #[inline]
    fn home(&self, key: &FiveTuple) -> usize {
        let fold = |addr: u128| (addr as u64) ^ ((addr >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let a = fold(key.src).rotate_left(32) ^ fold(key.dst);
        let b = (u64::from(key.sport) << 24) | (u64::from(key.dport) << 8) | u64::from(key.proto) | u64::from(key.v6) << 40;
        let h = (a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        (h >> (64 - self.bits)) as usize
    }

    /// Starts loading `key`'s home slot into the cache (a batch's lookups
    /// then wait for their misses together, not one after another).
    #[inline]
    pub(crate) fn prefetch(&self, key: &FiveTuple) {
        prefetch(&self.slots[self.home(key)]);
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The entry of `key` (`Ok`), or the slot to insert it at (`Err`);
    /// `key_of` gives an entry's key.
    #[inline]
    pub(crate) fn find(&self, key: &FiveTuple, key_of: impl Fn(u32) -> FiveTuple) -> Result<u32, usize> {
        let mut i = self.home(key);
        loop {
            match self.slots[i] {
                EMPTY => return Err(i),
                e if key_of(e) == *key => return Ok(e),
                _ => i = (i + 1) & self.mask(),
            }
        }
    }

    /// Puts `entry` in `slot` (as [`Self::find`] returned it).
    #[inline]
    pub(crate) fn insert_at(&mut self, slot: usize, entry: u32) {
        debug_assert_eq!(self.slots[slot], EMPTY);
        self.slots[slot] = entry;
    }

    /// Takes `key`'s entry out, moving later entries of its probe run back
    /// into the gap (no tombstones: lookups stay as short as the load allows).
    pub(crate) fn remove(&mut self, key: &FiveTuple, key_of: impl Fn(u32) -> FiveTuple) {
        let Ok(entry) = self.find(key, &key_of) else { return };
        let mask = self.mask();
        let mut gap = self.home(key);
        while self.slots[gap] != entry {
            gap = (gap + 1) & mask;
        }
        let mut i = gap;
        loop {
            i = (i + 1) & mask;
            let e = self.slots[i];
            if e == EMPTY {
                break;
            }
            // An entry may fill the gap if its home is not in (gap, i].
            let home = self.home(&key_of(e));
            if (i.wrapping_sub(home) & mask) >= (i.wrapping_sub(gap) & mask) {
                self.slots[gap] = e;
                gap = i;
            }
        }
        self.slots[gap] = EMPTY;
    }
}

/// Starts loading the cache line of `r`: a hint, which never faults.
#[inline]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and never faults; `r` is a valid reference besides.
    unsafe {
        std::arch::x86_64::_mm_prefetch((r as *const T).cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn key(n: u32) -> FiveTuple {
        FiveTuple::v4(n % 7, n / 7, 17, (n % 3) as u16, 53)
    }

    proptest! {
        /// Random inserts and removes find what a map finds.
        #[test]
        fn finds_what_a_map_finds(ops in proptest::collection::vec((0u32..64, any::<bool>()), 1..400)) {
            let mut index = FlowIndex::with_capacity(64);
            let mut keys: Vec<FiveTuple> = Vec::new();
            let mut map: HashMap<FiveTuple, u32> = HashMap::new();
            for (n, insert) in ops {
                let k = key(n);
                let found = index.find(&k, |e| keys[e as usize]);
                prop_assert_eq!(found.ok(), map.get(&k).copied());
                match (insert, found) {
                    (true, Err(slot)) => {
                        keys.push(k);
                        index.insert_at(slot, keys.len() as u32 - 1);
                        map.insert(k, keys.len() as u32 - 1);
                    }
                    (false, Ok(_)) => {
                        index.remove(&k, |e| keys[e as usize]);
                        map.remove(&k);
                    }
                    _ => {}
                }
            }
            for n in 0..64 {
                prop_assert_eq!(index.find(&key(n), |e| keys[e as usize]).ok(), map.get(&key(n)).copied());
            }
        }
    }
}
