//! A description's flow rules (see [`FlowRuleSpec`]) made into the rules a
//! source sorts packets by ([`FlowRules`]), each refused by name where it
//! is not a prefix, not a 5-tuple, or both.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use sluice_core::wire::five_tuple::FiveTuple;
use sluice_core::wire::{Endpoints, IpPrefix};
use sluice_traffic::{FlowMatch, FlowRule, FlowRules, PrefixRule};

use crate::error::{Error, Result};
use crate::spec::{FiveTupleSpec, FlowRuleSpec, ProtoSpec};

/// The rules of `specs`, each flow's id by `flow_id` (which names a flow
/// that does not exist); `context` prefixes every error.
pub fn compile(specs: &[FlowRuleSpec], flow_id: impl Fn(&str) -> Result<u16>, context: &str) -> Result<FlowRules> {
    let rules = specs.iter().map(|s| rule(s, flow_id(&s.flow)?, context)).collect::<Result<Vec<_>>>()?;
    FlowRules::new(rules).map_err(|e| Error::Spec(format!("{context}: {e}")))
}

/// The rule of `spec`, for flow `flow`.
pub fn rule(spec: &FlowRuleSpec, flow: u16, context: &str) -> Result<FlowRule> {
    let matches = match (&spec.prefix, &spec.five_tuple) {
        (Some(prefix), None) => FlowMatch::Prefix(parse_prefix(prefix, context)?),
        (None, Some(tuple)) => FlowMatch::Tuple(five_tuple(tuple, context)?),
        _ => return Err(Error::Spec(format!("{context}: flow '{}': a rule gives a prefix or a five_tuple, one of them", spec.flow))),
    };
    Ok(FlowRule { matches, flow })
}

/// A destination prefix, IPv4 or IPv6.
pub fn parse_prefix(s: &str, context: &str) -> Result<PrefixRule> {
    let bad = |_| Error::Spec(format!("{context}: '{s}' is not an IPv4 prefix like 20.0.1.0/24 or an IPv6 prefix like 2001:db8::/48"));
    let (prefix, len) = match IpPrefix::parse(s).map_err(bad)? {
        IpPrefix::V4(net, len) => (IpAddr::from(Ipv4Addr::from(net)), len),
        IpPrefix::V6(net, len) => (IpAddr::from(Ipv6Addr::from(net)), len),
    };
    Ok(PrefixRule { prefix, len, flow: 0 })
}

fn five_tuple(t: &FiveTupleSpec, context: &str) -> Result<FiveTuple> {
    let bad = |reason: String| Error::Spec(format!("{context}: five_tuple: {reason}"));
    let proto = match &t.proto {
        ProtoSpec::Number(n) => *n,
        ProtoSpec::Name(name) => match name.as_str() {
            "icmp" => 1,
            "tcp" => 6,
            "udp" => 17,
            "icmpv6" => 58,
            other => return Err(bad(format!("proto '{other}' is none of udp, tcp, icmp, icmpv6 (or give its number)"))),
        },
    };
    Ok(match Endpoints::parse(&t.src, &t.dst).map_err(bad)? {
        Endpoints::V4(src, dst) => FiveTuple::v4(src, dst, proto, t.sport, t.dport),
        Endpoints::V6(src, dst) => FiveTuple { src, dst, proto, sport: t.sport, dport: t.dport, v6: true },
    })
}
