//! Packet templates: real Ethernet/IP/UDP frames, IPv4 or IPv6, built once per stream.

use etherparse::{IpHeaders, IpNumber, Ipv4Header, Ipv6Header, PacketBuilder};
use sluice_core::packet::MAX_PACKET_LEN;
use sluice_core::wire::Endpoints;

use crate::error::{Error, Result};

/// Size of Ethernet + UDP headers (bytes).
const ETH_UDP: usize = 14 + 8;

/// An Ethernet/IP/UDP frame (valid checksums), IPv4 or IPv6 by its
/// addresses, 802.1Q-tagged when `vlan` is set, carried in a GTP-U tunnel
/// when `gtpu` is set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TemplateSpec {
    /// Source MAC, "aa:bb:cc:dd:ee:ff".
    #[serde(default = "default_src_mac")]
    pub src_mac: String,
    /// Destination MAC.
    #[serde(default = "default_dst_mac")]
    pub dst_mac: String,
    /// Source address, IPv4 or IPv6.
    #[serde(default = "default_src_ip")]
    pub src_ip: String,
    /// Destination address, of the source's family.
    #[serde(default = "default_dst_ip")]
    pub dst_ip: String,
    /// UDP source port.
    #[serde(default = "default_port")]
    pub src_port: u16,
    /// UDP destination port.
    #[serde(default = "default_port")]
    pub dst_port: u16,
    /// IPv4 TTL or IPv6 hop limit.
    #[serde(default = "default_ttl")]
    pub ttl: u8,
    /// Frame size without FCS (bytes, ≥ 42 for IPv4, ≥ 62 for IPv6; 4 more with a VLAN tag).
    #[serde(default = "default_size")]
    pub size: usize,
    /// 802.1Q VLAN id, for a tagged frame.
    #[serde(default)]
    pub vlan: Option<u16>,
    /// Carry the IP/UDP packet in a GTP-U tunnel (the fields above then
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
    /// Outer source address, IPv4 or IPv6.
    pub src_ip: String,
    /// Outer destination address, of the outer source's family.
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

/// The source and destination addresses `src` and `dst`, of one family.
fn addresses(src: &str, dst: &str) -> Result<Endpoints> {
    Endpoints::parse(src, dst).map_err(Error::Template)
}

/// The IP header of `ends`' family (lengths and checksum filled in when written).
pub(crate) fn ip_header(ends: Endpoints, ttl: u8) -> IpHeaders {
    match ends {
        Endpoints::V4(s, d) => {
            IpHeaders::Ipv4(Ipv4Header::new(0, ttl, IpNumber::UDP, s.to_be_bytes(), d.to_be_bytes()).expect("a zero payload length is valid"), Default::default())
        }
        Endpoints::V6(s, d) => IpHeaders::Ipv6(
            Ipv6Header { traffic_class: 0, flow_label: Default::default(), payload_length: 0, next_header: IpNumber::UDP, hop_limit: ttl, source: s.to_be_bytes(), destination: d.to_be_bytes() },
            Default::default(),
        ),
    }
}

impl TemplateSpec {
    /// Builds the frame: headers with valid IP and UDP checksums, zero payload.
    pub fn build(&self) -> Result<Vec<u8>> {
        let addrs = addresses(&self.src_ip, &self.dst_ip)?;
        let tag = if self.vlan.is_some() { 4 } else { 0 };
        let headers = ETH_UDP + addrs.ip_header_len() + tag;
        if self.size < headers || self.size > MAX_PACKET_LEN {
            return Err(Error::Template(format!("frame size {} must be within {headers}..={MAX_PACKET_LEN} bytes", self.size)));
        }
        let eth = PacketBuilder::ethernet2(parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?);
        let payload = vec![0u8; self.size - headers];
        let mut frame = Vec::with_capacity(self.size);
        let ip = ip_header(addrs, self.ttl);
        let written = match self.vlan {
            Some(id) => {
                let id = etherparse::VlanId::try_new(id).map_err(|e| Error::Template(e.to_string()))?;
                eth.single_vlan(id).ip(ip).udp(self.src_port, self.dst_port).write(&mut frame, &payload)
            }
            None => eth.ip(ip).udp(self.src_port, self.dst_port).write(&mut frame, &payload),
        };
        written.map_err(|e| Error::Template(e.to_string()))?;
        match &self.gtpu {
            None => Ok(frame),
            Some(g) => self.tunnel(g, &frame[14 + tag..]),
        }
    }

    /// Outer Ethernet/IP/UDP(2152)/GTP-U around `inner` (an IP packet).
    fn tunnel(&self, g: &GtpuSpec, inner: &[u8]) -> Result<Vec<u8>> {
        use sluice_core::wire::gtpu;
        let mut payload = vec![0u8; gtpu::HEADER_LEN];
        gtpu::write_header(&mut payload, inner.len() as u16, g.teid);
        payload.extend_from_slice(inner);
        let outer = addresses(&g.src_ip, &g.dst_ip)?;
        let builder = PacketBuilder::ethernet2(parse_mac(&self.src_mac)?, parse_mac(&self.dst_mac)?).ip(ip_header(outer, self.ttl)).udp(gtpu::PORT, gtpu::PORT);
        let mut frame = Vec::with_capacity(payload.len() + ETH_UDP + outer.ip_header_len());
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
    fn ipv6_addresses_make_an_ipv6_frame_with_a_valid_udp_checksum() {
        let spec = TemplateSpec { src_ip: "2001:db8::1".into(), dst_ip: "2001:db8:1::7".into(), ttl: 9, size: 80, vlan: Some(3), ..TemplateSpec::default() };
        let frame = spec.build().unwrap();
        assert_eq!(frame.len(), 80);
        let p = SlicedPacket::from_ethernet(&frame).unwrap();
        let Some(NetSlice::Ipv6(ip)) = p.net else { panic!("not IPv6") };
        let header = ip.header().to_header();
        assert_eq!((header.hop_limit, header.destination), (9, "2001:db8:1::7".parse::<std::net::Ipv6Addr>().unwrap().octets()));
        let Some(TransportSlice::Udp(udp)) = p.transport else { panic!("not UDP") };
        assert_eq!(udp.to_header().calc_checksum_ipv6(&header, udp.payload()).unwrap(), udp.checksum());
        assert!(TemplateSpec { size: 61, ..spec }.build().unwrap_err().to_string().contains("frame size 61 must be within 66"));
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
        assert_eq!(e.to_string(), "packet template: '300.1.1.1' is not an IPv4 or IPv6 address");
        let e = TemplateSpec { dst_ip: "2001:db8::1".into(), ..TemplateSpec::default() }.build().unwrap_err();
        assert!(e.to_string().contains("source '10.0.0.1' and destination '2001:db8::1' are of different IP families"), "{e}");
        let e = TemplateSpec { src_mac: "02:00".into(), ..TemplateSpec::default() }.build().unwrap_err();
        assert!(e.to_string().contains("'02:00' is not a MAC address"));
        let e = TemplateSpec { size: 20, ..TemplateSpec::default() }.build().unwrap_err();
        assert!(e.to_string().contains("frame size 20"));
    }
}
