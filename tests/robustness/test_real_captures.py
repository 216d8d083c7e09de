"""Real captures, taken by other people on real networks: the test
captures pypacker ships in its source distribution on PyPI (an Ethernet
capture as pcap and pcapng, a TLS session, DNS, TFTP, DHCP, IPv6, MQTT
taken on Linux's "any" device, 802.11 with Prism headers). Fetched once
into `.cache/captures` (pinned by hash), never committed. `sluice trace
analyze` must count what scapy counts, and the pipelines must replay them
and account for every packet."""

from __future__ import annotations

import hashlib
import json
import tarfile
import time
import urllib.request
from pathlib import Path
from typing import Callable

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6, _IPv6ExtHdr
from scapy.utils import rdpcap

from .cli_helpers import runner
from sluice import Pipeline
from sluice.pipelines import l2l3, l2l3_dual

ROOT = Path(__file__).resolve().parents[2]
#: pypacker 5.4's source distribution, as PyPI's simple index links it.
SDIST = ("https://files.pythonhosted.org/packages/83/c1/b270e105135bb24986486c5b60e2d0c3cde4ed2ee11c8f4d7074d9792ffe/pypacker-5.4.tar.gz",
         "80fb794acbe9eb972e43b4b28e85d8899ea3637fa5461df2866736e6d99ea5a3")
#: Its captures of links Sluice reads (Ethernet; `mqtt_over_linuxcc` is Linux cooked).
READABLE = ["ether.pcap", "ether.pcapng", "ssl2_certs.pcap", "dns2.pcap", "tftp.pcap", "dhcp.pcap", "ip6_sr-header.pcap", "mqtt_over_linuxcc.pcap"]
#: One of a link it does not (802.11 with Prism headers, link type 119).
UNREADABLE = "prism.pcap"


@pytest.fixture(scope="module")
def captures() -> Path:
    """The directory of the captures, fetched and unpacked at first use."""
    where = ROOT / ".cache" / "captures"
    names = [*READABLE, UNREADABLE]
    if all((where / n).exists() for n in names):
        return where
    url, sha256 = SDIST
    for attempt in range(3):
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                sdist = response.read()
            break
        except OSError:
            if attempt == 2:
                raise
            time.sleep(5)
    assert hashlib.sha256(sdist).hexdigest() == sha256, f"{url} is not the file it was pinned as"
    where.mkdir(parents=True, exist_ok=True)
    archive = where / "pypacker.tar.gz"
    archive.write_bytes(sdist)
    with tarfile.open(archive) as tar:
        for n in names:
            member = tar.extractfile(f"pypacker-5.4/tests/{n}")
            assert member is not None, n
            (where / n).write_bytes(member.read())
    archive.unlink()
    return where


def reference(capture: Path) -> dict[str, object]:
    """What scapy reads in `capture`: packets, IPv4 and IPv6 5-tuple flows
    (IPv6's protocol past its extension headers), packets without IP, and
    the same-flow runs per batch size (SLF)."""
    packets = rdpcap(str(capture))
    keys = []
    for p in packets:
        if IP in p:
            ip, proto = p[IP], p[IP].proto
            l4 = ip.payload
        elif IPv6 in p:
            ip, proto, l4 = p[IPv6], p[IPv6].nh, p[IPv6].payload
            while isinstance(l4, _IPv6ExtHdr):
                proto, l4 = l4.nh, l4.payload
        else:
            continue
        ports = (l4.sport, l4.dport) if isinstance(l4, (TCP, UDP)) else (0, 0)
        keys.append((ip.src, ip.dst, proto, *ports))
    slf = {}
    for b in (32, 64, 256, 1024):
        runs = sum(1 for i, k in enumerate(keys) if i == 0 or i % b == 0 or k != keys[i - 1])
        slf[str(b)] = round(len(keys) / runs, 6) if runs else None
    return {"packets": len(packets), "flows": len(set(keys)), "not_ip": len(packets) - len(keys), "slf": slf}


@pytest.mark.parametrize("name", READABLE)
def test_trace_analyze_counts_a_real_capture_as_scapy_does(captures: Path, tmp_path: Path, name: str) -> None:
    out = runner(tmp_path)("trace", "analyze", str(captures / name), "--json", "a.json")
    assert out.code == 0, out.err
    report = json.loads((tmp_path / "a.json").read_text())
    ours = {"packets": report["packets"], "flows": report["flows"], "not_ip": report["not_ip"],
            "slf": {b: round(v, 6) if report["flows"] else None for b, v in report["slf"].items()}}
    assert ours == reference(captures / name)


def test_a_capture_of_a_link_sluice_does_not_read_is_refused_by_its_type(captures: Path, tmp_path: Path) -> None:
    runner(tmp_path)("trace", "analyze", str(captures / UNREADABLE)).refused(UNREADABLE, "link type 119")


@pytest.mark.parametrize("name,router", [("ssl2_certs.pcap", l2l3), ("mqtt_over_linuxcc.pcap", l2l3), ("ether.pcapng", l2l3),
                                         ("ip6_sr-header.pcap", l2l3_dual)])
def test_a_pipeline_replays_a_real_capture_and_accounts_for_every_packet(captures: Path, name: str, router: Callable[..., Pipeline]) -> None:
    # One flow: a capture of one host has few destination /24s (or /48s) to deal among flows.
    r = router(1, pcap=str(captures / name)).run("null", periods=2, period_ms=5, backend="sim")
    s = r.summary
    assert s["accounted"] and s["delivered"] > 0, s
