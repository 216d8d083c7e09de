//! `acl(rules)`: prioritised first-match rules on the IPv4 or IPv6 5-tuple.

use sluice_core::DropReason;
use serde::{Deserialize, Serialize};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, MAX_BURST};

use sluice_core::wire::{ipv4, ipv6, IpPrefix};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::acl_tree::{Ranges, Tree, FIELDS};

/// One rule as descriptions write it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Rule")]
pub struct RuleSpec {
    /// Source prefix, "10.0.0.0/8" or "2001:db8::/32" (default any). A rule
    /// whose prefixes are IPv6 matches IPv6 packets, one whose prefixes
    /// are IPv4 IPv4 packets; one with both any matches either.
    #[serde(default = "any")]
    pub src: String,
    /// Destination prefix, of the source's family unless either is any (default any).
    #[serde(default = "any")]
    pub dst: String,
    /// IP protocol number (default any).
    #[serde(default)]
    pub proto: Option<u8>,
    /// Source port range, inclusive (default any).
    #[serde(default = "all_ports")]
    pub sport: (u16, u16),
    /// Destination port range, inclusive (default any).
    #[serde(default = "all_ports")]
    pub dport: (u16, u16),
    /// Permit (gate 0) or deny (drop gate).
    pub permit: bool,
}

fn any() -> String {
    "0.0.0.0/0".into()
}

fn all_ports() -> (u16, u16) {
    (0, u16::MAX)
}

/// A rule with addresses of type `A` (u32: IPv4, u128: IPv6) as (network, mask).
#[derive(Clone, Copy, Debug)]
struct Rule<A> {
    src: (A, A),
    dst: (A, A),
    proto: Option<u8>,
    sport: (u16, u16),
    dport: (u16, u16),
    permit: bool,
}

/// An IPv6 rule.
type Rule6 = Rule<u128>;

impl<A: Copy + PartialEq + std::ops::BitAnd<Output = A>> Rule<A> {
    /// `spec` with its prefixes as (network, mask) `src` and `dst`.
    fn of(spec: &RuleSpec, src: (A, A), dst: (A, A)) -> Self {
        Self { src, dst, proto: spec.proto, sport: spec.sport, dport: spec.dport, permit: spec.permit }
    }

    /// The protocol's and the ports' inclusive ranges.
    fn other_ranges(&self) -> [(u32, u32); 3] {
        let ports = |(a, b): (u16, u16)| (u32::from(a), u32::from(b));
        [self.proto.map_or((0, 255), |p| (u32::from(p), u32::from(p))), ports(self.sport), ports(self.dport)]
    }

    /// Whether the rule matches `t`, whose addresses are `src` and `dst`.
    #[inline]
    fn matches_at(&self, src: A, dst: A, t: &FiveTuple) -> bool {
        src & self.src.1 == self.src.0
            && dst & self.dst.1 == self.dst.0
            && self.proto.is_none_or(|p| p == t.proto)
            && (self.sport.0..=self.sport.1).contains(&t.sport)
            && (self.dport.0..=self.dport.1).contains(&t.dport)
    }
}

impl Rule6 {
    #[inline]
    fn matches(&self, t: &FiveTuple) -> bool {
        t.v6 && self.matches_at(t.src, t.dst, t)
    }

    /// The rule as one inclusive range per field, each address seen
    /// through its 32-bit word `words` (0 = the top bits): a superset of
    /// what the rule matches, narrowed by [`Self::matches`] after.
    fn ranges(&self, words: Words) -> Ranges {
        let prefix = |(net, mask): (u128, u128), w: usize| (word(net, w), word(net, w) | !word(mask, w));
        let [proto, sport, dport] = self.other_ranges();
        [prefix(self.src, words.0), prefix(self.dst, words.1), proto, sport, dport]
    }
}

/// Which 32-bit word of the source and of the destination address the
/// IPv6 tree splits on.
type Words = (usize, usize);

/// Word `w` (0 = the top bits) of a 128-bit address.
#[inline]
fn word(addr: u128, w: usize) -> u32 {
    (addr >> (96 - 32 * w)) as u32
}

/// The word of the addresses `of` picks out of `rules` that tells them
/// apart best: the one with the most distinct ranges (ties: the higher word).
fn best_word(rules: &[Rule6], of: impl Fn(&Rule6) -> (u128, u128)) -> usize {
    (0..4)
        .max_by_key(|&w| {
            let mut ranges: Vec<(u32, u32)> = rules.iter().map(&of).map(|(net, mask)| (word(net, w), word(mask, w))).collect();
            ranges.sort_unstable();
            ranges.dedup();
            (ranges.len(), std::cmp::Reverse(w))
        })
        .unwrap_or(0)
}

impl Rule<u32> {
    #[inline]
    fn matches(&self, t: &FiveTuple) -> bool {
        t.v4_addresses().is_some_and(|(src, dst)| self.matches_at(src, dst, t))
    }

    /// The rule as one inclusive range per field.
    fn ranges(&self) -> Ranges {
        let prefix = |(net, mask): (u32, u32)| (net, net | !mask);
        let [proto, sport, dport] = self.other_ranges();
        [prefix(self.src), prefix(self.dst), proto, sport, dport]
    }
}

/// How a rule's prefix of either family matches each family: a prefix of
/// length 0 (any) matches both.
trait Matching {
    /// As an IPv4 (network, mask), if it can match IPv4 addresses.
    fn for_v4(self) -> Option<(u32, u32)>;
    /// As an IPv6 (network, mask), if it can match IPv6 addresses.
    fn for_v6(self) -> Option<(u128, u128)>;
}

impl Matching for IpPrefix {
    fn for_v4(self) -> Option<(u32, u32)> {
        match self {
            IpPrefix::V4(net, len) => Some((net, ipv4::mask(len))),
            IpPrefix::V6(_, 0) => Some((0, 0)),
            IpPrefix::V6(..) => None,
        }
    }

    fn for_v6(self) -> Option<(u128, u128)> {
        match self {
            IpPrefix::V6(net, len) => Some((net, ipv6::mask(len))),
            IpPrefix::V4(_, 0) => Some((0, 0)),
            IpPrefix::V4(..) => None,
        }
    }
}

pub use crate::five_tuple::FiveTuple;

/// First matching rule decides: permit → gate 0, deny → drop gate; no
/// match, non-IP or malformed → drop gate. A decision tree over the five
/// fields (`acl_tree.rs`) narrows each lookup to a handful of rules, so
/// 10 000 rules stay practical: one over the rules that can match IPv4
/// packets, one over those that can match IPv6 ones (each address seen
/// through the 32-bit word that tells the rules apart best).
pub struct Acl {
    rules: RuleSet,
    /// Per batch, kept between batches: the packets' tuples, whether they
    /// parsed, the verdicts, and the tree walk's keys and leaves.
    scratch: Box<Scratch>,
}

/// The rules by the family they can match, each family's in priority order with its tree.
struct RuleSet {
    v4: Vec<Rule<u32>>,
    tree: Tree,
    v6: Vec<Rule6>,
    tree6: Tree,
    /// The words of the source and destination the IPv6 tree splits on.
    words6: Words,
}

/// Working space for a batch of lookups.
struct Scratch {
    /// One tuple per run of equal tuples in the batch (see `process`).
    tuples: [FiveTuple; MAX_BURST],
    parsed: [bool; MAX_BURST],
    /// Per packet, its run.
    run_of: [u16; MAX_BURST],
    permitted: [bool; MAX_BURST],
    keys: [[u32; FIELDS]; MAX_BURST],
    leaves: [u32; MAX_BURST],
}

impl Scratch {
    fn new() -> Box<Self> {
        Box::new(Self {
            tuples: [UNPARSED; MAX_BURST],
            parsed: [false; MAX_BURST],
            run_of: [0; MAX_BURST],
            permitted: [false; MAX_BURST],
            keys: [[0; FIELDS]; MAX_BURST],
            leaves: [0; MAX_BURST],
        })
    }
}

/// The tuple of a packet that could not be parsed (never looked at).
const UNPARSED: FiveTuple = FiveTuple::v4(0, 0, 0, 0, 0);

/// The IPv4 tree's key of an IPv4 tuple.
fn key(t: &FiveTuple) -> [u32; FIELDS] {
    [t.src as u32, t.dst as u32, u32::from(t.proto), u32::from(t.sport), u32::from(t.dport)]
}

/// The IPv6 tree's key of an IPv6 tuple.
fn key6(t: &FiveTuple, words: Words) -> [u32; FIELDS] {
    [word(t.src, words.0), word(t.dst, words.1), u32::from(t.proto), u32::from(t.sport), u32::from(t.dport)]
}

/// The verdict of the first of `candidates` (rule indices, in priority
/// order) that matches `t`.
#[inline]
fn first_match_permits(rules: &[Rule<u32>], candidates: &[u32], t: &FiveTuple) -> bool {
    candidates.iter().map(|&r| &rules[r as usize]).find(|r| r.matches(t)).is_some_and(|r| r.permit)
}

/// Rule 0's verdict for `t`, if it matches: ACLs often open with the rule
/// most packets hit (permit a protocol, an established range), and then
/// one check decides, without a walk.
#[inline]
fn top_decides(rules: &[Rule<u32>], t: &FiveTuple) -> Option<bool> {
    rules.first().filter(|top| top.matches(t)).map(|top| top.permit)
}

/// The first match among the tree's candidates for `t`.
#[inline]
fn walk(rules: &[Rule<u32>], tree: &Tree, t: &FiveTuple) -> bool {
    first_match_permits(rules, tree.candidates(&key(t)), t)
}

/// The verdict for IPv4 tuple `t`: rule 0 first, else a walk.
#[inline]
fn decide(rules: &[Rule<u32>], tree: &Tree, t: &FiveTuple) -> bool {
    top_decides(rules, t).unwrap_or_else(|| walk(rules, tree, t))
}

impl RuleSet {
    /// The verdict for `t`.
    #[inline]
    fn decide(&self, t: &FiveTuple) -> bool {
        if t.v6 {
            self.decide6(t)
        } else {
            decide(&self.v4, &self.tree, t)
        }
    }

    /// The verdict for IPv6 tuple `t`: the first of its tree's candidates that matches.
    #[inline]
    fn decide6(&self, t: &FiveTuple) -> bool {
        let candidates = self.tree6.candidates(&key6(t, self.words6));
        candidates.iter().map(|&r| &self.v6[r as usize]).find(|r| r.matches(t)).is_some_and(|r| r.permit)
    }

    /// Verdicts of up to [`MAX_BURST`] tuples, the IPv4 ones' tree walks
    /// in lockstep when the tree is deep (`keys` and `leaves` are working
    /// space of at least as many entries).
    #[inline]
    fn classify(&self, tuples: &[FiveTuple], keys: &mut [[u32; FIELDS]], leaves: &mut [u32], permitted: &mut [bool]) {
        if !self.tree.lockstep() {
            for (o, t) in permitted.iter_mut().zip(tuples) {
                *o = self.decide(t);
            }
            return;
        }
        let n = tuples.len();
        for (k, t) in keys.iter_mut().zip(tuples) {
            *k = key(t);
        }
        self.tree.leaves(&keys[..n], &mut leaves[..n]);
        for ((o, t), &leaf) in permitted.iter_mut().zip(tuples).zip(leaves.iter()) {
            *o = if t.v6 { self.decide6(t) } else { first_match_permits(&self.v4, self.tree.rules_at(leaf), t) };
        }
    }
}

impl Acl {
    /// An ACL from rules in priority order.
    pub fn new(specs: &[RuleSpec]) -> Result<Self, String> {
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        for (i, r) in specs.iter().enumerate() {
            if r.sport.0 > r.sport.1 || r.dport.0 > r.dport.1 {
                return Err(format!("rule {i}: a port range runs backwards"));
            }
            let parse = |s: &str| IpPrefix::parse(s).map_err(|e| format!("rule {i}: {e}"));
            let (src, dst) = (parse(&r.src)?, parse(&r.dst)?);
            match (src, dst) {
                (IpPrefix::V6(..), IpPrefix::V4(_, len)) | (IpPrefix::V4(_, len), IpPrefix::V6(..)) if len > 0 => {
                    return Err(format!("rule {i}: source '{}' and destination '{}' are of different IP families", r.src, r.dst));
                }
                _ => {}
            }
            if let (Some(s), Some(d)) = (src.for_v4(), dst.for_v4()) {
                v4.push(Rule::of(r, s, d));
            }
            if let (Some(s), Some(d)) = (src.for_v6(), dst.for_v6()) {
                v6.push(Rule::of(r, s, d));
            }
        }
        let tree = Tree::build(&v4.iter().map(Rule::<u32>::ranges).collect::<Vec<_>>());
        let words6 = (best_word(&v6, |r| r.src), best_word(&v6, |r| r.dst));
        let tree6 = Tree::build(&v6.iter().map(|r| r.ranges(words6)).collect::<Vec<_>>());
        Ok(Self { rules: RuleSet { v4, tree, v6, tree6, words6 }, scratch: Scratch::new() })
    }

    /// Whether the first rule matching `t` permits it.
    #[inline]
    pub fn permits(&self, t: &FiveTuple) -> bool {
        self.rules.decide(t)
    }

    /// [`Self::permits`] for each of `tuples` into `permitted`, their tree
    /// walks interleaved a batch at a time.
    #[inline]
    pub fn permits_bulk(&mut self, tuples: &[FiveTuple], permitted: &mut [bool]) {
        let Self { rules, scratch } = self;
        for (chunk, out) in tuples.chunks(MAX_BURST).zip(permitted.chunks_mut(MAX_BURST)) {
            rules.classify(chunk, &mut scratch.keys, &mut scratch.leaves, out);
        }
    }
}

impl NetworkFunction for Acl {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        // A run of packets with one tuple (one flow's, behind a Reframer) is decided once.
        if !self.rules.tree.lockstep() {
            // A shallow tree: one pass, packet by packet. Rule 0 costs no
            // more than comparing with the last walked tuple, so it goes
            // first, and only walks are remembered.
            let rules = &self.rules;
            let mut last: Option<(FiveTuple, bool)> = None;
            for &id in input.as_slice() {
                let permit = match FiveTuple::of(ctx.pool.data(id)) {
                    Some(t) if t.v6 => match last {
                        Some((l, verdict)) if l == t => verdict,
                        _ => last.insert((t, rules.decide6(&t))).1,
                    },
                    Some(t) => top_decides(&rules.v4, &t).unwrap_or_else(|| match last {
                        Some((l, verdict)) if l == t => verdict,
                        _ => last.insert((t, walk(&rules.v4, &rules.tree, &t))).1,
                    }),
                    None => false,
                };
                if permit {
                    out.push(0, id);
                } else {
                    ctx.drop_packet(id, DropReason::Denied);
                }
            }
            input.clear();
            return;
        }
        let ids = input.as_slice();
        let Self { rules, scratch } = self;
        let Scratch { tuples, parsed, run_of, permitted, keys, leaves } = &mut **scratch;
        // Malformed packets are looked up as an all-zero tuple and dropped below whatever it gets.
        let mut runs = 0;
        for (&id, run) in ids.iter().zip(run_of.iter_mut()) {
            let (t, ok) = FiveTuple::of(ctx.pool.data(id)).map_or((UNPARSED, false), |t| (t, true));
            if runs == 0 || tuples[runs - 1] != t || parsed[runs - 1] != ok {
                (tuples[runs], parsed[runs]) = (t, ok);
                runs += 1;
            }
            *run = (runs - 1) as u16;
        }
        rules.classify(&tuples[..runs], keys, leaves, &mut permitted[..runs]);
        for (&id, &run) in ids.iter().zip(run_of.iter()) {
            if parsed[run as usize] && permitted[run as usize] {
                out.push(0, id);
            } else {
                ctx.drop_packet(id, DropReason::Denied);
            }
        }
        input.clear();
    }
}

/// `n` rules (drawn by `seed`) of the kinds real ACLs hold: host and
/// subnet prefixes on either address within 10.0.0.0/6, exact ports and
/// port ranges below 2 560, a protocol or any, permit or deny. For tests
/// and benchmarks.
pub fn sample_rules(n: usize, seed: u64) -> Vec<RuleSpec> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let prefix = |rng: &mut SmallRng| {
        let len = [0u8, 8, 16, 24, 24, 32][rng.gen_range(0..6)];
        format!("{}.{}.{}.0/{len}", rng.gen_range(10..14), rng.gen_range(0..4), rng.gen_range(0..64))
    };
    let ports = |rng: &mut SmallRng| match rng.gen_range(0..3) {
        0 => (0, 65535),
        1 => {
            let p = rng.gen_range(0..2048);
            (p, p)
        }
        _ => {
            let p = rng.gen_range(0..2048);
            (p, p + rng.gen_range(0..512))
        }
    };
    (0..n)
        .map(|_| RuleSpec {
            src: prefix(&mut rng),
            dst: prefix(&mut rng),
            proto: [None, Some(6), Some(17)][rng.gen_range(0..3)],
            sport: ports(&mut rng),
            dport: ports(&mut rng),
            permit: rng.gen_bool(0.5),
        })
        .collect()
}

/// `n` 5-tuples (drawn by `seed`) in the space [`sample_rules`] covers.
pub fn sample_tuples(n: usize, seed: u64) -> Vec<FiveTuple> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let addr = |rng: &mut SmallRng| u32::from_be_bytes([rng.gen_range(10..14), rng.gen_range(0..4), rng.gen_range(0..64), rng.gen()]);
    (0..n)
        .map(|_| FiveTuple::v4(addr(&mut rng), addr(&mut rng), [6, 17, 1][rng.gen_range(0..3)], rng.gen_range(0..2600), rng.gen_range(0..2600)))
        .collect()
}

/// The gateway pipelines' ACL (PIPELINES.md): rule 0 permits UDP any →
/// any, then denies of other /24s (40.x.y.0/24), `total` rules in all.
pub fn gateway_rules(total: usize) -> Vec<RuleSpec> {
    let deny = |j: usize| RuleSpec { dst: format!("40.{}.{}.0/24", j / 256, j % 256), ..RuleSpec::any(false) };
    std::iter::once(RuleSpec { proto: Some(17), ..RuleSpec::any(true) }).chain((1..total).map(deny)).collect()
}

impl RuleSpec {
    /// A rule that matches every packet.
    pub fn any(permit: bool) -> Self {
        Self { src: any(), dst: any(), proto: None, sport: all_ports(), dport: all_ports(), permit }
    }
}

/// `acl`: first-match rules on the 5-tuple: permit to gate 0, deny (and
/// no match) to the drop gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AclSpec {
    /// Rules in priority order.
    pub rules: Vec<RuleSpec>,
}

impl crate::NfConfig for AclSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(Acl::new(&self.rules)?))
    }

    fn table_entries(&self) -> usize {
        self.rules.len()
    }

    fn profiling(_copy: usize) -> Option<Self> {
        Some(Self { rules: gateway_rules(100) })
    }

    fn fuzz_samples() -> Vec<Self> {
        let udp = RuleSpec { src: "10.0.0.0/8".into(), proto: Some(17), dport: (1000, 2000), ..RuleSpec::any(true) };
        vec![Self { rules: vec![udp, RuleSpec::any(false)] }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_thousand_rules_answer_as_a_linear_scan_does_from_a_few_candidates() {
        let mut acl = Acl::new(&sample_rules(10_000, 7)).unwrap();
        let (depth, widest) = acl.rules.tree.shape();
        let mut examined = 0;
        for t in sample_tuples(20_000, 8) {
            let linear = acl.rules.v4.iter().find(|r| r.matches(&t)).is_some_and(|r| r.permit);
            assert_eq!(acl.permits(&t), linear, "{t:?}");
            examined += acl.rules.tree.candidates(&key(&t)).len();
        }
        let mean = examined as f64 / 20_000.0;
        let tuples = sample_tuples(20_000, 8);
        let mut bulk = vec![false; tuples.len()];
        acl.permits_bulk(&tuples, &mut bulk);
        assert!(tuples.iter().zip(&bulk).all(|(t, &b)| acl.permits(t) == b), "interleaved walks decide as single ones");
        assert!(mean < 32.0 && widest <= 64, "a lookup examines {mean:.1} of 10 000 rules on average (depth {depth}, widest leaf {widest})");
    }

    /// IPv6 rules of the shapes an IPv6 ACL holds: /48 to /64 sites under
    /// one /32 (the top word alike in every rule), ports as [`sample_rules`].
    fn ipv6_rules(n: usize, seed: u64) -> Vec<RuleSpec> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let prefix = |rng: &mut SmallRng| format!("2001:db8:{:x}:{:x}::/{}", rng.gen_range(0..64), rng.gen_range(0..16) << 8, [48, 56, 64][rng.gen_range(0..3)]);
        sample_rules(n, seed).into_iter().map(|r| RuleSpec { src: prefix(&mut rng), dst: prefix(&mut rng), ..r }).collect()
    }

    #[test]
    fn ten_thousand_ipv6_rules_answer_as_a_linear_scan_does_from_a_few_candidates() {
        let acl = Acl::new(&ipv6_rules(10_000, 7)).unwrap();
        assert_eq!(acl.rules.words6, (1, 1), "the top word is alike in every rule; the second tells them apart");
        let mut rng = SmallRng::seed_from_u64(8);
        let mut examined = 0;
        for _ in 0..5_000 {
            let addr = |rng: &mut SmallRng| (0x2001_0db8u128 << 96) | (rng.gen_range(0..64u128) << 80) | (rng.gen_range(0..4096u128) << 64) | 9;
            let t = FiveTuple { src: addr(&mut rng), dst: addr(&mut rng), proto: [6, 17][rng.gen_range(0..2)], sport: rng.gen_range(0..2600), dport: rng.gen_range(0..2600), v6: true };
            let linear = acl.rules.v6.iter().find(|r| r.matches(&t)).is_some_and(|r| r.permit);
            assert_eq!(acl.permits(&t), linear, "{t:?}");
            examined += acl.rules.tree6.candidates(&key6(&t, acl.rules.words6)).len();
        }
        let mean = examined as f64 / 5_000.0;
        assert!(mean < 32.0, "a lookup examines {mean:.1} of 10 000 rules on average");
    }

    #[test]
    fn a_deep_tree_decides_runs_of_one_tuple_as_it_decides_packets() {
        use sluice_core::harness::Harness;
        let rules = sample_rules(10_000, 7);
        let (mut batched, mut single) = (Acl::new(&rules).unwrap(), Acl::new(&rules).unwrap());
        assert!(batched.rules.tree.lockstep(), "10 000 rules walk in lockstep");
        let frame = |t: &FiveTuple| {
            let (src, dst) = t.v4_addresses().expect("IPv4 samples");
            let b = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6]).ipv4(src.to_be_bytes(), dst.to_be_bytes(), 64);
            let mut v = Vec::new();
            match t.proto {
                6 => b.tcp(t.sport, t.dport, 1, 100).write(&mut v, &[]),
                _ => b.udp(t.sport, t.dport).write(&mut v, &[]),
            }
            .unwrap();
            v
        };
        // Runs of 1..=4 copies of each tuple.
        let tuples = sample_tuples(100, 3);
        let frames: Vec<Vec<u8>> = tuples.iter().enumerate().flat_map(|(i, t)| std::iter::repeat_n(frame(t), 1 + i % 4)).take(MAX_BURST).collect();
        let mut h = Harness::default();
        let whole = h.run(&mut batched, &frames);
        let mut permitted = Vec::new();
        let mut dropped = 0;
        for f in &frames {
            let one = h.run(&mut single, std::slice::from_ref(f));
            permitted.extend(one.gates.into_iter().flatten());
            dropped += one.dropped;
        }
        assert_eq!((whole.gates[0].len(), whole.dropped), (permitted.len(), dropped));
        assert_eq!(whole.gates[0], permitted);
        assert!(dropped > 0 && !permitted.is_empty(), "both verdicts occur");
    }

    #[test]
    fn a_rule_that_covers_everything_hides_the_rest() {
        let any = RuleSpec::any(true);
        let mut specs = vec![any.clone()];
        specs.extend(sample_rules(500, 1));
        let acl = Acl::new(&specs).unwrap();
        assert_eq!(acl.rules.tree.shape(), (0, 1), "one leaf with the one rule");
        assert!(sample_tuples(100, 2).iter().all(|t| acl.permits(t)));
    }
}

#[cfg(test)]
mod gateway_tests {
    use super::*;

    /// The GW pipelines' ACL: permit UDP, then 99 denies of /24s. A list of
    /// prefixes must give a shallow tree, not a chain peeling one prefix
    /// per level.
    #[test]
    fn a_prefix_list_gives_a_shallow_tree() {
        let acl = Acl::new(&gateway_rules(100)).unwrap();
        let (depth, widest) = acl.rules.tree.shape();
        assert!(depth <= 8 && widest <= 8, "depth {depth}, widest leaf {widest}");
        let tcp = FiveTuple::v4(1, u32::from_be_bytes([40, 0, 7, 1]), 6, 1, 2);
        assert!(!acl.permits(&tcp) && acl.permits(&FiveTuple { proto: 17, ..tcp }));
    }
}
