"""The reference pipelines of ../shared/PIPELINES.md, one call each."""

from __future__ import annotations

from typing import Callable, Optional

from sluice.nf import NF, Acl, Bypass, ExactMatch, IpChecksum, Lpm, MacRewrite, RandomSplit, Rule, StaticNat, TtlDecrement, TypeCheck
from sluice.pipeline import Module, Pipeline
from sluice.profiles import cost
from sluice.traffic import Stream, Template

#: Delay SLO of the robot-control flow (µs).
RC_SLO_US = 35.0
#: Delay SLO of the bulk flows of RC (µs).
BULK_SLO_US = 100_000.0
#: The router's own MAC: the destination of all routed traffic.
ROUTER_MAC = "02:00:00:00:00:fe"
#: Routes in each LPM: one /24 per flow, the rest filler.
LPM_ROUTES = 500
#: Rules in each ACL: rule 0 permits UDP, the rest deny other /24s.
ACL_RULES = 100


def rc(n: int = 16, *, batch_size: int = 32, burstiness: int = 1, seed: int = 1) -> Pipeline:
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


def _module(p: Pipeline, name: str, nf: NF, kind: str) -> Module:
    """A module with the cost model of its kind, if one is known."""
    t0_t1 = cost(kind)
    return p.module(name, nf, t0_ns=t0_t1[0] if t0_t1 else None, t1_ns=t0_t1[1] if t0_t1 else None)


def _lpm_routes(n: int) -> dict[str, int]:
    """One /24 per next hop (20.0.(i+1).0/24 → gate i), then filler /24s spread over the gates."""
    routes = {f"20.0.{i + 1}.0/24": i for i in range(n)}
    for j in range(LPM_ROUTES - n):
        routes[f"30.{j // 256}.{j % 256}.0/24"] = j % n
    return routes


def _acl_rules() -> list[Rule]:
    return [Rule(permit=True, proto=17)] + [Rule(permit=False, dst=f"40.0.{j}.0/24") for j in range(1, ACL_RULES)]


def _router(name: str, n: int, batch_size: int, burstiness: int, slo_us: Optional[float],
            branch: Callable[[Pipeline, int], list[Module]]) -> Pipeline:
    """type_check → mac_split → lpm → per next hop i: `branch(i)` → egress; flow i: 10.0.0.1 → 20.0.(i+1).1."""
    if not 1 <= n <= 250:
        raise ValueError(f"{name}(n) needs 1 ≤ n ≤ 250 next hops, got {n}")
    p = Pipeline(f"{name}({n})", batch_size=batch_size)
    src = p.source("src", burstiness=burstiness)
    type_check = _module(p, "type_check", TypeCheck(0x0800), "type_check")
    mac_split = _module(p, "mac_split", ExactMatch("dst_mac", {ROUTER_MAC: 0}), "exact_match")
    lpm = _module(p, "lpm", Lpm(_lpm_routes(n)), "lpm")
    p.chain(src, type_check, mac_split, lpm)
    for i in range(n):
        modules = branch(p, i)
        out = p.sink(f"out{i}")
        p.connect(lpm, modules[0], gate=i)
        p.chain(*modules, out)
        template = Template(dst_mac=ROUTER_MAC, src_ip="10.0.0.1", dst_ip=f"20.0.{i + 1}.1", src_port=1000 + i)
        p.flow(f"flow{i}", [src, type_check, mac_split, lpm, *modules, out], slo_us=slo_us, template=template)
    return p


def _next_hop(p: Pipeline, i: int) -> list[Module]:
    return [
        _module(p, f"ttl{i}", TtlDecrement(), "ttl_decrement"),
        _module(p, f"mac_rewrite{i}", MacRewrite(src=ROUTER_MAC, dst=f"02:00:00:01:{i // 256:02x}:{i % 256:02x}"), "mac_rewrite"),
        _module(p, f"checksum{i}", IpChecksum(), "ip_checksum"),
    ]


def l2l3(n: int = 16, *, batch_size: int = 32, burstiness: int = 1, slo_us: Optional[float] = None) -> Pipeline:
    """An IP router with n next hops: type check, MAC split, LPM (500 routes),
    then per next hop TTL decrement, MAC rewrite and checksum."""
    return _router("l2l3", n, batch_size, burstiness, slo_us, _next_hop)


def gw(n: int = 16, *, batch_size: int = 32, burstiness: int = 1, slo_us: Optional[float] = None) -> Pipeline:
    """A gateway: L2L3(n) with an ACL (100 rules) and a static NAT
    (10.0.0.0/24 ↔ 20.0.0.0/24) in front of every next hop."""

    def branch(p: Pipeline, i: int) -> list[Module]:
        acl = _module(p, f"acl{i}", Acl(_acl_rules()), "acl")
        nat = _module(p, f"nat{i}", StaticNat("10.0.0.0/24", "20.0.0.0/24"), "static_nat")
        return [acl, nat, *_next_hop(p, i)]

    return _router("gw", n, batch_size, burstiness, slo_us, branch)


#: Pipelines by the name the CLI uses; each takes n and keyword settings.
PIPELINES: dict[str, Callable[..., Pipeline]] = {"rc": rc, "l2l3": l2l3, "gw": gw}
