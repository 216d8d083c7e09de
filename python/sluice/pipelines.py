"""The reference pipelines of Batchy's evaluation (L2L3, GW, VRF, MGW and
RC, from an industry 5G benchmark suite), one call each."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from sluice.description import PipelineDefaults, SyntheticDefaults
from sluice.nf import NF, Acl, Bypass, ExactMatch, IpChecksum, Lpm, MacRewrite, RandomSplit, Rule, StaticNat, TtlDecrement, TypeCheck
from sluice.pipeline import Module, Pipeline
from sluice.profiles import cost
from sluice.traffic import Stream, Template, readable_capture

#: Delay SLO of the robot-control flow (µs).
RC_SLO_US = 35.0
#: Delay SLO of the bulk flows of RC (µs).
BULK_SLO_US = 100_000.0
#: The router's own MAC: the destination of all routed traffic.
ROUTER_MAC = "02:00:00:00:00:fe"
#: Routes in each LPM: one /24 per flow, the rest filler.
LPM_ROUTES = 500
#: EtherTypes of IPv4 and IPv6.
ETHERTYPE_IPV4, ETHERTYPE_IPV6 = 0x0800, 0x86DD
#: Bytes of a dual-stack router's IPv6 frames: Ethernet, IPv6 and UDP headers.
IPV6_FRAME = 62
#: Rules in each ACL: rule 0 permits UDP, the rest deny other /24s.
ACL_RULES = 100


def rc(n: int = 16, *, batch_size: int = PipelineDefaults.batch_size, burstiness: int = SyntheticDefaults.burstiness, seed: int = 1) -> Pipeline:
    """Robot control: a random split over n gates; gate 0 is the robot-control
    flow through Bypass(1, 1) with a 35 µs SLO, gates 1..n-1 bulk flows
    through Bypass(10000, 0) with a 100 ms SLO."""
    if n < 1:
        raise ValueError(f"rc(n) needs n ≥ 1 branches, got {n}")
    p = Pipeline(f"rc({n})", batch_size=batch_size)
    src = p.source("src", [Stream()], burstiness=burstiness)
    split = p.module("split", RandomSplit([1.0] * n, seed=seed))
    p.connect(src, split)
    for i in range(n):
        name, nf, slo = ("rc", Bypass(1, 1), RC_SLO_US) if i == 0 else (f"bulk{i}", Bypass(10_000, 0), BULK_SLO_US)
        nf_module = p.module(name, nf)
        out = p.sink(f"out_{name}")
        p.connect(split, nf_module, gate=i)
        p.connect(nf_module, out)
        p.flow(name, [src, split, nf_module, out], slo_us=slo)
    return p


def _module(p: Pipeline, name: str, nf: NF, kind: str, reference: Optional[dict[str, tuple[float, float]]] = None, *, gates: Sequence[str] = ()) -> Module:
    """A module with the cost model of its kind, if one is known (and its outgates named `gates`)."""
    t0_t1 = cost(kind, reference)
    return p.module(name, nf, t0_ns=t0_t1[0] if t0_t1 else None, t1_ns=t0_t1[1] if t0_t1 else None, gates=gates)


def _is_ipv6_hop(i: int, dual_stack: bool) -> bool:
    """Whether next hop i is reached over IPv6: the odd ones of a dual-stack router."""
    return dual_stack and i % 2 == 1


def _lpm_routes(n: int, dual_stack: bool = False) -> dict[str, int]:
    """One prefix per next hop (20.0.(i+1).0/24 → gate i; dual-stack, the
    odd hops 2001:db8:(i+1)::/48), then filler prefixes spread over the
    gates (dual-stack: /24s and /48s by turns)."""
    routes = {f"2001:db8:{i + 1:x}::/48" if _is_ipv6_hop(i, dual_stack) else f"20.0.{i + 1}.0/24": i for i in range(n)}
    for j in range(LPM_ROUTES - n):
        routes[f"2a00:0:{j:x}::/48" if _is_ipv6_hop(j, dual_stack) else f"30.{j // 256}.{j % 256}.0/24"] = j % n
    return routes


def _acl_rules() -> list[Rule]:
    return [Rule(permit=True, proto=17)] + [Rule(permit=False, dst=f"40.0.{j}.0/24") for j in range(1, ACL_RULES)]


def pcap_groups(path: str, n: int, ipv6: bool = False) -> list[list[str]]:
    """The destination /24s of a trace (and with `ipv6` its /48s) dealt to
    n flows so that each carries about the same traffic (largest first, to
    the lightest flow)."""
    from sluice import _core

    prefixes = [(prefix, count) for prefix, count in _core.pcap_prefixes(path) if ipv6 or ":" not in prefix]
    if len(prefixes) < n:
        kinds = "/24s and /48s" if ipv6 else "/24s"
        raise ValueError(f"pcap file '{path}' has {len(prefixes)} destination {kinds}, fewer than the {n} flows")
    groups: list[list[str]] = [[] for _ in range(n)]
    load = [0] * n
    for prefix, count in prefixes:
        lightest = min(range(n), key=lambda i: (load[i], i))
        groups[lightest].append(prefix)
        load[lightest] += count
    return groups


def _router(name: str, n: int, batch_size: int, burstiness: int, slo_us: Optional[float],
            branch: Callable[[Pipeline, int], list[Module]], pcap: Optional[str] = None, dual_stack: bool = False) -> Pipeline:
    """type_check → mac_split → lpm → per next hop i: `branch(i)` → egress;
    flow i: 10.0.0.1 → 20.0.(i+1).1 (`dual_stack`: odd flows 2001:db8::1 →
    2001:db8:(i+1)::1), or with `pcap`, the packets of a trace whose
    destinations fall in flow i's group of prefixes."""
    if not 1 <= n <= 250:
        raise ValueError(f"{name}(n) needs 1 ≤ n ≤ 250 next hops, got {n}")
    p = Pipeline(f"{name}({n})" + ("*" if pcap else ""), batch_size=batch_size)
    pcap = readable_capture(pcap) if pcap else None
    groups = pcap_groups(pcap, n, ipv6=dual_stack) if pcap else None
    if groups is None:
        src = p.source("src", burstiness=burstiness)
        routes = _lpm_routes(n, dual_stack)
    else:
        assert pcap is not None
        src = p.pcap_source("src", pcap, {})
        routes = {prefix: i for i, group in enumerate(groups) for prefix in group}
    type_check = _module(p, "type_check", TypeCheck(ETHERTYPE_IPV4, also=[ETHERTYPE_IPV6] if dual_stack else []), "type_check")
    # A trace's frames carry their own MACs: the MAC split then lets all of them through.
    mac_split = _module(p, "mac_split", ExactMatch("dst_mac", {ROUTER_MAC: 0}, default_gate=0 if pcap else None), "exact_match")
    lpm = _module(p, "lpm", Lpm(routes), "lpm", gates=[f"hop{i}" for i in range(n)])
    p.chain(src, type_check, mac_split, lpm)
    for i in range(n):
        modules = branch(p, i)
        out = p.sink(f"out{i}")
        p.connect(lpm, modules[0], gate=f"hop{i}")
        p.chain(*modules, out)
        path = [src, type_check, mac_split, lpm, *modules, out]
        if groups is None:
            if _is_ipv6_hop(i, dual_stack):
                template = Template(dst_mac=ROUTER_MAC, src_ip="2001:db8::1", dst_ip=f"2001:db8:{i + 1:x}::1", src_port=1000 + i, size=IPV6_FRAME)
            else:
                template = Template(dst_mac=ROUTER_MAC, src_ip="10.0.0.1", dst_ip=f"20.0.{i + 1}.1", src_port=1000 + i)
            p.flow(f"flow{i}", path, slo_us=slo_us, template=template)
        else:
            p.flow(f"flow{i}", path, slo_us=slo_us)
            p.map_pcap_flow("src", f"flow{i}", groups[i])
    return p


def _next_hop(p: Pipeline, i: int) -> list[Module]:
    return [
        _module(p, f"ttl{i}", TtlDecrement(), "ttl_decrement"),
        _module(p, f"mac_rewrite{i}", MacRewrite(src=ROUTER_MAC, dst=f"02:00:00:01:{i // 256:02x}:{i % 256:02x}"), "mac_rewrite"),
        _module(p, f"checksum{i}", IpChecksum(), "ip_checksum"),
    ]


def l2l3(n: int = 16, *, batch_size: int = PipelineDefaults.batch_size, burstiness: int = SyntheticDefaults.burstiness, slo_us: Optional[float] = None,
         pcap: Optional[str] = None) -> Pipeline:
    """An IP router with n next hops: type check, MAC split, LPM (500 routes),
    then per next hop TTL decrement, MAC rewrite and checksum. With `pcap`,
    a trace replayed in a loop, its destination /24s dealt to the n flows
    with equal traffic, and routed that way."""
    return _router("l2l3", n, batch_size, burstiness, slo_us, _next_hop, pcap)


def l2l3_dual(n: int = 16, *, batch_size: int = PipelineDefaults.batch_size, burstiness: int = SyntheticDefaults.burstiness, slo_us: Optional[float] = None,
              pcap: Optional[str] = None) -> Pipeline:
    """L2L3(n) dual-stack: the type check passes IPv4 and IPv6, the LPM
    holds IPv4 and IPv6 routes (half each) and half the flows, the odd
    ones, are IPv6 (62-byte frames, the smallest IPv6/UDP frame; hop limit
    counted down, no header checksum). With `pcap`, a trace's destination
    /24s and /48s dealt to the flows."""
    return _router("l2l3-dual", n, batch_size, burstiness, slo_us, _next_hop, pcap, dual_stack=True)


def gw(n: int = 16, *, batch_size: int = PipelineDefaults.batch_size, burstiness: int = SyntheticDefaults.burstiness, slo_us: Optional[float] = None,
       pcap: Optional[str] = None) -> Pipeline:
    """A gateway: L2L3(n) with an ACL (100 rules) and a static NAT
    (10.0.0.0/24 ↔ 20.0.0.0/24) in front of every next hop."""

    def branch(p: Pipeline, i: int) -> list[Module]:
        acl = _module(p, f"acl{i}", Acl(_acl_rules()), "acl")
        nat = _module(p, f"nat{i}", StaticNat("10.0.0.0/24", "20.0.0.0/24"), "static_nat")
        return [acl, nat, *_next_hop(p, i)]

    return _router("gw", n, batch_size, burstiness, slo_us, branch, pcap)


#: First UDP destination port of VRF flows: flow k uses VRF_PORT + k.
VRF_PORT = 5000


def vrf(m: int = 2, n: int = 4, *, batch_size: int = PipelineDefaults.batch_size, burstiness: int = SyntheticDefaults.burstiness, slo_us: Optional[float] = None) -> Pipeline:
    """m virtual routers behind a VLAN splitter, n next hops each: type check
    (802.1Q), VLAN split, per VRF a VLAN pop and an LPM, per next hop TTL,
    MAC rewrite, checksum and a DMZ ACL, then a shared merge splitter by
    UDP destination port (= flow id) into one egress per flow."""
    if not (1 <= m <= 64 and 1 <= n <= 250):
        raise ValueError(f"vrf(m, n) needs 1 ≤ m ≤ 64 and 1 ≤ n ≤ 250, got ({m}, {n})")
    from sluice.nf import Merge, VlanPop
    from sluice.profiles import REFERENCE_VRF

    def mod(name: str, nf: NF, kind: str) -> Module:
        return _module(p, name, nf, kind, REFERENCE_VRF)

    p = Pipeline(f"vrf({m},{n})", batch_size=batch_size)
    src = p.source("src", burstiness=burstiness)
    type_check = mod("type_check", TypeCheck(0x8100), "type_check")
    vlan_split = mod("vlan_split", ExactMatch("vlan_id", {str(i + 1): i for i in range(m)}), "exact_match")
    merge = p.module("merge", Merge(m * n))
    by_port = mod("port_split", ExactMatch("dst_port", {str(VRF_PORT + k): k for k in range(m * n)}), "exact_match")
    p.chain(src, type_check, vlan_split)
    p.connect(merge, by_port)
    for i in range(m):
        pop = mod(f"vlan_pop{i}", VlanPop(), "vlan_pop")
        lpm = mod(f"lpm{i}", Lpm(_lpm_routes(n)), "lpm")
        p.connect(vlan_split, pop, gate=i)
        p.connect(pop, lpm)
        for j in range(n):
            k = i * n + j
            hop = _next_hop(p, k) + [mod(f"acl{k}", Acl([Rule(permit=True, proto=17)]), "acl")]
            out = p.sink(f"out{k}")
            p.connect(lpm, hop[0], gate=j)
            p.chain(*hop)
            p.connect(hop[-1], merge, ingate=k)
            p.connect(by_port, out, gate=k)
            template = Template(dst_mac=ROUTER_MAC, dst_ip=f"20.0.{j + 1}.1", src_port=1000 + k,
                                dst_port=VRF_PORT + k, vlan=i + 1, size=64)
            path = [src, type_check, vlan_split, pop, lpm, *hop, merge, by_port, out]
            p.flow(f"flow{k}", path, slo_us=slo_us, template=template)
    return p


#: The gateway's address and MAC, and the base station's address, in MGW.
MGW_IP, MGW_MAC, ENB_IP = "1.10.100.1", "02:00:00:00:10:01", "172.16.0.1"
#: Routes in MGW's LPM.
MGW_ROUTES = 5000


def mgw_teid(bearer: int, user: int) -> int:
    """Tunnel id of (bearer, user) in MGW."""
    return bearer << 8 | user


def mgw(
    bearers: int = 2,
    users: int = 4,
    *,
    batch_size: int = PipelineDefaults.batch_size,
    burstiness: int = SyntheticDefaults.burstiness,
    slo_us: Optional[float] = None,
    rate_pps: Optional[float] = None,
) -> Pipeline:
    """A 4G/5G mobile gateway, uplink and downlink over GTP-U. Downlink: a
    bearer selector (source port), per bearer a user selector (destination
    IP), per user Bypass(2000, 100) and the tunnel id, then GTP-U
    encapsulation. Uplink: GTP-U decapsulation, a split by tunnel id
    (bearer), per bearer a user selector (source IP), per user
    Bypass(2000, 100) and metadata. Both: TTL, LPM (5000 routes), then per
    direction MAC rewrite, checksum and a split by (bearer, user) into one
    egress per flow. With `slo_us`, bearer b's flows get slo_us·(b+1) and
    the last bearer is bulk (no SLO); with `rate_pps`, every flow is offered
    that rate (default: as fast as the worker takes packets)."""
    if not (1 <= bearers <= 64 and 1 <= users <= 250):
        raise ValueError(f"mgw(bearers, users) needs 1 ≤ bearers ≤ 64 and 1 ≤ users ≤ 250, got ({bearers}, {users})")
    from sluice.nf import GtpuDecap, GtpuEncap, Merge, SetMetadata, SplitByMetadata
    from sluice.traffic import Gtpu

    p = Pipeline(f"mgw({bearers},{users})", batch_size=batch_size)
    n = bearers * users

    def user_ip(u: int) -> str:
        return f"100.64.{u // 250}.{u % 250 + 1}"

    src = p.source("src", burstiness=burstiness)
    mac_table = _module(p, "mac_table", ExactMatch("dst_mac", {MGW_MAC: 0}), "exact_match")
    type_check = _module(p, "type_check", TypeCheck(0x0800), "type_check")
    direction = _module(p, "direction", ExactMatch("dst_port", {"2152": 1}, default_gate=0), "exact_match")
    p.chain(src, mac_table, type_check, direction)
    # downlink
    bearer_dl = p.module("bearer_dl", ExactMatch("src_port", {str(6000 + b): b for b in range(bearers)}))
    merge_dl = p.module("merge_dl", Merge(n))
    encap = p.module("encap", GtpuEncap(MGW_IP, ENB_IP, MGW_MAC, "02:00:00:00:20:01"))
    p.connect(direction, bearer_dl, gate=0)
    p.connect(merge_dl, encap)
    # uplink
    decap = p.module("decap", GtpuDecap(MGW_MAC, "02:00:00:00:30:01"))
    bearer_ul = p.module("bearer_ul", SplitByMetadata({mgw_teid(b, u): b for b in range(bearers) for u in range(users)}))
    merge_ul = p.module("merge_ul", Merge(n))
    p.connect(direction, decap, gate=1)
    p.connect(decap, bearer_ul)
    # both
    merge_all = p.module("merge_all", Merge(2))
    ttl = _module(p, "ttl", TtlDecrement(), "ttl_decrement")
    routes: dict[str, int] = {"172.16.0.0/16": 0, "8.0.0.0/8": 1}
    routes.update({f"30.{j // 256}.{j % 256}.0/24": j % 2 for j in range(MGW_ROUTES - len(routes))})
    lpm = _module(p, "lpm", Lpm(routes), "lpm", gates=["dl", "ul"])
    p.connect(encap, merge_all, ingate=0)
    p.connect(merge_ul, merge_all, ingate=1)
    p.chain(merge_all, ttl, lpm)
    tails = {}
    for gate, d in enumerate(("dl", "ul")):
        rw = _module(p, f"mac_rewrite_{d}", MacRewrite(src=MGW_MAC, dst=f"02:00:00:00:4{gate}:01"), "mac_rewrite")
        ck = _module(p, f"checksum_{d}", IpChecksum(), "ip_checksum")
        split = p.module(f"split_{d}", SplitByMetadata({mgw_teid(b, u): b * users + u for b in range(bearers) for u in range(users)}))
        p.connect(lpm, rw, gate=d)
        p.chain(rw, ck, split)
        tails[d] = [lpm, rw, ck, split]
    for d, bearer_sel, merge, user_field in (("dl", bearer_dl, merge_dl, "dst_ip"), ("ul", bearer_ul, merge_ul, "src_ip")):
        for b in range(bearers):
            users_sel = p.module(f"users_{d}{b}", ExactMatch(user_field, {user_ip(u): u for u in range(users)}))
            p.connect(bearer_sel, users_sel, gate=b)
            for u in range(users):
                k = b * users + u
                work = p.module(f"bypass_{d}{b}_{u}", Bypass(2000, 100))
                mark = p.module(f"meta_{d}{b}_{u}", SetMetadata(mgw_teid(b, u)))
                out = p.sink(f"out_{d}{b}_{u}")
                p.connect(users_sel, work, gate=u)
                p.chain(work, mark)
                p.connect(mark, merge, ingate=k)
                p.connect(tails[d][-1], out, gate=k)
                slo = slo_us * (b + 1) if slo_us is not None and b < bearers - 1 else None
                if d == "dl":
                    tpl = Template(dst_mac=MGW_MAC, src_ip="8.8.8.8", dst_ip=user_ip(u), src_port=6000 + b, dst_port=7000)
                    path = [src, mac_table, type_check, direction, bearer_sel, users_sel, work, mark, merge, encap, merge_all, ttl, *tails[d], out]
                else:
                    tpl = Template(dst_mac=MGW_MAC, src_ip=user_ip(u), dst_ip=f"8.8.{b + 1}.1", src_port=7000, dst_port=6000 + b,
                                   gtpu=Gtpu(mgw_teid(b, u), ENB_IP, MGW_IP))
                    path = [src, mac_table, type_check, direction, decap, bearer_sel, users_sel, work, mark, merge, merge_all, ttl, *tails[d], out]
                p.flow(f"{d}_b{b}_u{u}", path, slo_us=slo, template=tpl, rate_pps=rate_pps)
    return p


#: Pipelines by the name the CLI uses; each takes its size and keyword settings.
PIPELINES: dict[str, Callable[..., Pipeline]] = {"rc": rc, "l2l3": l2l3, "l2l3-dual": l2l3_dual, "gw": gw, "vrf": vrf, "mgw": mgw}
