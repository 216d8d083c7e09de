//! Packet templates: real Ethernet/IPv4/UDP frames built once per stream.

use std::net::Ipv4Addr;

use etherparse::PacketBuilder;
use sluice_core::packet::MAX_PACKET_LEN;

use crate::error::{Error, Result};

/// Size of Ethernet + IPv4 + UDP headers (bytes).
const HEADERS: usize = 14 + 20 + 8;

/// An Ethernet/IPv4/UDP frame (valid checksums), 802.1Q-tagged when `vlan`
/// is set, carried in a GTP-U tunnel when `gtpu` is set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TemplateSpec {
    /// Source MAC, "aa:bb:cc:dd:ee:ff".
    #[serde(default = "default_src_mac")]
    pub src_mac: String,
    /// Destination MAC.
    #[serde(default = "default_dst_mac")]
    pub dst_mac: String,
    /// Source IPv4 address.
    #[serde(default = "default_src_ip")]
    pub src_ip: String,
    /// Destination IPv4 address.
    #[serde(default = "default_dst_ip")]
    pub dst_ip: String,
    /// UDP source port.
    #[serde(default = "default_port")]
    pub src_port: u16,
    /// UDP destination port.
    #[serde(default = "default_port")]
    pub dst_port: u16,
    /// IPv4 TTL.
    #[serde(default = "default_ttl")]
    pub ttl: u8,
    /// Frame size without FCS (bytes, ≥ 42; 4 more with a VLAN tag).
    #[serde(default = "default_size")]
    pub size: usize,
    /// 802.1Q VLAN id, for a tagged frame.
    #[serde(default)]
    pub vlan: Option<u16>,
    /// Carry the IPv4/UDP packet in a GTP-U tunnel (the fields above then
    /// describe the inner packet; `size` stays the inner frame's).
    #[serde(default)]
    pub gtpu: Option<GtpuSpec>,
}

/// The outer headers of a GTP-U tunnelled frame.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Gtpu")]
pub struct GtpuSpec {
    /// Tunnel endpoint id.
    pub teid: u32,
    /// Outer source IPv4 address.
    pub src_ip: String,
    /// Outer destination IPv4 address.
    pub dst_ip: String,
}

fn default_src_mac() -> String {
    "02:00:00:00:00:01".into()
}
fn default_dst_mac() -> String {
    "02:00:00:00:00:02".into()
}
fn default_src_ip() -> String {
    "10.0.0.1".into()
}
fn default_dst_ip() -> String {
    "20.0.1.1".into()
}
fn default_port() -> u16 {
    5000
}
fn default_ttl() -> u8 {
    64
}
fn default_size() -> usize {
    60
}

impl Default for TemplateSpec {
    fn default() -> Self {
        Self {
            src_mac: default_src_mac(),
            dst_mac: default_dst_mac(),
            src_ip: default_src_ip(),
            dst_ip: default_dst_ip(),
            src_port: default_port(),
            dst_port: default_port(),
            ttl: default_ttl(),
            size: default_size(),
            vlan: None,
            gtpu: None,
        }
    }
}

fn parse_mac(s: &str) -> Result<[u8; 6]> {
    sluice_core::wire::ethernet::parse_mac(s).map_err(Error::Template)
}

fn parse_ip(s: &str) -> Result<[u8; 4]> {
    s.parse::<Ipv4Addr>().map(|a| a.octets()).map_err(|_| Error::Template(format!("'{s}' is not an IPv4 address")))
}

impl TemplateSpec {
    /// Builds the frame: headers with valid IPv4 and UDP checksums, zero payload.
    pub fn build(&self) -> Result<Vec<u8>> {
        let headers = HEADERS + if self.vlan.is_some() { 4 } else { 0 };
        if self.size < headers || self.size > MAX_PACKET_LEN {
            return Err(Error::Template(format!("frame size {} must be within {headers}..={MAX_PACKET_LEN} bytes", self.size)));
        }
        let eth = PacketBuilder::ethernet2(parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?);
        let (src, dst) = (parse_ip(&self.src_ip)?, parse_ip(&self.dst_ip)?);
        let payload = vec![0u8; self.size - headers];
        let mut frame = Vec::with_capacity(self.size);
        let written = match self.vlan {
            Some(id) => {
                let id = etherparse::VlanId::try_new(id).map_err(|e| Error::Template(e.to_string()))?;
                eth.single_vlan(id).ipv4(src, dst, self.ttl).udp(self.src_port, self.dst_port).write(&mut frame, &payload)
            }
            None => eth.ipv4(src, dst, self.ttl).udp(self.src_port, self.dst_port).write(&mut frame, &payload),
        };
        written.map_err(|e| Error::Template(e.to_string()))?;
        match &self.gtpu {
            None => Ok(frame),
            Some(g) => self.tunnel(g, &frame[14 + if self.vlan.is_some() { 4 } else { 0 }..]),
        }
    }

    /// Outer Ethernet/IPv4/UDP(2152)/GTP-U around `inner` (an IPv4 packet).
    fn tunnel(&self, g: &GtpuSpec, inner: &[u8]) -> Result<Vec<u8>> {
        use sluice_core::wire::gtpu;
        let mut payload = vec![0u8; gtpu::HEADER_LEN];
        gtpu::write_header(&mut payload, inner.len() as u16, g.teid);
        payload.extend_from_slice(inner);
        let builder = PacketBuilder::ethernet2(parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?)
            .ipv4(parse_ip(&g.src_ip)?, parse_ip(&g.dst_ip)?, self.ttl)
            .udp(gtpu::PORT, gtpu::PORT);
        let mut frame = Vec::with_capacity(payload.len() + HEADERS);
        builder.write(&mut frame, &payload).map_err(|e| Error::Template(e.to_string()))?;
        if frame.len() > MAX_PACKET_LEN {
            return Err(Error::Template(format!("tunnelled frame of {} bytes exceeds {MAX_PACKET_LEN}", frame.len())));
        }
        Ok(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    #[test]
    fn builds_a_parseable_udp_frame_with_valid_checksum() {
        let spec = TemplateSpec { dst_ip: "20.0.3.7".into(), dst_port: 4789, ..TemplateSpec::default() };
        let frame = spec.build().unwrap();
        assert_eq!(frame.len(), 60);
        let p = SlicedPacket::from_ethernet(&frame).unwrap();
        let Some(NetSlice::Ipv4(ip)) = p.net else { panic!("not IPv4") };
        assert_eq!(ip.header().destination(), [20, 0, 3, 7]);
        let header = ip.header().to_header();
        assert_eq!(header.header_checksum, header.calc_header_checksum());
        let Some(TransportSlice::Udp(udp)) = p.transport else { panic!("not UDP") };
        assert_eq!(udp.destination_port(), 4789);
    }

    #[test]
    fn a_vlan_tag_goes_in_front_of_ipv4() {
        let frame = TemplateSpec { vlan: Some(7), size: 64, ..TemplateSpec::default() }.build().unwrap();
        assert_eq!(frame.len(), 64);
        assert_eq!(&frame[12..18], &[0x81, 0x00, 0x00, 0x07, 0x08, 0x00]);
        assert!(TemplateSpec { vlan: Some(5000), ..TemplateSpec::default() }.build().is_err());
    }

    #[test]
    fn bad_fields_are_named() {
        let e = TemplateSpec { dst_ip: "300.1.1.1".into(), ..TemplateSpec::default() }.build().unwrap_err();
        assert_eq!(e.to_string(), "packet template: '300.1.1.1' is not an IPv4 address");
        let e = TemplateSpec { src_mac: "02:00".into(), ..TemplateSpec::default() }.build().unwrap_err();
        assert!(e.to_string().contains("'02:00' is not a MAC address"));
        let e = TemplateSpec { size: 20, ..TemplateSpec::default() }.build().unwrap_err();
        assert!(e.to_string().contains("frame size 20"));
    }
}
