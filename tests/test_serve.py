"""`sluice serve` on built-in traffic, driven through its control API as
an operator's tools would: every documented endpoint answers (also to
requests Schemathesis generates from the OpenAPI document), refused
requests change nothing, random live changes keep every packet accounted
for, the metrics parse with the Prometheus project's own parser, and
SIGTERM (during a change too) stops it cleanly with a valid report."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from sluice import ApiError, Client, Pipeline
from sluice.pipelines import l2l3, l2l3_dual
from sluice.schedulers import CoDelConfig, FqCoDelConfig

SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")
OPENAPI = Path(__file__).resolve().parent.parent / "docs" / "api" / "openapi.json"
#: Control period of the served pipelines (ms): short, so that changes wait little.
PERIOD_MS = 5.0
#: Names the documented paths' parameters take in the served pipeline.
NAMES = {"flow": "flow0", "module": "lpm", "worker": "1", "class": "bulk", "parent": "gold", "interface": "sw2", "address": "10.0.2.1"}


class Served:
    """A `sluice serve` subprocess and a client of it."""

    def __init__(self, tmp: Path, *args: str, period_ms: float = PERIOD_MS, pipeline: Optional[Pipeline] = None) -> None:
        p = pipeline or l2l3(4)
        if pipeline is None:
            p.spare_workers = 1
        description = tmp / "l2l3.json"
        description.write_text(p.to_json())
        self.run_dir = tmp / "run"
        self.report = tmp / "report.json"
        # Its log (a line per change) goes to a file: a pipe nobody reads fills up and stalls it.
        self.log = tmp / "serve.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([SLUICE, "serve", str(description), "--run-dir", str(self.run_dir), "--period-ms", str(period_ms),
                                             "--json", str(self.report), *args], stdout=subprocess.DEVNULL, stderr=log, text=True)
        self.client = Client(str(self.run_dir), caller="test")
        try:
            self.client.wait(alive=lambda: self.process.poll() is None)
        except (RuntimeError, TimeoutError) as e:
            raise AssertionError(f"{e}: {self.log.read_text()[-2000:]}") from None

    def close(self) -> None:
        """Kills it if it still runs (a test that failed before stopping it)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def ctl(self, *args: str) -> str:
        """`sluice ctl ARGS` against it; what it printed (a failure says its stderr)."""
        done = subprocess.run([SLUICE, "ctl", "--run-dir", str(self.run_dir), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def stop(self) -> tuple[int, str, dict[str, Any]]:
        """SIGTERM; its exit status, stderr and report."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        report = json.loads(self.report.read_text()) if self.report.exists() else {}
        return self.process.returncode, self.log.read_text(), report


def until(check: Any, what: str, timeout: float = 20.0) -> None:
    """Waits until `check()` holds, failing with `what` past `timeout` (s):
    a served engine shows a change within a period or two, whatever else
    the machine runs."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = Served(tmp_path_factory.mktemp("serve"))
    yield s
    s.close()


def accounted(report: dict[str, Any]) -> None:
    s = report["summary"]
    assert s["accounted"] and s["in_flight"] == 0, s
    for name, t in report["flow_totals"].items():
        assert t["generated"] == t["delivered"] + t["dropped"], (name, t)


def test_the_socket_is_the_operators_alone(served: Served) -> None:
    assert (os.stat(served.run_dir).st_mode & 0o777) == 0o700
    assert (os.stat(served.run_dir / "sluice.sock").st_mode & 0o777) == 0o600


def test_every_documented_endpoint_answers_with_its_example(served: Served) -> None:
    doc = json.loads(OPENAPI.read_text())
    assert served.client.request("GET", "/v1/openapi.json") == doc
    for template, ops in doc["paths"].items():
        path = template.format(**NAMES)
        for method, op in ops.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")
            if method == "put" and template.endswith("/config"):
                body = served.client.config("lpm")  # the example's gates are another pipeline's
            status, text = served.client.request_raw(method.upper(), path, None if body is None else json.dumps(body))
            # A documented change may be refused by the pipeline as it runs (409), never unknown or failing.
            assert status in (200, 409), (method, path, status, text)
            if method == "put" and path.startswith("/v1/workers/"):
                served.client.set_worker_down(1, False)
    # Every documented change refuses a body of the wrong shape, naming the key, and changes nothing.
    before = served.client.changes()
    for template, ops in doc["paths"].items():
        for method, op in ops.items():
            if "requestBody" in op:
                status, text = served.client.request_raw(method.upper(), template.format(**NAMES), json.dumps({"nonsense": 1}))
                assert status == 400 and "nonsense" in json.loads(text)["error"], (method, template, status, text)
    assert served.client.changes() == before
    assert served.client.request_raw("GET", "/v1/nothing")[0] == 404
    assert served.client.request_raw("DELETE", "/v1/flows")[0] == 405


def test_a_refused_change_names_its_field_and_changes_nothing(served: Served) -> None:
    c = served.client
    before = c.changes()
    cases = [
        ("PUT", "/v1/flows/flow0/slo", {"slo_us": 0}, 400, "slo_us"),
        ("PUT", "/v1/flows/flow0/slo", {"slo": 5}, 400, "unknown key `slo`"),
        ("PUT", "/v1/flows/nope/slo", {"slo_us": 5}, 404, "no flow 'nope'"),
        ("PUT", "/v1/modules/lpm/trigger", {"trigger": 10_000}, 400, "trigger"),
        ("PUT", "/v1/modules/lpm/trigger", {"trigger": "x"}, 400, "trigger"),
        ("PUT", "/v1/controller", {"name": "fastest"}, 400, "unknown controller 'fastest'"),
        ("PUT", "/v1/controller", {"name": "nfvnice"}, 409, "scheduling model"),
        ("POST", "/v1/modules/lpm/routes", {"add": [["10.0.0.0/33", 0]]}, 400, "add[0]"),
        ("POST", "/v1/modules/lpm/routes", {"add": [["10.9.0.0/16", 40]]}, 400, "outgates"),
        ("POST", "/v1/modules/lpm/routes", {"add": [["10.9.0.0/16", "hop9"]]}, 400, "add[0]: module 'lpm' has no gate 'hop9' (its gates: 0 'hop0', 1 'hop1', 2 'hop2', 3 'hop3')"),
        ("POST", "/v1/modules/lpm/routes", {"delete": ["99.0.0.0/8"]}, 400, "delete[0]: no route '99.0.0.0/8'"),
        ("POST", "/v1/modules/ttl0/routes", {"add": []}, 409, "not an 'lpm'"),
        ("PUT", "/v1/modules/lpm/config", {"routes": [["10.0.0.0/8", 0]], "extra": 1}, 400, "extra"),
        ("PUT", "/v1/modules/out0/config", {}, 409, "not a network function"),
        ("PUT", "/v1/modules/lpm/worker", {"worker": 7}, 400, "worker: 7 does not exist"),
        ("PUT", "/v1/workers/9", {"down": True}, 404, "no worker 9"),
        ("PUT", "/v1/workers/0/poll", {"policy": "sleepy"}, 400, "policy"),
        ("PUT", "/v1/workers/0/poll", {"policy": "empty-poll", "min_sleep_us": 0}, 400, "min_sleep_us"),
        ("PUT", "/v1/modules/src/rate", {"rate_pps": -1}, 400, "rate_pps"),
        ("PUT", "/v1/flows/flow0/slo", "not json", 400, "not JSON"),
    ]
    for method, path, body, status, words in cases:
        text = body if isinstance(body, str) else json.dumps(body)
        got, answer = c.request_raw(method, path, text)
        assert got == status and words in json.loads(answer)["error"], (method, path, body, got, answer)
    assert c.changes() == before


def test_changes_show_in_reads_and_metrics_parse_with_prometheus_own_parser(served: Served) -> None:
    c = served.client
    assert "SLO none -> 2000 µs" in c.set_slo("flow1", 2000)
    assert next(f for f in c.flows() if f["name"] == "flow1")["slo_us"] == 2000
    c.pin_trigger("lpm", 16)
    assert next(m for m in c.modules() if m["name"] == "lpm")["pinned_trigger"] == 16
    until(lambda: next(m for m in c.modules() if m["name"] == "lpm")["last_period"]["trigger"] == 16, "a period ran at the pinned trigger")
    c.pin_trigger("lpm", None)
    c.set_controller("max")
    assert c.controller()["name"] == "max"
    routes = c.config("lpm")["routes"]
    c.routes("lpm", add=[("10.77.0.0/16", 1), ("10.78.0.0/16", "hop2")])
    assert ["10.77.0.0/16", 1] in c.config("lpm")["routes"] and len(c.config("lpm")["routes"]) == len(routes) + 2
    assert ["10.78.0.0/16", 2] in c.config("lpm")["routes"], "a gate given by its name is its number"
    assert "1 added or replaced" in c.routes("lpm", add=[("10.79.0.0/16", [("hop0", 1), (3, 2)])])
    assert c.config("lpm")["multipath"] == [["10.79.0.0/16", [[0, 1], [3, 2]]]], "a multipath route, rebuilt in"
    assert "1 deleted" in c.routes("lpm", delete=["10.79.0.0/16"])
    assert c.config("lpm")["multipath"] == []
    assert "moved from worker 0 to worker 1" in c.move("out0", 1)
    assert "out0" in next(w for w in c.workers() if w["worker"] == 1)["modules"]
    assert all(line.split(" ")[1] == "caller=test" for line in c.changes())
    # A worker put under a sleeping policy sleeps once its traffic leaves it idle.
    c.set_rate("src", 2000)
    assert "poll policy empty-poll" in c.set_poll(0, "empty-poll", max_sleep_us=200)
    assert c.workers()[0]["poll"]["policy"] == "empty-poll"
    until(lambda: (c.workers()[0]["last_period"] or {}).get("waits", 0) > 0, "worker 0 slept", timeout=30)
    first = {f.name: f for f in text_string_to_metric_families(c.metrics())}
    time.sleep(0.05)
    second = {f.name: f for f in text_string_to_metric_families(c.metrics())}
    assert {"sluice_flow_packets", "sluice_flow_delay_seconds", "sluice_module_batches", "sluice_worker_cpu_ratio", "sluice_controller_fallbacks"} <= set(second)
    assert second["sluice_flow_packets"].type == "counter"

    def delivered(families: dict[str, Any], flow: str) -> float:
        return next(s.value for s in families["sluice_flow_packets"].samples if s.labels == {"flow": flow, "fate": "delivered"})
    assert delivered(second, "flow0") >= delivered(first, "flow0") > 0
    slo = {s.labels["flow"]: s.value for s in second["sluice_flow_slo_seconds"].samples}
    assert slo["flow1"] == 0.002 and "flow2" not in slo


def test_sluice_ctl_speaks_the_api_and_refuses_in_one_line(served: Served) -> None:
    def ctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([SLUICE, "ctl", "--run-dir", str(served.run_dir), *args], capture_output=True, text=True, timeout=60)
    assert json.loads(ctl("show", "controller").stdout)["name"] in ("null", "max")
    assert ctl("slo", "flow2", "300").stdout.strip() == "flow 'flow2' SLO none -> 300 µs"
    assert ctl("routes", "lpm", "--add", "60.0.0.0/8", "1").returncode == 0
    assert ["60.0.0.0/8", 1] in json.loads(ctl("config", "lpm").stdout)["routes"]
    assert "sluice_periods_total" in ctl("metrics").stdout
    refused = ctl("slo", "nope", "5")
    assert refused.returncode == 2 and refused.stderr.strip() == "Error: no flow 'nope'", refused.stderr
    absent = subprocess.run([SLUICE, "ctl", "--run-dir", str(served.run_dir / "elsewhere"), "show", "flows"], capture_output=True, text=True, timeout=60)
    assert absent.returncode == 2 and "no sluice serve answers there" in absent.stderr, absent.stderr


def test_a_transaction_makes_all_its_changes_or_none(served: Served, tmp_path: Path) -> None:
    c = served.client
    flow = lambda name: next(f for f in c.flows() if f["name"] == name)  # noqa: E731
    config, slo = c.config("lpm"), flow("flow1")["slo_us"]
    # Refused at the boundary by its third change (no such route to delete): the new
    # configuration and the SLO made before it are undone with the workers held, so
    # that no packet met them (every flow stays accounted for), and nothing is logged.
    before = c.changes()
    replaced = {**config, "routes": [["20.0.0.0/8", 0], ["30.0.0.0/8", 3]], "multipath": []}
    with pytest.raises(ApiError) as refused:
        c.transaction([("PUT", "/v1/modules/lpm/config", replaced), ("PUT", "/v1/flows/flow1/slo", {"slo_us": 777}),
                       ("POST", "/v1/modules/lpm/routes", {"delete": ["99.99.0.0/16"]})])
    assert refused.value.status == 400 and refused.value.message.startswith("changes[2]: delete[0]: no route") and "none of the 3 changes" in refused.value.message, refused.value
    assert c.config("lpm") == config and flow("flow1")["slo_us"] == slo and c.changes() == before
    # Refused when read: names the change; a flow is added alone.
    for changes, words in [([("PUT", "/v1/flows/zz/slo", {"slo_us": 5})], "changes[0] (PUT /v1/flows/zz/slo): no flow 'zz'"),
                           ([("POST", "/v1/flows", {"name": "n", "path": ["src", "type_check", "mac_split", "lpm", "ttl0", "mac_rewrite0", "checksum0", "out0"]})], "added and removed alone"),
                           ([("GET", "/v1/flows", None)], "a read, not a change"), ([], "changes: 0 changes")]:
        with pytest.raises(ApiError, match=re.escape(words)):
            c.transaction(changes)
    # Made: one line for all of it.
    line = c.transaction([("PUT", "/v1/flows/flow1/slo", {"slo_us": 640}), ("POST", "/v1/modules/lpm/routes", {"add": [["70.0.0.0/8", 2]]}),
                          ("PUT", "/v1/controller", {"name": "max"})])
    assert line.startswith("transaction of 3: flow 'flow1' SLO") and "controller" in line, line
    assert flow("flow1")["slo_us"] == 640 and ["70.0.0.0/8", 2] in c.config("lpm")["routes"] and c.controller()["name"] == "max"
    assert c.changes()[-1].endswith(line)
    changes = tmp_path / "changes.json"
    changes.write_text(json.dumps([{"method": "PUT", "path": "/v1/flows/flow1/slo", "body": {"slo_us": 650}}]))
    done = subprocess.run([SLUICE, "ctl", "--run-dir", str(served.run_dir), "transaction", str(changes)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("transaction of 1: "), done.stderr


def test_egress_changes_on_a_pipeline_without_one_are_refused_by_name(served: Served) -> None:
    for method, path, body in [("GET", "/v1/egress", None), ("PUT", "/v1/egress/link", {"link_bits_per_s": 1e9})]:
        status, text = served.client.request_raw(method, path, None if body is None else json.dumps(body))
        assert status == 409 and "no scheduled egress" in json.loads(text)["error"], (path, status, text)


def _route() -> st.SearchStrategy[Any]:
    prefix = st.one_of(st.builds(lambda a, b, n: f"10.{a}.{b}.0/{n}", st.integers(0, 255), st.integers(0, 255), st.integers(8, 32)), st.text(max_size=12))
    return st.tuples(prefix, st.one_of(st.integers(0, 3), st.integers(-2, 70_000)))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3), max_leaves=8)
BODIES = {
    "/v1/flows/flow0/slo": st.fixed_dictionaries({"slo_us": st.one_of(st.none(), st.floats(), st.integers(-5, 10**12))}),
    "/v1/modules/lpm/trigger": st.fixed_dictionaries({"trigger": st.one_of(st.none(), st.integers(-5, 100))}),
    "/v1/controller": st.fixed_dictionaries({"name": st.sampled_from(["null", "max", "projgrad", "onoff", "nfvnice", "x"])}),
    "/v1/modules/lpm/routes": st.fixed_dictionaries({}, optional={"add": st.lists(_route(), max_size=3), "delete": st.lists(st.text(max_size=12), max_size=2)}),
    "/v1/modules/ttl1/worker": st.fixed_dictionaries({"worker": st.integers(-1, 3)}),
    "/v1/modules/src/rate": st.fixed_dictionaries({"rate_pps": st.one_of(st.none(), st.floats()), "stream": st.integers(-1, 2)}),
    "/v1/workers/1": st.fixed_dictionaries({"down": st.booleans()}),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(sorted(BODIES)), data=st.data(), garbage=st.booleans())
def test_no_request_fails_the_server_and_a_refused_one_changes_nothing(served: Served, path: str, data: st.DataObject, garbage: bool) -> None:
    body = data.draw(JSON if garbage else BODIES[path])
    method = "POST" if path.endswith("/routes") else "PUT"
    before = served.client.changes()
    status, text = served.client.request_raw(method, path, json.dumps(body))
    assert status < 500, (path, body, text)
    if status != 200:
        assert served.client.changes() == before, (path, body, text)
    if path == "/v1/workers/1":
        served.client.set_worker_down(1, False)


def test_random_live_changes_under_traffic_keep_every_packet_accounted_for(served: Served) -> None:
    """1,000 changes, valid and not, under traffic; then SIGTERM while
    another change waits: the process stops cleanly, every packet is
    accounted for: delivered, or dropped and counted where it was (the
    changes take workers down, point routes at black holes and stop the
    source, so some are dropped). (Last: it stops the module's server.)"""
    s = served
    rng = random.Random(7)
    made = 0
    try:
        for _ in range(1000):
            kind = rng.randrange(9)
            try:
                if kind == 0:
                    s.client.set_slo(f"flow{rng.randrange(4)}", rng.choice([None, rng.uniform(-10, 5000)]))
                elif kind == 1:
                    s.client.pin_trigger(rng.choice(["lpm", "ttl2", "type_check"]), rng.choice([None, rng.randrange(0, 40)]))
                elif kind == 2:
                    s.client.set_controller(rng.choice(["null", "max", "projgrad", "onoff", "wfq-opt"]))
                elif kind == 3:
                    s.client.move(rng.choice(["ttl1", "ttl2", "lpm"]), rng.randrange(0, 3))
                elif kind == 4:
                    s.client.routes("lpm", add=[(f"10.{rng.randrange(256)}.0.0/16", rng.randrange(5))])
                elif kind == 5:
                    s.client.set_worker_down(1, rng.random() < 0.5)
                elif kind == 6:
                    s.client.set_rate("src", rng.choice([1e5, 1e6, None, 0.0]))
                elif kind == 7:
                    # Flows added onto a branch's egress (no rule sorts packets into them) and removed.
                    name, hop = f"x{rng.randrange(12)}", rng.randrange(4)
                    if rng.random() < 0.6:
                        branch = ["src", "type_check", "mac_split", "lpm", f"ttl{hop}", f"mac_rewrite{hop}", f"checksum{hop}", f"out{hop}"]
                        s.client.add_flow(name, branch, slo_us=rng.choice([None, 500.0]))
                    else:
                        s.client.remove_flow(rng.choice([name, f"flow{hop}"]))
                else:
                    s.client.routes("lpm", delete=[f"10.{rng.randrange(256)}.0.0/16"])
                made += 1
            except ApiError as e:
                assert e.status in (400, 404, 409), e
        assert made > 300
        s.client.set_worker_down(1, False)
        # A bulk change queued as the stop comes: made before the drain or refused, never half.
        bulk = threading.Thread(target=lambda: _ignore_refusal(lambda: s.client.routes("lpm", add=[(f"10.{i // 256}.{i % 256}.0/24", 0) for i in range(5000)])))
        bulk.start()
        time.sleep(0.01)
        code, err, report = s.stop()
        bulk.join(timeout=60)
    finally:
        s.close()
    assert code == 0, err[-2000:]
    accounted(report)
    lines = [line for p in report["periods"] for line in p["changes"]]
    # Each change names who made it: this test's client, or the ctl test's before it (if its periods are still kept).
    assert lines and all(line.split(" ")[1] in ("caller=test", "caller=ctl:0") for line in lines), lines
    assert not (s.run_dir / "sluice.sock").exists()


def _ignore_refusal(call: Any) -> None:
    try:
        call()
    except (ApiError, OSError):
        pass


@pytest.mark.parametrize("family", ["IPv4", "IPv6"])
def test_single_route_changes_reach_the_data_path_without_waiting_for_a_period(tmp_path: Path, family: str) -> None:
    """Small route changes of either family are made in place at once (a
    1 s period would make 50 of them take 50 s otherwise), and packets
    follow them: flow1's destination loses its route and its packets are
    dropped, counted. (In the dual-stack router flow1 is IPv6.)"""
    v6 = family == "IPv6"
    s = Served(tmp_path, period_ms=1000.0, pipeline=l2l3_dual(4) if v6 else l2l3(4))
    try:
        first = s.client.controller()["periods"]
        new = [f"2001:db8:50:{i:x}::/64" if v6 else f"50.0.{i}.0/24" for i in range(50)]
        for i, prefix in enumerate(new):
            assert "1 added or replaced" in s.client.routes("lpm", add=[(prefix, i % 4)])
        assert s.client.controller()["periods"] - first <= 1
        gone = "2001:db8:2::/48" if v6 else "20.0.2.0/24"
        assert "1 deleted" in s.client.routes("lpm", delete=[gone])
        routes = s.client.config("lpm")["routes"]
        assert [new[-1], 1] in routes and not any(r[0] == gone for r in routes)
        until(lambda: (next(f for f in s.client.flows() if f["name"] == "flow1")["last_period"] or {}).get("dropped", 0) > 0,
              "flow1's packets still found a route", timeout=30)
        code, err, report = s.stop()
    finally:
        s.close()
    assert code == 0, err[-2000:]
    accounted(report)
    assert report["flow_totals"]["flow1"]["dropped"] > 0 and report["flow_totals"]["flow0"]["dropped"] == 0
    assert sum(len(p["changes"]) for p in report["periods"]) == 51


def test_egress_weights_and_link_rate_change_live_and_show(tmp_path: Path, served: Served) -> None:
    served.stop()  # the module's pipeline holds the cores; the tests that use it have run
    p = l2l3(4)
    for f in p.flows():
        p.set_rate(f, 50_000)
    # 20 Mbit/s carries ~30 kpps of 84 wire bytes: both classes stay backlogged, the rest is dropped at the egress.
    p.schedule_egress("drr", 20e6, {"tight": (1, ["flow0", "flow1"]), "bulk": (1, ["flow2", "flow3"])})
    scheduled = Served(tmp_path, pipeline=p)
    try:
        c = scheduled.client

        def delivered(seconds: float) -> tuple[float, float]:
            """Packets the tight and bulk classes delivered over `seconds`."""
            def now() -> list[float]:
                return [f["delivered"] for f in c.flows()]
            before = now()
            time.sleep(seconds)
            d = [a - b for a, b in zip(now(), before)]
            return d[0] + d[1], d[2] + d[3]

        assert c.egress() == {"algorithm": "drr", "link_bits_per_s": 20e6, "queue_pkts": 1024, "parents": [],
                              "classes": [{"name": "tight", "weight": 1, "flows": ["flow0", "flow1"], "queue_management": "tail_drop", "codel": None},
                                          {"name": "bulk", "weight": 1, "flows": ["flow2", "flow3"], "queue_management": "tail_drop", "codel": None}]}
        time.sleep(0.2)
        tight, bulk = delivered(0.5)
        assert 0.4 < tight / (tight + bulk) < 0.6, (tight, bulk)
        assert c.set_egress_weight("tight", 9) == "egress class 'tight' weight 9"
        time.sleep(0.1)
        tight, bulk = delivered(0.5)
        assert 0.8 < tight / (tight + bulk) < 0.97, (tight, bulk)
        # (The rate a faster link then carries is the machine's to give: `sluice experiment pspat`'s figure.)
        assert c.set_link_rate(40e6) == "egress link 40000000 bit/s"
        assert [k["weight"] for k in c.egress()["classes"]] == [9, 1] and c.egress()["link_bits_per_s"] == 40e6
        families = {f.name: f for f in text_string_to_metric_families(c.metrics())}
        assert {s.labels["class"]: s.value for s in families["sluice_egress_class_weight"].samples} == {"tight": 9, "bulk": 1}
        assert families["sluice_egress_link_bits_per_second"].samples[0].value == 40e6
        for method, path, body, words in [("PUT", "/v1/egress/classes/tight/weight", {"weight": 0}, "weight: must be ≥ 1"),
                                          ("PUT", "/v1/egress/classes/nope/weight", {"weight": 2}, "no egress class 'nope'"),
                                          ("PUT", "/v1/egress/link", {"link_bits_per_s": -5}, "link_bits_per_s -5"),
                                          ("PUT", "/v1/egress/link", {"rate": 5}, "rate")]:
            status, text = c.request_raw(method, path, json.dumps(body))
            assert status in (400, 404) and words in json.loads(text)["error"], (path, status, text)
        assert scheduled.ctl("link", "30Mbit") == "egress link 30000000 bit/s"
        assert scheduled.ctl("egress-weight", "bulk", "3") == "egress class 'bulk' weight 3"
        assert json.loads(scheduled.ctl("show", "egress"))["classes"][1]["weight"] == 3
        code, _, report = scheduled.stop()
        assert code == 0
        # What the link had no room for was dropped at the egress and counted: nothing else lost.
        accounted(report)
    finally:
        scheduled.close()


def test_a_class_tree_s_parents_are_reshaped_live(tmp_path: Path, served: Served) -> None:
    served.stop()  # the module's pipeline holds the cores; the tests that use it have run
    p = l2l3(4)
    for f in p.flows():
        p.set_rate(f, 50_000)
    # Parents given 4 and 12 of a 20 Mbit/s link, neither borrowing: a quarter and three quarters.
    p.schedule_egress("drr", 20e6, {"a": (1, ["flow0", "flow1"]), "b": (1, ["flow2", "flow3"])},
                      parents={"A": (4e6, 4e6), "B": (12e6, 12e6)}, under={"a": "A", "b": "B"})
    scheduled = Served(tmp_path, pipeline=p)
    try:
        c = scheduled.client

        def share_of_a(seconds: float) -> float:
            def now() -> list[float]:
                return [f["delivered"] for f in c.flows()]
            before = now()
            time.sleep(seconds)
            d = [a - b for a, b in zip(now(), before)]
            return (d[0] + d[1]) / sum(d)

        time.sleep(0.2)
        assert 0.2 < share_of_a(0.5) < 0.3
        assert c.set_egress_parent("A", 12e6, 12e6) == "egress parent 'A' rate 12000000 ceiling 12000000 bit/s"
        assert c.set_egress_parent("B", 4e6, 4e6) == "egress parent 'B' rate 4000000 ceiling 4000000 bit/s"
        time.sleep(0.1)
        assert 0.7 < share_of_a(0.5) < 0.8
        parents = [{"name": "A", "rate_bits_per_s": 12e6, "ceil_bits_per_s": 12e6}, {"name": "B", "rate_bits_per_s": 4e6, "ceil_bits_per_s": 4e6}]
        assert c.egress()["parents"] == parents
        assert c.pipeline()["description"]["egress_scheduler"]["parents"] == parents, "the description in force has them"
        for path, body, words in [("/v1/egress/parents/C", {"rate_bits_per_s": 1e6}, "no egress parent 'C'"),
                                  ("/v1/egress/parents/A", {"rate_bits_per_s": 2e6, "ceil_bits_per_s": 1e6}, "ceil_bits_per_s 1000000 must be ≥ rate_bits_per_s 2000000"),
                                  ("/v1/egress/parents/A", {"rate": 2e6}, "rate")]:
            status, text = c.request_raw("PUT", path, json.dumps(body))
            assert status in (400, 404) and words in json.loads(text)["error"], (path, status, text)
        assert scheduled.ctl("egress-parent", "A", "10Mbit") == "egress parent 'A' rate 10000000 ceiling 20000000 bit/s"
        code, _, report = scheduled.stop()
        assert code == 0
        accounted(report)
    finally:
        scheduled.close()


def test_a_class_s_codel_is_changed_live_and_kept_in_the_description_in_force(tmp_path: Path, served: Served) -> None:
    served.stop()  # the module's pipeline holds the cores; the tests that use it have run
    p = l2l3(4)
    p.schedule_egress("drr", 1e9, {"a": (1, ["flow0"]), "b": (1, ["flow1"]), "c": (1, ["flow2", "flow3"])},
                      codel={"a": CoDelConfig()}, fq_codel={"b": FqCoDelConfig()})
    scheduled = Served(tmp_path, pipeline=p)
    try:
        c = scheduled.client
        assert [(k["queue_management"], k["codel"]) for k in c.egress()["classes"]] == [
            ("codel", {"target_us": 5000, "interval_us": 100000, "ecn": True}),
            ("fq_codel", {"target_us": 5000, "interval_us": 100000, "ecn": True}), ("tail_drop", None)]
        assert c.set_egress_codel("a", target_us=2000, ecn=False) == "egress class 'a' codel target 2000 µs interval 100000 µs ecn false"
        assert c.set_egress_codel("b", interval_us=50_000) == "egress class 'b' codel target 5000 µs interval 50000 µs ecn true"
        classes = c.pipeline()["description"]["egress_scheduler"]["classes"]
        assert classes[0]["codel"] == {"target_us": 2000, "interval_us": 100000, "ecn": False}, "the description in force has it"
        assert classes[1]["fq_codel"]["codel"] == {"target_us": 5000, "interval_us": 50000, "ecn": True}
        for path, body, status, words in [("/v1/egress/classes/c/codel", {"target_us": 1000}, 409, "egress class 'c' has no CoDel"),
                                          ("/v1/egress/classes/a/codel", {"target_us": 200_000}, 400, "target_us 200000 must be below interval_us 100000"),
                                          ("/v1/egress/classes/z/codel", {}, 404, "no egress class 'z'"),
                                          ("/v1/egress/classes/a/codel", {"target": 5}, 400, "target")]:
            got, text = c.request_raw("PUT", path, json.dumps(body))
            assert got == status and words in json.loads(text)["error"], (path, got, text)
        # A transaction whose second change is refused leaves the first undone.
        with pytest.raises(ApiError, match="no CoDel"):
            c.transaction([("PUT", "/v1/egress/classes/a/codel", {"target_us": 3000}), ("PUT", "/v1/egress/classes/c/codel", {"ecn": True})])
        assert c.egress()["classes"][0]["codel"]["target_us"] == 2000
        assert scheduled.ctl("egress-codel", "a", "--target-us", "4000", "--ecn") == "egress class 'a' codel target 4000 µs interval 100000 µs ecn true"
        code, _, report = scheduled.stop()
        assert code == 0
        accounted(report)
    finally:
        scheduled.close()


def test_a_tcp_listener_wants_its_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("0123456789abcdef-sluice\n")
    port = 40000 + os.getpid() % 20000
    s = Served(tmp_path, "--listen", f"127.0.0.1:{port}", "--token-file", str(token))
    try:
        url = f"http://127.0.0.1:{port}"
        assert Client(url=url, token="0123456789abcdef-sluice").controller()["name"] == "null"
        with pytest.raises(ApiError) as refused:
            Client(url=url, token="0123456789abcdef-wrong").set_slo("flow0", 5)
        assert refused.value.status == 401
        assert Client(url=url).request_raw("GET", "/metrics")[0] == 401
        assert all("flow0" not in line for line in s.client.changes())
        code, err, report = s.stop()
    finally:
        s.close()
    assert code == 0, err[-2000:]
    short = tmp_path / "short"
    short.write_text("abc")
    done = subprocess.run([SLUICE, "serve", "rc", "--n", "2", "--run-dir", str(tmp_path / "run2"), "--listen", "127.0.0.1:1", "--token-file", str(short)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "at least 16 are needed" in done.stderr, done.stderr


#: Names a path's parameter takes: the served pipeline's, and ones it does not have.
PATH_NAMES = {"flow": ["flow0", "flow3", "flow9"], "module": ["lpm", "ttl1", "src", "nosuch"], "worker": ["0", "1", "7", "x"],
              "class": ["bulk", "nosuch"]}
#: The token of the TCP listener Schemathesis speaks to.
TOKEN = "0123456789abcdef-schemathesis"


@pytest.fixture
def served_on_tcp(tmp_path: Path) -> Iterator[tuple[Served, str]]:
    """A served pipeline of its own (the generated changes leave it as they
    will) listening on TCP too, with its base URL; stopped after the test,
    whose examples all speak to it. (Last in this file: the module's
    pipeline, which takes both of a two-core machine's cores, is stopped
    by then.)"""
    tmp = tmp_path
    (tmp / "token").write_text(TOKEN)
    port = 40000 + (os.getpid() + 7) % 20000
    s = Served(tmp, "--listen", f"127.0.0.1:{port}", "--token-file", str(tmp / "token"))
    yield s, f"http://127.0.0.1:{port}"
    s.close()


def _operations() -> list[Any]:
    """Every documented operation, as Schemathesis reads the OpenAPI document."""
    import schemathesis

    return [op.ok() for op in schemathesis.openapi.from_path(str(OPENAPI)).get_all_operations()]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_documented_endpoint_with_requests_generated_from_the_openapi_document(served_on_tcp: tuple[Served, str], data: st.DataObject) -> None:
    """Schemathesis draws requests from the OpenAPI document, valid and
    not (bodies, and names the pipeline has and has not): no answer is a
    server error, each has a documented status and the documented schema,
    and a refused change changes nothing."""
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error, response_schema_conformance, status_code_conformance

    served, url = served_on_tcp
    operation = data.draw(st.sampled_from(_OPERATIONS), label="operation")
    names = {k: data.draw(st.sampled_from(v), label=k) for k, v in PATH_NAMES.items() if "{" + k + "}" in operation.path}
    mode = data.draw(st.sampled_from([GenerationMode.POSITIVE, GenerationMode.NEGATIVE]), label="mode")
    case = data.draw(operation.as_strategy(generation_mode=mode, path_parameters=names or None), label="case")
    before = served.client.changes()
    response = case.call(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"})
    case.validate_response(response, checks=[not_a_server_error, status_code_conformance, response_schema_conformance])
    if response.status_code != 200:
        assert served.client.changes() == before, (case.method, case.formatted_path, case.body, response.text)
    if operation.path == "/v1/workers/{worker}" and response.status_code == 200:
        served.client.set_worker_down(int(names["worker"]), False)
    if operation.path == "/v1/captures" and response.status_code == 200:
        served.client.end_captures()


_OPERATIONS = _operations()
