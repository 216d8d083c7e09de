"""Real clients through a Sluice router: two Linux hosts, each in a
network namespace of its own, on veth pairs whose other ends are Sluice's
ports, ping each other and move a TCP stream through it, over IPv4 and
over IPv6. Sluice routes by longest prefix, counts the hop limit down and
rewrites the MACs; it answers no ARP or neighbour discovery, so each host
has a static neighbour entry for its gateway. The hosts leave their TCP
checksums to the veth's "NIC", as a local stack does: Sluice's receive
port fills them in, or the other host would drop every segment. The router runs in a
namespace of the test's own (`unshare --net`); skipped where the machine
does not allow one or lacks ping or ethtool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from sluice.lab.hosts import CANNOT, NETWORKS, make_hosts, remove_hosts, router, sh

#: Bytes of the TCP transfer.
TRANSFER = 4 << 20


def clients(family: str, hosts: list[str]) -> dict[str, Any]:
    """Host 1 pings host 2 and sends it `TRANSFER` bytes over TCP; what came back."""
    peer = NETWORKS[family][1].format(2)
    ping = sh("ping", "-c", "5", "-i", "0.2", "-W", "2", peer, ns=hosts[0])
    server = subprocess.Popen(["ip", "netns", "exec", hosts[1], sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        sh(sys.executable, "-c", CLIENT, peer, str(port), ns=hosts[0])
        received = int(server.communicate(timeout=30)[0])
    finally:
        server.kill()
    return {"ping": ping, "received": received}


#: Host 2's side: listens, says its port, counts the bytes of one connection.
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
#: Host 1's side: connects and sends `TRANSFER` bytes.
CLIENT = f"""
import socket, sys
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30) as c:
    c.sendall(bytes({TRANSFER}))
"""


def routed(family: str) -> dict[str, Any]:
    """Runs inside the router's namespace: the hosts, Sluice between them
    while the clients run, and what each side counted."""
    from sluice import net

    try:
        hosts = make_hosts(family)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(CANNOT)
    try:
        client = net.Sender(lambda: clients(family, hosts))
        result = net.run_while_sending(router(family), "null", [client], period_ms=100)
        return {"clients": client.wait(), "summary": result.summary,
                "ports": {m: result.port_counters(m) for m in result.data["module_totals"] if result.port_counters(m)}}
    finally:
        remove_hosts(hosts)


@pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "ip", "ping", "ethtool")),
                    reason="needs root, unshare, ip, ping and ethtool to make the hosts")
@pytest.mark.parametrize("family", list(NETWORKS))
def test_hosts_ping_and_stream_tcp_through_a_sluice_router(family: str) -> None:
    run = subprocess.run(["unshare", "--net", sys.executable, __file__, family], capture_output=True, text=True, timeout=300)
    if run.returncode == CANNOT or (run.returncode != 0 and "unshare failed" in run.stderr):
        pytest.skip(f"no network namespaces for the hosts here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.splitlines()[-1])
    assert "5 received" in got["clients"]["ping"], got["clients"]["ping"]
    assert "ttl=63" in got["clients"]["ping"], "the router counted the hop limit down"
    assert got["clients"]["received"] == TRANSFER, got["clients"]
    s = got["summary"]
    assert s["accounted"] and s["in_flight"] == 0, s
    tx = [c for c in got["ports"].values() if "tx_pkts" in c]
    assert sum(c["tx_pkts"] for c in tx) >= 10 + TRANSFER // 65536, got["ports"]


if __name__ == "__main__":
    print(json.dumps(routed(sys.argv[1])))
