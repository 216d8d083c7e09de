"""`aqm`: a ping behind a bulk TCP transfer (iperf3, 4 connections), through a router whose egress
to the receiving host is shaped to 100 Mbit/s, under tail drop and under
FQ-CoDel, Sluice beside Linux. The hosts are those of `hosts` (their own
namespaces, default settings and offloads). Linux shapes sw2's egress
with HTB (rate and ceiling 100 Mbit/s) over a `pfifo` of 1 000 packets
(tail drop) or `fq_codel` (its defaults); Sluice runs
`sluice.router.router` on AF_PACKET with a scheduled egress: one emulated
link of 100 Mbit/s that both directions share (a DRR class each, the data
direction's under FQ-CoDel or tail drop at 1 000 packets). Per router:
the ping's round trips while the transfer runs, and the transfer's rate.
A kernel without `sch_fq_codel` has no Linux FQ-CoDel row (Sluice's rows
are then compared with Linux's tail drop). Root; every run is in a
network namespace of its own."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.lab import output
from sluice.lab.hosts import CANNOT, NETWORKS, linux_router, make_hosts, remove_hosts, router, sh, through_sluice

#: The shaped rate (bit/s).
RATE_BPS = 100e6
#: A tail-drop queue, as Linux's default txqueuelen (pkt).
QUEUE_PKTS = 1000
#: The routers compared: (router, queue management).
SETUPS = (("linux", "tail"), ("linux", "fq_codel"), ("sluice", "tail"), ("sluice", "fq_codel"))


def linux_shaped(qdisc: str) -> None:
    """Linux forwarding, sw2's egress under HTB at `RATE_BPS` over `qdisc`."""
    linux_router()
    rate = f"{RATE_BPS:.0f}bit"
    sh("tc", "qdisc", "add", "dev", "sw2", "root", "handle", "1:", "htb", "default", "1")
    sh("tc", "class", "add", "dev", "sw2", "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate)
    leaf = ["pfifo", "limit", str(QUEUE_PKTS)] if qdisc == "tail" else ["fq_codel"]
    try:
        sh("tc", "qdisc", "add", "dev", "sw2", "parent", "1:1", "handle", "10:", *leaf)
    except RuntimeError as e:
        print(f"{qdisc}: {e}", file=sys.stderr)
        sys.exit(CANNOT)


def sluice_shaped(management: str) -> Any:
    """Sluice's router on AF_PACKET, its traffic through one scheduled link of `RATE_BPS`."""
    from sluice.schedulers import FqCoDelConfig

    p = router("af_packet")
    fq = {"down": FqCoDelConfig()} if management == "fq_codel" else None
    p.schedule_egress("drr", RATE_BPS, {"down": (1, ["sw1_to_sw2"]), "up": (1, ["sw2_to_sw1"])}, queue_pkts=QUEUE_PKTS, fq_codel=fq)
    return p


#: TCP connections of the bulk transfer (iperf3 -P).
STREAMS = 4


def ping_under_load(hosts: list[str], seconds: float) -> dict[str, Any]:
    """Host 1 sends to host 2 over `STREAMS` TCP connections (IPv4,
    iperf3) for `seconds`; from the second second to one before the end it
    pings host 2 every 50 ms: the round trips (ms), the transfer's rate
    (Gbit/s, as host 2 received it) and its retransmissions."""
    server = subprocess.Popen(["ip", "netns", "exec", hosts[1], "iperf3", "-s", "-1", "-J"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.3)
        client = subprocess.Popen(["ip", "netns", "exec", hosts[0], "iperf3", "-c", NETWORKS["ipv4"][1].format(2), "-P", str(STREAMS), "-t", str(seconds), "-J"],
                                  stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        count = max(int((seconds - 2.0) / 0.05), 10)
        ping = subprocess.run(["ip", "netns", "exec", hosts[0], "ping", "-c", str(count), "-i", "0.05", "-W", "2", NETWORKS["ipv4"][1].format(2)],
                              capture_output=True, text=True, timeout=seconds + 30)
        sent = json.loads(client.communicate(timeout=seconds + 30)[0])
        received = json.loads(server.communicate(timeout=30)[0])
    finally:
        server.kill()
    rtts = [float(t) for t in re.findall(r"time=([\d.]+) ms", ping.stdout)]
    return {"rtt_ms": rtts, "pings": count, "gbit_s": received["end"]["sum_received"]["bits_per_second"] / 1e9,
            "retransmitted": int(sent["end"]["sum_sent"].get("retransmits", 0))}


def measure(which: str, management: str, seconds: float) -> dict[str, Any]:
    """Runs inside the router's namespace: the hosts, the shaped router, the transfer and the pings."""
    try:
        hosts = make_hosts()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(CANNOT)
    def work() -> dict[str, Any]:
        # The first ping resolves the neighbours before anything is timed.
        sh("ping", "-c", "1", "-W", "2", NETWORKS["ipv4"][1].format(2), ns=hosts[0])
        return ping_under_load(hosts, seconds)
    try:
        if which == "linux":
            linux_shaped(management)
            return work()
        measured: dict[str, Any] = through_sluice(sluice_shaped(management), work)
        return measured
    finally:
        remove_hosts(hosts)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else float("nan")


def run(out: Path, quick: bool, progress: Callable[[str], None], repeats: Optional[int] = None) -> dict[str, Any]:
    """Measures every setup `repeats` times, interleaved; writes aqm.{json,csv,md,png}."""
    repeats = repeats or (2 if quick else 5)
    seconds = 6.0 if quick else 12.0
    runs: dict[str, list[dict[str, Any]]] = {f"{w} {m}": [] for w, m in SETUPS}
    unavailable: dict[str, str] = {}
    for i in range(repeats):
        for which, management in SETUPS:
            setup = f"{which} {management}"
            if setup in unavailable:
                continue
            progress(f"{setup}, run {i + 1} of {repeats}")
            done = subprocess.run(["unshare", "--net", sys.executable, "-m", "sluice.lab.aqm", which, management, str(seconds)],
                                  capture_output=True, text=True, timeout=300)
            if done.returncode == CANNOT and which == "linux" and management != "tail":
                # This kernel has no such qdisc (no sch_fq_codel): Sluice is compared with Linux's tail drop alone.
                unavailable[setup] = done.stderr.strip().splitlines()[-1]
                del runs[setup]
                continue
            if done.returncode != 0:
                raise RuntimeError(f"{setup}: {done.stderr.strip()[-800:]}")
            runs[setup].append(json.loads(done.stdout.splitlines()[-1]))
    rows = []
    for setup, got in runs.items():
        which, management = setup.split()
        medians = [statistics.median(r["rtt_ms"]) for r in got]
        # Against Linux under the same queue management where this kernel has it, else under tail drop.
        linux_setup = f"linux {management}" if f"linux {management}" in runs else "linux tail"
        vs_linux = [m / statistics.median(l["rtt_ms"]) for m, l in zip(medians, runs[linux_setup])]
        tail = runs[f"{which} tail"]
        rate_vs_tail = [r["gbit_s"] / t["gbit_s"] for r, t in zip(got, tail)]
        rows.append({"setup": setup, "rtt_median_ms": round(statistics.median(medians), 2),
                     "rtt_p95_ms": round(statistics.median(_quantile(r["rtt_ms"], 0.95) for r in got), 2), "against": linux_setup,
                     "rtt_vs_linux": round(statistics.median(vs_linux), 2), "rtt_vs_linux_range": [round(min(vs_linux), 2), round(max(vs_linux), 2)],
                     "mbit_s": round(statistics.median(r["gbit_s"] for r in got) * 1e3, 1),
                     "rate_vs_tail": round(statistics.median(rate_vs_tail), 3), "rate_vs_tail_range": [round(min(rate_vs_tail), 3), round(max(rate_vs_tail), 3)],
                     "pings_lost": sum(r["pings"] - len(r["rtt_ms"]) for r in got), "pings": sum(r["pings"] for r in got),
                     "retransmitted": int(statistics.median(r["retransmitted"] for r in got)),
                     "accounted": all(r.get("sluice", {}).get("accounted", True) for r in got)})
    report = {"seconds": seconds, "repeats": repeats, "rate_bps": RATE_BPS, "queue_pkts": QUEUE_PKTS, "streams": STREAMS, "rows": rows,
              "unavailable": unavailable, "runs": runs}
    output.write(out, "aqm", report, lambda rows: markdown(rows) + "".join(f"\n{s}: not measured, {why}\n" for s, why in unavailable.items()), plot)
    return report


def markdown(rows: list[dict[str, Any]]) -> str:
    """Each setup's medians, and its paired ratios (to Linux under the same management; to its own tail drop)."""
    lines = ["| router, queue | ping RTT median (p95) ms under a bulk transfer | RTT vs Linux [min, max] | TCP Mbit/s | rate vs tail drop [min, max] "
             "| pings lost | retransmitted | accounted |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['setup']} | {r['rtt_median_ms']} ({r['rtt_p95_ms']}) | {r['rtt_vs_linux']} {r['rtt_vs_linux_range']} vs {r['against']} | {r['mbit_s']} | "
                     f"{r['rate_vs_tail']} {r['rate_vs_tail_range']} | {r['pings_lost']} of {r['pings']} | {r['retransmitted']} | {'yes' if r['accounted'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """The ping's round trip and the transfer's rate per setup."""
    from sluice.plot import save, subplots

    fig, (a, b) = subplots(1, 2, figsize=(8, 3))
    names = [r["setup"].replace(" ", "\n") for r in rows]
    a.bar(names, [r["rtt_median_ms"] for r in rows])
    a.set_yscale("log")
    a.set_ylabel("ping RTT under load (ms)")
    b.bar(names, [r["mbit_s"] for r in rows])
    b.set_ylabel("TCP (Mbit/s)")
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """The README's figure: the ping's round trip under load, FQ-CoDel against tail drop, beside Linux's."""
    by = {r["setup"]: r for r in report["rows"]}
    linux = by.get("linux fq_codel", by["linux tail"])
    return output.Headline(f"ping behind bulk TCP at 100 Mbit/s: Sluice fq_codel {by['sluice fq_codel']['rtt_median_ms']} ms "
                           f"(tail drop {by['sluice tail']['rtt_median_ms']} ms), {linux['setup']} {linux['rtt_median_ms']} ms", "—")


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], sys.argv[2], float(sys.argv[3]))))
