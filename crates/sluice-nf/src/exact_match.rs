//! `exact_match(field, table)`: a hash table from a header field to a gate.
//! It is the MAC splitter, the VLAN splitter, the user and bearer selectors
//! and the merge splitter of the reference pipelines.

use sluice_core::DropReason;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};
use std::net::IpAddr;

use rustc_hash::FxHasher;
use serde::{Deserialize, Serialize};
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, MAX_BURST};

use sluice_core::wire::ethernet::{parse_mac, Frame};
use sluice_core::wire::{ip_of, l4, Ip, Malformed};

/// The header field an exact-match table keys on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// Destination MAC.
    DstMac,
    /// Source MAC.
    SrcMac,
    /// 802.1Q VLAN id.
    VlanId,
    /// IPv4 or IPv6 source address.
    SrcIp,
    /// IPv4 or IPv6 destination address.
    DstIp,
    /// UDP/TCP source port.
    SrcPort,
    /// UDP/TCP destination port.
    DstPort,
}

/// A field's value as a table key: a MAC, VLAN id or port as a number, an
/// IPv6 address as its integer and an IPv4 one as the IPv4-mapped IPv6
/// address (::ffff:a.b.c.d), so that one table holds both families.
pub type Key = u128;

/// The key of an IPv4 address.
fn v4_key(addr: u32) -> Key {
    0xffff << 32 | addr as Key
}

impl Field {
    /// The key of `frame`, or why it has none.
    #[inline]
    fn key(self, frame: &[u8]) -> Result<Key, Malformed> {
        let mac = |m: [u8; 6]| m.iter().fold(0, |k, &b| k << 8 | b as Key);
        let address = |ip: Ip<&[u8]>, src: bool| match ip {
            Ip::V4(h) => v4_key(if src { h.src() } else { h.dst() }),
            Ip::V6(h) => if src { h.src() } else { h.dst() },
        };
        Ok(match self {
            Field::DstMac => mac(Frame::new_checked(frame)?.dst()),
            Field::SrcMac => mac(Frame::new_checked(frame)?.src()),
            Field::VlanId => Frame::new_checked(frame)?.vlan_id().ok_or(Malformed::Unexpected)? as Key,
            Field::SrcIp => address(ip_of(frame)?, true),
            Field::DstIp => address(ip_of(frame)?, false),
            Field::SrcPort | Field::DstPort => {
                let ip = ip_of(frame)?;
                let (protocol, upper) = ip.upper()?;
                let (src, dst) = l4::ports(protocol, upper)?;
                if self == Field::SrcPort { src as Key } else { dst as Key }
            }
        })
    }

    /// Parses a key written the field's way: a MAC, an IPv4 or IPv6 address, or a number.
    pub fn parse_key(self, s: &str) -> Result<Key, String> {
        match self {
            Field::DstMac | Field::SrcMac => Ok(parse_mac(s)?.iter().fold(0, |k, &b| k << 8 | b as Key)),
            Field::SrcIp | Field::DstIp => match s.parse::<IpAddr>() {
                Ok(IpAddr::V4(a)) => Ok(v4_key(a.into())),
                Ok(IpAddr::V6(a)) => Ok(a.into()),
                Err(_) => Err(format!("'{s}' is not an IPv4 or IPv6 address")),
            },
            Field::VlanId | Field::SrcPort | Field::DstPort => {
                let max = if self == Field::VlanId { 4095 } else { 65535 };
                s.parse::<Key>().ok().filter(|v| *v <= max).ok_or_else(|| format!("'{s}' is not a {self:?} (0..={max})"))
            }
        }
    }
}

/// Tables of up to this many entries are scanned rather than hashed.
const SCANNED: usize = 4;

/// The table behind `exact_match`: keys to gates. A small one (a MAC
/// splitter's one or two entries) is an array scanned in order, cheaper
/// than hashing the key; a larger one a hash map (FxHash).
pub enum ExactTable<K = u64> {
    /// At most `SCANNED` entries.
    Scanned(Box<[(K, u16)]>),
    /// More.
    Hashed(HashMap<K, u16, BuildHasherDefault<FxHasher>>),
}

impl<K: Copy + Eq + Hash> ExactTable<K> {
    /// A table of `(key, gate)` entries; a key may appear once.
    pub fn new(entries: &[(K, u16)]) -> Result<Self, K> {
        let mut map: HashMap<K, u16, BuildHasherDefault<FxHasher>> = HashMap::default();
        for &(k, g) in entries {
            if map.insert(k, g).is_some() {
                return Err(k);
            }
        }
        Ok(if entries.len() <= SCANNED { Self::Scanned(entries.into()) } else { Self::Hashed(map) })
    }

    /// The gate of `key`.
    #[inline]
    pub fn lookup(&self, key: K) -> Option<u16> {
        match self {
            Self::Scanned(entries) => entries.iter().find(|e| e.0 == key).map(|e| e.1),
            Self::Hashed(map) => map.get(&key).copied(),
        }
    }
}

/// An exact-match table as narrow as its keys allow: 64-bit keys (every
/// field's but IPv6 addresses) hash in one round.
enum Table {
    Narrow(ExactTable<u64>),
    Wide(ExactTable<Key>),
}

impl Table {
    fn new(entries: &[(Key, u16)]) -> Result<Self, Key> {
        let narrow: Option<Vec<(u64, u16)>> = entries.iter().map(|&(k, g)| u64::try_from(k).ok().map(|k| (k, g))).collect();
        match narrow {
            Some(narrow) => ExactTable::new(&narrow).map(Table::Narrow).map_err(Key::from),
            None => ExactTable::new(entries).map(Table::Wide),
        }
    }

    /// The gate of `key` (a key wider than a narrow table's is in none of its entries).
    #[inline]
    fn lookup(&self, key: Key) -> Option<u16> {
        match self {
            Table::Narrow(t) => u64::try_from(key).ok().and_then(|k| t.lookup(k)),
            Table::Wide(t) => t.lookup(key),
        }
    }
}

/// Sends each packet to the gate its field's value maps to; unmatched
/// packets to `default` or, without one, and malformed ones, to the drop gate.
pub struct ExactMatch {
    field: Field,
    table: Table,
    default: Option<u16>,
    gates: usize,
    keys: [Result<Key, Malformed>; MAX_BURST],
}

impl ExactMatch {
    /// A table on `field` from keys (as [`Field::parse_key`] gives them) to gates.
    pub fn new(field: Field, entries: &[(Key, u16)], default: Option<u16>) -> Result<Self, String> {
        let table = Table::new(entries).map_err(|k| format!("key {k:#x} appears twice in the {field:?} table"))?;
        let gates = crate::nf_config::gate_count(entries.iter().map(|e| e.1), default);
        if gates == 0 {
            return Err("an exact-match table needs an entry or a default gate".into());
        }
        Ok(Self { field, table, default, gates, keys: [Err(Malformed::Truncated); MAX_BURST] })
    }
}

impl NetworkFunction for ExactMatch {
    fn outgates(&self) -> usize {
        self.gates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let ids = input.as_slice();
        for (key, &id) in self.keys.iter_mut().zip(ids) {
            *key = self.field.key(ctx.pool.data(id));
        }
        for (key, &id) in self.keys.iter().zip(ids) {
            match key.as_ref().ok().and_then(|&k| self.table.lookup(k)).or(if key.is_ok() { self.default } else { None }) {
                Some(gate) => out.push(gate as usize, id),
                None => ctx.drop_packet(id, DropReason::Denied),
            }
        }
        input.clear();
    }
}

/// `exact_match`: a hash table from a header field to a gate; unmatched
/// packets to `default_gate`, or dropped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExactMatchSpec {
    /// The field the table keys on.
    pub field: Field,
    /// (key, gate) entries; keys written as the field is (a MAC, an IPv4 or IPv6 address, a number).
    pub table: Vec<(String, u16)>,
    /// Gate of unmatched packets (absent: drop them).
    #[serde(default)]
    pub default_gate: Option<u16>,
}

impl crate::NfConfig for ExactMatchSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        let entries = self.table.iter().map(|(k, g)| Ok((self.field.parse_key(k)?, *g))).collect::<Result<Vec<_>, String>>()?;
        Ok(Box::new(ExactMatch::new(self.field, &entries, self.default_gate)?))
    }

    fn outgates(&self) -> usize {
        crate::nf_config::gate_count(self.table.iter().map(|e| e.1), self.default_gate)
    }

    fn table_entries(&self) -> usize {
        self.table.len()
    }

    /// Every flow's destination routed to gate 0: the lookup costs the
    /// same, and one egress keeps the profiler's baseline comparable.
    fn profiling(_copy: usize) -> Option<Self> {
        let table = (0..crate::PROFILE_FLOWS).map(|i| (format!("20.0.{}.1", i + 1), 0)).collect();
        Some(Self { field: Field::DstIp, table, default_gate: None })
    }

    fn fuzz_samples() -> Vec<Self> {
        let entry = |field, key: &str, default_gate| Self { field, table: vec![(key.into(), 0)], default_gate };
        vec![
            entry(Field::DstMac, "02:00:00:00:00:01", Some(1)),
            entry(Field::VlanId, "7", None),
            entry(Field::DstIp, "10.0.0.1", Some(1)),
            entry(Field::SrcIp, "2001:db8::1", Some(1)),
            entry(Field::SrcPort, "2152", Some(1)),
        ]
    }
}
