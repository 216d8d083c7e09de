//! Sluice's network functions, one file each, and the closed set of their
//! configurations ([`NfSpec`]) from which pipelines build them.
#![warn(missing_docs)]

pub mod ack_coalesce;
pub mod acl;
mod acl_tree;
pub mod bypass;
pub mod exact_match;
pub mod five_tuple;
mod flow_index;
pub mod flow_stats;
pub mod gtpu;
pub mod ip_checksum;
pub mod ip_src_rewrite;
pub mod lpm;
pub mod mac_rewrite;
pub mod merge;
pub mod queue;
pub mod dedup;
pub mod replicate;
pub mod metadata;
pub mod napt;
pub mod random_split;
pub mod reframer;
pub mod static_nat;
pub mod token_bucket;
pub mod ttl_decrement;
pub mod type_check;
pub mod vlan;
pub mod vxlan;

pub use acl::{Acl, RuleSpec};
pub use bypass::Bypass;
pub use exact_match::{ExactMatch, Field};
pub use five_tuple::FiveTuple;
pub use flow_stats::FlowStats;
pub use ip_checksum::IpChecksum;
pub use ip_src_rewrite::IpSrcRewrite;
pub use lpm::Lpm;
pub use mac_rewrite::MacRewrite;
pub use gtpu::{GtpuDecap, GtpuEncap};
pub use merge::Merge;
pub use queue::Queue;
pub use dedup::Dedup;
pub use replicate::Replicate;
pub use metadata::{SetMetadata, SplitByMetadata};
pub use napt::Napt;
pub use random_split::RandomSplit;
pub use reframer::{Reframer, ReframerConfig};
pub use static_nat::StaticNat;
pub use token_bucket::TokenBucket;
pub use ttl_decrement::TtlDecrement;
pub use type_check::TypeCheck;
pub use vlan::{VlanPop, VlanPush};
pub use vxlan::{VxlanDecap, VxlanEncap};

use sluice_core::wire::ethernet::parse_mac;

/// Outgates a table needs: one past the highest gate it names (0 when it names none).
pub(crate) fn gate_count(gates: impl IntoIterator<Item = u16>, default: Option<u16>) -> usize {
    gates.into_iter().chain(default).max().map_or(0, |g| g as usize + 1)
}

/// Parses a dotted IPv4 address into an integer.
fn parse_ip(s: &str) -> Result<u32, String> {
    s.parse::<std::net::Ipv4Addr>().map(u32::from).map_err(|_| format!("'{s}' is not an IPv4 address"))
}
use sluice_core::wire::ipv4::parse_prefix;
use sluice_core::NetworkFunction;

/// Most cycles one Bypass run may burn (of the nominal 2.6 GHz clock: 0.1 s).
pub const MAX_BYPASS_CYCLES: u64 = 260_000_000;

/// The configuration of a network function, as pipeline descriptions carry it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum NfSpec {
    /// Burns CPU cycles per batch and per packet; one outgate.
    Bypass {
        /// Cycles per batch (of a nominal 2.6 GHz clock: `bypass::CYCLES_PER_NS`).
        cycles_per_batch: u64,
        /// Cycles per packet (nominal, as above).
        cycles_per_packet: u64,
    },
    /// Sends each packet to a random gate, by weight.
    RandomSplit {
        /// One weight per outgate.
        weights: Vec<f64>,
        /// RNG seed (deterministic runs).
        #[serde(default)]
        seed: u64,
    },
    /// Frames of one EtherType to gate 0, the rest dropped.
    TypeCheck {
        /// The EtherType (2048 = IPv4, 33024 = 802.1Q).
        ether_type: u16,
    },
    /// A hash table from a header field to a gate.
    ExactMatch {
        /// The field.
        field: Field,
        /// (key, gate) entries; keys written as the field is (MAC, IPv4, number).
        table: Vec<(String, u16)>,
        /// Gate of unmatched packets (absent: drop them).
        #[serde(default)]
        default_gate: Option<u16>,
    },
    /// IPv4 longest-prefix match on the destination.
    Lpm {
        /// ("a.b.c.d/len", gate) routes.
        routes: Vec<(String, u16)>,
    },
    /// IPv4 TTL minus one; expired packets dropped.
    TtlDecrement {},
    /// Sets source and destination MAC.
    MacRewrite {
        /// New source MAC.
        src: String,
        /// New destination MAC.
        dst: String,
    },
    /// Recomputes the IPv4 header checksum.
    IpChecksum {},
    /// First-match 5-tuple rules: permit to gate 0, deny to the drop gate.
    Acl {
        /// Rules in priority order.
        rules: Vec<RuleSpec>,
    },
    /// Prefix-to-prefix address translation, both directions.
    StaticNat {
        /// Inside prefix.
        inside: String,
        /// Outside prefix of the same length.
        outside: String,
    },
    /// Removes the 802.1Q tag.
    VlanPop {},
    /// Adds an 802.1Q tag.
    VlanPush {
        /// VLAN id (0..=4095).
        vlan: u16,
    },
    /// Sets every packet's mark.
    SetMetadata {
        /// The mark.
        value: u32,
    },
    /// Steers packets by their mark.
    SplitByMetadata {
        /// (mark, gate) entries.
        table: Vec<(u32, u16)>,
        /// Gate of unknown marks (absent: drop them).
        #[serde(default)]
        default_gate: Option<u16>,
    },
    /// Tunnels IPv4 packets in GTP-U (tunnel id = mark).
    GtpuEncap {
        /// Outer source IPv4 address.
        src_ip: String,
        /// Outer destination IPv4 address.
        dst_ip: String,
        /// Outer source MAC.
        src_mac: String,
        /// Outer destination MAC.
        dst_mac: String,
    },
    /// Takes IPv4 packets out of GTP-U (mark = tunnel id).
    GtpuDecap {
        /// Inner source MAC.
        src_mac: String,
        /// Inner destination MAC.
        dst_mac: String,
    },
    /// Tunnels Ethernet frames in VXLAN (network id = mark).
    VxlanEncap {
        /// Outer source IPv4 address.
        src_ip: String,
        /// Outer destination IPv4 address.
        dst_ip: String,
        /// Outer source MAC.
        src_mac: String,
        /// Outer destination MAC.
        dst_mac: String,
    },
    /// Takes Ethernet frames out of VXLAN (mark = network id).
    VxlanDecap {},
    /// Sets the IPv4 source address.
    IpSrcRewrite {
        /// The new source address.
        addr: String,
    },
    /// A rate limiter; non-conforming packets dropped.
    TokenBucket {
        /// Rate (pkt/s).
        rate_pps: f64,
        /// Bucket depth (pkt).
        burst: f64,
    },
    /// Stateful address and port translation.
    Napt {
        /// Inside prefix.
        inside: String,
        /// Public address.
        public: String,
        /// First port to allocate.
        first_port: u16,
        /// Last port to allocate.
        last_port: u16,
        /// Idle time after which a binding may be reused (s).
        timeout_s: f64,
    },
    /// Several ingates into one outgate.
    Merge {
        /// Number of ingates.
        ingates: usize,
    },
    /// A task boundary: a queue of `capacity` packets in front of the module, served a batch at a time.
    Queue {
        /// Packets the queue holds (512..=2^20).
        capacity: usize,
    },
    /// Each packet out of gate 0 and a copy out of each of gates 1..=copies.
    Replicate {
        /// Copies per packet (≥ 1).
        copies: usize,
    },
    /// Packets, bytes, first and last seen per 5-tuple flow.
    FlowStats {
        /// Flows the table holds (sized up front; beyond, new flows pass uncounted).
        #[serde(default = "flow_stats_max_flows")]
        max_flows: usize,
    },
    /// Holds packets per 5-tuple flow up to `t_buff_us` and sends them flow
    /// by flow (flow-aware batching, see [`reframer`]).
    Reframer {
        /// The longest a packet is held (µs, > 0).
        t_buff_us: f64,
        /// A flow leaves once it holds this many packets (pkt, 1..=256).
        #[serde(default = "reframer_defaults::max_burst")]
        max_burst: usize,
        /// Flows tracked (the table never grows).
        #[serde(default = "reframer_defaults::max_flows")]
        max_flows: usize,
        /// Packets held at most (pkt); beyond, the longest-waiting flow leaves early.
        #[serde(default = "reframer_defaults::max_held")]
        max_held: usize,
        /// The order of flows released together.
        #[serde(default)]
        priority: reframer::Priority,
        /// Packets never held.
        #[serde(default)]
        bypass: BypassSpec,
        /// Drop pure ACKs that the next one of their flow, sent with them,
        /// makes redundant (see [`ack_coalesce`]).
        #[serde(default)]
        coalesce_acks: bool,
        /// Let the run's hold controller choose the hold time from the
        /// delay slack of the flows through it, up to `t_buff_us`.
        #[serde(default)]
        slo_control: bool,
    },
    /// The first copy of each (flow, sequence number) from any ingate; later copies dropped.
    Dedup {
        /// Number of ingates (paths).
        ingates: usize,
        /// Flow ids 0..flows are de-duplicated.
        flows: usize,
    },
}

/// Packets a `reframer` never holds, as descriptions write them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BypassSpec {
    /// TCP segments with SYN, FIN or RST.
    #[serde(default = "reframer_defaults::tcp_control")]
    pub tcp_control: bool,
    /// The first this many packets of every flow (so flows this short are never delayed).
    #[serde(default)]
    pub first_packets: u64,
    /// Packets with one of these DSCP values (0..=63).
    #[serde(default)]
    pub dscp: Vec<u8>,
}

impl Default for BypassSpec {
    fn default() -> Self {
        Self { tcp_control: reframer_defaults::tcp_control(), first_packets: 0, dscp: Vec::new() }
    }
}

impl BypassSpec {
    fn rules(&self) -> Result<reframer::BypassRules, String> {
        let mut dscp = 0u64;
        for &d in &self.dscp {
            if d > 63 {
                return Err(format!("reframer bypass DSCP {d} is outside 0..=63"));
            }
            dscp |= 1 << d;
        }
        Ok(reframer::BypassRules { tcp_control: self.tcp_control, first_packets: self.first_packets, dscp })
    }
}

/// A reframer's hold time in ns (at least 1).
fn t_buff_ns(us: f64) -> u64 {
    (us * 1e3).round().max(1.0) as u64
}

fn flow_stats_max_flows() -> usize {
    1 << 20
}

/// Defaults of a `reframer`'s settings.
mod reframer_defaults {
    pub fn max_burst() -> usize {
        32
    }
    pub fn max_flows() -> usize {
        65_536
    }
    pub fn max_held() -> usize {
        4096
    }
    pub fn tcp_control() -> bool {
        true
    }
}

impl NfSpec {
    /// Number of outgates the NF will have (0 when its configuration is invalid).
    pub fn outgates(&self) -> usize {
        match self {
            NfSpec::RandomSplit { weights, .. } => weights.len(),
            NfSpec::ExactMatch { table, default_gate, .. } => gate_count(table.iter().map(|e| e.1), *default_gate),
            NfSpec::Lpm { routes } => gate_count(routes.iter().map(|r| r.1), None),
            NfSpec::SplitByMetadata { table, default_gate } => gate_count(table.iter().map(|e| e.1), *default_gate),
            NfSpec::Replicate { copies } => copies + 1,
            _ => 1,
        }
    }

    /// Number of ingates the NF will have.
    pub fn ingates(&self) -> usize {
        match self {
            NfSpec::Merge { ingates } | NfSpec::Dedup { ingates, .. } => *ingates,
            _ => 1,
        }
    }

    /// The queue the walker keeps in front of the module (pkt), for a `queue`.
    pub fn queue_capacity(&self) -> Option<usize> {
        match self {
            NfSpec::Queue { capacity } => Some(*capacity),
            _ => None,
        }
    }

    /// The most packets the NF keeps between runs (pkt; a reframer's `max_held`).
    pub fn most_held(&self) -> usize {
        match self {
            NfSpec::Reframer { max_held, .. } => *max_held,
            _ => 0,
        }
    }

    /// The bound of the hold time the run's hold controller sets (ns), for
    /// a reframer under SLO control.
    pub fn max_hold_ns(&self) -> Option<u64> {
        match self {
            NfSpec::Reframer { t_buff_us, slo_control: true, .. } => Some(t_buff_ns(*t_buff_us)),
            _ => None,
        }
    }

    /// What the slots of the NF's own counters count, in order (see
    /// [`sluice_core::NetworkFunction::read_counters`]); empty for NFs that keep none.
    pub fn counter_names(&self) -> &'static [&'static str] {
        match self {
            NfSpec::Reframer { .. } => &reframer::COUNTER_NAMES,
            NfSpec::FlowStats { .. } => &flow_stats::COUNTER_NAMES,
            _ => &[],
        }
    }

    /// The cost model the NF's own parameters imply (ns), if they imply one
    /// (a Bypass that burns no cycles implies none: nothing to control).
    pub fn intrinsic_profile(&self) -> Option<sluice_core::Profile> {
        match self {
            NfSpec::Bypass { cycles_per_batch: 0, cycles_per_packet: 0 } => None,
            NfSpec::Bypass { cycles_per_batch, cycles_per_packet } => Some(bypass::profile(*cycles_per_batch, *cycles_per_packet)),
            _ => None,
        }
    }

    /// The profiler's name for this kind of NF ("lpm", "acl", …).
    pub fn kind(&self) -> &'static str {
        match self {
            NfSpec::Bypass { .. } => "bypass",
            NfSpec::RandomSplit { .. } => "random_split",
            NfSpec::TypeCheck { .. } => "type_check",
            NfSpec::ExactMatch { .. } => "exact_match",
            NfSpec::Lpm { .. } => "lpm",
            NfSpec::TtlDecrement {} => "ttl_decrement",
            NfSpec::MacRewrite { .. } => "mac_rewrite",
            NfSpec::IpChecksum {} => "ip_checksum",
            NfSpec::Acl { .. } => "acl",
            NfSpec::StaticNat { .. } => "static_nat",
            NfSpec::Merge { .. } => "merge",
            NfSpec::VlanPop {} => "vlan_pop",
            NfSpec::SetMetadata { .. } => "set_metadata",
            NfSpec::SplitByMetadata { .. } => "split_by_metadata",
            NfSpec::GtpuEncap { .. } => "gtpu_encap",
            NfSpec::GtpuDecap { .. } => "gtpu_decap",
            NfSpec::VxlanEncap { .. } => "vxlan_encap",
            NfSpec::VxlanDecap {} => "vxlan_decap",
            NfSpec::IpSrcRewrite { .. } => "ip_src_rewrite",
            NfSpec::TokenBucket { .. } => "token_bucket",
            NfSpec::Napt { .. } => "napt",
            NfSpec::VlanPush { .. } => "vlan_push",
            NfSpec::Replicate { .. } => "replicate",
            NfSpec::Queue { .. } => "queue",
            NfSpec::Dedup { .. } => "dedup",
            NfSpec::Reframer { .. } => "reframer",
            NfSpec::FlowStats { .. } => "flow_stats",
        }
    }

    /// Builds the NF for a simulator, which charges time by the cost model:
    /// NFs that only burn time become free pass-throughs.
    pub fn build_modelled(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.check_limits()?;
        match self {
            NfSpec::Bypass { .. } => Ok(Box::new(Bypass::new(0, 0))),
            other => other.build(),
        }
    }

    /// Refuses sizes beyond the bounds of [`sluice_core::limits`] (tables,
    /// flows a de-duplicator tracks) and Bypass work so long that a batch
    /// would hold the worker for more than [`MAX_BYPASS_CYCLES`].
    fn check_limits(&self) -> Result<(), String> {
        use sluice_core::limits::{MAX_FLOWS, MAX_TABLE_ENTRIES};
        let entries = match self {
            NfSpec::ExactMatch { table, .. } => table.len(),
            NfSpec::Lpm { routes } => routes.len(),
            NfSpec::SplitByMetadata { table, .. } => table.len(),
            NfSpec::Acl { rules } => rules.len(),
            NfSpec::RandomSplit { weights, .. } => weights.len(),
            _ => 0,
        };
        if entries > MAX_TABLE_ENTRIES {
            return Err(format!("{entries} table entries, more than {MAX_TABLE_ENTRIES}"));
        }
        match *self {
            NfSpec::Dedup { flows, .. } if flows > MAX_FLOWS => Err(format!("flows {flows} is out of range 0..={MAX_FLOWS}")),
            NfSpec::Bypass { cycles_per_batch, cycles_per_packet }
                if cycles_per_batch > MAX_BYPASS_CYCLES || cycles_per_packet.saturating_mul(sluice_core::MAX_BURST as u64) > MAX_BYPASS_CYCLES =>
            {
                Err(format!("{cycles_per_batch} cycles a batch and {cycles_per_packet} a packet: a batch may take at most {MAX_BYPASS_CYCLES} cycles"))
            }
            _ => Ok(()),
        }
    }

    /// Builds the NF, or says what is wrong with the configuration.
    pub fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.check_limits()?;
        Ok(match self {
            NfSpec::Bypass { cycles_per_batch, cycles_per_packet } => Box::new(Bypass::new(*cycles_per_batch, *cycles_per_packet)),
            NfSpec::RandomSplit { weights, seed } => Box::new(RandomSplit::new(weights, *seed)?),
            NfSpec::TypeCheck { ether_type } => Box::new(TypeCheck::new(*ether_type)),
            NfSpec::ExactMatch { field, table, default_gate } => {
                let entries = table.iter().map(|(k, g)| Ok((field.parse_key(k)?, *g))).collect::<Result<Vec<_>, String>>()?;
                Box::new(ExactMatch::new(*field, &entries, *default_gate)?)
            }
            NfSpec::Lpm { routes } => {
                let routes = routes
                    .iter()
                    .map(|(p, g)| parse_prefix(p).map(|(net, len)| (net, len, *g)))
                    .collect::<Result<Vec<_>, String>>()?;
                Box::new(Lpm::new(&routes)?)
            }
            NfSpec::TtlDecrement {} => Box::new(TtlDecrement),
            NfSpec::MacRewrite { src, dst } => Box::new(MacRewrite::new(parse_mac(src)?, parse_mac(dst)?)),
            NfSpec::IpChecksum {} => Box::new(IpChecksum),
            NfSpec::Acl { rules } => Box::new(Acl::new(rules)?),
            NfSpec::StaticNat { inside, outside } => Box::new(StaticNat::new(inside, outside)?),
            NfSpec::VlanPop {} => Box::new(VlanPop),
            NfSpec::SetMetadata { value } => Box::new(SetMetadata::new(*value)),
            NfSpec::SplitByMetadata { table, default_gate } => Box::new(SplitByMetadata::new(table, *default_gate)?),
            NfSpec::GtpuEncap { src_ip, dst_ip, src_mac, dst_mac } => {
                Box::new(GtpuEncap::new(parse_ip(src_ip)?, parse_ip(dst_ip)?, parse_mac(src_mac)?, parse_mac(dst_mac)?))
            }
            NfSpec::VxlanEncap { src_ip, dst_ip, src_mac, dst_mac } => {
                Box::new(VxlanEncap::new(parse_ip(src_ip)?, parse_ip(dst_ip)?, parse_mac(src_mac)?, parse_mac(dst_mac)?))
            }
            NfSpec::VxlanDecap {} => Box::new(VxlanDecap),
            NfSpec::IpSrcRewrite { addr } => Box::new(IpSrcRewrite::new(parse_ip(addr)?)),
            NfSpec::TokenBucket { rate_pps, burst } => Box::new(TokenBucket::new(*rate_pps, *burst)?),
            NfSpec::Napt { inside, public, first_port, last_port, timeout_s } => {
                if !(*timeout_s > 0.0) {
                    return Err(format!("NAPT timeout {timeout_s} s must be > 0"));
                }
                Box::new(Napt::new(inside, parse_ip(public)?, *first_port, *last_port, (timeout_s * 1e9) as u64)?)
            }
            NfSpec::GtpuDecap { src_mac, dst_mac } => Box::new(GtpuDecap::new(parse_mac(src_mac)?, parse_mac(dst_mac)?)),
            NfSpec::VlanPush { vlan } => Box::new(VlanPush::new(*vlan)?),
            NfSpec::Merge { ingates } => {
                if *ingates == 0 {
                    return Err("a merge needs at least one ingate".into());
                }
                Box::new(Merge::new(*ingates))
            }
            NfSpec::Replicate { copies } => Box::new(Replicate::new(*copies)?),
            NfSpec::Queue { capacity } => {
                queue::check_capacity(*capacity)?;
                Box::new(Queue)
            }
            NfSpec::Dedup { ingates, flows } => Box::new(Dedup::new(*ingates, *flows)?),
            NfSpec::FlowStats { max_flows } => Box::new(FlowStats::new(*max_flows)?),
            NfSpec::Reframer { t_buff_us, max_burst, max_flows, max_held, priority, bypass, coalesce_acks, .. } => {
                if !(t_buff_us.is_finite() && *t_buff_us > 0.0 && *t_buff_us <= 1e6) {
                    return Err(format!("reframer t_buff_us {t_buff_us} must be > 0 and at most 1 s"));
                }
                Box::new(Reframer::new(ReframerConfig {
                    t_buff_ns: t_buff_ns(*t_buff_us),
                    max_burst: *max_burst,
                    max_flows: *max_flows,
                    max_held: *max_held,
                    priority: *priority,
                    bypass: bypass.rules()?,
                    coalesce_acks: *coalesce_acks,
                })?)
            }
        })
    }
}
