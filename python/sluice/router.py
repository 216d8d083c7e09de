"""A router between real interfaces, as hosts expect one: it answers ARP
and neighbour discovery for its addresses and pings to them (reassembled
where they come in fragments, a time exceeded when some never come), refuses datagrams, connections and other
protocols to them (port unreachable, TCP reset, protocol unreachable),
resolves its next hops (holding packets meanwhile), counts TTLs and hop limits down, and
answers what it cannot forward with ICMP errors (time exceeded, no route,
fragmentation needed / packet too big, host unreachable), rate-limited as
Linux does; IPv4 packets over an egress MTU without DF are fragmented.
A router built with `icmp_errors=False` drops expired and unroutable
packets unanswered (counted by reason), a hop that traceroute does not
see; it still answers packets too big, which path MTU discovery needs.

    router([("af_packet:sw1", ["10.0.1.254/24", "2001:db8:1::fe/64"]),
            ("af_packet:sw2", ["10.0.2.254/24", "2001:db8:2::fe/64"])],
           routes=[("10.9.0.0/16", "10.0.2.100")])

Per interface: its port → `interface_input` (answers leave back out the
interface) → a shared `ttl_decrement` → a shared `lpm` (the interfaces'
networks, then the `routes` through gateways on them) → a `next_hop` per
connected network and per gateway → the port of its interface. Every
ICMP error goes to one `interface_split`, which sends it out of the
interface its packet came in on. A flow per pair of interfaces carries the
packets from one to the other's networks."""

from __future__ import annotations

import ipaddress
from typing import Optional, Sequence

from sluice.description import PipelineDefaults
from sluice.nf import InterfaceInput, InterfaceSplit, Lpm, NextHop, TtlDecrement
from sluice.pipeline import Module, Pipeline


def _interface_of(port: str) -> str:
    """The interface a port names: `sw1` of `af_packet:sw1` or `af_xdp:sw1@0`."""
    if ":" not in port:
        raise ValueError(f"port '{port}': expected BACKEND:INTERFACE, e.g. af_packet:sw1")
    return port.split(":", 1)[1].split("@", 1)[0]


def router(
    interfaces: Sequence[tuple[str, Sequence[str]]],
    routes: Sequence[tuple[str, str]] = (),
    *,
    name: str = "router",
    batch_size: int = PipelineDefaults.batch_size,
    slo_us: Optional[float] = None,
    mtu: Optional[dict[str, int]] = None,
    icmp_errors: bool = True,
) -> Pipeline:
    """A router between `interfaces` — (port as BACKEND:INTERFACE, its
    addresses with prefix lengths) each — with `routes` (prefix, gateway)
    through gateways on their networks besides. `slo_us` gives each flow
    (one a pair of interfaces) a delay SLO; `mtu` sets an interface's MTU by
    its name (default: the device's); `icmp_errors=False` drops expired
    and unroutable packets without a time exceeded or destination
    unreachable (see the module documentation)."""
    if len(interfaces) < 2:
        raise ValueError(f"a router needs two interfaces or more, got {len(interfaces)}")
    names = [_interface_of(port) for port, _ in interfaces]
    if len(set(names)) != len(names):
        raise ValueError(f"interfaces named twice: {', '.join(names)}")
    networks = {n: [ipaddress.ip_interface(a).network for a in addresses] for n, (_, addresses) in zip(names, interfaces)}
    p = Pipeline(name, batch_size=batch_size)
    for n, (_, addresses) in zip(names, interfaces):
        p.interface(n, addresses, mtu=(mtu or {}).get(n))
    # The next hops: a connected one per interface, then one per gateway (on the interface whose network holds it).
    hops: list[tuple[str, Optional[str]]] = [(n, None) for n in names]
    gate_of: dict[str, int] = {}
    for prefix, gateway in routes:
        on = [n for n in names if any(ipaddress.ip_address(gateway) in net for net in networks[n])]
        if not on:
            raise ValueError(f"route {prefix} via {gateway}: no interface is on a network that holds {gateway}")
        if gateway not in gate_of:
            gate_of[gateway] = len(hops)
            hops.append((on[0], gateway))
    table = {str(net): names.index(n) for n in names for net in networks[n]}
    for prefix, gateway in routes:
        table[str(ipaddress.ip_network(prefix))] = gate_of[gateway]
    ttl = p.module("ttl", TtlDecrement(icmp=icmp_errors))
    lpm = p.module("lpm", Lpm(table, unreachable=icmp_errors))
    errors = p.module("icmp_out", InterfaceSplit(names))
    rx, inputs, tx = {}, {}, {}
    for n, (port, _) in zip(names, interfaces):
        rx[n] = p.rx_port(f"rx_{n}", port, [(f"{n}_to_{k}", str(net)) for k in names if k != n for net in networks[k]])
        tx[n] = p.tx_port(f"tx_{n}", port)
        inputs[n] = p.module(f"in_{n}", InterfaceInput(n))
        p.connect(rx[n], inputs[n])
        p.connect(inputs[n], ttl, gate=0)
        p.connect(inputs[n], tx[n], gate=1)
    p.connect(ttl, lpm, gate=0)
    if icmp_errors:
        p.connect(ttl, errors, gate=1)
        p.connect(lpm, errors, gate=len(hops))
    hop_modules: list[Module] = []
    for g, (iface, via) in enumerate(hops):
        hop = p.module(f"hop_{iface}" + (f"_via_{via}" if via else ""), NextHop(iface, via=via))
        hop_modules.append(hop)
        p.connect(lpm, hop, gate=g)
        p.connect(hop, tx[iface], gate=0)
        p.connect(hop, errors, gate=1)
    for g, n in enumerate(names):
        p.connect(errors, tx[n], gate=g)
    for a in names:
        for b in names:
            if a != b:
                p.flow(f"{a}_to_{b}", [rx[a], inputs[a], ttl, lpm, hop_modules[names.index(b)], tx[b]], slo_us=slo_us)
    return p
