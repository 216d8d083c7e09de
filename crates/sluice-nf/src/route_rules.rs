//! The routes a live LPM table's writer keeps beside its table, IPv4 and
//! IPv6 alike ([`crate::lpm4::LiveRoutes`], [`crate::lpm6::LiveRoutes6`]):
//! (network, length) → gate, the checks a change passes before anything
//! is written, and the route a deleted one uncovers.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::BitAnd;

/// Highest gate a route may name, in either family (the IPv4 table stores
/// gate + 1 in 15 bits beside its group marker).
pub const MAX_GATE: u16 = 0x7FFE;

/// An address family's network numbers.
pub(crate) trait Network: Copy + Eq + Hash + BitAnd<Output = Self> {
    /// Address bits.
    const BITS: u8;
    /// The mask of a prefix of `len` ≤ `BITS` bits.
    fn mask(len: u8) -> Self;
    /// `self`/`len` as a prefix is written.
    fn show(self, len: u8) -> String;
}

impl Network for u32 {
    const BITS: u8 = 32;
    fn mask(len: u8) -> Self {
        sluice_core::wire::ipv4::mask(len)
    }
    fn show(self, len: u8) -> String {
        format!("{}/{len}", Ipv4Addr::from(self))
    }
}

impl Network for u128 {
    const BITS: u8 = 128;
    fn mask(len: u8) -> Self {
        sluice_core::wire::ipv6::mask(len)
    }
    fn show(self, len: u8) -> String {
        format!("{}/{len}", Ipv6Addr::from(self))
    }
}

/// One table's routes, for an LPM of `gates` gates.
pub(crate) struct RouteRules<N> {
    rules: HashMap<(N, u8), u16>,
    gates: usize,
}

/// A route's key: its network masked to its length.
fn key<N: Network>(net: N, len: u8) -> (N, u8) {
    (net & N::mask(len.min(N::BITS)), len)
}

impl<N: Network> RouteRules<N> {
    /// The routes of `routes` (network, length, gate); duplicates: last wins.
    pub(crate) fn new(routes: &[(N, u8, u16)], gates: usize) -> Self {
        Self { rules: routes.iter().map(|&(net, len, gate)| (key(net, len), gate)).collect(), gates }
    }

    /// Whether deleting `delete` (each must exist, once) and adding `add`
    /// (a length within the family, a gate the LPM has) may be made; the
    /// error names the route.
    pub(crate) fn check(&self, add: &[(N, u8, u16)], delete: &[(N, u8)]) -> Result<(), String> {
        if let Some(&(net, len, gate)) = add.iter().find(|r| r.1 > N::BITS || usize::from(r.2) >= self.gates) {
            return Err(format!("route {} to gate {gate}: the length must be ≤ {} and the gate < {}", net.show(len), N::BITS, self.gates));
        }
        let mut gone = HashSet::new();
        for &(net, len) in delete {
            let k = key(net, len);
            if !self.rules.contains_key(&k) || !gone.insert(k) {
                return Err(format!("no route {} to delete", net.show(len)));
            }
        }
        Ok(())
    }

    /// Adds a route (replacing one of the same prefix); returns its network, masked.
    pub(crate) fn insert(&mut self, net: N, len: u8, gate: u16) -> N {
        let k = key(net, len);
        self.rules.insert(k, gate);
        k.0
    }

    /// Deletes a route (checked to exist); returns its network, masked, and
    /// what it uncovers: the longest shorter route that covers it, as
    /// (gate, length), if there is one.
    pub(crate) fn remove(&mut self, net: N, len: u8) -> (N, Option<(u16, u8)>) {
        let k = key(net, len);
        self.rules.remove(&k);
        let under = (0..len).rev().find_map(|l| self.rules.get(&(k.0 & N::mask(l), l)).map(|&gate| (gate, l)));
        (k.0, under)
    }
}

/// For the property tests of both families: one of `model`'s routes, the
/// same for the same `pick` whatever the map's order.
#[cfg(test)]
pub(crate) fn pick_route<N: Network + Ord>(model: &HashMap<(N, u8), u16>, pick: &proptest::sample::Index) -> (N, u8) {
    let mut keys: Vec<_> = model.keys().copied().collect();
    keys.sort_unstable();
    *pick.get(&keys)
}
