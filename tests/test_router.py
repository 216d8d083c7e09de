"""Real clients through a Sluice router, as they come: two Linux hosts,
each in a network namespace of its own with its default settings
(TSO, GSO and checksum offload on, no neighbour entry set by hand, a
default route via the router), on veth pairs whose other ends are the
ports of `sluice serve` running `sluice.router.router` on AF_PACKET. Over
IPv4 and IPv6 they resolve the router by ARP and neighbour discovery,
ping each other and the router (with pings larger than the link's MTU,
which the router reassembles and answers in fragments; with IPv4
options, where the router records its route and stamps its time as
Linux does), are refused at once by a closed port of the router's (a
TCP reset) and told it speaks no SCTP (a protocol unreachable, a
parameter problem in IPv6), trace the way (the router's hop answers
with a time exceeded), move TCP both ways
and send UDP in GSO frames (UDP_SEGMENT), which cross whole, or are cut
in software for a port that sends none; a link of 1400 bytes is found by
path-MTU discovery (the router's fragmentation needed / packet too big)
and a transfer completes across it; 9000-byte jumbo frames cross whole;
a third host beside host 1 on its link is resolved and reached apart;
a router built without ICMP errors drops expired packets unanswered and
forwards the rest. The router runs in a namespace of the test's own
(`unshare --net`); skipped where the machine does not allow one or lacks
ping or tracepath."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any

import pytest

from sluice.lab.hosts import CANNOT, NETWORKS, address_host, make_hosts, remove_hosts, router, sh, through_sluice

#: Bytes of each TCP transfer.
TRANSFER = 4 << 20

#: A host's side of a transfer: listens, says its port, counts the bytes of one connection.
SERVER = """
import socket, sys
s = socket.create_server(("::", 0), family=socket.AF_INET6, dualstack_ipv6=True)
print(s.getsockname()[1], flush=True)
s.settimeout(30)
c, _ = s.accept()
n = 0
while chunk := c.recv(1 << 16):
    n += len(chunk)
print(n)
"""
#: The other side: connects and sends `TRANSFER` bytes.
CLIENT = f"""
import socket, sys
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30) as c:
    c.sendall(bytes({TRANSFER}))
"""


def transfer(hosts: list[str], family: str, sender: int) -> int:
    """Host `sender` (0 or 1) sends `TRANSFER` bytes to the other over TCP; the bytes the other received."""
    peer = NETWORKS[family][1].format(2 - sender)
    server = subprocess.Popen(["ip", "netns", "exec", hosts[1 - sender], sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        sh(sys.executable, "-c", CLIENT, peer, str(port), ns=hosts[sender])
        return int(server.communicate(timeout=30)[0])
    finally:
        server.kill()


#: Host 2's side of datagrams over argv[1]'s family: binds, says its
#: port, then prints each datagram it got until a second passes without
#: one, as "length:byte" (the byte all its bytes are, else -1).
UDP_SERVER = """
import socket, sys
v6 = sys.argv[1] == "ipv6"
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("::" if v6 else "0.0.0.0", 0))
print(s.getsockname()[1], flush=True)
s.settimeout(10)
got = [s.recv(1 << 16)]
s.settimeout(1)
try:
    while True:
        got.append(s.recv(1 << 16))
except TimeoutError:
    pass
print(" ".join(f"{len(d)}:{d[0] if d.count(d[:1]) == len(d) else -1}" for d in got))
"""
#: Host 1's side: one send of argv[3] bytes. With a segment size
#: (argv[4] > 0) the socket's UDP_SEGMENT makes it one GSO frame, cut into
#: datagrams of that size whose bytes are 0, 1, 2...; without, an IPv4
#: datagram of zeros without DF (IP_PMTUDISC_DONT), which the path may fragment.
UDP_CLIENT = """
import socket, sys
peer, port, size, segment = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6 if ":" in peer else socket.AF_INET, socket.SOCK_DGRAM)
if segment:
    s.setsockopt(socket.SOL_UDP, 103, segment)
    payload = b"".join(bytes([i]) * segment for i in range(size // segment))
else:
    s.setsockopt(socket.IPPROTO_IP, 10, 0)
    payload = bytes(size)
s.sendto(payload, (peer, port))
"""


def datagrams(hosts: list[str], family: str, size: int, segment: int = 0) -> list[list[int]]:
    """Host 1 sends host 2 `size` bytes in one send over `family`, as
    `UDP_CLIENT` says; the datagrams host 2 received, each as [length, byte]."""
    server = subprocess.Popen(["ip", "netns", "exec", hosts[1], sys.executable, "-c", UDP_SERVER, family], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        sh(sys.executable, "-c", UDP_CLIENT, NETWORKS[family][1].format(2), str(port), str(size), str(segment), ns=hosts[0])
        return [[int(x) for x in d.split(":")] for d in server.communicate(timeout=15)[0].split()]
    finally:
        server.kill()


#: Bytes of a UDP GSO send, and of each datagram it is cut into: ten datagrams.
UDP_GSO = (12000, 1200)
#: What host 2 receives of it.
UDP_GSO_RECEIVED = [[UDP_GSO[1], i] for i in range(UDP_GSO[0] // UDP_GSO[1])]


#: A connection to the router's own address (port 22, where nothing of the router's listens): how it ended.
CONNECT = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], 22), timeout=5)
    print("connected")
except OSError as e:
    print(type(e).__name__)
"""

#: A datagram to the router in a protocol it does not speak (SCTP, on a
#: raw socket): prints the ICMP error that came back, as "type/code"
#: (ICMPv6: "type/code@pointer"), or "silent".
PROTOCOL = """
import socket, sys
v6 = ":" in sys.argv[1]
family = socket.AF_INET6 if v6 else socket.AF_INET
errors = socket.socket(family, socket.SOCK_RAW, socket.IPPROTO_ICMPV6 if v6 else socket.IPPROTO_ICMP)
errors.settimeout(5)
socket.socket(family, socket.SOCK_RAW, 132).sendto(bytes(12), (sys.argv[1], 0))
try:
    while True:
        m = errors.recv(2048)
        m = m if v6 else m[(m[0] & 15) * 4:]
        if m[0] == (4 if v6 else 3):
            print(f"{m[0]}/{m[1]}" + (f"@{int.from_bytes(m[4:8], 'big')}" if v6 else ""))
            break
except TimeoutError:
    print("silent")
"""


def recorded(ping: str, label: str, n: int) -> list[str]:
    """The first `n` addresses ping printed of an option, one a line after `label` ("RR:", "TS:")."""
    return [line.split()[0] for line in ping.split(label)[1].strip().splitlines()[:n]]


def trace(hosts: list[str], family: str) -> str:
    """tracepath from host 1 to host 2 (numeric): its hops, and the path MTU it found."""
    return sh("tracepath", "-n", "-m", "4", *(["-6"] if family == "ipv6" else ["-4"]), NETWORKS[family][1].format(2), ns=hosts[0])


#: Host 3's addresses: beside host 1, on its link.
THIRD = {"ipv4": "10.0.1.3", "ipv6": "2001:db8:1::3"}


def add_third_host(host1: str, ns: str) -> None:
    """Host 3, namespace `ns`, on host 1's link (a macvlan of host 1's
    interface, with a MAC of its own), as hosts 1 and 2 are made."""
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", "mv0", "link", "eth0", "type", "macvlan", "mode", "bridge", ns=host1)
    sh("ip", "link", "set", "mv0", "netns", ns, ns=host1)
    for link in ("lo", "mv0"):
        sh("ip", "link", "set", link, "up", ns=ns)
    address_host(ns, "mv0", 1, THIRD)


def scenario(name: str) -> dict[str, Any]:
    """Runs inside the router's namespace: the hosts (of the scenario's
    MTUs), Sluice between them while the clients run, and what each saw."""
    mtu = {"plain": None, "pmtu": {2: 1400}, "jumbo": {1: 9000, 2: 9000}, "segmented": None, "shaped": None, "silent": None, "shared": None}[name]
    third = f"sluice-h3-{os.getpid()}"
    try:
        hosts = make_hosts(mtu)
        if name == "shared":
            add_third_host(hosts[0], third)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(CANNOT)

    def segmented() -> dict[str, Any]:
        # Host 1's TCP with its checksum offload on (GSO frames) and off (segments of its own).
        on = transfer(hosts, "ipv4", 0)
        udp = {family: datagrams(hosts, family, *UDP_GSO) for family in NETWORKS}
        sh("ethtool", "-K", "eth0", "tx", "off", ns=hosts[0])
        return {"offload_on": on, "offload_off": transfer(hosts, "ipv4", 0), "v6": transfer(hosts, "ipv6", 0), "udp_gso": udp}

    def clients() -> dict[str, Any]:
        got: dict[str, Any] = {"datagram": datagrams(hosts, "ipv4", 3000)} if name == "pmtu" else {}
        for family in NETWORKS:
            peer, gateway = NETWORKS[family][1].format(2), NETWORKS[family][2].format(1)
            size = ["-s", "8952", "-M", "do"] if name == "jumbo" else []
            got[family] = {
                "ping": sh("ping", "-c", "3", "-i", "0.2", "-W", "2", *size, peer, ns=hosts[0]),
                "ping_router": sh("ping", "-c", "2", "-i", "0.2", "-W", "2", gateway, ns=hosts[0]),
                "connect_router": sh(sys.executable, "-c", CONNECT, gateway, ns=hosts[0]).strip(),
                "protocol_router": sh(sys.executable, "-c", PROTOCOL, gateway, ns=hosts[0]).strip(),
                # Larger than the link's MTU: it comes in fragments, and its reply leaves in fragments.
                "ping_router_large": sh("ping", "-c", "2", "-i", "0.2", "-W", "2", "-s", "3000", gateway, ns=hosts[0]),
                "trace": trace(hosts, family),
                "sent_1_to_2": transfer(hosts, family, 0),
                "sent_2_to_1": transfer(hosts, family, 1) if name in ("plain", "shaped") else TRANSFER,
                "neighbors": sh("ip", "-6" if family == "ipv6" else "-4", "neigh", "show", "dev", "eth0", ns=hosts[0]),
            }
            if name == "plain":
                got[family]["udp_gso"] = datagrams(hosts, family, *UDP_GSO)
        if name == "plain":
            # IPv4 options each way: a record route, and a timestamp with addresses.
            peer = NETWORKS["ipv4"][1].format(2)
            got["options"] = {kind: sh("ping", "-c", "1", "-W", "2", *args, ns=hosts[0])
                              for kind, args in (("rr", ["-R", peer]), ("ts", ["-T", "tsandaddr", peer]), ("rr_router", ["-R", NETWORKS["ipv4"][2].format(1)]))}
            got["all_nodes"] = sh("ping", "-c", "2", "-i", "0.2", "-W", "2", "ff02::1%eth0", ns=hosts[0])
        return got

    def beside() -> dict[str, Any]:
        # Host 2 pings host 3 first (the router asks for it), then host 3 host 2 and host 2 host 1.
        def ping(ns: str, peer: str) -> str:
            return sh("ping", "-c", "2", "-i", "0.2", "-W", "2", peer, ns=ns)

        return {family: {"2_to_3": ping(hosts[1], THIRD[family]), "3_to_2": ping(third, NETWORKS[family][1].format(2)),
                         "2_to_1": ping(hosts[1], NETWORKS[family][1].format(1))} for family in NETWORKS}

    def expired() -> dict[str, Any]:
        # Two pings with a TTL of 1 each way through a router that answers none, then a transfer.
        got: dict[str, Any] = {}
        for family in NETWORKS:
            peer = NETWORKS[family][1].format(2)
            done = subprocess.run(["ip", "netns", "exec", hosts[0], "ping", "-c", "2", "-i", "0.2", "-W", "1", "-t", "1", peer], capture_output=True, text=True, timeout=30)
            got[family] = {"expired": done.stdout, "ping": sh("ping", "-c", "3", "-i", "0.2", "-W", "2", peer, ns=hosts[0]), "sent_1_to_2": transfer(hosts, family, 0)}
        return got

    try:
        if name == "silent":
            return through_sluice(router("af_packet", icmp_errors=False), expired, "--period-ms", "50")
        if name == "shared":
            return through_sluice(router("af_packet"), beside, "--period-ms", "50")
        if name == "segmented":
            from sluice.router import router as sluice_router

            # GSO frames in on AF_PACKET, out on AF_XDP, which sends none: cut in software.
            ports = [("af_packet:sw1", ["10.0.1.254/24", "2001:db8:1::fe/64"]), ("af_xdp:sw2", ["10.0.2.254/24", "2001:db8:2::fe/64"])]
            return through_sluice(sluice_router(ports), segmented, "--period-ms", "50")
        if name == "shaped":
            from sluice.lab.aqm import sluice_shaped

            return through_sluice(sluice_shaped("fq_codel"), clients, "--period-ms", "50")
        return through_sluice(router("af_packet"), clients, "--period-ms", "50")
    finally:
        remove_hosts([*hosts, third])


def run_scenario(name: str) -> dict[str, Any]:
    run = subprocess.run(["unshare", "--net", sys.executable, __file__, name], capture_output=True, text=True, timeout=300)
    if run.returncode == CANNOT or (run.returncode != 0 and "unshare failed" in run.stderr):
        pytest.skip(f"no network namespaces for the hosts here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr[-3000:]
    got: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    s = got["sluice"]
    assert s["accounted"], s
    assert s["ports"]["rx_sw1"]["bad_vnet"] == 0 and s["ports"]["rx_sw1"]["oversize"] == 0, s["ports"]
    return got


def _port_backends() -> list[str]:
    from sluice import _core

    return list(_core.port_backends())


needs_hosts = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "ip", "ping", "tracepath")),
                                 reason="needs root, unshare, ip, ping and tracepath to make the hosts")


@needs_hosts
def test_hosts_as_they_come_resolve_ping_trace_and_stream_tcp_both_ways_through_a_sluice_router() -> None:
    got = run_scenario("plain")
    for family in NETWORKS:
        f = got[family]
        assert "3 received" in f["ping"] and "ttl=63" in f["ping"], f["ping"]
        assert "2 received" in f["ping_router"] and "ttl=64" in f["ping_router"], f["ping_router"]
        assert f["connect_router"] == "ConnectionRefusedError", "a closed port of the router's refuses at once, with a reset"
        assert f["protocol_router"] == ("4/1@6" if family == "ipv6" else "3/2"), f"SCTP to the router: {f['protocol_router']}"
        assert "2 received" in f["ping_router_large"] and "3008 bytes from" in f["ping_router_large"], f["ping_router_large"]
        gateway = NETWORKS[family][2].format(1)
        assert f" 1:  {gateway} " in f["trace"] and "reached" in f["trace"], f"the router's hop answers: {f['trace']}"
        assert f["sent_1_to_2"] == f["sent_2_to_1"] == TRANSFER
        assert gateway in f["neighbors"] and any(s in f["neighbors"] for s in ("REACHABLE", "STALE", "DELAY")), f["neighbors"]
        assert f["udp_gso"] == UDP_GSO_RECEIVED, "a UDP GSO frame crosses whole and host 2 gets its datagrams, in order"
    # As a Linux router answers: its address out recorded each way, its address in stamped on the way there.
    rr, ts, rr_router = (got["options"][k] for k in ("rr", "ts", "rr_router"))
    assert recorded(rr, "RR:", 6) == ["10.0.1.1", "10.0.2.254", "10.0.2.1", "10.0.2.1", "10.0.1.254", "10.0.1.1"], rr
    assert recorded(ts, "TS:", 4) == ["10.0.1.1", "10.0.1.254", "10.0.2.1", "10.0.2.1"], ts
    assert "Unrecorded hops: 2" in ts, "the router's hop back and host 1's found the option full"
    assert recorded(rr_router, "RR:", 4) == ["10.0.1.1", "10.0.1.254", "10.0.1.254", "10.0.1.1"], f"the router took the request in, then sent the reply: {rr_router}"
    answered = set(re.findall(r"bytes from (\S+):", got["all_nodes"]))
    assert len(answered) == 2, f"host 1 itself and the router answer a ping to all nodes: {got['all_nodes']}"
    s = got["sluice"]
    assert s["ports"]["rx_sw1"]["gso"] > 0, "the hosts' default offloads hand over GSO frames, taken whole"
    assert s["ports"]["tx_sw2"]["tx_gso"] > 0
    assert s["nfs"]["in_sw1"]["arp_answered"] >= 1 and s["nfs"]["in_sw1"]["nd_answered"] >= 1, s["nfs"]["in_sw1"]
    assert s["nfs"]["hop_sw2"]["requests"] >= 2, "the router asked for host 2 over ARP and neighbour discovery"


@needs_hosts
def test_two_hosts_on_one_link_are_each_resolved_and_reached_through_the_router() -> None:
    got = run_scenario("shared")
    for family in NETWORKS:
        for way, ping in got[family].items():
            assert "2 received" in ping, f"{family} {way}: {ping}"
    s = got["sluice"]
    assert s["nfs"]["hop_sw1"]["requests"] >= 2, "the router asked for host 3 over ARP and neighbour discovery"
    assert s["nfs"]["hop_sw1"]["unreachable"] == 0, s["nfs"]["hop_sw1"]


@needs_hosts
def test_a_router_behind_a_scheduled_egress_still_answers_arp_nd_pings_and_traces() -> None:
    # Both directions through one scheduled link of 100 Mbit/s, the data's
    # class under FQ-CoDel: the router's own packets (ARP and ND answers,
    # echo replies, time exceeded), which belong to no flow, leave by the
    # port they were offered at.
    got = run_scenario("shaped")
    for family in NETWORKS:
        f = got[family]
        assert "3 received" in f["ping"] and "2 received" in f["ping_router"], (f["ping"], f["ping_router"])
        assert f["connect_router"] == "ConnectionRefusedError", f["connect_router"]
        assert f" 1:  {NETWORKS[family][2].format(1)} " in f["trace"] and "reached" in f["trace"], f["trace"]
        assert f["sent_1_to_2"] == f["sent_2_to_1"] == TRANSFER
    assert got["sluice"]["nfs"]["in_sw1"]["arp_answered"] >= 1 and got["sluice"]["nfs"]["in_sw1"]["nd_answered"] >= 1


@needs_hosts
def test_a_narrow_link_is_found_by_path_mtu_discovery_and_a_transfer_completes_across_it() -> None:
    got = run_scenario("pmtu")
    for family in NETWORKS:
        f = got[family]
        assert "pmtu 1400" in f["trace"] and "reached" in f["trace"], f["trace"]
        assert f["sent_1_to_2"] == TRANSFER
    assert got["sluice"]["nfs"]["hop_sw2"]["too_big"] >= 2, "fragmentation needed and packet too big were sent"
    assert got["datagram"] == [[3000, 0]], "the kernel reassembled Sluice's fragments of a datagram without DF"
    assert got["sluice"]["nfs"]["hop_sw2"]["fragments"] >= 3


@needs_hosts
def test_jumbo_frames_cross_whole() -> None:
    got = run_scenario("jumbo")
    for family in NETWORKS:
        f = got[family]
        assert "3 received" in f["ping"], f["ping"]
        assert "pmtu 9000" in f["trace"], f["trace"]
        assert f["sent_1_to_2"] == TRANSFER
    assert got["sluice"]["nfs"]["hop_sw2"]["too_big"] == 0


@needs_hosts
def test_a_router_without_icmp_errors_drops_expired_packets_unanswered_and_forwards_the_rest() -> None:
    got = run_scenario("silent")
    for family in NETWORKS:
        f = got[family]
        assert "2 packets transmitted, 0 received" in f["expired"] and "exceeded" not in f["expired"], f["expired"]
        assert "3 received" in f["ping"], f["ping"]
        assert f["sent_1_to_2"] == TRANSFER
    s = got["sluice"]
    assert s["nf_drops"]["ttl"] == {"ttl_expired": 4}, s["nf_drops"]


@needs_hosts
@pytest.mark.skipif(not shutil.which("ethtool") or "af_xdp" not in _port_backends(), reason="needs ethtool and a build with AF_XDP")
def test_gso_frames_cut_in_software_for_a_port_that_sends_none_arrive_as_the_kernel_would_cut_them() -> None:
    got = run_scenario("segmented")
    assert got["offload_on"] == got["offload_off"] == got["v6"] == TRANSFER, "the receiving host's byte stream is the sender's"
    for family in NETWORKS:
        assert got["udp_gso"][family] == UDP_GSO_RECEIVED, f"a UDP GSO frame over {family} is cut into the datagrams the sender asked for"
    tx = got["sluice"]["ports"]["tx_sw2"]
    assert tx["tx_segmented"] > 0 and tx["tx_segments"] > tx["tx_segmented"], tx


if __name__ == "__main__":
    print(json.dumps(scenario(sys.argv[1])))
