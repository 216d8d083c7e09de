//! Why a network function dropped a packet: each drop at an NF's drop
//! gate is counted under one reason, per module (see
//! [`crate::ModuleCounters::nf_drops`]), so that a report and the metrics
//! say which module dropped what and why, as VPP's error counters do.

/// Why an NF dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    /// Not a frame the NF can read, or not of the kind it takes.
    Malformed,
    /// No route to its destination (and no ICMP error sent for it).
    NoRoute,
    /// Its TTL or hop limit ran out.
    TtlExpired,
    /// Refused by a rule: an ACL's deny, no entry of a table that admits only what it holds.
    Denied,
    /// Over a rate a token bucket holds it to.
    Policed,
    /// Its next hop did not answer, or too many packets waited for it.
    NoNeighbor,
    /// Too big for the egress MTU, and not to be fragmented.
    TooBig,
    /// No buffer for what the NF had to make of it (a fragment, an encapsulation).
    NoBuffer,
    /// Made redundant by a later packet of its flow (a coalesced ACK).
    Superseded,
    /// Not the router's: arrived on an interface it does not know.
    NotOurs,
}

/// How many reasons there are.
pub const DROP_REASONS: usize = 10;

/// Packets dropped by an NF, per reason (indexed by `DropReason as usize`; pkt).
pub type NfDrops = [u64; DROP_REASONS];

impl DropReason {
    /// Every reason, in index order.
    pub const ALL: [DropReason; DROP_REASONS] = [
        Self::Malformed,
        Self::NoRoute,
        Self::TtlExpired,
        Self::Denied,
        Self::Policed,
        Self::NoNeighbor,
        Self::TooBig,
        Self::NoBuffer,
        Self::Superseded,
        Self::NotOurs,
    ];

    /// Its name in reports and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::NoRoute => "no_route",
            Self::TtlExpired => "ttl_expired",
            Self::Denied => "denied",
            Self::Policed => "policed",
            Self::NoNeighbor => "no_neighbor",
            Self::TooBig => "too_big",
            Self::NoBuffer => "no_buffer",
            Self::Superseded => "superseded",
            Self::NotOurs => "not_ours",
        }
    }

    /// The reasons `drops` counts any packet under, by name.
    pub fn counted(drops: &NfDrops) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Self::ALL.iter().zip(drops).filter(|(_, &n)| n > 0).map(|(r, &n)| (r.name(), n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_is_listed_at_its_index_with_a_name_of_its_own() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        let names: std::collections::HashSet<&str> = DropReason::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), DROP_REASONS);
    }
}
