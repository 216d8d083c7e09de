//! Sluice's network functions, one file each. Each file defines its NF,
//! and beside it the NF's configuration as descriptions write it (an
//! [`NfConfig`]); the registry below makes the closed set of those,
//! [`NfSpec`], from which pipelines build them.
#![warn(missing_docs)]

pub mod acl;
mod acl_tree;
pub mod bypass;
pub mod dedup;
pub mod dscp_mark;
pub mod exact_match;
pub use sluice_core::wire::five_tuple;
mod flow_index;
pub mod flow_stats;
mod fragment;
pub mod gtpu;
pub mod icmp_error;
pub mod icmp_limit;
pub mod interface_input;
pub mod interface_split;
pub mod interfaces;
pub mod ip_checksum;
pub mod ip_options;
pub mod ip_src_rewrite;
pub mod lpm;
pub mod lpm4;
pub mod lpm6;
pub mod mac_rewrite;
pub mod merge;
pub mod multipath;
pub mod metadata;
pub mod napt;
pub mod neighbor_table;
pub mod next_hop;
pub mod nf_config;
pub mod queue;
pub mod random_split;
mod reassembly;
pub mod reframer;
mod route_rules;
pub mod replicate;
pub mod static_nat;
pub mod token_bucket;
pub mod ttl_decrement;
pub mod type_check;
pub mod vlan;
pub mod vxlan;

pub use interfaces::{InterfaceSpec, Interfaces};
pub use nf_config::{NfConfig, PROFILE_FLOWS};

use std::sync::Arc;

use serde::Deserialize;
use sluice_core::NetworkFunction;

/// The registry of NFs: `"name" => Variant(module::Spec)`, one line per NF.
/// It makes [`NfSpec`], whose every method asks the configuration of the
/// variant at hand.
macro_rules! registry {
    ($($kind:literal => $variant:ident($module:ident::$spec:ident)),* $(,)?) => {
        $(pub use $module::{$variant, $spec};)*

        /// The configuration of a network function, as pipeline descriptions
        /// carry it: `{"type": "lpm", …}` with the fields of that NF's spec.
        #[derive(Clone, Debug, PartialEq, serde::Serialize)]
        #[serde(tag = "type")]
        pub enum NfSpec {
            $(
                #[doc = concat!("`", $kind, "`: see [`", stringify!($spec), "`].")]
                #[serde(rename = $kind)]
                $variant($spec),
            )*
        }

        /// A description's NF is `{"type": KIND, …}` with the fields of that
        /// NF's own schema ([`NfSpec::schemas`]), which the Python classes of
        /// `sluice.nf` are generated from.
        impl schemars::JsonSchema for NfSpec {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                "Nf".into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "description": "A network function: `type`, the NF's name, and the fields of its configuration.",
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"enum": Self::KINDS}},
                    "additionalProperties": true,
                })
            }
        }

        impl NfSpec {
            /// Every NF's name, in the registry's order.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            /// The NF's name ("lpm", "acl", …).
            pub fn kind(&self) -> &'static str {
                match self {
                    $(NfSpec::$variant(_) => $kind,)*
                }
            }

            /// The configuration of the variant at hand.
            pub fn config(&self) -> &dyn NfConfig {
                match self {
                    $(NfSpec::$variant(spec) => spec,)*
                }
            }

            /// Reads NF `kind`'s configuration from `fields` (the description
            /// without its `type`); an error names the field at fault.
            pub fn from_fields(kind: &str, fields: &serde_json::Value) -> Result<Self, String> {
                match kind {
                    $($kind => read_fields(fields).map(NfSpec::$variant),)*
                    other => Err(format!(
                        "unknown variant `{other}`, expected one of {}",
                        Self::KINDS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    )),
                }
            }

            /// The configuration of copy `copy` in the profiler's chain of NF
            /// `kind`, if the profiler measures that NF.
            pub fn profiling(kind: &str, copy: usize) -> Option<Self> {
                match kind {
                    $($kind => <$spec as NfConfig>::profiling(copy).map(NfSpec::$variant),)*
                    _ => None,
                }
            }

            /// The configurations the fuzzer runs on arbitrary frames.
            pub fn fuzz_samples() -> Vec<Self> {
                let mut samples = Vec::new();
                $(samples.extend(<$spec as NfConfig>::fuzz_samples().into_iter().map(NfSpec::$variant));)*
                samples
            }

            /// (name, class name, JSON Schema of the configuration) of every NF:
            /// what the Python API is generated from.
            pub fn schemas() -> Vec<(&'static str, &'static str, serde_json::Value)> {
                vec![$(($kind, stringify!($variant), schemars::schema_for!($spec).to_value()),)*]
            }
        }
    };
}

registry! {
    "bypass" => Bypass(bypass::BypassSpec),
    "random_split" => RandomSplit(random_split::RandomSplitSpec),
    "type_check" => TypeCheck(type_check::TypeCheckSpec),
    "exact_match" => ExactMatch(exact_match::ExactMatchSpec),
    "lpm" => Lpm(lpm::LpmSpec),
    "ttl_decrement" => TtlDecrement(ttl_decrement::TtlDecrementSpec),
    "mac_rewrite" => MacRewrite(mac_rewrite::MacRewriteSpec),
    "ip_checksum" => IpChecksum(ip_checksum::IpChecksumSpec),
    "acl" => Acl(acl::AclSpec),
    "static_nat" => StaticNat(static_nat::StaticNatSpec),
    "merge" => Merge(merge::MergeSpec),
    "queue" => Queue(queue::QueueSpec),
    "replicate" => Replicate(replicate::ReplicateSpec),
    "dedup" => Dedup(dedup::DedupSpec),
    "vlan_pop" => VlanPop(vlan::VlanPopSpec),
    "vlan_push" => VlanPush(vlan::VlanPushSpec),
    "set_metadata" => SetMetadata(metadata::SetMetadataSpec),
    "split_by_metadata" => SplitByMetadata(metadata::SplitByMetadataSpec),
    "gtpu_encap" => GtpuEncap(gtpu::GtpuEncapSpec),
    "gtpu_decap" => GtpuDecap(gtpu::GtpuDecapSpec),
    "vxlan_encap" => VxlanEncap(vxlan::VxlanEncapSpec),
    "vxlan_decap" => VxlanDecap(vxlan::VxlanDecapSpec),
    "ip_src_rewrite" => IpSrcRewrite(ip_src_rewrite::IpSrcRewriteSpec),
    "dscp_mark" => DscpMark(dscp_mark::DscpMarkSpec),
    "token_bucket" => TokenBucket(token_bucket::TokenBucketSpec),
    "napt" => Napt(napt::NaptSpec),
    "flow_stats" => FlowStats(flow_stats::FlowStatsSpec),
    "reframer" => Reframer(reframer::ReframerSpec),
    "interface_input" => InterfaceInput(interface_input::InterfaceInputSpec),
    "next_hop" => NextHop(next_hop::NextHopSpec),
    "interface_split" => InterfaceSplit(interface_split::InterfaceSplitSpec),
}

pub use acl::RuleSpec;
pub use exact_match::Field;
pub use five_tuple::FiveTuple;
pub use reframer::{ReframerBypass, ReframerConfig};

/// One NF's configuration from its fields; the error names the field
/// ("vlan: invalid value: integer `-1`, expected u16").
fn read_fields<T: serde::de::DeserializeOwned>(fields: &serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(fields).map_err(|e| {
        let message = e.inner().to_string();
        let path = e.path().to_string();
        // An unknown key's path ends at the key itself: name where it sits.
        let key = message.strip_prefix("unknown field `").and_then(|rest| rest.split('`').next());
        let path = key.and_then(|key| path.strip_suffix(key)).map_or(path.as_str(), |parent| parent.trim_end_matches('.'));
        match path {
            "." | "" => message,
            path => format!("{path}: {message}"),
        }
    })
}

impl<'de> Deserialize<'de> for NfSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut fields = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let kind = match fields.remove("type") {
            Some(serde_json::Value::String(kind)) => kind,
            Some(other) => return Err(D::Error::custom(format!("`type` must be an NF's name, not {other}"))),
            None => return Err(D::Error::missing_field("type")),
        };
        NfSpec::from_fields(&kind, &serde_json::Value::Object(fields)).map_err(D::Error::custom)
    }
}

impl NfSpec {
    /// Number of outgates the NF will have (0 when its configuration is invalid).
    pub fn outgates(&self) -> usize {
        self.config().outgates()
    }

    /// Number of ingates the NF will have.
    pub fn ingates(&self) -> usize {
        self.config().ingates()
    }

    /// The queue the walker keeps in front of the module (pkt), for a `queue`.
    pub fn queue_capacity(&self) -> Option<usize> {
        self.config().queue_capacity()
    }

    /// The most packets the NF keeps between runs (pkt; a reframer's `max_held`).
    pub fn most_held(&self) -> usize {
        self.config().most_held()
    }

    /// The bound of the hold time the run's hold controller sets (ns), for
    /// a reframer under SLO control.
    pub fn max_hold_ns(&self) -> Option<u64> {
        self.config().max_hold_ns()
    }

    /// What the slots of the NF's own counters count, in order (see
    /// [`sluice_core::NetworkFunction::read_counters`]); empty for NFs that keep none.
    pub fn counter_names(&self) -> &'static [&'static str] {
        self.config().counter_names()
    }

    /// The cost model the NF's own parameters imply (ns), if they imply one.
    pub fn intrinsic_profile(&self) -> Option<sluice_core::Profile> {
        self.config().intrinsic_profile()
    }

    /// Builds the NF in a pipeline without interfaces, or says what is
    /// wrong with the configuration.
    pub fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        self.build_on(&Interfaces::none())
    }

    /// Builds the NF in a pipeline of `interfaces` (see [`NfConfig::build_on`]).
    pub fn build_on(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        self.check_table()?;
        self.config().build_on(interfaces)
    }

    /// Builds the NF for a simulator, which charges time by the cost model:
    /// NFs that only burn time become free pass-throughs.
    pub fn build_modelled(&self, interfaces: &Arc<Interfaces>) -> Result<Box<dyn NetworkFunction>, String> {
        self.check_table()?;
        self.config().build_modelled(interfaces)
    }

    /// The NF kinds the profiler measures.
    pub fn profiled_kinds() -> Vec<&'static str> {
        Self::KINDS.iter().copied().filter(|kind| Self::profiling(kind, 0).is_some()).collect()
    }

    /// Refuses tables beyond [`sluice_core::limits::MAX_TABLE_ENTRIES`].
    fn check_table(&self) -> Result<(), String> {
        use sluice_core::limits::MAX_TABLE_ENTRIES;
        let entries = self.config().table_entries();
        if entries > MAX_TABLE_ENTRIES {
            return Err(format!("{entries} table entries, more than {MAX_TABLE_ENTRIES}"));
        }
        Ok(())
    }
}
