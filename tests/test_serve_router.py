"""An operated router: two Linux hosts in namespaces of their own, as they
come (as in `test_router`), talk through a `sluice serve` router on
AF_PACKET ports while an operator, over the control API, replaces the
routes, tightens an SLO and switches the controller, and scrapes the metrics. The ping
crosses, the TCP transfer completes with no reset, the scrape parses with
the Prometheus project's parser, and SIGTERM leaves a report in which
every packet is accounted for."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any

import pytest

#: Bytes of the TCP transfer, sent in slices with pauses between them so
#: that the changes are made while it flows.
TRANSFER = 8 << 20
SLICES = 32


def served_router() -> dict[str, Any]:
    """Runs inside the router's namespace: hosts, `sluice serve` between
    them, the clients and the operator's changes; what each side saw."""
    from prometheus_client.parser import text_string_to_metric_families

    from sluice import Client
    from sluice.lab.hosts import CANNOT, NETWORKS, make_hosts, remove_hosts, router, sh
    from test_router import SERVER

    try:
        hosts = make_hosts()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(CANNOT)
    tmp = tempfile.mkdtemp()
    description = os.path.join(tmp, "router.json")
    with open(description, "w") as f:
        f.write(router().to_json())
    run_dir = os.path.join(tmp, "run")
    sluice = os.path.join(os.path.dirname(sys.executable), "sluice")
    log = open(os.path.join(tmp, "serve.log"), "w+")
    serve = subprocess.Popen([sluice, "serve", description, "--run-dir", run_dir, "--period-ms", "20"], stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        client = Client(run_dir, caller="operator")
        client.wait(alive=lambda: serve.poll() is None)
        peer = NETWORKS["ipv4"][1].format(2)
        ping = sh("ping", "-c", "5", "-i", "0.2", "-W", "2", peer, ns=hosts[0])
        traced = {"ping": traced_ways(client, "icmp", lambda: sh("ping", "-c", "2", "-i", "0.2", "-W", "2", peer, ns=hosts[0]), 2),
                  "ttl 1": traced_ways(client, "icmp and ip[8] = 1", lambda: subprocess.run(
                      ["ip", "netns", "exec", hosts[0], "ping", "-c", "1", "-t", "1", "-W", "2", peer], capture_output=True), 1)}
        client.end_trace()
        receiver = subprocess.Popen(["ip", "netns", "exec", hosts[1], sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
        assert receiver.stdout is not None
        port = int(receiver.stdout.readline())
        sender = subprocess.Popen(["ip", "netns", "exec", hosts[0], sys.executable, "-c", SLOW_CLIENT, peer, str(port)], stderr=subprocess.PIPE, text=True)
        changes: list[str] = []
        scrapes: list[Any] = []

        def operate() -> None:
            # The router's LPM: gate 0 to sw1's networks, gate 1 to sw2's.
            nets = [[NETWORKS[f][0].format(h), h - 1] for h in (1, 2) for f in NETWORKS]
            changes.append(client.set_config("lpm", {"routes": nets, "unreachable": True}))
            changes.append(client.routes("lpm", add=[(NETWORKS["ipv4"][0].format(2), 1), ("10.0.99.0/24", 1)]))
            changes.append(client.set_slo("sw1_to_sw2", 1000))
            changes.append(client.set_controller("max"))
            scrapes.append({f.name: f for f in text_string_to_metric_families(client.metrics())})
            changes.append(client.routes("lpm", delete=["10.0.99.0/24"]))
        operator = threading.Thread(target=operate)
        operator.start()
        sent = sender.wait(timeout=120)
        operator.join(timeout=60)
        received = int(receiver.communicate(timeout=60)[0])
        assert sender.stderr is not None
        sender_errors = sender.stderr.read()
        flows = client.flows()
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
        err = open(log.name).read()
        remove_hosts(hosts)
    with open(os.path.join(run_dir, "report.json")) as f:
        report = json.load(f)
    scrape = scrapes[0] if scrapes else {}
    return {
        "ping": ping, "received": received, "sender_exit": sent, "sender_errors": sender_errors, "changes": changes,
        "traced": traced, "serve_exit": serve.returncode, "serve_err": err[-2000:], "summary": report["summary"], "flow_totals": report["flow_totals"],
        "report_changes": [line for p in report["periods"] for line in p["changes"]], "slo_us": {f["name"]: f["slo_us"] for f in flows},
        "scraped_tx": sum(s.value for s in scrape["sluice_port_tx_packets"].samples) if "sluice_port_tx_packets" in scrape else None,
    }


def traced_ways(client: Any, bpf_filter: str, send: Any, n: int) -> list[list[tuple[str, str, str]]]:
    """Traces the next `n` packets at sw1's receive port that `bpf_filter`
    takes while `send` sends them: each one's hops (module, way, detail)."""
    import time

    client.trace("rx_sw1", n, bpf_filter)
    send()
    deadline = time.monotonic() + 10
    while True:
        packets = client.trace_records()["packets"]
        ended = len(packets) == n and all(p["hops"][-1]["way"] in ("sent", "dropped") for p in packets)
        if ended or time.monotonic() > deadline:
            return [[(h["module"], h["way"], h["detail"]) for h in p["hops"]] for p in packets]
        time.sleep(0.05)


#: Host 1's side: connects and sends `TRANSFER` bytes in `SLICES` slices, 50 ms apart.
SLOW_CLIENT = f"""
import socket, sys, time
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30) as c:
    for _ in range({SLICES}):
        c.sendall(bytes({TRANSFER // SLICES}))
        time.sleep(0.05)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "ip", "ping")),
                    reason="needs root, unshare, ip and ping to make the hosts")
def test_an_operator_changes_a_served_router_while_hosts_talk_through_it() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run(["unshare", "--net", sys.executable, __file__], capture_output=True, text=True, timeout=300, cwd=here)
    if run.returncode == 77 or (run.returncode != 0 and "unshare failed" in run.stderr):
        pytest.skip(f"no network namespaces for the hosts here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.splitlines()[-1])
    assert "5 received" in got["ping"], got["ping"]
    assert got["sender_exit"] == 0 and got["received"] == TRANSFER, (got["sender_exit"], got["sender_errors"], got["received"])
    assert len(got["changes"]) == 5 and got["changes"][3] == "controller null -> max", got["changes"]
    assert got["slo_us"]["sw1_to_sw2"] == 1000
    # The echo requests' way to sw2's wire; the TTL-1 one's end at the TTL decrement, which answered it.
    pings = got["traced"]["ping"]
    assert len(pings) == 2 and all(p[0][0] == "rx_sw1" and p[-1] == ["tx_sw2", "sent", ""] for p in pings), pings
    [expired] = got["traced"]["ttl 1"]
    assert expired[0][0] == "rx_sw1" and expired[-1] == ["ttl", "dropped", "ttl_expired"], expired
    assert got["serve_exit"] == 0, got["serve_err"]
    s = got["summary"]
    assert s["accounted"] and s["in_flight"] == 0, s
    for name, t in got["flow_totals"].items():
        assert t["generated"] == t["delivered"] + t["dropped"], (name, t)
    # The five changes and the traces attached and ended, each logged with its caller.
    assert len(got["report_changes"]) == 8 and all("caller=operator" in line for line in got["report_changes"])
    assert sum(" trace of " in line for line in got["report_changes"]) == 3, got["report_changes"]
    assert got["scraped_tx"] is not None and got["scraped_tx"] > 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(served_router()))
