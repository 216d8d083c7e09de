//! `acl(rules)`: prioritised first-match rules on the IPv4 5-tuple.

use serde::{Deserialize, Serialize};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

use sluice_core::wire::ipv4::{mask, parse_prefix};
use sluice_core::wire::{ipv4_of, l4};

/// One rule as descriptions write it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Source prefix, "a.b.c.d/len" (default any).
    #[serde(default = "any")]
    pub src: String,
    /// Destination prefix (default any).
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

#[derive(Clone, Copy, Debug)]
struct Rule {
    src: (u32, u32),
    dst: (u32, u32),
    proto: Option<u8>,
    sport: (u16, u16),
    dport: (u16, u16),
    permit: bool,
}

impl Rule {
    #[inline]
    fn matches(&self, t: &FiveTuple) -> bool {
        t.src & self.src.1 == self.src.0
            && t.dst & self.dst.1 == self.dst.0
            && self.proto.is_none_or(|p| p == t.proto)
            && (self.sport.0..=self.sport.1).contains(&t.sport)
            && (self.dport.0..=self.dport.1).contains(&t.dport)
    }
}

/// The fields an ACL matches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FiveTuple {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Protocol.
    pub proto: u8,
    /// Source port (0 when the protocol has none).
    pub sport: u16,
    /// Destination port (0 when the protocol has none).
    pub dport: u16,
}

impl FiveTuple {
    /// The 5-tuple of an Ethernet frame, if it is IPv4 with readable ports.
    pub fn of(frame: &[u8]) -> Option<Self> {
        let ip = ipv4_of(frame).ok()?;
        let (sport, dport) = match l4::ports(ip.protocol(), ip.payload()) {
            Ok(p) => p,
            Err(sluice_core::wire::Malformed::Unexpected) => (0, 0),
            Err(_) => return None,
        };
        Some(Self { src: ip.src(), dst: ip.dst(), proto: ip.protocol(), sport, dport })
    }
}

/// First matching rule decides: permit → gate 0, deny → drop gate; no
/// match, non-IPv4 or malformed → drop gate. Rules are scanned in priority
/// order (linear in the number of rules).
pub struct Acl {
    rules: Vec<Rule>,
}

impl Acl {
    /// An ACL from rules in priority order.
    pub fn new(rules: &[RuleSpec]) -> Result<Self, String> {
        let prefix = |s: &str| parse_prefix(s).map(|(net, len)| (net, mask(len)));
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.sport.0 > r.sport.1 || r.dport.0 > r.dport.1 {
                    return Err(format!("rule {i}: a port range runs backwards"));
                }
                Ok(Rule {
                    src: prefix(&r.src).map_err(|e| format!("rule {i}: {e}"))?,
                    dst: prefix(&r.dst).map_err(|e| format!("rule {i}: {e}"))?,
                    proto: r.proto,
                    sport: r.sport,
                    dport: r.dport,
                    permit: r.permit,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { rules })
    }

    /// Whether the first rule matching `t` permits it.
    #[inline]
    pub fn permits(&self, t: &FiveTuple) -> bool {
        self.rules.iter().find(|r| r.matches(t)).is_some_and(|r| r.permit)
    }
}

impl NetworkFunction for Acl {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            match FiveTuple::of(ctx.pool.data(id)) {
                Some(t) if self.permits(&t) => out.push(0, id),
                _ => ctx.drop_packet(id),
            }
        }
        input.clear();
    }
}
