//! The router's interfaces as the NFs that answer for them and forward
//! through them see them: each one's addresses, MAC, MTU and neighbour
//! table, by the index received packets carry ([`PacketMeta::port`]), and
//! the ICMP limit they share.
//!
//! A pipeline builds one [`Interfaces`] from its description's
//! `interfaces` when it starts (the MAC and MTU of an interface a port
//! opens read from the device where the description gives none) and hands
//! it to every NF it builds; those that name an interface keep an `Arc`.
//!
//! [`PacketMeta::port`]: sluice_core::PacketMeta::port

use std::sync::Arc;

use sluice_core::wire::ethernet::{parse_mac, Mac};
use sluice_core::wire::{ipv4, ipv6, IpPrefix};

use crate::icmp_limit::{IcmpLimit, IcmpSettings};
use crate::neighbor_table::{v4_key, NeighborTable, Timers};

/// The MTU of an interface whose description and device give none (bytes of IP packet).
pub const DEFAULT_MTU: u32 = 1500;
/// The largest MTU an interface may have: what a large buffer holds, less its Ethernet header and tag.
pub const MAX_MTU: u32 = (sluice_core::packet::MAX_LARGE_LEN - 18) as u32;

/// An interface of a router as descriptions write it: its name (as its
/// ports name it), addresses, MAC, MTU and neighbours set by hand.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Interface")]
pub struct InterfaceSpec {
    /// The interface as its ports name it (`sw1` of `af_packet:sw1`), or a
    /// name of its own where no port opens it (a simulated router).
    pub name: String,
    /// Its addresses with their prefix lengths, IPv4 and IPv6
    /// ("10.0.1.254/24", "2001:db8:1::fe/64"); an IPv6 link-local address is
    /// made from its MAC besides.
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Its MAC (absent: the device's, where a port opens it; else one made from its place).
    #[serde(default)]
    pub mac: Option<String>,
    /// Its MTU (bytes of IP packet, 68..=65517; absent: the device's, where a port opens it, else 1500).
    #[serde(default)]
    pub mtu: Option<u32>,
    /// Neighbours set by hand: never aged, never replaced by what is heard.
    #[serde(default)]
    pub neighbors: Vec<NeighborSpec>,
    /// The size and timers of its neighbour table.
    #[serde(default)]
    pub neighbor_table: NeighborTableSpec,
}

/// A neighbour set by hand (a static entry).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Neighbor")]
pub struct NeighborSpec {
    /// Its IPv4 or IPv6 address.
    pub address: String,
    /// Its MAC.
    pub mac: String,
}

/// A neighbour table's size and timers (Linux's neighbour settings of the same meaning).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "NeighborTable")]
pub struct NeighborTableSpec {
    /// Entries it holds (rounded up to a power of two; 16..=65536).
    pub capacity: usize,
    /// How long an answer keeps a neighbour reachable (ms; Linux's base_reachable_time).
    pub reachable_ms: f64,
    /// Between two requests for one address (ms; Linux's retrans_time).
    pub retrans_ms: f64,
    /// Requests for an address before it is unreachable (Linux's mcast_solicit).
    pub probes: u8,
}

impl Default for NeighborTableSpec {
    fn default() -> Self {
        let t = Timers::default();
        Self { capacity: 1024, reachable_ms: t.reachable_ns as f64 / 1e6, retrans_ms: t.retrans_ns as f64 / 1e6, probes: t.probes }
    }
}

impl NeighborTableSpec {
    fn timers(&self, at: &str) -> Result<Timers, String> {
        let ms = |name: &str, v: f64| {
            if v.is_finite() && (1.0..=3_600_000.0).contains(&v) {
                Ok((v * 1e6).round() as u64)
            } else {
                Err(format!("{at}.neighbor_table.{name}: {v} ms must be 1..=3600000"))
            }
        };
        if !(16..=65536).contains(&self.capacity) {
            return Err(format!("{at}.neighbor_table.capacity: {} must be 16..=65536", self.capacity));
        }
        if self.probes == 0 {
            return Err(format!("{at}.neighbor_table.probes: must be ≥ 1"));
        }
        Ok(Timers { reachable_ns: ms("reachable_ms", self.reachable_ms)?, retrans_ns: ms("retrans_ms", self.retrans_ms)?, probes: self.probes })
    }
}

/// One interface.
pub struct Interface {
    /// Its name, as its ports name it.
    pub name: String,
    /// Its place in the description's interfaces: what its received packets carry.
    pub index: u16,
    /// Its MAC.
    pub mac: Mac,
    /// Its MTU (bytes of IP packet).
    pub mtu: u32,
    /// Its IPv4 addresses and their prefix lengths.
    pub v4: Vec<(u32, u8)>,
    /// Its IPv6 addresses and their prefix lengths, the link-local one (from its MAC) first.
    pub v6: Vec<(u128, u8)>,
    /// Its neighbours.
    pub neighbors: NeighborTable,
}

impl Interface {
    /// Whether `address` is one of its IPv4 addresses.
    #[inline]
    pub fn owns_v4(&self, address: u32) -> bool {
        self.v4.iter().any(|&(a, _)| a == address)
    }

    /// Whether `address` is one of its IPv6 addresses (the link-local one included).
    #[inline]
    pub fn owns_v6(&self, address: u128) -> bool {
        self.v6.iter().any(|&(a, _)| a == address)
    }

    /// Whether `peer` is on one of its IPv4 subnets.
    pub fn on_link_v4(&self, peer: u32) -> bool {
        self.v4.iter().any(|&(a, len)| (a ^ peer) & ipv4::mask(len) == 0)
    }

    /// Whether `peer` is on one of its IPv6 prefixes (link-local ones always are).
    pub fn on_link_v6(&self, peer: u128) -> bool {
        self.v6.iter().any(|&(a, len)| len > 0 && (a ^ peer) >> (128 - u32::from(len)) == 0)
    }

    /// Whether `address` is the directed broadcast address of one of its IPv4 subnets.
    pub fn is_broadcast_v4(&self, address: u32) -> bool {
        self.v4.iter().any(|&(a, len)| len < 31 && address == a | !ipv4::mask(len))
    }

    /// Its IPv4 address on the subnet of `peer`, else its first (`None`: it has none).
    pub fn v4_toward(&self, peer: u32) -> Option<u32> {
        self.v4.iter().find(|&&(a, len)| (a ^ peer) & ipv4::mask(len) == 0).or(self.v4.first()).map(|&(a, _)| a)
    }

    /// Its IPv6 address on the prefix of `peer`, else its link-local one.
    pub fn v6_toward(&self, peer: u128) -> Option<u128> {
        let on_link = |&&(a, len): &&(u128, u8)| (a ^ peer) >> (128 - u32::from(len)) == 0;
        self.v6.iter().skip(1).find(on_link).or(self.v6.first()).map(|&(a, _)| a)
    }
}

/// The IPv6 link-local address (fe80::/64) made from `mac` by modified EUI-64 (RFC 4291 App. A).
pub fn link_local(mac: Mac) -> u128 {
    let eui = [mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]];
    0xfe80u128 << 112 | u128::from(u64::from_be_bytes(eui))
}

/// The MAC of an interface neither its description nor a device gives one
/// (locally administered, from its place: 02:53:4c:00:hi:lo).
pub fn made_mac(index: u16) -> Mac {
    let [hi, lo] = index.to_be_bytes();
    [0x02, 0x53, 0x4c, 0x00, hi, lo]
}

/// The interface the NFs' fuzz samples name (see [`Interfaces::sample`]).
pub const FUZZ_INTERFACE: &str = "sample0";

/// What a device says of itself: its MAC and MTU, where a port opens it.
pub type Device = Option<(Mac, u32)>;

/// Every interface of a pipeline, and the ICMP limit they share.
#[derive(Default)]
pub struct Interfaces {
    list: Vec<Interface>,
    /// How many ICMP errors the router sends.
    pub icmp: IcmpLimit,
}

impl Interfaces {
    /// The interfaces of `specs` (in order: `interfaces[i]` is index i) and
    /// an ICMP limit of `icmp`, each interface's MAC and MTU from its
    /// description, else from `device` (what a port that opens it reads),
    /// else made; static neighbours entered. Errors name the field.
    pub fn build(specs: &[InterfaceSpec], icmp: &IcmpSettings, device: impl Fn(&str) -> Device) -> Result<Arc<Self>, String> {
        icmp.check()?;
        if specs.len() >= usize::from(sluice_core::packet::NO_PORT) {
            return Err(format!("interfaces: {} of them, at most {}", specs.len(), sluice_core::packet::NO_PORT - 1));
        }
        let mut list = Vec::with_capacity(specs.len());
        for (i, s) in specs.iter().enumerate() {
            let at = format!("interfaces[{i}]");
            if s.name.is_empty() || specs[..i].iter().any(|o| o.name == s.name) {
                return Err(format!("{at}: name '{}' is empty or used twice", s.name));
            }
            let found = device(&s.name);
            let mac = match &s.mac {
                Some(m) => parse_mac(m).map_err(|e| format!("{at}.mac: {e}"))?,
                None => found.map_or_else(|| made_mac(i as u16), |(mac, _)| mac),
            };
            let (mut v4, mut v6) = (Vec::new(), vec![(link_local(mac), 64)]);
            for (j, a) in s.addresses.iter().enumerate() {
                match parse_address(a).map_err(|e| format!("{at}.addresses[{j}]: {e}"))? {
                    IpPrefix::V4(addr, len) => v4.push((addr, len)),
                    IpPrefix::V6(addr, len) => v6.push((addr, len)),
                }
            }
            let mtu = s.mtu.or(found.map(|(_, mtu)| mtu)).unwrap_or(DEFAULT_MTU);
            let least = if v6.len() > 1 { 1280 } else { 68 };
            if !(least..=MAX_MTU).contains(&mtu) {
                return Err(format!("{at}.mtu: {mtu} bytes must be {least}..={MAX_MTU}{}", if least == 1280 { " (IPv6 needs 1280)" } else { "" }));
            }
            let neighbors = NeighborTable::new(s.neighbor_table.capacity, s.neighbor_table.timers(&at)?);
            let writer = neighbors.write();
            for (j, n) in s.neighbors.iter().enumerate() {
                let key = match parse_address(&n.address).map_err(|e| format!("{at}.neighbors[{j}].address: {e}"))? {
                    IpPrefix::V4(a, 32) => v4_key(a),
                    IpPrefix::V6(a, 128) => a,
                    _ => return Err(format!("{at}.neighbors[{j}].address: '{}' is an address, not a prefix", n.address)),
                };
                let mac = parse_mac(&n.mac).map_err(|e| format!("{at}.neighbors[{j}].mac: {e}"))?;
                if !writer.set_static(key, mac) {
                    return Err(format!("{at}.neighbors: more static neighbours near '{}' than its table holds", n.address));
                }
            }
            drop(writer);
            list.push(Interface { name: s.name.clone(), index: i as u16, mac, mtu, v4, v6, neighbors });
        }
        Ok(Arc::new(Self { list, icmp: IcmpLimit::new(icmp) }))
    }

    /// None: what NFs that name no interface are built with.
    pub fn none() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Two interfaces with addresses of both families and made MACs, for
    /// the fuzzer and tests: [`FUZZ_INTERFACE`] (10.0.1.254/24,
    /// 2001:db8:1::fe/64) and `sample1` (10.0.2.254/24, 2001:db8:2::fe/64).
    pub fn sample() -> Arc<Self> {
        let spec = |name: &str, n: u8| InterfaceSpec {
            name: name.into(),
            addresses: vec![format!("10.0.{n}.254/24"), format!("2001:db8:{n}::fe/64")],
            mac: None,
            mtu: None,
            neighbors: Vec::new(),
            neighbor_table: NeighborTableSpec::default(),
        };
        Self::build(&[spec(FUZZ_INTERFACE, 1), spec("sample1", 2)], &IcmpSettings::default(), |_| None).expect("valid sample interfaces")
    }

    /// Every interface, by index.
    pub fn all(&self) -> &[Interface] {
        &self.list
    }

    /// The interface packets carrying port `index` arrived on, if any.
    #[inline]
    pub fn get(&self, index: u16) -> Option<&Interface> {
        self.list.get(usize::from(index))
    }

    /// The interface named `name`, or an error that names it and those there are.
    pub fn named(&self, name: &str) -> Result<&Interface, String> {
        self.list.iter().find(|i| i.name == name).ok_or_else(|| match self.list.len() {
            0 => format!("interface '{name}': the pipeline declares no interfaces (\"interfaces\": [{{\"name\": \"{name}\", \"addresses\": [...]}}])"),
            _ => format!("no interface named '{name}' (the pipeline's: {})", self.list.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(", ")),
        })
    }

    /// Whether `address` is one of the router's IPv4 addresses, on any interface.
    #[inline]
    pub fn owns_v4(&self, address: u32) -> bool {
        self.list.iter().any(|i| i.owns_v4(address))
    }

    /// Whether `address` is one of the router's IPv6 addresses, on any interface.
    #[inline]
    pub fn owns_v6(&self, address: u128) -> bool {
        self.list.iter().any(|i| i.owns_v6(address))
    }
}

/// An interface address with its prefix length ("10.0.1.254/24"), the
/// address kept whole; a bare address is a /32 or /128.
fn parse_address(s: &str) -> Result<IpPrefix, String> {
    let (addr, len) = s.split_once('/').map_or((s, None), |(a, l)| (a, Some(l)));
    let bad = || format!("'{s}' is not an address like 10.0.1.254/24 or 2001:db8:1::fe/64");
    let len = |max: u8| len.map_or(Ok(max), |l| l.parse::<u8>().ok().filter(|&l| l <= max).ok_or_else(bad));
    match addr.parse::<std::net::IpAddr>().map_err(|_| bad())? {
        std::net::IpAddr::V4(a) => Ok(IpPrefix::V4(u32::from(a), len(32)?)),
        std::net::IpAddr::V6(a) => Ok(IpPrefix::V6(u128::from(a), len(128)?)),
    }
}

/// Checks that `address` (IPv4 or IPv6) names one host, for the control API.
pub fn neighbor_key(address: &str) -> Result<u128, String> {
    match parse_address(address)? {
        IpPrefix::V4(a, 32) => Ok(v4_key(a)),
        IpPrefix::V6(a, 128) if !ipv6::is_unroutable_source(a) => Ok(a),
        _ => Err(format!("'{address}' is not a neighbour's address (an IPv4 or unicast IPv6 address)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, addresses: &[&str]) -> InterfaceSpec {
        InterfaceSpec { name: name.into(), addresses: addresses.iter().map(|&a| a.into()).collect(), mac: None, mtu: None, neighbors: vec![], neighbor_table: NeighborTableSpec::default() }
    }

    #[test]
    fn addresses_macs_and_mtus_come_from_the_description_then_the_device_then_defaults() {
        let mut a = spec("sw1", &["10.0.1.254/24", "2001:db8:1::fe/64"]);
        a.neighbors.push(NeighborSpec { address: "10.0.1.1".into(), mac: "02:00:00:00:01:01".into() });
        let b = InterfaceSpec { mtu: Some(1400), ..spec("sw2", &["10.0.2.254/24"]) };
        let found = |name: &str| (name == "sw1").then_some(([2, 0, 0, 0, 0, 0xfe], 9000));
        let ifs = Interfaces::build(&[a, b], &IcmpSettings::default(), found).unwrap();
        let (sw1, sw2) = (ifs.named("sw1").unwrap(), ifs.get(1).unwrap());
        assert_eq!((sw1.mac, sw1.mtu), ([2, 0, 0, 0, 0, 0xfe], 9000));
        assert_eq!((sw2.mac, sw2.mtu), (made_mac(1), 1400));
        assert_eq!(sw1.v6[0].0, "fe80::ff:fe00:fe".parse::<std::net::Ipv6Addr>().unwrap().into(), "link-local from the MAC");
        assert!(sw1.owns_v4(0x0a00_01fe) && ifs.owns_v4(0x0a00_02fe) && !ifs.owns_v4(0x0a00_0101));
        assert_eq!(sw1.v4_toward(0x0a00_0105), Some(0x0a00_01fe));
        assert!(sw1.is_broadcast_v4(0x0a00_01ff) && !sw1.is_broadcast_v4(0x0a00_0101));
        let static_entry = sw1.neighbors.lookup(v4_key(0x0a00_0101), 0).unwrap();
        assert_eq!((static_entry.mac, static_entry.state), ([2, 0, 0, 0, 1, 1], crate::neighbor_table::State::Static));
        assert!(ifs.named("sw3").err().unwrap().contains("sw1, sw2"));
    }

    #[test]
    fn bad_interfaces_are_refused_by_their_field() {
        let build = |s: InterfaceSpec| Interfaces::build(&[s], &IcmpSettings::default(), |_| None).err().unwrap();
        assert!(build(spec("a", &["10.0.1.300/24"])).starts_with("interfaces[0].addresses[0]"));
        assert!(build(InterfaceSpec { mtu: Some(1000), ..spec("a", &["2001:db8::1/64"]) }).contains("IPv6 needs 1280"));
        assert!(build(InterfaceSpec { mac: Some("02:00".into()), ..spec("a", &[]) }).starts_with("interfaces[0].mac"));
        let mut n = spec("a", &[]);
        n.neighbors.push(NeighborSpec { address: "10.0.0.0/24".into(), mac: "02:00:00:00:00:01".into() });
        assert!(build(n).contains("is an address, not a prefix"));
        let twice = Interfaces::build(&[spec("a", &[]), spec("a", &[])], &IcmpSettings::default(), |_| None).err().unwrap();
        assert!(twice.contains("used twice"));
    }
}
