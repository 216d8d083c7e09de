"""Packet templates: the frames a synthetic source sends.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional, cast

from sluice.checked import Part
from sluice.description import TemplateJson

__all__ = ["Gtpu", "Template"]


@dataclass(frozen=True)
class Gtpu:
    """The outer headers of a GTP-U tunnelled frame.

    `teid`: Tunnel endpoint id.
    `src_ip`: Outer source address, IPv4 or IPv6.
    `dst_ip`: Outer destination address, of the outer source's family.
    """

    teid: int
    src_ip: str
    dst_ip: str


@dataclass(frozen=True)
class Template(Part):
    """An Ethernet/IP/UDP frame (valid checksums), IPv4 or IPv6 by its
    addresses, 802.1Q-tagged when `vlan` is set, carried in a GTP-U tunnel
    when `gtpu` is set.

    `src_mac`: Source MAC, "aa:bb:cc:dd:ee:ff".
    `dst_mac`: Destination MAC.
    `src_ip`: Source address, IPv4 or IPv6.
    `dst_ip`: Destination address, of the source's family.
    `src_port`: UDP source port.
    `dst_port`: UDP destination port.
    `ttl`: IPv4 TTL or IPv6 hop limit.
    `size`: Frame size without FCS (bytes, ≥ 42 for IPv4, ≥ 62 for IPv6; 4 more
        with a VLAN tag).
    `vlan`: 802.1Q VLAN id, for a tagged frame.
    `gtpu`: Carry the IP/UDP packet in a GTP-U tunnel (the fields above then
        describe the inner packet; `size` stays the inner frame's).
    """

    part: ClassVar[str] = "template"

    src_mac: str = "02:00:00:00:00:01"
    dst_mac: str = "02:00:00:00:00:02"
    src_ip: str = "10.0.0.1"
    dst_ip: str = "20.0.1.1"
    src_port: int = 5000
    dst_port: int = 5000
    ttl: int = 64
    size: int = 60
    vlan: Optional[int] = None
    gtpu: Optional[Gtpu] = None

    def spec(self) -> TemplateJson:
        """The JSON form the core reads."""
        return cast("TemplateJson", super().spec())
