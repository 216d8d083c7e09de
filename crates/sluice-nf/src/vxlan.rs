//! `vxlan_encap` and `vxlan_decap`: Ethernet frames tunnelled in
//! Ethernet/IPv4 or IPv6/UDP(4789)/VXLAN (RFC 7348), the network id in the mark.

use sluice_core::DropReason;
use sluice_core::wire::ethernet::{parse_mac, Frame, Mac};
use sluice_core::wire::udp_tunnel::{payload_offset, Outer};
use sluice_core::wire::{vxlan, Endpoints};
use sluice_core::{keep_or_drop, Batch, NetworkFunction, NfContext, Outputs, PacketId};

/// Tunnels each Ethernet frame, network id = the packet's mark (24 bits);
/// frames that do not fit the headroom are dropped.
pub struct VxlanEncap {
    outer: Outer,
}

impl VxlanEncap {
    /// A tunnel between `ends` and the outer Ethernet addresses.
    pub fn new(ends: Endpoints, src_mac: Mac, dst_mac: Mac) -> Self {
        Self { outer: Outer { src_mac, dst_mac, ends } }
    }

    fn encap(&self, ctx: &mut NfContext<'_>, id: PacketId) -> bool {
        let inner_len = ctx.pool.data(id).len();
        // Bytes VXLAN puts in front of the inner frame.
        let added = self.outer.headers_len() + vxlan::HEADER_LEN;
        if Frame::new_checked(ctx.pool.data(id)).is_err() || inner_len + added > u16::MAX as usize {
            return false;
        }
        let vni = ctx.pool.meta(id).mark & 0x00ff_ffff;
        if !ctx.pool.prepend(id, added) {
            return false;
        }
        let frame = ctx.pool.data_mut(id);
        vxlan::write_header(&mut frame[self.outer.headers_len()..added], vni);
        // A source port from the network id spreads tunnels over receive queues (RFC 7348 §5).
        let src_port = 49152 | (vni as u16 & 0x3fff);
        self.outer.write(frame, src_port, vxlan::PORT, vxlan::HEADER_LEN + inner_len);
        true
    }
}

impl NetworkFunction for VxlanEncap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        keep_or_drop(ctx, input, out, DropReason::NoBuffer, |ctx, id| self.encap(ctx, id));
    }
}

/// Takes the Ethernet frame out of a VXLAN tunnel, the network id into
/// the mark; anything else is dropped.
#[derive(Default)]
pub struct VxlanDecap;

impl VxlanDecap {
    fn locate(frame: &[u8]) -> Option<(usize, u32)> {
        let at = payload_offset(frame, vxlan::PORT)?;
        let vni = vxlan::parse(&frame[at..]).ok()?;
        let inner = at + vxlan::HEADER_LEN;
        Frame::new_checked(&frame[inner..]).ok()?;
        Some((inner, vni))
    }
}

impl NetworkFunction for VxlanDecap {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            match Self::locate(ctx.pool.data(id)) {
                Some((inner, vni)) => {
                    ctx.pool.strip(id, inner);
                    ctx.pool.meta_mut(id).mark = vni;
                    out.push(0, id);
                }
                None => ctx.drop_packet(id, DropReason::Malformed),
            }
        }
        input.clear();
    }
}

/// `vxlan_encap`: tunnels Ethernet frames in VXLAN from `src_ip` to
/// `dst_ip`, network id = the packet's mark.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VxlanEncapSpec {
    /// Outer source address, IPv4 or IPv6.
    pub src_ip: String,
    /// Outer destination address, of the source's family.
    pub dst_ip: String,
    /// Outer source MAC.
    pub src_mac: String,
    /// Outer destination MAC.
    pub dst_mac: String,
}

impl crate::NfConfig for VxlanEncapSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(VxlanEncap::new(Endpoints::parse(&self.src_ip, &self.dst_ip)?, parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?)))
    }

    fn fuzz_samples() -> Vec<Self> {
        let mac = |m: &str| m.to_string();
        let tunnel = |src: &str, dst: &str| Self { src_ip: src.into(), dst_ip: dst.into(), src_mac: mac("02:00:00:00:00:01"), dst_mac: mac("02:00:00:00:00:02") };
        vec![tunnel("1.1.1.1", "2.2.2.2"), tunnel("2001:db8::1", "2001:db8::2")]
    }
}

/// `vxlan_decap`: takes Ethernet frames out of VXLAN; mark = network id.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VxlanDecapSpec {}

impl crate::NfConfig for VxlanDecapSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(VxlanDecap))
    }

    fn fuzz_samples() -> Vec<Self> {
        vec![Self {}]
    }
}
