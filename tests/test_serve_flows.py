"""Flows added and removed while `sluice serve` forwards a capture: a flow
told apart by a destination prefix and one by an exact 5-tuple join
egresses that end other flows, a flow made by a prefix rule is removed,
and every packet stays accounted for: the removed flow's packets in flight
are counted where they end, and what its rule sorted before goes on,
nobody's, to the same egress."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

from sluice import Pipeline
from sluice.pipelines import l2l3
from test_serve import Served, accounted, until

#: Packets to each destination /24 of the capture, and the one 5-tuple a flow is added for.
A, B, C = "20.0.1", "20.0.2", "20.0.3"
TUPLE = {"src": "10.0.0.7", "dst": f"{B}.9", "proto": "udp", "sport": 4242, "dport": 53}


def capture(path: Path) -> None:
    """40 packets to A, 40 to B (one of them the 5-tuple's), 20 to C."""
    def udp(dst: str, sport: int, src: str = "10.0.0.1", dport: int = 5000) -> Any:
        return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / bytes(18)

    frames = [udp(f"{A}.{i % 9 + 1}", 1000 + i) for i in range(40)] + [udp(f"{B}.{i % 9 + 1}", 2000 + i) for i in range(39)]
    frames += [udp(TUPLE["dst"], TUPLE["sport"], TUPLE["src"], TUPLE["dport"])] + [udp(f"{C}.{i % 9 + 1}", 3000 + i) for i in range(20)]
    wrpcap(str(path), frames)


def router(trace: Path) -> Pipeline:
    """L2L3(2) over the capture at 100 kpps: A and C routed to out0, B to
    out1; flow0 is A's (C's packets, sorted by no rule, are claimed for it
    on the way to out0), flow1 B's."""
    spec: dict[str, Any] = json.loads(l2l3(2, pcap=str(trace)).to_json())
    source = next(m for m in spec["modules"] if m["name"] == "src")["source"]["pcap"]
    routes = dict(map(tuple, next(m for m in spec["modules"] if m["name"] == "lpm")["nf"]["routes"]))
    assert routes[f"{A}.0/24"] == routes[f"{C}.0/24"] == 0 and routes[f"{B}.0/24"] == 1, routes
    source["flows"] = [rule for rule in source["flows"] if rule["prefix"] != f"{C}.0/24"]
    source["rate_pps"] = 100_000
    return Pipeline.from_spec(spec)


def flow(served: Served, name: str) -> dict[str, Any]:
    return next(f for f in served.client.flows() if f["name"] == name)


def test_flows_are_added_and_removed_while_it_forwards_and_every_packet_stays_accounted(tmp_path: Path) -> None:
    trace = tmp_path / "trace.pcap"
    capture(trace)
    served = Served(tmp_path, pipeline=router(trace))
    try:
        c = served.client
        until(lambda: flow(served, "flow0")["delivered"] > 1000, "flow0 forwards")
        branch = [m for m in flow(served, "flow0")["path"]]
        said = c.add_flow("vip", branch, slo_us=5000, rules=[{"source": "src", "prefix": f"{C}.0/24"}])
        assert "flow 'vip' added" in said and "1 rule(s)" in said, said
        one = [*branch[:4], *[m.replace("0", "1") for m in branch[4:]]]
        c.add_flow("one", one, rules=[{"source": "src", "five_tuple": TUPLE}])
        until(lambda: flow(served, "vip")["delivered"] > 200 and flow(served, "one")["delivered"] > 10, "the added flows take their packets")
        vip, one_flow = flow(served, "vip"), flow(served, "one")
        assert vip["slo_us"] == 5000 and not vip["removed"] and one_flow["slo_us"] is None
        # The flow's own egress's metrics name it too.
        assert 'sluice_flow_packets_total{flow="vip",fate="delivered"}' in c.metrics()
        said = c.remove_flow("flow0")
        assert "flow 'flow0' removed (1 rule(s))" in said, said
        until(lambda: flow(served, "flow0")["removed"], "flow0 shows removed")
        time.sleep(0.2)
        before = flow(served, "flow0")["generated"]
        time.sleep(0.3)
        assert flow(served, "flow0")["generated"] == before, "no packet becomes a removed flow's"
        status, text = c.request_raw("PUT", "/v1/flows/flow0/slo", json.dumps({"slo_us": 9}))
        assert (status, json.loads(text)["error"]) == (409, "flow 'flow0' was removed")
        status, text = c.request_raw("POST", "/v1/flows", json.dumps({"name": "flow0", "path": branch}))
        assert status == 409 and "removed earlier in this run" in json.loads(text)["error"], text
        status, text = c.request_raw("POST", "/v1/flows", json.dumps({"name": "x", "path": branch, "rules": [{"source": "src", "prefix": "20.0.300.0/24"}]}))
        assert status == 400 and "rules[0]" in json.loads(text)["error"], text
        changes = c.changes()
        assert any("flow 'one' added" in line for line in changes) and any("flow 'flow0' removed" in line for line in changes), changes
        code, log, report = served.stop()
    finally:
        served.close()
    assert code == 0, log[-2000:]
    accounted(report)
    assert report["removed_flows"] == ["flow0"]
    totals = report["flow_totals"]
    assert set(totals) == {"flow0", "flow1", "vip", "one"}
    assert totals["vip"]["delivered"] > 0 and totals["one"]["delivered"] > 0 and totals["flow0"]["delivered"] > 0
    assert all(t["misdelivered"] == 0 for t in totals.values()), totals


def state(served: Served) -> dict[str, Any]:
    """What changes change, without what forwarding moves (counters, delays)."""
    c = served.client
    return {
        "flows": [(f["name"], f["path"], f["slo_us"], f["removed"]) for f in c.flows()],
        "modules": [(m["name"], m["worker"], m["pinned_trigger"], m["weight"]) for m in c.modules()],
        "workers": [(w["worker"], w["modules"], w["down"], w["poll"]) for w in c.workers()],
        "controller": c.controller()["name"],
        "lpm": c.config("lpm"),
    }


def changes(branch: list[str], other: list[str]) -> list[tuple[str, str, Any]]:
    """Requests, good and bad (each bad one refused at the boundary or before)."""
    flow = lambda name, path, **kw: ("POST", "/v1/flows", {"name": name, "path": path, **kw})  # noqa: E731
    return [
        flow("n{}", branch, slo_us=800, rules=[{"source": "src", "prefix": "20.0.{}.0/24"}]),
        flow("n{}", other, rules=[{"source": "src", "five_tuple": {**TUPLE, "sport": "{}"}}]),
        flow("flow1", branch),  # a name taken
        flow("m{}", [branch[0], branch[-1]]),  # a path off the graph
        flow("m{}", branch, rules=[{"source": "lpm", "prefix": "20.0.9.0/24"}]),  # not a source that sorts
        flow("m{}", branch, rules=[{"source": "src", "prefix": "20.0.9.0/33"}]),  # a bad prefix
        flow("m{}", branch, slo_us=0),
        ("DELETE", "/v1/flows/nosuch", None),
        ("PUT", "/v1/flows/flow1/slo", {"slo_us": "{}"}),
        ("PUT", "/v1/flows/flow1/slo", {"slo_us": -1}),
        ("POST", "/v1/modules/lpm/routes", {"add": [["21.{}.0.0/16", 1]]}),
        ("POST", "/v1/modules/lpm/routes", {"add": [["22.{}.0.0/16", 1]], "delete": ["23.0.0.0/8"]}),  # deletes what is not there
        ("POST", "/v1/modules/lpm/routes", {"add": [["24.{}.0.0/16", 99]]}),  # a gate it has not
        ("PUT", "/v1/modules/lpm/config", {"routes": [["0.0.0.0/0", 0]], "extra": 1}),
        ("PUT", f"/v1/modules/{branch[3]}/worker", {"worker": 1}),
        ("PUT", f"/v1/modules/{branch[3]}/worker", {"worker": 0}),
        ("PUT", f"/v1/modules/{branch[3]}/worker", {"worker": 9}),
        ("PUT", f"/v1/modules/{branch[3]}/weight", {"weight": "{}"}),
        ("PUT", f"/v1/modules/{branch[3]}/weight", {"weight": 0}),
        ("PUT", f"/v1/modules/{branch[3]}/trigger", {"trigger": 999}),
        ("PUT", "/v1/controller", {"name": "projgrad"}),
        ("PUT", "/v1/controller", {"name": "null"}),
        ("PUT", "/v1/controller", {"name": "nosuch"}),
        ("PUT", "/v1/workers/1/poll", {"policy": "busy"}),
        ("PUT", "/v1/workers/1/poll", {"policy": "slo-batching", "max_sleep_us": -5}),
        ("PUT", "/v1/egress/link", {"link_bits_per_s": 1e9}),  # no scheduled egress
    ]


def _filled(body: Any, n: int) -> Any:
    """`body` with each "{}" filled by `n` (a number where the whole value is "{}")."""
    if isinstance(body, dict):
        return {k: _filled(v, n) for k, v in body.items()}
    if isinstance(body, list):
        return [_filled(v, n) for v in body]
    if body == "{}":
        return n
    return body.replace("{}", str(n)) if isinstance(body, str) else body


def test_random_changes_good_and_bad_a_refused_one_leaves_no_trace(tmp_path: Path) -> None:
    """Random sequences of good and bad changes: the state after each refused
    one equals the state before it, and every packet stays accounted for."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    trace = tmp_path / "trace.pcap"
    capture(trace)
    pipeline = router(trace)
    pipeline.spare_workers = 1
    served = Served(tmp_path, pipeline=pipeline)
    counter = iter(range(1, 1_000_000))
    refused = accepted = 0
    try:
        branch = flow(served, "flow0")["path"]
        other = flow(served, "flow1")["path"]
        pool = changes(branch, other)

        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(st.lists(st.sampled_from(range(len(pool))), min_size=4, max_size=8))
        def sequence(picks: list[int]) -> None:
            nonlocal refused, accepted
            for i in picks:
                method, path, body = pool[i]
                n = next(counter)
                before = state(served)
                status, text = served.client.request_raw(method, path, None if body is None else json.dumps(_filled(body, n % 250 + 1)))
                if status == 200:
                    accepted += 1
                else:
                    refused += 1
                    assert status in (400, 404, 409), (method, path, status, text)
                    assert state(served) == before, (method, path, text)

        sequence()
        code, log, report = served.stop()
    finally:
        served.close()
    assert code == 0, log[-2000:]
    assert refused > 0 and accepted > 0, (refused, accepted)
    accounted(report)
