//! Flows by IPv4 destination: rules in order, each a prefix and a flow; a
//! packet belongs to the flow of the first rule its destination matches.
//! Compiled once, a lookup costs one hash probe per prefix length the rules
//! use rather than a scan of every rule (a trace dealt to flows by /24 has
//! hundreds, and every packet of a capture or a receive port is looked up).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::net::Ipv4Addr;

use rustc_hash::FxHasher;
use sluice_core::NO_FLOW;

/// Packets whose IPv4 destination falls in `prefix/len` belong to `flow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixRule {
    /// Network address.
    pub prefix: Ipv4Addr,
    /// Prefix length (bits, 0..=32).
    pub len: u8,
    /// Flow id of matching packets.
    pub flow: u16,
}

impl PrefixRule {
    /// The mask of the prefix length (0..=32 bits).
    fn mask(&self) -> u32 {
        u32::MAX.checked_shl(32 - u32::from(self.len)).unwrap_or(0)
    }

    /// Whether `dst` lies in the prefix.
    pub fn matches(&self, dst: Ipv4Addr) -> bool {
        u32::from(dst) & self.mask() == u32::from(self.prefix) & self.mask()
    }
}

/// Rules up to this many are scanned in order: cheaper than hashing.
const SCANNED: usize = 8;

/// A rule's place in the list and its flow.
#[derive(Clone, Copy)]
struct Ranked {
    rank: u32,
    flow: u16,
}

/// The rules of one prefix length, by masked network: the first of each.
struct OfLength {
    mask: u32,
    first: HashMap<u32, Ranked, BuildHasherDefault<FxHasher>>,
}

/// Prefix rules compiled for lookup; the default has none.
#[derive(Default)]
pub struct PrefixRules(Lookup);

/// How the rules are looked up.
enum Lookup {
    /// Few rules: in order, scanned.
    Scanned(Box<[PrefixRule]>),
    /// Many: per prefix length used, longest first.
    ByLength(Vec<OfLength>),
}

impl Default for Lookup {
    fn default() -> Self {
        Self::Scanned(Box::new([]))
    }
}

impl PrefixRules {
    /// Compiles `rules`; a prefix longer than 32 bits is refused by name.
    pub fn new(rules: &[PrefixRule]) -> Result<Self, String> {
        if let Some(r) = rules.iter().find(|r| r.len > 32) {
            return Err(format!("prefix length {} of {} exceeds 32", r.len, r.prefix));
        }
        if rules.len() <= SCANNED {
            return Ok(Self(Lookup::Scanned(rules.into())));
        }
        let mut lengths: Vec<OfLength> = Vec::new();
        for (rank, r) in rules.iter().enumerate() {
            let at = match lengths.iter().position(|l| l.mask == r.mask()) {
                Some(at) => at,
                None => {
                    lengths.push(OfLength { mask: r.mask(), first: HashMap::default() });
                    lengths.len() - 1
                }
            };
            lengths[at].first.entry(u32::from(r.prefix) & r.mask()).or_insert(Ranked { rank: rank as u32, flow: r.flow });
        }
        lengths.sort_by_key(|l| std::cmp::Reverse(l.mask));
        Ok(Self(Lookup::ByLength(lengths)))
    }

    /// The flow of the first rule `dst` matches ([`NO_FLOW`]: none).
    #[inline]
    pub fn flow_of(&self, dst: Ipv4Addr) -> u16 {
        match &self.0 {
            Lookup::Scanned(rules) => rules.iter().find(|r| r.matches(dst)).map_or(NO_FLOW, |r| r.flow),
            Lookup::ByLength(lengths) => {
                let dst = u32::from(dst);
                lengths.iter().filter_map(|l| l.first.get(&(dst & l.mask))).min_by_key(|r| r.rank).map_or(NO_FLOW, |r| r.flow)
            }
        }
    }

    /// The flow of Ethernet frame `frame` by its IPv4 destination
    /// ([`NO_FLOW`] when no rule matches, or it has none); the header
    /// alone is read, so a record cut by a snap length still has one.
    #[inline]
    pub fn classify(&self, frame: &[u8]) -> u16 {
        destination(frame).map_or(NO_FLOW, |dst| self.flow_of(dst))
    }

    /// The highest flow id a rule names, plus one (0 without rules).
    pub fn flows(&self) -> usize {
        let most = match &self.0 {
            Lookup::Scanned(rules) => rules.iter().map(|r| r.flow).max(),
            Lookup::ByLength(lengths) => lengths.iter().flat_map(|l| l.first.values().map(|r| r.flow)).max(),
        };
        most.map_or(0, |f| f as usize + 1)
    }
}

/// The IPv4 destination of an Ethernet frame, if it has one.
pub(crate) fn destination(frame: &[u8]) -> Option<Ipv4Addr> {
    sluice_core::wire::ipv4_of(frame).ok().map(|ip| Ipv4Addr::from(ip.dst()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(prefix: &str, len: u8, flow: u16) -> PrefixRule {
        PrefixRule { prefix: prefix.parse().unwrap(), len, flow }
    }

    /// The first rule that matches, found by scanning them all.
    fn first_match(rules: &[PrefixRule], dst: Ipv4Addr) -> u16 {
        rules.iter().find(|r| r.matches(dst)).map_or(NO_FLOW, |r| r.flow)
    }

    #[test]
    fn a_lookup_finds_the_first_rule_that_matches_as_a_scan_would() {
        // Hundreds of /24s, a /16 listed after some of them that covers them
        // and others, a /32 late in the list, a default route and a repeat.
        let mut rules: Vec<PrefixRule> = (0..300u16).map(|i| rule(&format!("20.{}.{}.0", i / 250, i % 250), 24, i % 7)).collect();
        rules.insert(100, rule("20.0.0.0", 16, 100));
        rules.push(rule("20.0.5.9", 32, 200));
        rules.push(rule("20.0.5.0", 24, 201));
        rules.push(rule("0.0.0.0", 0, 300));
        let compiled = PrefixRules::new(&rules).unwrap();
        let mut checked = 0;
        for a in [20u8, 21] {
            for b in 0..3u8 {
                for c in (0..=255u8).step_by(3) {
                    for d in [0u8, 9, 200] {
                        let dst = Ipv4Addr::new(a, b, c, d);
                        assert_eq!(compiled.flow_of(dst), first_match(&rules, dst), "{dst}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
        assert_eq!(compiled.flow_of("20.0.5.9".parse().unwrap()), 5, "the /24 listed first (rule 5, flow 5) wins over a later /32");
        assert_eq!(compiled.flow_of("20.0.150.1".parse().unwrap()), 100, "a /24 listed after the /16 that covers it never wins");
        assert_eq!(compiled.flow_of("9.9.9.9".parse().unwrap()), 300, "the default route");
        assert_eq!(compiled.flows(), 301);
    }

    #[test]
    fn few_rules_are_scanned_and_a_prefix_over_32_bits_is_refused() {
        let rules = [rule("10.0.1.0", 24, 0), rule("10.0.0.0", 8, 1)];
        let compiled = PrefixRules::new(&rules).unwrap();
        assert_eq!((compiled.flow_of("10.0.1.7".parse().unwrap()), compiled.flow_of("10.9.9.9".parse().unwrap())), (0, 1));
        assert_eq!(compiled.flow_of("11.0.0.1".parse().unwrap()), NO_FLOW);
        assert_eq!(compiled.flows(), 2);
        let err = PrefixRules::new(&[rule("10.0.0.0", 33, 0)]).err().unwrap();
        assert!(err.contains("prefix length 33 of 10.0.0.0 exceeds 32"), "{err}");
    }
}
