"""`hosts`: Sluice as the router between two real Linux hosts, against
Linux's own forwarding. Each host is a network namespace of its own (its
own kernel stack) on a veth pair whose other end is a router port, with
its default settings: offloads on (TSO/GSO, checksum), no neighbour entry
set by hand, a default route via its gateway, IPv4 and IPv6. The router is
Linux (addresses on its ports, forwarding on) or `sluice serve` running
`sluice.router.router` on AF_PACKET or AF_XDP ports at the lean default
(null controller, busy polling), which answers the hosts' ARP and
neighbour discovery itself, and on AF_PACKET with its worker waiting for
the socket while rounds bring few packets (`vpp-adaptive` polling), which
leaves the core to the hosts. Per router and family: ping's round trip and a
TCP transfer's rate and retransmissions. Root; every run is in a network
namespace of its own (`unshare --net`), made and removed by the run."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.lab import output

#: Per family: each host's network (host 1, host 2), its address, and the gateway's.
NETWORKS = {"ipv4": ("10.0.{}.0/24", "10.0.{}.1", "10.0.{}.254"), "ipv6": ("2001:db8:{}::/64", "2001:db8:{}::1", "2001:db8:{}::fe")}
#: The routers compared.
ROUTERS = ("linux", "af_xdp", "af_packet", "af_packet+vpp-adaptive")
#: Exit status of a run whose machine cannot make the hosts.
CANNOT = 77


def sh(*cmd: str, ns: str = "") -> str:
    """Runs `cmd` (in namespace `ns`), raising with its stderr if it fails."""
    full = ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)
    done = subprocess.run(full, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(full)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def make_hosts(mtu: Optional[dict[int, int]] = None) -> list[str]:
    """Inside the router's namespace: hosts 1 and 2, each a named namespace
    with its end of a veth pair (`sw1`, `sw2` stay here, as the router's
    ports, IPv6 off on them: the router answers for itself), both
    families' addresses and a default route via the gateway, as a host
    comes (offloads on, no neighbour entries); `mtu` sets host h's link
    (both ends) to an MTU of its own. Returns the namespaces' names."""
    for knob in ("all", "default"):
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{knob}.disable_ipv6=1"], check=False)
    names = [f"sluice-h{h}-{os.getpid()}" for h in (1, 2)]
    for h, ns in zip((1, 2), names):
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", f"sw{h}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        if mtu and h in mtu:
            sh("ip", "link", "set", f"sw{h}", "mtu", str(mtu[h]))
            sh("ip", "link", "set", "eth0", "mtu", str(mtu[h]), ns=ns)
        sh("ip", "link", "set", f"sw{h}", "up")
        sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0", ns=ns)
        sh("sysctl", "-qw", "net.ipv6.conf.eth0.disable_ipv6=0", ns=ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        sh("ip", "link", "set", "eth0", "up", ns=ns)
        address_host(ns, "eth0", h, {family: NETWORKS[family][1].format(h) for family in NETWORKS})
    return names


def address_host(ns: str, dev: str, h: int, addresses: dict[str, str]) -> None:
    """Gives host `ns`'s interface `dev` on host h's network its
    `addresses` (per family) and a default route via that network's gateway."""
    for family, v in (("ipv4", "-4"), ("ipv6", "-6")):
        net, _, gateway = NETWORKS[family]
        sh("ip", v, "addr", "add", f"{addresses[family]}/{net.split('/')[1]}", "dev", dev, *(["nodad"] if family == "ipv6" else []), ns=ns)
        sh("ip", v, "route", "add", "default", "via", gateway.format(h), ns=ns)


def remove_hosts(names: list[str]) -> None:
    """Removes the hosts' namespaces (and with them their veth pairs)."""
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def linux_router() -> None:
    """Makes the router's namespace a Linux router between sw1 and sw2: the gateways' addresses on them, forwarding on."""
    sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
    sh("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
    for h in (1, 2):
        sh("sysctl", "-qw", f"net.ipv6.conf.sw{h}.disable_ipv6=0")
        for family, v in (("ipv4", "-4"), ("ipv6", "-6")):
            net, _, gateway = NETWORKS[family]
            sh("ip", v, "addr", "add", f"{gateway.format(h)}/{net.split('/')[1]}", "dev", f"sw{h}", *(["nodad"] if family == "ipv6" else []))
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1")


def router(which: str = "af_packet", icmp_errors: bool = True) -> Any:
    """Sluice between sw1 and sw2 on `which` ports ("af_packet", or
    "af_packet+vpp-adaptive" for a poll policy other than busy polling):
    the gateways' addresses of both families on them (`icmp_errors`: see
    `sluice.router.router`)."""
    from sluice.router import router as sluice_router

    backend, _, poll = which.partition("+")
    p = sluice_router([(f"{backend}:sw{h}", [f"{NETWORKS[f][2].format(h)}/{NETWORKS[f][0].split('/')[1]}" for f in NETWORKS]) for h in (1, 2)],
                      icmp_errors=icmp_errors)
    if poll:
        p.set_poll(poll)
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


def ping_rtt(hosts: list[str], family: str, count: int = 100) -> tuple[float, float]:
    """Host 1 pings host 2 `count` times, 10 ms apart, over `family`: the
    round trip's minimum and median (ms; the median, since a wake-up of an
    idle core now and then moves the mean)."""
    peer = NETWORKS[family][1].format(2)
    ping = sh("ping", "-c", str(count), "-i", "0.01", "-W", "2", peer, ns=hosts[0])
    times = [float(t) for t in re.findall(r"time=([\d.]+) ms", ping)]
    if not times:
        raise RuntimeError(f"ping crossed no packet: {ping}")
    return min(times), statistics.median(times)


def tcp_rate(hosts: list[str], family: str, seconds: float, sender: int = 0) -> dict[str, Any]:
    """Host `sender` (0 or 1) sends to the other over TCP and `family` for
    `seconds`: bytes received, rate (Gbit/s) and the sender's retransmissions."""
    src, dst = hosts[sender], hosts[1 - sender]
    peer = NETWORKS[family][1].format(2 - sender)
    receiver = subprocess.Popen(["ip", "netns", "exec", dst, sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout is not None
        port = receiver.stdout.readline().strip()
        before = _retransmitted(src)
        sh(sys.executable, "-c", SENDER, peer, port, str(seconds), ns=src)
        received, took = receiver.communicate(timeout=60)[0].split()
    finally:
        receiver.kill()
    return {"bytes": int(received), "gbit_s": int(received) * 8 / float(took) / 1e9, "retransmitted": _retransmitted(src) - before}


#: The flood's rate (pkt/s): the same for every router, and one that host 1's thread keeps up under TCP on this machine,
#: so that what the flood costs the hosts' core is the same through each.
FLOOD_PPS = 100_000
#: Host 1's flood of expired packets: UDP datagrams with TTL 1 to host 2 at argv[3] a second (sent each millisecond
#: what is due, asleep between), for argv[2] seconds; prints how many.
FLOOD = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, 1)
s.setblocking(False)
payload, n, rate = bytes(64), 0, float(sys.argv[3])
start = time.monotonic()
end = start + float(sys.argv[2])
while (now := time.monotonic()) < end:
    while n < (now - start) * rate:
        try:
            s.sendto(payload, (sys.argv[1], 33434))
        except BlockingIOError:
            pass
        n += 1
    time.sleep(0.001)
print(n)
"""


def tcp_under_flood(hosts: list[str], seconds: float) -> dict[str, Any]:
    """Host 1's TCP to host 2 over IPv4 while host 1 also floods host 2 with
    expired packets (TTL 1) at `FLOOD_PPS`, which the router answers,
    rate-limited, with time exceeded: the TCP rate, and the flood's packets a second."""
    flood = subprocess.Popen(["ip", "netns", "exec", hosts[0], sys.executable, "-c", FLOOD, NETWORKS["ipv4"][1].format(2), str(seconds + 1), str(FLOOD_PPS)],
                             stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        tcp = tcp_rate(hosts, "ipv4", seconds)
        sent = int(flood.communicate(timeout=30)[0])
    finally:
        flood.kill()
    return {"gbit_s": tcp["gbit_s"], "flood_pps": sent / (seconds + 1)}


#: The UDP datagrams' payload (bytes).
UDP_BYTES = 1400


def udp_loss(hosts: list[str], seconds: float, receive_buffer: Optional[str] = None) -> dict[str, Any]:
    """Host 1 sends host 2 UDP datagrams of `UDP_BYTES` at 1 Gbit/s
    (iperf3) for `seconds`, host 2's socket with its default receive buffer
    or `receive_buffer` ("4M"): the datagrams sent and lost, as host 2's
    iperf3 counts them, and the rate received."""
    server = subprocess.Popen(["ip", "netns", "exec", hosts[1], "iperf3", "-s", "-1", "-J"], stdout=subprocess.PIPE, text=True)
    window = ["-w", receive_buffer] if receive_buffer else []
    try:
        time.sleep(0.3)
        sh("iperf3", "-c", NETWORKS["ipv4"][1].format(2), "-u", "-b", "1G", "-l", str(UDP_BYTES), "-t", str(seconds), *window, ns=hosts[0])
        report = json.loads(server.communicate(timeout=30)[0])
    finally:
        server.kill()
    total = report["end"]["sum"]
    packets, lost = int(total["packets"]), int(total["lost_packets"])
    return {"packets": packets, "lost": lost, "gbit_s": (packets - lost) * UDP_BYTES * 8 / float(total["seconds"]) / 1e9}


def clients(hosts: list[str], seconds: float) -> dict[str, Any]:
    """The first ping's round trip (every neighbour still to be resolved:
    host 1's gateway, host 2, host 2's gateway); per family, host 1 pings
    host 2, then sends to it over TCP for `seconds`; UDP at 1 Gbit/s over IPv4."""
    first = sh("ping", "-c", "1", "-W", "2", NETWORKS["ipv4"][1].format(2), ns=hosts[0])
    found = re.search(r"time=([\d.]+) ms", first)
    measured: dict[str, Any] = {"first_rtt_ms": float(found.group(1)) if found else None}
    for family in NETWORKS:
        rtt_min, rtt_median = ping_rtt(hosts, family)
        tcp = tcp_rate(hosts, family, seconds)
        measured[family] = {"rtt_min_ms": rtt_min, "rtt_median_ms": rtt_median, "gbit_s": tcp["gbit_s"], "retransmitted": tcp["retransmitted"]}
    if shutil.which("iperf3"):
        measured["udp"] = {"default": udp_loss(hosts, min(seconds, 2.0)), "4M": udp_loss(hosts, min(seconds, 2.0), "4M")}
    measured["under_flood"] = tcp_under_flood(hosts, seconds)
    return measured


def measure(which: str, seconds: float, run: int = 0) -> dict[str, Any]:
    """Runs inside the router's namespace: the hosts, the router `which`,
    the clients; through AF_PACKET, the flood again through the router
    built without ICMP errors, before the clients on odd `run`s and after
    them on even ones, so that a drift over the run falls on both alike."""
    try:
        hosts = make_hosts()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(CANNOT)
    try:
        if which == "linux":
            linux_router()
            return clients(hosts, seconds)
        if which != "af_packet":
            answered: dict[str, Any] = through_sluice(router(which), lambda: clients(hosts, seconds))
            return answered
        # The same flood through the router built to answer none of it: the time exceeded's own cost, the flooding thread's apart.
        def unanswered() -> Any:
            return through_sluice(router(which, icmp_errors=False), lambda: tcp_under_flood(hosts, seconds))

        first = None
        if run % 2:
            first = unanswered()
            for ns in hosts:
                # The clients' first ping resolves every neighbour again.
                sh("ip", "neigh", "flush", "all", ns=ns)
        measured: dict[str, Any] = through_sluice(router(which), lambda: clients(hosts, seconds))
        measured["unanswered_flood"] = first or unanswered()
        return measured
    finally:
        remove_hosts(hosts)


def through_sluice(pipeline: Any, work: Callable[[], Any], *args: str) -> Any:
    """Runs `sluice serve` on `pipeline` (and `args`) while `work` runs;
    what `work` returned, and the served run's summary under "sluice"."""
    from sluice.client import Client

    tmp = tempfile.mkdtemp()
    description = os.path.join(tmp, "router.json")
    Path(description).write_text(pipeline.to_json())
    run_dir = os.path.join(tmp, "run")
    with open(os.path.join(tmp, "serve.log"), "w+") as log:
        serve = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "sluice"), "serve", description, "--run-dir", run_dir, *args],
                                 stdout=subprocess.DEVNULL, stderr=log)
        try:
            Client(run_dir).wait(alive=lambda: serve.poll() is None)
            done = work()
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
            log.seek(0)
            err = log.read()
    if serve.returncode != 0:
        raise RuntimeError(f"sluice serve: {err[-1500:]}")
    report = json.loads(Path(run_dir, "report.json").read_text())
    s = report["summary"]
    ports = {m: t["port"] for m, t in report["module_totals"].items() if "port" in t}
    nfs = {m: t["nf"] for m, t in report["module_totals"].items() if "nf" in t}
    nf_drops = {m: t["nf_drops"] for m, t in report["module_totals"].items() if t.get("nf_drops")}
    return {**done, "sluice": {"accounted": s["accounted"], "missed": s["missed"], "dropped": s["dropped"], "drops": s["drops"], "ports": ports, "nfs": nfs,
                               "nf_drops": nf_drops}}


def run(out: Path, quick: bool, progress: Callable[[str], None], repeats: Optional[int] = None) -> dict[str, Any]:
    """Measures every router `repeats` times, interleaved; writes hosts.{json,csv,md,png}."""
    repeats = repeats or (2 if quick else 5)
    seconds = 2.0 if quick else 5.0
    runs: dict[str, list[dict[str, Any]]] = {r: [] for r in ROUTERS}
    for i in range(repeats):
        for which in ROUTERS:
            progress(f"{which}, run {i + 1} of {repeats}")
            done = subprocess.run(["unshare", "--net", sys.executable, "-m", "sluice.lab.hosts", which, str(seconds), str(i)], capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                raise RuntimeError(f"{which}: {done.stderr.strip()[-800:]}")
            runs[which].append(json.loads(done.stdout.splitlines()[-1]))
    rows = []
    for family in NETWORKS:
        linux = [r[family] for r in runs["linux"]]
        for which, got in runs.items():
            of = [r[family] for r in got]
            rtt, rate = statistics.median(r["rtt_median_ms"] for r in of), statistics.median(r["gbit_s"] for r in of)
            ratios = [r["gbit_s"] / l["gbit_s"] for r, l in zip(of, linux)]
            rtt_ratios = [r["rtt_median_ms"] / l["rtt_median_ms"] for r, l in zip(of, linux)]
            rows.append({"router": which, "family": family, "rtt_median_ms": round(rtt, 3), "rtt_min_ms": round(statistics.median(r["rtt_min_ms"] for r in of), 3),
                         "gbit_s": round(rate, 2), "rate_vs_linux": round(statistics.median(ratios), 2),
                         "rate_vs_linux_range": [round(min(ratios), 2), round(max(ratios), 2)],
                         "rtt_vs_linux": round(statistics.median(rtt_ratios), 2), "rtt_vs_linux_range": [round(min(rtt_ratios), 2), round(max(rtt_ratios), 2)],
                         "retransmitted": int(statistics.median(r["retransmitted"] for r in of)),
                         "accounted": all(r.get("sluice", {}).get("accounted", True) for r in got)})
    first = {which: statistics.median(r["first_rtt_ms"] for r in got if r["first_rtt_ms"] is not None) for which, got in runs.items()}
    udp = {which: {buffer: {"sent": sum(r["udp"][buffer]["packets"] for r in got), "lost": sum(r["udp"][buffer]["lost"] for r in got),
                            "gbit_s": round(statistics.median(r["udp"][buffer]["gbit_s"] for r in got), 3)} for buffer in ("default", "4M")}
           for which, got in runs.items() if all("udp" in r for r in got)}
    missed = {which: sum(r.get("sluice", {}).get("missed", 0) for r in got) for which, got in runs.items()}
    flood = {which: {"tcp_vs_alone": round(statistics.median(r["under_flood"]["gbit_s"] / r["ipv4"]["gbit_s"] for r in got), 2),
                     "flood_kpps": round(statistics.median(r["under_flood"]["flood_pps"] for r in got) / 1e3, 1),
                     **answered_vs_unanswered(got)} for which, got in runs.items()}
    report = {"seconds": seconds, "repeats": repeats, "offloads": "the hosts' defaults (TSO, GSO, checksum on)", "rows": rows,
              "first_rtt_ms": {k: round(v, 3) for k, v in first.items()}, "udp_1gbit": udp, "under_flood": flood, "missed": missed, "runs": runs}
    output.write(out, "hosts", report, lambda rows: markdown(rows) + extras(report), plot)
    return report


def answered_vs_unanswered(got: list[dict[str, Any]]) -> dict[str, Any]:
    """Where runs measured TCP under the flood through a router that
    answers none of it too: TCP's rate under the answered flood over its
    rate under the unanswered one, median and range over the runs."""
    if not all("unanswered_flood" in r for r in got):
        return {}
    ratios = [r["under_flood"]["gbit_s"] / r["unanswered_flood"]["gbit_s"] for r in got]
    return {"answered_vs_unanswered": round(statistics.median(ratios), 2), "answered_vs_unanswered_range": [round(min(ratios), 2), round(max(ratios), 2)]}


def extras(report: dict[str, Any]) -> str:
    """Per router: the first ping's round trip (neighbours to resolve on
    the way); UDP at 1 Gbit/s, lost at the receiving socket with its
    default buffer and with 4 MiB; packets the router's receive rings
    missed over all runs; TCP under a flood of expired packets, against
    alone and against the same flood left unanswered."""
    lines = ["", "| router | first ping RTT ms (neighbours resolved on the way) | UDP at 1 Gbit/s lost of sent: default receive buffer | 4 MiB "
             "| missed at the router's rx, all runs | TCP under a flood of expired packets, vs alone (flood kpkt/s) "
             "| TCP under the flood answered, vs unanswered [min, max] |", "|---|---|---|---|---|---|---|"]
    for which, ms in report["first_rtt_ms"].items():
        u, f = report["udp_1gbit"].get(which), report["under_flood"][which]
        lost = [f"{u[b]['lost']} of {u[b]['sent']}" if u else "—" for b in ("default", "4M")]
        answered = f"{f['answered_vs_unanswered']} {f['answered_vs_unanswered_range']}" if "answered_vs_unanswered" in f else "—"
        lines.append(f"| {which} | {ms} | {lost[0]} | {lost[1]} | {report['missed'][which]} | {f['tcp_vs_alone']} ({f['flood_kpps']}) | {answered} |")
    return "\n".join(lines) + "\n"


def markdown(rows: list[dict[str, Any]]) -> str:
    """Each router's medians per family, and its ratios to Linux's (paired per run: median and range)."""
    lines = ["| router | family | ping RTT median (min) ms | RTT vs Linux [min, max] | TCP Gbit/s | rate vs Linux [min, max] | retransmitted | accounted |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        low, high = r["rate_vs_linux_range"]
        rtt_low, rtt_high = r["rtt_vs_linux_range"]
        lines.append(f"| {r['router']} | {r['family']} | {r['rtt_median_ms']} ({r['rtt_min_ms']}) | {r['rtt_vs_linux']} [{rtt_low}, {rtt_high}] | {r['gbit_s']} | "
                     f"{r['rate_vs_linux']} [{low}, {high}] | {r['retransmitted']} | {'yes' if r['accounted'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Round trip and TCP rate per router."""
    from sluice.plot import save, subplots

    fig, (a, b) = subplots(1, 2, figsize=(8, 3))
    names = [f"{r['router']}\n{r['family']}" for r in rows]
    a.bar(names, [r["rtt_median_ms"] for r in rows])
    a.set_ylabel("ping RTT, median (ms)")
    b.bar(names, [r["gbit_s"] for r in rows])
    b.set_ylabel("TCP (Gbit/s)")
    for ax in (a, b):
        ax.tick_params(axis="x", labelsize=6)
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The README's figure: Sluice's ratios to Linux's forwarding."""
    by = {(r["router"], r["family"]): r for r in report["rows"]}
    parts = [f"{n}: RTT ×{by[n, 'ipv4']['rtt_vs_linux']}, TCP ×{by[n, 'ipv4']['rate_vs_linux']} (IPv6 ×{by[n, 'ipv6']['rate_vs_linux']})" for n in ("af_xdp", "af_packet")]
    linux = by["linux", "ipv4"]
    return output.Headline(f"hosts as they come, vs Linux forwarding ({linux['rtt_median_ms']} ms, {linux['gbit_s']} Gbit/s): " + "; ".join(parts), "—")


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))))
