"""`hosts`: Sluice as the router between two real Linux hosts, against
Linux's own forwarding. Each host is a network namespace of its own (its
own kernel stack) on a veth pair whose other end is a router port; the
router is Linux (addresses on its ports, `ip_forward=1`) or `sluice serve`
on AF_XDP or AF_PACKET ports at the lean default (null controller, busy
polling). Per router: ping's round trip and a TCP transfer's rate and
retransmissions. The hosts send segments of the MTU (no TSO or GSO) and
fill their own checksums, alike for every router. Root; every run is in a
network namespace of its own (`unshare --net`), made and removed by the run."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.lab import output

ROUTER_MAC = "02:00:00:00:00:fe"
#: Per family: each host's network (host 1, host 2), its address, and the gateway's.
NETWORKS = {"ipv4": ("10.0.{}.0/24", "10.0.{}.1", "10.0.{}.254"), "ipv6": ("2001:db8:{}::/64", "2001:db8:{}::1", "2001:db8:{}::fe")}
#: The routers compared.
ROUTERS = ("linux", "af_xdp", "af_packet")
#: Exit status of a run whose machine cannot make the hosts.
CANNOT = 77


def host_mac(h: int) -> str:
    """Host `h`'s MAC address."""
    return f"02:00:00:00:0{h}:01"


def sh(*cmd: str, ns: str = "") -> str:
    """Runs `cmd` (in namespace `ns`), raising with its stderr if it fails."""
    full = ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)
    done = subprocess.run(full, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(full)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def make_hosts(family: str, checksum_offload: bool = True) -> list[str]:
    """Inside the router's namespace: hosts 1 and 2, each a named namespace
    with its end of a veth pair (`sw1`, `sw2` stay here, IPv6 off, as the
    router's ports), its address, a route via the gateway and a static
    neighbour entry for it (Sluice answers no ARP or neighbour discovery);
    returns the namespaces' names. Without `checksum_offload` the hosts
    fill their own TCP and UDP checksums (an AF_XDP port, unlike an
    AF_PACKET one, is not told that a frame's checksum is left to it)."""
    net, addr, gateway = NETWORKS[family]
    v = "-6" if family == "ipv6" else "-4"
    for knob in ("all", "default"):
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{knob}.disable_ipv6=1"], check=False)
    names = [f"sluice-h{h}-{os.getpid()}" for h in (1, 2)]
    for h, ns in zip((1, 2), names):
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", f"sw{h}", "address", ROUTER_MAC, "type", "veth", "peer", "name", "eth0", "address", host_mac(h), "netns", ns)
        sh("ip", "link", "set", f"sw{h}", "up")
        sh("ip", "link", "set", "lo", "up", ns=ns)
        sh("ip", "link", "set", "eth0", "up", ns=ns)
        # Segments of the MTU, as a NIC without TSO takes them: a local stack's
        # 64 KiB GSO frames are longer than a port's buffers (dropped, counted).
        sh("ethtool", "-K", "eth0", "tso", "off", "gso", "off", *([] if checksum_offload else ["tx", "off"]), ns=ns)
        sh("ip", v, "addr", "add", f"{addr.format(h)}/{net.split('/')[1]}", "dev", "eth0", *(["nodad"] if family == "ipv6" else []), ns=ns)
        sh("ip", v, "neigh", "replace", gateway.format(h), "lladdr", ROUTER_MAC, "dev", "eth0", "nud", "permanent", ns=ns)
        sh("ip", v, "route", "add", net.format(3 - h), "via", gateway.format(h), "dev", "eth0", ns=ns)
    return names


def remove_hosts(names: list[str]) -> None:
    """Removes the hosts' namespaces (and with them their veth pairs)."""
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def router(family: str, backend: str = "af_packet") -> Any:
    """Sluice between sw1 and sw2 on `backend` ports: per direction,
    receive, hop limit, LPM on the other host's network, MAC rewrite, transmit."""
    from sluice import Pipeline
    from sluice.nf import Lpm, MacRewrite, TtlDecrement

    net = NETWORKS[family][0]
    p = Pipeline(f"router-{family}")
    for h, other in ((1, 2), (2, 1)):
        flow = f"to_h{other}"
        rx = p.rx_port(f"rx{h}", f"{backend}:sw{h}", {flow: net.format(other)})
        hop = [p.module(f"hop_limit{h}", TtlDecrement()), p.module(f"lpm{h}", Lpm({net.format(other): 0})),
               p.module(f"mac{h}", MacRewrite(src=ROUTER_MAC, dst=host_mac(other))), p.tx_port(f"tx{h}", f"{backend}:sw{other}")]
        p.chain(rx, *hop)
        p.flow(flow, [rx, *hop], slo_us=5000)
    return p


#: Host 2's side: listens, says its port, then the bytes of one connection and the seconds from its first byte to its end.
RECEIVER = """
import socket, time
s = socket.create_server(("::", 0), family=socket.AF_INET6, dualstack_ipv6=True)
print(s.getsockname()[1], flush=True)
s.settimeout(60)
c, _ = s.accept()
n, first = 0, None
while chunk := c.recv(1 << 18):
    first = first or time.monotonic()
    n += len(chunk)
print(n, time.monotonic() - first)
"""
#: Host 1's side: sends for argv[3] seconds.
SENDER = """
import socket, sys, time
block = bytes(1 << 18)
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30) as c:
    end = time.monotonic() + float(sys.argv[3])
    while time.monotonic() < end:
        c.sendall(block)
"""


def _retransmitted(ns: str) -> int:
    """TCP segments host `ns` has retransmitted (RFC 1213 tcpRetransSegs)."""
    lines = [line.split() for line in sh("cat", "/proc/net/snmp", ns=ns).splitlines() if line.startswith("Tcp:")]
    return int(lines[1][lines[0].index("RetransSegs")])


def clients(hosts: list[str], seconds: float) -> dict[str, Any]:
    """Host 1 pings host 2, then sends to it over TCP for `seconds`."""
    peer = NETWORKS["ipv4"][1].format(2)
    ping = sh("ping", "-c", "20", "-i", "0.05", "-W", "2", peer, ns=hosts[0])
    rtt = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/", ping)
    receiver = subprocess.Popen(["ip", "netns", "exec", hosts[1], sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout is not None
        port = receiver.stdout.readline().strip()
        before = _retransmitted(hosts[0])
        sh(sys.executable, "-c", SENDER, peer, port, str(seconds), ns=hosts[0])
        received, took = receiver.communicate(timeout=60)[0].split()
    finally:
        receiver.kill()
    if rtt is None:
        raise RuntimeError(f"ping crossed no packet: {ping}")
    return {"rtt_min_ms": float(rtt.group(1)), "rtt_avg_ms": float(rtt.group(2)),
            "gbit_s": int(received) * 8 / float(took) / 1e9, "retransmitted": _retransmitted(hosts[0]) - before}


def measure(which: str, seconds: float) -> dict[str, Any]:
    """Runs inside the router's namespace: the hosts, the router `which`, the clients."""
    try:
        hosts = make_hosts("ipv4", checksum_offload=False)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(CANNOT)
    try:
        if which == "linux":
            for h in (1, 2):
                sh("ip", "addr", "add", f"{NETWORKS['ipv4'][2].format(h)}/24", "dev", f"sw{h}")
            sh("sysctl", "-qw", "net.ipv4.ip_forward=1")
            return clients(hosts, seconds)
        return _through_sluice(which, hosts, seconds)
    finally:
        remove_hosts(hosts)


def _through_sluice(backend: str, hosts: list[str], seconds: float) -> dict[str, Any]:
    from sluice.client import Client

    tmp = tempfile.mkdtemp()
    description = os.path.join(tmp, "router.json")
    Path(description).write_text(router("ipv4", backend).to_json())
    run_dir = os.path.join(tmp, "run")
    with open(os.path.join(tmp, "serve.log"), "w+") as log:
        serve = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "sluice"), "serve", description, "--run-dir", run_dir],
                                 stdout=subprocess.DEVNULL, stderr=log)
        try:
            Client(run_dir).wait(alive=lambda: serve.poll() is None)
            measured = clients(hosts, seconds)
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
    report = json.loads(Path(run_dir, "report.json").read_text())
    s = report["summary"]
    return {**measured, "accounted": s["accounted"], "missed": s["missed"], "dropped": s["dropped"]}


def run(out: Path, quick: bool, progress: Callable[[str], None], repeats: Optional[int] = None) -> dict[str, Any]:
    """Measures every router `repeats` times, interleaved; writes hosts.{json,csv,md,png}."""
    repeats = repeats or (2 if quick else 5)
    seconds = 2.0 if quick else 5.0
    runs: dict[str, list[dict[str, Any]]] = {r: [] for r in ROUTERS}
    for i in range(repeats):
        for which in ROUTERS:
            progress(f"{which}, run {i + 1} of {repeats}")
            done = subprocess.run(["unshare", "--net", sys.executable, "-m", "sluice.lab.hosts", which, str(seconds)], capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                raise RuntimeError(f"{which}: {done.stderr.strip()[-800:]}")
            runs[which].append(json.loads(done.stdout.splitlines()[-1]))
    linux = runs["linux"]
    rows = []
    for which, got in runs.items():
        rtt = statistics.median(r["rtt_avg_ms"] for r in got)
        rate = statistics.median(r["gbit_s"] for r in got)
        rows.append({"router": which, "rtt_avg_ms": round(rtt, 3), "rtt_min_ms": round(statistics.median(r["rtt_min_ms"] for r in got), 3),
                     "gbit_s": round(rate, 2), "rate_vs_linux": round(rate / statistics.median(r["gbit_s"] for r in linux), 2),
                     "rtt_vs_linux": round(rtt / statistics.median(r["rtt_avg_ms"] for r in linux), 2),
                     "retransmitted": int(statistics.median(r["retransmitted"] for r in got)),
                     "accounted": all(r.get("accounted", True) for r in got), "missed": int(statistics.median(r.get("missed", 0) for r in got))})
    report = {"seconds": seconds, "repeats": repeats, "rows": rows, "runs": runs}
    output.write(out, "hosts", report, markdown, plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Each router's medians, and its ratios to Linux's."""
    lines = ["| router | ping RTT avg (min) ms | RTT vs Linux | TCP Gbit/s | rate vs Linux | retransmitted | missed at rx | accounted |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['router']} | {r['rtt_avg_ms']} ({r['rtt_min_ms']}) | {r['rtt_vs_linux']} | {r['gbit_s']} | {r['rate_vs_linux']} | "
                     f"{r['retransmitted']} | {r['missed']} | {'yes' if r['accounted'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Round trip and TCP rate per router."""
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(7, 3))
    names = [r["router"] for r in rows]
    a.bar(names, [r["rtt_avg_ms"] for r in rows])
    a.set_ylabel("ping RTT (ms)")
    b.bar(names, [r["gbit_s"] for r in rows])
    b.set_ylabel("TCP (Gbit/s)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def headline(report: dict[str, Any]) -> output.Headline:
    """The README's figure: Sluice's ratios to Linux's forwarding."""
    by = {r["router"]: r for r in report["rows"]}
    parts = [f"{n}: RTT ×{by[n]['rtt_vs_linux']}, TCP ×{by[n]['rate_vs_linux']}" for n in ("af_xdp", "af_packet")]
    return output.Headline(f"vs Linux forwarding ({by['linux']['rtt_avg_ms']} ms, {by['linux']['gbit_s']} Gbit/s): " + "; ".join(parts), "—")


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], float(sys.argv[2]))))
