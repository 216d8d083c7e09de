"""A router's interfaces (addresses, MAC, MTU, neighbours set by hand)
and the rate at which it sends ICMP errors.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional, Sequence, cast

from sluice.checked import Part
from sluice.description import InterfaceJson, IcmpSettingsJson

__all__ = ["Neighbor", "NeighborTable", "Interface", "IcmpSettings"]


@dataclass(frozen=True)
class Neighbor:
    """A neighbour set by hand (a static entry).

    `address`: Its IPv4 or IPv6 address.
    `mac`: Its MAC.
    """

    address: str
    mac: str


@dataclass(frozen=True)
class NeighborTable:
    """A neighbour table's size and timers (Linux's neighbour settings of the same meaning).

    `capacity`: Entries it holds (rounded up to a power of two; 16..=65536).
    `reachable_ms`: How long an answer keeps a neighbour reachable (ms; Linux's
        base_reachable_time).
    `retrans_ms`: Between two requests for one address (ms; Linux's
        retrans_time).
    `probes`: Requests for an address before it is unreachable (Linux's
        mcast_solicit).
    """

    capacity: int = 1024
    reachable_ms: float = 30000.0
    retrans_ms: float = 1000.0
    probes: int = 3


@dataclass(frozen=True)
class Interface(Part):
    """An interface of a router as descriptions write it: its name (as its
    ports name it), addresses, MAC, MTU and neighbours set by hand.

    `name`: The interface as its ports name it (`sw1` of `af_packet:sw1`), or a
        name of its own where no port opens it (a simulated router).
    `addresses`: Its addresses with their prefix lengths, IPv4 and IPv6
        ("10.0.1.254/24", "2001:db8:1::fe/64"); an IPv6 link-local address is
        made from its MAC besides.
    `mac`: Its MAC (absent: the device's, where a port opens it; else one made
        from its place).
    `mtu`: Its MTU (bytes of IP packet, 68..=65517; absent: the device's, where
        a port opens it, else 1500).
    `neighbors`: Neighbours set by hand: never aged, never replaced by what is
        heard.
    `neighbor_table`: The size and timers of its neighbour table.
    """

    part: ClassVar[str] = "interface"

    name: str
    addresses: Sequence[str] = ()
    mac: Optional[str] = None
    mtu: Optional[int] = None
    neighbors: Sequence[Neighbor] = ()
    neighbor_table: NeighborTable = NeighborTable()

    def spec(self) -> InterfaceJson:
        """The JSON form the core reads."""
        return cast("InterfaceJson", super().spec())


@dataclass(frozen=True)
class IcmpSettings(Part):
    """How many ICMP errors a router sends, as descriptions write it (Linux's
    sysctls of the same names): a burst and then one an interval to each
    destination, and a rate to all.

    `ratelimit_ms`: Time between two errors to one destination, after its burst
        (ms; 0: no limit per destination).
    `burst`: Errors to one destination at once.
    `msgs_per_sec`: Errors a second to all destinations (0: no limit).
    `msgs_burst`: Errors at once to all destinations.
    """

    part: ClassVar[str] = "icmp"

    ratelimit_ms: float = 1000.0
    burst: int = 6
    msgs_per_sec: float = 1000.0
    msgs_burst: int = 50

    def spec(self) -> IcmpSettingsJson:
        """The JSON form the core reads."""
        return cast("IcmpSettingsJson", super().spec())
