//! `napt(inside, public, ports, timeout)`: stateful address and port
//! translation for UDP and TCP, with a per-flow table and idle timeouts.

use sluice_core::DropReason;
use std::collections::HashMap;

use ahash::RandomState;

use sluice_core::wire::ip_protocol;
use sluice_core::wire::ipv4::{mask, parse_prefix};
use sluice_core::wire::{ip_of_mut, l4, Ip};
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs, PacketId};

/// An inside flow: source, source port, destination, destination port, protocol.
type FlowKey = (u32, u16, u32, u16, u8);

struct Binding {
    port: u16,
    last_ns: u64,
}

/// Outbound UDP/TCP packets from `inside` leave from `public` on a port
/// allocated per flow (a run of one flow's packets looks its binding up
/// once); inbound packets to a bound public port are
/// translated back while the binding is fresh (used within `timeout`).
/// Other packets, IPv6 among them (no NAT66), pass unchanged; non-IP
/// and malformed packets, and packets that find no free port, or reach
/// an unbound or expired public port, are dropped. The tables are sized
/// for every port up front, so the packet path does not allocate.
pub struct Napt {
    inside: u32,
    inside_mask: u32,
    public: u32,
    timeout_ns: u64,
    /// Keyed by a hash seeded at random (aHash): fast, and an outside
    /// host cannot choose flows that collide.
    outbound: HashMap<FlowKey, Binding, RandomState>,
    inbound: HashMap<u16, FlowKey, RandomState>,
    free: Vec<u16>,
    /// The last outbound flow translated and its port, at that time (ns):
    /// the next packets of its run take them without a lookup.
    last: Option<(FlowKey, u16, u64)>,
}

impl Napt {
    /// A translator for `inside` ("a.b.c.d/len") behind `public` using ports
    /// `first..=last`, forgetting flows idle for `timeout_ns`.
    pub fn new(inside: &str, public: u32, first: u16, last: u16, timeout_ns: u64) -> Result<Self, String> {
        let (net, len) = parse_prefix(inside)?;
        if first == 0 || first > last {
            return Err(format!("NAPT port range {first}..={last} is empty or starts at 0"));
        }
        let ports = (last - first) as usize + 1;
        Ok(Self {
            inside: net,
            inside_mask: mask(len),
            public,
            timeout_ns,
            outbound: HashMap::with_capacity_and_hasher(ports, RandomState::new()),
            inbound: HashMap::with_capacity_and_hasher(ports, RandomState::new()),
            free: (first..=last).rev().collect(),
            last: None,
        })
    }

    /// Flows bound now.
    pub fn bindings(&self) -> usize {
        self.outbound.len()
    }

    /// A free port, reclaiming idle bindings when none is left.
    fn allocate(&mut self, now: u64) -> Option<u16> {
        if self.free.is_empty() {
            self.last = None;
            let (timeout, inbound, free) = (self.timeout_ns, &mut self.inbound, &mut self.free);
            self.outbound.retain(|_, b| {
                let fresh = now.saturating_sub(b.last_ns) <= timeout;
                if !fresh {
                    inbound.remove(&b.port);
                    free.push(b.port);
                }
                fresh
            });
        }
        self.free.pop()
    }

    fn translate(&mut self, ctx: &mut NfContext<'_>, id: PacketId, now: u64) -> bool {
        let mut ip = match ip_of_mut(ctx.pool.data_mut(id)) {
            Ok(Ip::V4(ip)) => ip,
            Ok(Ip::V6(_)) => return true,
            Err(_) => return false,
        };
        let proto = ip.protocol();
        if proto != ip_protocol::UDP && proto != ip_protocol::TCP {
            return true;
        }
        let Ok((sport, dport)) = l4::ports(proto, ip.payload()) else { return false };
        let (src, dst) = (ip.src(), ip.dst());
        if src & self.inside_mask == self.inside {
            let key = (src, sport, dst, dport, proto);
            let port = match self.last {
                // The run's binding, already refreshed at this time.
                Some((k, port, at)) if k == key && at == now => port,
                _ => {
                    let port = match self.outbound.get_mut(&key) {
                        Some(b) => {
                            b.last_ns = now;
                            b.port
                        }
                        None => {
                            let Some(port) = self.allocate(now) else { return false };
                            self.outbound.insert(key, Binding { port, last_ns: now });
                            self.inbound.insert(port, key);
                            port
                        }
                    };
                    self.last = Some((key, port, now));
                    port
                }
            };
            ip.set_src(self.public);
            l4::update_for_address(proto, ip.payload_mut(), src, self.public);
            l4::set_src_port(proto, ip.payload_mut(), port);
            return true;
        }
        if dst == self.public {
            let Some(&key) = self.inbound.get(&dport) else { return false };
            let binding = self.outbound.get_mut(&key).expect("both tables hold every binding");
            if now.saturating_sub(binding.last_ns) > self.timeout_ns || key.4 != proto {
                return false;
            }
            binding.last_ns = now;
            ip.set_dst(key.0);
            l4::update_for_address(proto, ip.payload_mut(), dst, key.0);
            l4::set_dst_port(proto, ip.payload_mut(), key.1);
        }
        true
    }
}

impl NetworkFunction for Napt {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let now = ctx.now();
        keep_or_drop(ctx, input, out, DropReason::Malformed, |ctx, id| self.translate(ctx, id, now));
    }
}

/// `napt`: stateful address and port translation of `inside` behind
/// `public`, on ports `first_port..=last_port`, a binding reused after
/// `timeout_s` idle.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NaptSpec {
    /// Inside prefix ("a.b.c.d/len").
    pub inside: String,
    /// Public address.
    pub public: String,
    /// First port to allocate.
    #[serde(default = "napt_defaults::first_port")]
    pub first_port: u16,
    /// Last port to allocate.
    #[serde(default = "napt_defaults::last_port")]
    pub last_port: u16,
    /// Idle time after which a binding may be reused (s, > 0).
    #[serde(default = "napt_defaults::timeout_s")]
    pub timeout_s: f64,
}

/// Defaults of a `napt`'s settings.
mod napt_defaults {
    pub fn first_port() -> u16 {
        1024
    }
    pub fn last_port() -> u16 {
        u16::MAX
    }
    pub fn timeout_s() -> f64 {
        30.0
    }
}

impl crate::NfConfig for NaptSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        let timeout_s = self.timeout_s;
        if !(timeout_s > 0.0) {
            return Err(format!("NAPT timeout {timeout_s} s must be > 0"));
        }
        let public = crate::nf_config::parse_ip(&self.public)?;
        Ok(Box::new(Napt::new(&self.inside, public, self.first_port, self.last_port, (timeout_s * 1e9) as u64)?))
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self { inside: "10.0.0.0/8".into(), public: "192.0.2.1".into(), first_port: 1024, last_port: 1100, timeout_s: 1.0 }]
    }
}
