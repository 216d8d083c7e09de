//! Flows by IP destination: rules in order, each an IPv4 or IPv6 prefix and
//! a flow; a packet belongs to the flow of the first rule its destination
//! matches (a rule of one family never matches the other's addresses).
//! Compiled once, a lookup costs one hash probe per prefix length the rules
//! use rather than a scan of every rule (a trace dealt to flows by /24 has
//! hundreds, and every packet of a capture or a receive port is looked up).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::net::IpAddr;

use rustc_hash::FxHasher;
use sluice_core::wire::Ip;
use sluice_core::NO_FLOW;

/// Packets whose destination falls in `prefix/len` belong to `flow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixRule {
    /// Network address, IPv4 or IPv6.
    pub prefix: IpAddr,
    /// Prefix length (bits, 0..=32 for IPv4, 0..=128 for IPv6).
    pub len: u8,
    /// Flow id of matching packets.
    pub flow: u16,
}

/// An address as a family and an integer (IPv4's in the low 32 bits).
type Key = (bool, u128);

fn key(addr: IpAddr) -> Key {
    match addr {
        IpAddr::V4(a) => (false, u32::from(a) as u128),
        IpAddr::V6(a) => (true, u128::from(a)),
    }
}

/// Bits of an address of the family.
fn bits(v6: bool) -> u32 {
    if v6 {
        128
    } else {
        32
    }
}

impl PrefixRule {
    /// The family and the mask of the prefix length.
    fn mask(&self) -> Key {
        let v6 = self.prefix.is_ipv6();
        let all = u128::MAX >> (128 - bits(v6));
        (v6, all & !all.checked_shr(u32::from(self.len)).unwrap_or(0))
    }

    /// Whether `dst` lies in the prefix.
    pub fn matches(&self, dst: IpAddr) -> bool {
        let ((family, mask), (dst_family, dst), (_, net)) = (self.mask(), key(dst), key(self.prefix));
        family == dst_family && dst & mask == net & mask
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

/// The rules of one family and prefix length, by masked network: the first of each.
struct OfLength {
    mask: Key,
    first: HashMap<u128, Ranked, BuildHasherDefault<FxHasher>>,
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
    /// Compiles `rules`; a prefix longer than its family's addresses is refused by name.
    pub fn new(rules: &[PrefixRule]) -> Result<Self, String> {
        if let Some(r) = rules.iter().find(|r| u32::from(r.len) > bits(r.prefix.is_ipv6())) {
            return Err(format!("prefix length {} of {} exceeds {}", r.len, r.prefix, bits(r.prefix.is_ipv6())));
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
            lengths[at].first.entry(key(r.prefix).1 & r.mask().1).or_insert(Ranked { rank: rank as u32, flow: r.flow });
        }
        lengths.sort_by_key(|l| std::cmp::Reverse(l.mask.1));
        Ok(Self(Lookup::ByLength(lengths)))
    }

    /// The flow of the first rule `dst` matches ([`NO_FLOW`]: none).
    #[inline]
    pub fn flow_of(&self, dst: IpAddr) -> u16 {
        match &self.0 {
            Lookup::Scanned(rules) => rules.iter().find(|r| r.matches(dst)).map_or(NO_FLOW, |r| r.flow),
            Lookup::ByLength(lengths) => {
                let (family, dst) = key(dst);
                lengths.iter().filter(|l| l.mask.0 == family).filter_map(|l| l.first.get(&(dst & l.mask.1))).min_by_key(|r| r.rank).map_or(NO_FLOW, |r| r.flow)
            }
        }
    }

    /// The flow of Ethernet frame `frame` by its IP destination
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

/// The IP destination of an Ethernet frame, if it has one.
pub(crate) fn destination(frame: &[u8]) -> Option<IpAddr> {
    match sluice_core::wire::ip_of(frame).ok()? {
        Ip::V4(ip) => Some(IpAddr::V4(ip.dst().into())),
        Ip::V6(ip) => Some(IpAddr::V6(ip.dst().into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(prefix: &str, len: u8, flow: u16) -> PrefixRule {
        PrefixRule { prefix: prefix.parse().unwrap(), len, flow }
    }

    /// The first rule that matches, found by scanning them all.
    fn first_match(rules: &[PrefixRule], dst: IpAddr) -> u16 {
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
                        let dst = IpAddr::from([a, b, c, d]);
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
    fn ipv6_rules_match_ipv6_destinations_only_and_each_family_keeps_its_order() {
        let mut rules: Vec<PrefixRule> = (0..20u16).map(|i| rule(&format!("2001:db8:{i:x}::"), 48, i)).collect();
        rules.push(rule("2001:db8:3::5", 128, 50));
        rules.push(rule("::", 0, 60));
        rules.push(rule("0.0.0.0", 0, 70));
        for compiled in [PrefixRules::new(&rules).unwrap(), PrefixRules::new(&rules[18..]).unwrap()] {
            for dst in ["2001:db8:3::5", "2001:db8:13::1", "2001:db8:ffff::1", "fe80::1", "20.0.1.1", "::ffff:20.0.1.1"] {
                let dst: IpAddr = dst.parse().unwrap();
                let scanned = first_match(if matches!(compiled.0, Lookup::Scanned(_)) { &rules[18..] } else { &rules }, dst);
                assert_eq!(compiled.flow_of(dst), scanned, "{dst}");
            }
        }
        let compiled = PrefixRules::new(&rules).unwrap();
        assert_eq!(compiled.flow_of("2001:db8:3::5".parse().unwrap()), 3, "the /48 listed first wins over a later /128");
        assert_eq!(compiled.flow_of("20.0.1.1".parse().unwrap()), 70, "::/0 does not catch IPv4");
        assert_eq!(compiled.flow_of("::ffff:20.0.1.1".parse().unwrap()), 60, "0.0.0.0/0 does not catch IPv6");
        let err = PrefixRules::new(&[rule("2001:db8::", 129, 0)]).err().unwrap();
        assert!(err.contains("prefix length 129 of 2001:db8:: exceeds 128"), "{err}");
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
