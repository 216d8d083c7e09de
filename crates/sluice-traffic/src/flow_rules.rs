//! The rules a source sorts the packets it takes in into flows by: exact
//! 5-tuples first, then destination prefixes in order, the first that
//! matches deciding (see [`PrefixRules`]); none: the packet belongs to no
//! flow yet (a splitter downstream decides). An operator replaces them
//! while the pipeline runs (see `PacketSource::set_flow_rules`).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;
use sluice_core::wire::five_tuple::FiveTuple;

use crate::prefix_rules::{PrefixRule, PrefixRules};

/// What a rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowMatch {
    /// Packets whose IP destination lies in the prefix (`flow` of the rule ignored).
    Prefix(PrefixRule),
    /// Packets of exactly this 5-tuple (IPv4 or IPv6; ports 0 for a protocol without).
    Tuple(FiveTuple),
}

/// Packets that match `matches` belong to `flow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRule {
    /// What it matches.
    pub matches: FlowMatch,
    /// Flow id of the packets it matches.
    pub flow: u16,
}

/// Flow rules compiled for lookup; the default has none.
#[derive(Default)]
pub struct FlowRules {
    /// As given, in order (what a change starts from).
    rules: Vec<FlowRule>,
    tuples: HashMap<FiveTuple, u16, BuildHasherDefault<FxHasher>>,
    prefixes: PrefixRules,
}

impl FlowRules {
    /// Compiles `rules` (a 5-tuple listed twice: the first wins); a bad
    /// prefix length is refused by name.
    pub fn new(rules: Vec<FlowRule>) -> Result<Self, String> {
        let mut tuples = HashMap::default();
        let mut prefixes = Vec::new();
        for rule in &rules {
            match rule.matches {
                FlowMatch::Tuple(t) => {
                    tuples.entry(t).or_insert(rule.flow);
                }
                FlowMatch::Prefix(p) => prefixes.push(PrefixRule { flow: rule.flow, ..p }),
            }
        }
        Ok(Self { prefixes: PrefixRules::new(&prefixes)?, tuples, rules })
    }

    /// Destination-prefix rules alone (each its own flow), compiled.
    pub fn of_prefixes(rules: &[PrefixRule]) -> Result<Self, String> {
        Self::new(rules.iter().map(|&r| FlowRule { matches: FlowMatch::Prefix(r), flow: r.flow }).collect())
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[FlowRule] {
        &self.rules
    }

    /// These rules and `more` after them.
    pub fn with(&self, more: &[FlowRule]) -> Result<Self, String> {
        Self::new(self.rules.iter().chain(more).copied().collect())
    }

    /// These rules but those of `flow`; `None` where it has none.
    pub fn without_flow(&self, flow: u16) -> Option<Self> {
        let kept: Vec<FlowRule> = self.rules.iter().filter(|r| r.flow != flow).copied().collect();
        (kept.len() < self.rules.len()).then(|| Self::new(kept).expect("rules that compiled, fewer"))
    }

    /// The flow of Ethernet frame `frame` ([`NO_FLOW`](sluice_core::NO_FLOW) when no rule matches);
    /// the headers alone are read, so a record cut by a snap length has them.
    #[inline]
    pub fn classify(&self, frame: &[u8]) -> u16 {
        if !self.tuples.is_empty() {
            if let Some(&flow) = FiveTuple::of(frame).and_then(|t| self.tuples.get(&t)) {
                return flow;
            }
        }
        self.prefixes.classify(frame)
    }

    /// The highest flow id a rule names, plus one (0 without rules).
    pub fn flows(&self) -> usize {
        self.rules.iter().map(|r| r.flow as usize + 1).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::NO_FLOW;

    fn prefix(p: &str, len: u8, flow: u16) -> FlowRule {
        FlowRule { matches: FlowMatch::Prefix(PrefixRule { prefix: p.parse().unwrap(), len, flow: 0 }), flow }
    }

    fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut frame = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4(src, dst, 64).udp(sport, dport).write(&mut frame, &[0; 18]).unwrap();
        frame
    }

    #[test]
    fn a_5_tuple_takes_its_packets_before_any_prefix_and_rules_change_whole() {
        let tuple = FiveTuple::v4(u32::from_be_bytes([10, 0, 0, 1]), u32::from_be_bytes([20, 0, 1, 7]), 17, 1000, 5000);
        let rules = FlowRules::new(vec![prefix("20.0.1.0", 24, 0), FlowRule { matches: FlowMatch::Tuple(tuple), flow: 3 }]).unwrap();
        assert_eq!(rules.classify(&udp([10, 0, 0, 1], [20, 0, 1, 7], 1000, 5000)), 3, "the exact 5-tuple");
        assert_eq!(rules.classify(&udp([10, 0, 0, 1], [20, 0, 1, 7], 1001, 5000)), 0, "another port: the prefix");
        assert_eq!(rules.classify(&udp([10, 0, 0, 1], [20, 0, 2, 7], 1000, 5000)), NO_FLOW);
        assert_eq!(rules.flows(), 4);
        let more = rules.with(&[prefix("20.0.2.0", 24, 5)]).unwrap();
        assert_eq!(more.classify(&udp([10, 0, 0, 1], [20, 0, 2, 7], 1000, 5000)), 5);
        let fewer = more.without_flow(3).unwrap();
        assert_eq!(fewer.classify(&udp([10, 0, 0, 1], [20, 0, 1, 7], 1000, 5000)), 0, "its 5-tuple gone, the prefix takes it");
        assert_eq!(fewer.rules().len(), 2);
        assert!(fewer.without_flow(3).is_none(), "no rule of the flow left");
        assert!(FlowRules::new(vec![prefix("20.0.0.0", 40, 1)]).err().unwrap().contains("prefix length 40"));
    }
}
