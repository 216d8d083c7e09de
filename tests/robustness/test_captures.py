"""Group 7 of the robustness issue: captures as people take them (with a
snap length, either byte order, nanosecond timestamps, pcapng, through a
pipe), written here with scapy."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.utils import PcapNgWriter, PcapWriter

from .cli_helpers import SLUICE
from sluice.pipelines import l2l3


def _frames(n: int = 64) -> list[bytes]:
    """UDP frames of 200 bytes to 20.0.1.x .. 20.0.4.x."""
    return [bytes(Ether() / IP(src="10.0.0.1", dst=f"20.0.{i % 4 + 1}.{i % 250 + 1}") / UDP(sport=1000 + i, dport=5000) / (b"x" * 158))
            for i in range(n)]


def write(path: Path, kind: str) -> Path:
    """A capture of the frames: pcap (`snap64`: cut to 64 bytes; `big`: big-endian; `nano`), or `pcapng`."""
    if kind == "pcapng":
        w = PcapNgWriter(str(path))
        for f in _frames():
            w.write(Ether(f))
        w.close()
        return path
    w = PcapWriter(str(path), linktype=1, endianness=">" if kind == "big" else "", nano=kind == "nano", snaplen=64 if kind == "snap64" else 65535)
    w.write_header(None)
    for f in _frames():
        cut = f[:64] if kind == "snap64" else f
        w.write_packet(cut, wirelen=len(f))
    w.close()
    return path


@pytest.mark.parametrize("kind", ["snap64", "big", "nano", "pcapng"])
def test_captures_of_every_kind_run(tmp_path: Path, kind: str) -> None:
    capture = write(tmp_path / f"{kind}.pcap", kind)
    r = l2l3(4, pcap=str(capture)).run("null", periods=1, period_ms=5, backend="sim")
    s = r.summary
    assert s["accounted"] and s["delivered"] > 0 and s["dropped"] == 0, s
    assert all(t["delivered"] > 0 for t in r.flow_totals.values()), "every /24 of the trace reached its flow"


def test_a_capture_through_a_pipe_is_read_once(tmp_path: Path) -> None:
    capture = write(tmp_path / "t.pcap", "snap64")
    command = f"{SLUICE} run l2l3 --n 4 --pcap <(cat {capture}) --periods 1 --period-ms 5 --backend sim"
    out = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("command", ["run", "gen"])
def test_a_folder_given_as_a_capture_is_refused_by_name(tmp_path: Path, command: str) -> None:
    (tmp_path / "traces").mkdir()
    args = ["run", "l2l3", "--n", "4", "--backend", "sim"] if command == "run" else ["gen", "--port", "af_packet:lo", "--seconds", "1"]
    out = subprocess.run([SLUICE, *args, "--pcap", "traces"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "'traces': a folder, not a capture" in out.stderr, out.stderr


def test_a_malformed_capture_names_the_record(tmp_path: Path) -> None:
    capture = write(tmp_path / "t.pcap", "big")
    data = capture.read_bytes()
    (tmp_path / "cut.pcap").write_bytes(data[: len(data) - 20])
    out = subprocess.run([SLUICE, "run", "l2l3", "--n", "4", "--pcap", "cut.pcap", "--periods", "1"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "cut.pcap" in out.stderr and "packet 64" in out.stderr, out.stderr
    assert os.path.exists(tmp_path / "cut.pcap")


def test_what_no_flow_claims_of_a_capture_is_said_apart_from_what_flows_lost(tmp_path: Path) -> None:
    # 64 frames to the four flows' /24s, 64 ARP frames and 64 IPv6 ones: type_check drops the 128, which belong to no flow.
    w = PcapWriter(str(tmp_path / "mixed.pcap"), linktype=1)
    for f in _frames():
        w.write(Ether(f))
        w.write(Ether() / ARP())
        w.write(Ether() / IPv6() / UDP())
    w.close()
    out = subprocess.run([SLUICE, "run", "l2l3", "--n", "4", "--pcap", "mixed.pcap", "--periods", "1", "--period-ms", "5", "--backend", "sim",
                          "--json", "r.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    s = r["summary"]
    # Two of every three frames dropped (the replay stops where it stops in the capture's loop).
    assert abs(s["delivered"] * 2 - s["dropped"]) <= 2 and all(t["dropped"] == 0 for t in r["flow_totals"].values()), s
    said = " ".join(out.stdout.split())
    assert f"dropped {s['dropped']} by NFs; flows that lost packets: none; {s['dropped']} of no flow" in said, out.stdout
