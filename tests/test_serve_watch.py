"""Traces and captures attached to a running `sluice serve`: a trace
follows the next packets at a module hop by hop to where each ends (the
egress, or the module that dropped it and why), a filter in tcpdump's
language picks them, and a capture writes a gate's packets to a pcap
file that holds the same bytes as a `pcap_tap` module's at that place;
bad requests are refused by name and change nothing, and no packet is
lost to either."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from sluice import ApiError, Pipeline
from sluice.nf import StaticNat, TtlDecrement
from sluice.traffic import Template
from test_pipelines import read_pcap
from test_serve import SLUICE, Served, until


def pipeline(tap: Path) -> Pipeline:
    """src → nat → ttl → tap → out, three flows: two to 30.0.0.1 and
    30.0.0.2, and one whose packets come with a TTL of 1 (dropped at ttl)."""
    p = Pipeline("watched")
    src = p.source("src")
    chain = [p.module("nat", StaticNat("10.0.0.0/24", "20.0.0.0/24")), p.module("ttl", TtlDecrement()), p.pcap_tap("tap", str(tap))]
    out = p.sink("out")
    p.chain(src, *chain, out)
    for name, dst, ttl in (("one", "30.0.0.1", 9), ("two", "30.0.0.2", 9), ("expiring", "30.0.0.3", 1)):
        p.flow(name, [src, *chain, out], rate_pps=2000, template=Template(src_ip="10.0.0.9", dst_ip=dst, ttl=ttl))
    return p


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    tmp = tmp_path_factory.mktemp("watch")
    s = Served(tmp, pipeline=pipeline(tmp / "tap.pcap"))
    yield s, tmp
    s.close()


def records(s: Served, n: int) -> list[dict[str, Any]]:
    """The trace's records once `n` packets have ended."""
    got: list[dict[str, Any]] = []

    def ended() -> bool:
        got[:] = s.client.trace_records()["packets"]
        return len(got) == n and all(p["hops"] and p["hops"][-1]["way"] in ("sent", "dropped") for p in got)
    until(ended, f"{n} traced packets ended")
    return got


def test_a_trace_follows_the_next_packets_at_a_module_to_where_each_ends(served: tuple[Served, Path]) -> None:
    s, _ = served
    assert s.client.trace("nat", 30) == "trace of the next 30 packets at 'nat'"
    packets = records(s, 30)
    ways = {tuple((h["module"], h["way"], h["detail"]) for h in p["hops"]) for p in packets}
    assert ways == {
        (("nat", "gate", "0"), ("ttl", "gate", "0"), ("tap", "gate", "0"), ("out", "sent", "")),
        (("nat", "gate", "0"), ("ttl", "dropped", "ttl_expired")),
    }, ways
    for p in packets:
        times = [h["since_arrival_us"] for h in p["hops"]]
        assert times == sorted(times) and all(h["worker"] == 0 for h in p["hops"]), p
        assert p["len"] == 60 and re.fullmatch(r"UDP 10\.0\.0\.9\.\d+ > 30\.0\.0\.[123]\.\d+", p["summary"]), p
    shown = subprocess.run([SLUICE, "ctl", "--run-dir", str(s.run_dir), "trace", "show"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "trace of the next 30 packets at 'nat': 30 packets so far" in shown.stdout
    assert re.search(r"µs  worker 0  ttl +dropped: ttl_expired", shown.stdout), shown.stdout


def test_a_filter_picks_what_a_trace_follows_and_a_cleared_trace_is_gone(served: tuple[Served, Path]) -> None:
    s, _ = served
    s.client.trace("src", 5, "ip[8] = 1")
    packets = records(s, 5)
    assert all(" > 30.0.0.3." in p["summary"] for p in packets), packets
    assert {p["hops"][-1]["detail"] for p in packets} == {"ttl_expired"}
    assert [h["module"] for h in packets[0]["hops"]] == ["src", "nat", "ttl"]
    assert s.client.end_trace() == "trace of the next 5 packets at 'src' that match 'ip[8] = 1' ended"
    assert s.client.trace_records() == {"trace": None, "packets": []}
    with pytest.raises(ApiError, match="no trace is attached") as e:
        s.client.end_trace()
    assert e.value.status == 404


def test_a_capture_writes_what_a_tap_at_the_same_place_sees(served: tuple[Served, Path]) -> None:
    s, tmp = served
    line = s.client.capture("ttl", "two.pcap", 40, gate=0, bpf_filter="dst host 30.0.0.2")
    assert line == f"capture of 40 packets at 'ttl' gate 0 that match 'dst host 30.0.0.2' to {s.run_dir / 'two.pcap'}"
    until(lambda: "two.pcap: 40 written, 0 missed" in s.log.read_text(), "the capture written")
    captured = read_pcap(s.run_dir / "two.pcap")
    assert len(captured) == 40 and all(f[30:34] == bytes([30, 0, 0, 2]) for f in captured)
    # The tap writes every packet that passed ttl: the capture's are a run of its flow-two packets, byte for byte.
    tapped = [f for f in read_pcap(tmp / "tap.pcap") if f[30:34] == bytes([30, 0, 0, 2])]
    first = tapped.index(captured[0])
    assert tapped[first:first + 40] == captured
    assert captured[0][22] == 8, "after ttl: decremented"


@pytest.mark.parametrize("body, error", [
    ({"module": "nat", "count": 5, "filter": "udp port banana"}, r"filter: filter 'udp port banana': .*banana"),
    ({"module": "nosuch", "count": 5}, "module: no module 'nosuch'"),
    ({"module": "nat", "count": 0}, "count: 0 packets; a trace follows 1 to 1000"),
])
def test_a_bad_trace_is_refused_by_name(served: tuple[Served, Path], body: dict[str, Any], error: str) -> None:
    s, _ = served
    before = s.client.changes()
    with pytest.raises(ApiError, match=error) as e:
        s.client.request("POST", "/v1/trace", body)
    assert e.value.status == 400 and s.client.changes() == before


@pytest.mark.parametrize("body, error", [
    ({"module": "ttl", "gate": 3, "file": "x.pcap", "count": 5}, "gate: 'ttl' has outgates 0 to 0"),
    ({"module": "ttl", "gate": "nosuch", "file": "x.pcap", "count": 5}, "gate: 'ttl' has no outgate 'nosuch'"),
    ({"module": "ttl", "file": "../x.pcap", "count": 5}, "file: '../x.pcap' is not a file name"),
    ({"module": "ttl", "file": ".hidden", "count": 5}, "not a file name"),
    ({"module": "ttl", "file": "sluice.sock", "count": 5}, "sluice.sock: it exists: a capture writes a new file"),
])
def test_a_bad_capture_is_refused_by_name(served: tuple[Served, Path], body: dict[str, Any], error: str) -> None:
    s, _ = served
    before = s.client.changes()
    with pytest.raises(ApiError, match=error):
        s.client.request("POST", "/v1/captures", body)
    assert s.client.changes() == before


def test_watching_loses_no_packet(served: tuple[Served, Path]) -> None:
    s, _ = served
    status, err, report = s.stop()
    assert status == 0, err
    assert report["summary"]["accounted"] and report["summary"]["in_flight"] == 0
    for name, t in report["flow_totals"].items():
        assert t["generated"] == t["delivered"] + t["dropped"], (name, t)
