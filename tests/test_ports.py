"""Real ports: l2l3(4) between the two ends of a veth pair, in a network
namespace of the test's own (`unshare --net`; skipped where the machine
does not allow one), and between DPDK pcap devices. 100 000 frames of 4 096 UDP flows go in at one end,
through the pipeline's rx port, and come back out of its tx port to be
read at the other end, over AF_PACKET and over AF_XDP (where this build
has it): every frame accounted for at each stage, routed, rewritten and in
order within its flow; and so through a pipeline with every part in it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sluice import Pipeline, _core, net
from sluice.poll import PollSettings

FRAMES = 100_000
FLOWS = 4096
NEXT_HOPS = 4
ROUTER_MAC = bytes.fromhex("0200000000fe")
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def checksum(header: bytes) -> int:
    """The IPv4 header checksum (0 over a header that carries a valid one)."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def frame(flow: int, seq: int) -> bytes:
    """UDP flow `flow` (its own source port, to 20.0.(hop + 1).x) carrying `seq`."""
    hop = flow % NEXT_HOPS
    payload = struct.pack("!II", flow, seq)
    udp = struct.pack("!HHHH", 1024 + flow, 2000, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, bytes([10, 0, 0, 1]),
                     bytes([20, 0, hop + 1, 1 + flow // NEXT_HOPS % 250]))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ROUTER_MAC + bytes.fromhex("020000000001") + b"\x08\x00" + ip + udp


#: Exit code of the namespace side when the machine cannot make the veth pair.
CANNOT = 77


def veth_pair(queues: int = 1) -> None:
    """Inside the namespace: veth pair vgen0 <-> vsw0 with `queues` queues
    each way, both up, IPv6 off (so that the kernel sends nothing of its
    own on them); exits with CANNOT where the machine does not allow it."""
    q = ["numrxqueues", str(queues), "numtxqueues", str(queues)]
    for cmd in (["ip", "link", "add", "name", "vgen0", *q, "type", "veth", "peer", "name", "vsw0", *q],
                ["ip", "link", "set", "vgen0", "up"], ["ip", "link", "set", "vsw0", "up"]):
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{' '.join(cmd)}: {done.stderr.strip()}", file=sys.stderr)
            sys.exit(CANNOT)
    subprocess.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], check=False)


class Reader:
    """Collects every frame that arrives at `interface` (not those sent from it)."""

    def __init__(self, interface: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, 33, 1 << 28)  # SO_RCVBUFFORCE: hold everything that comes
        self.sock.bind((interface, ETH_P_ALL))
        self.frames: list[bytes] = []
        self.reading = threading.Event()
        self.reading.set()
        self.thread = threading.Thread(target=self._read, daemon=True)  # a failed run does not wait for it
        self.thread.start()

    def _read(self) -> None:
        self.sock.settimeout(0.2)
        while self.reading.is_set():
            try:
                data, addr = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            if addr[2] != PACKET_OUTGOING:
                self.frames.append(data)

    def stop(self) -> list[bytes]:
        """Waits for stragglers, stops reading and returns the frames."""
        time.sleep(0.3)
        self.reading.clear()
        self.thread.join()
        return self.frames


#: The backends under test: AF_XDP and DPDK where this build links them.
BACKENDS = ["af_packet"] + [pytest.param(b, marks=pytest.mark.skipif(b not in _core.port_backends(), reason=f"built without {b}"))
                            for b in ("af_xdp", "dpdk")]


#: A receive ring that holds every frame a test sends (AF_PACKET: FRAMES
#: slots of 2 KiB, 200 MiB; AF_XDP: 8192 frames), so that a worker the busy
#: machine stalls loses none of them.
RX_RING = {"blocks": FRAMES // 2, "descriptors": 8192}


def port(backend: str, interface: str) -> str:
    """`backend`'s port on `interface` (DPDK: its AF_PACKET virtual device
    on it, with a receive ring of 8192 frames: the device neither counts
    nor reports what the kernel drops at a full ring, so a stalled worker
    would lose frames unseen where the other backends count them)."""
    return f"dpdk:net_af_packet0,iface={interface},framecnt=8192" if backend == "dpdk" else f"{backend}:{interface}"


def every_part(backend: str) -> Pipeline:
    """The router of `roundtrip` with every part in one pipeline, as
    DESIGN.md asks: a learned poll policy on its workers, a Reframer in
    front of the LPM, SLOs held by projgrad, its NFs placed by the
    embedding (path-fit) on worker 1 while the ports stay on worker 0, and
    a DRR egress (flow hop0 weighted 3, the others 1) onto the tx ports,
    its link faster than the traffic, whose full classes make the sources
    wait: the test asks that nothing be lost, and a class that drops when
    full loses what arrives while this busy machine keeps the arbiter's
    thread off both cores for longer than its queue holds (busy polling
    workers too, under CPU hogs)."""
    from sluice.embed import embed, from_pipeline
    from sluice.embed.live import place
    from sluice.nf import IpChecksum, Lpm, MacRewrite, Reframer, TtlDecrement

    p = Pipeline("every-part", batch_size=32)
    prefixes = {f"hop{h}": f"20.0.{h + 1}.0/24" for h in range(NEXT_HOPS)}
    rx = p.rx_port("rx", port(backend, "vsw0"), prefixes, ring=RX_RING)
    reframer = p.module("reframer", Reframer(t_buff_us=50))
    lpm = p.module("lpm", Lpm({prefix: h for h, prefix in enumerate(prefixes.values())}))
    p.chain(rx, reframer, lpm)
    for h in range(NEXT_HOPS):
        hop = [p.module(f"ttl{h}", TtlDecrement()), p.module(f"mac{h}", MacRewrite(src="02:00:00:00:00:fe", dst=f"02:00:00:01:00:{h:02x}")),
               p.module(f"checksum{h}", IpChecksum()), p.tx_port(f"tx{h}", port(backend, "vsw0"))]
        p.connect(lpm, hop[0], gate=h)
        p.chain(*hop)
        p.flow(f"hop{h}", [rx, reframer, lpm, *hop], slo_us=5000)
    instance = from_pipeline(p, 1)
    placement = embed(instance, "path-fit").placement
    assert placement is not None, "one core holds the router"
    place(p, instance, placement)
    p.schedule_egress("drr", 1e9, {"tight": (3, ["hop0"]), "bulk": (1, ["hop*"])}, on_full="wait")
    p.set_poll("learned")
    return p


def roundtrip(backend: str, composed: bool = False) -> dict[str, Any]:
    """Runs inside the namespace: runs the pipeline (l2l3(4) under Null, or
    `composed`, `every_part` under projgrad) between the veth pair's ends
    on `backend`'s ports while sending and reading, and returns what each
    stage counted."""
    from sluice.pipelines import l2l3

    veth_pair()
    reader = Reader("vgen0")
    gen = reader.sock

    def send() -> None:
        for i in range(FRAMES):
            gen.send(frame(i % FLOWS, i // FLOWS))
            if i % 256 == 255:
                time.sleep(0.001)  # at most ~0.2 Mpps, below what the pipeline forwards here

    sender = net.Sender(send)
    if composed:
        p = every_part(backend)
    else:
        p = l2l3(NEXT_HOPS)
        p.use_ports(rx=port(backend, "vsw0"), ring=RX_RING)
        p.use_ports(tx=port(backend, "vsw0"), ring={"descriptors": 8192})

    result = net.run_while_sending(p, "projgrad" if composed else "null", [sender], period_ms=50)
    ports = {m: result.port_counters(m) for m in result.data["module_totals"] if result.port_counters(m)}
    got = {"summary": result.summary, "ports": ports, "back": reader.stop()}
    if composed:
        got["workers"] = {m["name"]: m.get("worker") for m in p.spec()["modules"]}
        got["reframer"] = result.nf_counters("reframer")
        got["classes"] = {c: {"delivered": v["delivered"], "dropped": v["dropped"]} for c, v in result.classes.items()}
        got["waits"] = [sum(q["workers"][w]["waits"] for q in result.periods) for w in range(2)]
    return got


def generate() -> dict[str, Any]:
    """Runs inside the namespace: `Pipeline.send` l2l3(4)'s flows at 100 000
    pkt/s for 0.5 s on one end, read at the other (a quarter of what one
    core sends here, beside the reader on the other)."""
    from sluice.pipelines import l2l3

    veth_pair()
    reader = Reader("vsw0")
    p = l2l3(NEXT_HOPS)
    for flow in p.flows():
        p.set_rate(flow, 100_000 / NEXT_HOPS)
    sent = p.send("af_packet:vgen0", 0.5)
    return {"sent": sent, "arrived": len(reader.stop())}


def scheduled() -> dict[str, Any]:
    """Runs inside the namespace: l2l3(4) at 4 × 50 kpps through a DRR
    egress of 50 kpps onto af_packet:vsw0, flows 0 and 1 weighted 3 and
    the others 1; counts per next hop what arrived at the other end. Each
    class is offered more than twice its share: a loaded machine that
    makes 70% of the offered rate still fills both (at a link of 100 kpps
    the tight class then offered less than its 75 kpps and took less)."""
    from sluice.pipelines import l2l3

    veth_pair()
    reader = Reader("vgen0")
    p = l2l3(NEXT_HOPS)
    for flow in p.flows():
        p.set_rate(flow, 50_000)
    p.use_ports(tx="af_packet:vsw0")
    p.schedule_egress("drr", 50_000 * (60 + 24) * 8, {"tight": (3, ["flow0", "flow1"]), "bulk": (1, ["flow*"])})
    # A second of it: the class queues drained at the end, alike for both, weigh little.
    result = p.run("null", periods=20, period_ms=50, warmup_periods=1)
    per_hop = [0] * NEXT_HOPS
    for data in reader.stop():
        if len(data) >= 34 and data[12:14] == b"\x08\x00" and 1 <= data[32] <= NEXT_HOPS:
            per_hop[data[32] - 1] += 1
    return {"summary": result.summary, "per_hop": per_hop}


def interrupts(backend: str) -> dict[str, Any]:
    """Runs inside the namespace: l2l3(4) receiving on `backend`:vsw0 at
    about 5 kpps, once polling busily and once waiting on the socket
    (vpp-adaptive); what each received and how much of its core it used."""
    from sluice.pipelines import l2l3

    veth_pair()
    gen = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    gen.bind(("vgen0", ETH_P_ALL))
    got = {}
    for policy in ("busy", "vpp-adaptive"):
        p = l2l3(NEXT_HOPS)
        p.use_ports(rx=port(backend, "vsw0"))
        p.set_poll(PollSettings(policy, max_sleep_us=500.0))
        sent = 0

        def send() -> None:
            nonlocal sent
            for i in range(2000):
                gen.send(frame(i % FLOWS, i))
                sent += 1
                if i % 5 == 4:
                    time.sleep(0.001)

        result = net.run_while_sending(p, "null", [net.Sender(send)], period_ms=50)
        measured = [q for q in result.periods if not q["warmup"]]
        got[policy] = {"summary": result.summary, "sent": sent,
                       "waits": sum(q["workers"][0]["waits"] for q in measured)}
    return got


def queues(backend: str, spread: bool = False) -> dict[str, Any]:
    """Inside the namespace: a veth pair with two queues, a worker receiving
    on vsw0 and sending back out of it on each (AF_XDP: each on the queue
    `@queue` names, or, `spread`, on the one the pipeline gives it when
    both name the interface alike; AF_PACKET: the pipeline puts both in
    one fanout group), a sender on each of vgen0's queues; what each
    flow's port took in and delivered."""
    from sluice import Bypass

    veth_pair(queues=2)
    p = Pipeline("two-queues", batch_size=32)
    for w in (0, 1):
        port = f"{backend}:vsw0" if spread else f"{backend}:vsw0@{w}"
        rx = p.rx_port(f"rx{w}", port, {f"q{w}": "0.0.0.0/0"}, worker=w)
        nf = p.module(f"nf{w}", Bypass(0, 0), worker=w)
        tx = p.tx_port(f"tx{w}", port, worker=w)
        p.chain(rx, nf, tx)
        p.flow(f"q{w}", [rx, nf, tx])
    sent: dict[int, Any] = {}

    def send(w: int) -> None:
        from sluice.pipelines import l2l3

        source = l2l3(NEXT_HOPS)
        for flow in source.flows():
            source.set_rate(flow, 20_000 / NEXT_HOPS)
        sent[w] = source.send(f"{backend}:vgen0" + ("" if backend == "af_packet" else f"@{w}"), 0.5)["packets"]

    senders = [net.Sender(lambda w=w: send(w)) for w in (0, 1)]
    result = net.run_while_sending(p, "null", senders, period_ms=50)
    t = result.data["flow_totals"]
    return {"sent": sent, "flows": {f: {"generated": t[f]["generated"], "delivered": t[f]["delivered"]} for f in ("q0", "q1")},
            "summary": result.summary}


def ctrl_c(backend: str) -> dict[str, Any]:
    """Runs inside the namespace: `sluice run l2l3` between `backend`'s
    ports on vsw0 while frames arrive, stopped by SIGINT after 2 s; its
    exit status, report and whether an XDP program stayed behind."""
    import signal
    import tempfile

    veth_pair()
    gen = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    gen.bind(("vgen0", ETH_P_ALL))
    sending = threading.Event()
    sending.set()

    def send() -> None:
        i = 0
        while sending.is_set():
            gen.send(frame(i % FLOWS, i // FLOWS))
            i += 1
            if i % 64 == 0:
                time.sleep(0.001)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    sluice = os.path.join(os.path.dirname(sys.executable), "sluice")
    with tempfile.TemporaryDirectory() as folder:
        run = subprocess.Popen([sluice, "run", "l2l3", "--n", "4", "--rx", port(backend, "vsw0"), "--tx", port(backend, "vsw0"),
                                "--periods", "100", "--period-ms", "100", "--json", "r.json"], cwd=folder,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2.5)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
        sending.clear()
        report = json.loads((Path(folder) / "r.json").read_text()) if (Path(folder) / "r.json").exists() else None
    link = subprocess.run(["ip", "link", "show", "vsw0"], capture_output=True, text=True).stdout
    return {"code": run.returncode, "err": err[-2000:], "report": report, "xdp_left": "xdp" in link}


needs_namespace = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None,
                                     reason="needs root, unshare and ip to make a network namespace")


def in_namespace(mode: str, out: Any, backend: str = "af_packet") -> dict[str, Any]:
    """Runs this file's `mode` on `backend`'s ports in a network namespace of its own; what it printed."""
    run = subprocess.run(["unshare", "--net", sys.executable, __file__, mode, str(out), backend], capture_output=True, text=True, timeout=300)
    if run.returncode == CANNOT or (run.returncode != 0 and "unshare failed" in run.stderr):
        pytest.skip(f"no network namespace with a veth pair here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    got: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    return got


@needs_namespace
def test_the_sender_puts_what_it_counts_on_the_wire_and_never_runs_ahead_of_its_rate(tmp_path: Any) -> None:
    got = in_namespace("generate", tmp_path / "unused")
    sent = got["sent"]
    assert got["arrived"] == sent["packets"], "every frame sent arrived at the other end"
    # Paced at 100 000 pkt/s for 0.5 s: never ahead of its rate. (How close it
    # comes to it depends on the machine's load: `sluice experiment ports` measures that.)
    assert 0 < sent["packets"] <= 50_000 + 1_000 and sent["seconds"] >= 0.5, sent
    assert sent["bytes"] == 60 * sent["packets"], "l2l3's 60-byte template frames"


def forwarded_in_namespace(mode: str, tmp_path: Any, backend: str) -> dict[str, Any]:
    """Runs `roundtrip` (`mode`: "roundtrip" or "every_part") in a namespace
    and checks what any pipeline between the two ports must show: every
    frame taken in and delivered, each port counting the frames and bytes it
    took and put on the wire, and every frame back out routed; returns
    what the run counted."""
    out = tmp_path / "back.bin"
    got = in_namespace(mode, out, backend)
    assert_every_frame_delivered(got["summary"])
    size = len(frame(0, 0))
    rx = [c for c in got["ports"].values() if "rx_pkts" in c]
    tx = [c for c in got["ports"].values() if "tx_pkts" in c]
    assert len(rx) == 1 and rx[0]["rx_pkts"] == FRAMES and rx[0]["rx_bytes"] == size * FRAMES and rx[0]["ring_dropped"] == 0, got["ports"]
    assert sum(c["tx_pkts"] for c in tx) == FRAMES and sum(c["tx_bytes"] for c in tx) == size * FRAMES and all(c["tx_full"] == 0 for c in tx), got["ports"]
    assert_routed(read_back(out))
    return got


@needs_namespace
@pytest.mark.parametrize("backend", BACKENDS)
def test_l2l3_between_ports_loses_nothing_and_routes_every_frame(tmp_path: Any, backend: str) -> None:
    forwarded_in_namespace("roundtrip", tmp_path, backend)


@needs_namespace
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_part_in_one_pipeline_between_ports_loses_nothing_and_routes_every_frame(tmp_path: Any, backend: str) -> None:
    got = forwarded_in_namespace("every_part", tmp_path, backend)
    ports = {name for name, worker in got["workers"].items() if worker == 0}
    assert ports == {"rx", *(f"tx{h}" for h in range(NEXT_HOPS))}, f"the embedding put every NF on worker 1: {got['workers']}"
    reframer = got["reframer"]
    assert reframer["packets_in"] == reframer["packets_out"] == FRAMES and reframer["released_timeout"] > 0, reframer
    per_class = {c: v["delivered"] for c, v in got["classes"].items()}
    assert per_class == {"tight": FRAMES // NEXT_HOPS, "bulk": FRAMES - FRAMES // NEXT_HOPS}, got["classes"]
    assert all(w > 0 for w in got["waits"]), f"the learned policy let both workers sleep once the traffic stopped: {got['waits']}"


def assert_every_frame_delivered(summary: dict[str, Any]) -> None:
    """A run's summary: all FRAMES taken in (none missed at the rx ring) and delivered, none dropped."""
    s = summary
    assert s["missed"] == 0 and s["generated"] == FRAMES and s["delivered"] == FRAMES and s["dropped"] == 0 and s["lossless"], str({k: s[k] for k in ("missed", "generated", "delivered", "dropped", "drops", "in_flight", "lossless")})


def assert_routed(frames: list[bytes]) -> None:
    """Every frame sent came out, routed to its next hop, rewritten, in order within its flow."""
    assert len(frames) == FRAMES, "every frame came back out of the tx port"
    last_seq = [-1] * FLOWS
    for f in frames:
        flow, seq = struct.unpack("!II", f[42:50])
        hop = f[32] - 1
        assert f[:6] == bytes.fromhex(f"02000001{0:02x}{hop:02x}") and f[6:12] == ROUTER_MAC, "MACs rewritten for its next hop"
        assert f[22] == 63 and checksum(f[14:34]) == 0, "TTL decremented, checksum valid"
        assert hop == flow % NEXT_HOPS and seq > last_seq[flow], f"flow {flow} in order on its next hop"
        last_seq[flow] = seq


def write_pcap(path: Any, frames: list[bytes]) -> None:
    """`frames` as a classic pcap file (Ethernet, microsecond stamps)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, data in enumerate(frames):
            f.write(struct.pack("<IIII", i // 1_000_000, i % 1_000_000, len(data), len(data)) + data)


def read_pcap(path: Any) -> list[bytes]:
    """The frames of a classic pcap file."""
    data, frames, at = open(path, "rb").read(), [], 24
    while at < len(data):
        n = struct.unpack("<I", data[at + 8:at + 12])[0]
        frames.append(data[at + 16:at + 16 + n])
        at += 16 + n
    return frames


def dpdk_pcap(folder: str) -> dict[str, Any]:
    """Runs in a process of its own (DPDK's EAL starts once a process):
    l2l3(4) from a DPDK pcap device reading the frames in `folder`/in.pcap
    to one writing `folder`/out.pcap, at all four egresses."""
    from sluice.pipelines import l2l3

    p = l2l3(NEXT_HOPS)
    p.use_ports(rx=f"dpdk:net_pcap0,rx_pcap={folder}/in.pcap", tx=f"dpdk:net_pcap1,tx_pcap={folder}/out.pcap")
    result = p.run("null", periods=20, period_ms=50, warmup_periods=1)
    ports = {m: result.port_counters(m) for m in result.data["module_totals"] if result.port_counters(m)}
    return {"summary": result.summary, "ports": ports}


def dpdk_queues(rx_device: str = "dpdk:net_null0") -> dict[str, Any]:
    """Runs in a process of its own: two workers, each forwarding from
    `rx_device` (by default DPDK null device 0, frames as fast as asked) to
    null device 1, both named alike by both workers: the pipeline gives each
    worker a queue pair of each device. What each port counted, or the
    error that stopped the pipeline."""
    from sluice import Bypass

    p = Pipeline("dpdk-queues", batch_size=32)
    for w in (0, 1):
        rx = p.rx_port(f"rx{w}", rx_device, {f"q{w}": "0.0.0.0/0"}, worker=w)
        nf = p.module(f"nf{w}", Bypass(0, 0), worker=w)
        tx = p.tx_port(f"tx{w}", "dpdk:net_null1", worker=w)
        p.chain(rx, nf, tx)
        p.flow(f"q{w}", [rx, nf, tx])
    try:
        result = p.run("null", periods=6, period_ms=50, warmup_periods=1)
    except ValueError as e:
        return {"error": str(e)}
    return {"summary": result.summary, "ports": {m: result.port_counters(m) for m in ("rx0", "rx1", "tx0", "tx1")}}


@pytest.mark.skipif("dpdk" not in _core.port_backends(), reason="built without libdpdk")
def test_workers_naming_a_dpdk_device_alike_each_get_a_queue_pair() -> None:
    run = subprocess.run([sys.executable, __file__, "dpdk_queues", "unused"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    assert "error" not in got, got
    s, ports = got["summary"], got["ports"]
    assert s["lossless"] and s["accounted"] and s["in_flight"] == 0, s
    assert all(ports[m]["rx_pkts"] > 10_000 for m in ("rx0", "rx1")), ports
    assert all(ports[m]["tx_pkts"] > 10_000 for m in ("tx0", "tx1")), ports
    assert ports["rx0"]["rx_pkts"] + ports["rx1"]["rx_pkts"] == s["generated"], (ports, s)


@pytest.mark.skipif("dpdk" not in _core.port_backends(), reason="built without libdpdk")
def test_a_dpdk_device_with_fewer_queues_than_its_workers_is_refused_by_name(tmp_path: Any) -> None:
    write_pcap(tmp_path / "in.pcap", [frame(0, 0)])
    device = f"dpdk:net_pcap0,rx_pcap={tmp_path}/in.pcap"
    run = subprocess.run([sys.executable, __file__, "dpdk_queues", "unused", device], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    error = json.loads(run.stdout.splitlines()[-1])["error"]
    assert "device 'net_pcap0' has 1 queue(s) and 2 workers need one each" in error and "rx0" in error, error


@pytest.mark.skipif("dpdk" not in _core.port_backends(), reason="built without libdpdk")
def test_l2l3_between_dpdk_pcap_devices_loses_nothing_and_routes_every_frame(tmp_path: Any) -> None:
    write_pcap(tmp_path / "in.pcap", [frame(i % FLOWS, i // FLOWS) for i in range(FRAMES)])
    run = subprocess.run([sys.executable, __file__, "dpdk_pcap", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    assert_every_frame_delivered(got["summary"])
    assert sum(c.get("tx_pkts", 0) for c in got["ports"].values()) == FRAMES, got["ports"]
    assert_routed(read_pcap(tmp_path / "out.pcap"))


@needs_namespace
def test_a_scheduled_egress_transmits_its_shares_onto_a_port(tmp_path: Any) -> None:
    got = in_namespace("scheduled", tmp_path / "unused")
    s, per_hop = got["summary"], got["per_hop"]
    assert s["accounted"] and s["dropped"] > 0, s
    # What the link sent went onto the wire: every delivered frame arrived.
    assert sum(per_hop) == s["delivered"], (per_hop, s)
    tight = (per_hop[0] + per_hop[1]) / sum(per_hop)
    assert abs(tight - 0.75) < 0.05, per_hop


@needs_namespace
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_worker_waiting_for_interrupts_sleeps_on_the_port_socket_and_loses_nothing(tmp_path: Any, backend: str) -> None:
    got = in_namespace("interrupts", tmp_path / "unused", backend)
    for policy, run in got.items():
        s = run["summary"]
        assert s["generated"] == run["sent"] and s["missed"] == 0 and s["lossless"], (policy, run)
    busy, waiting = got["busy"], got["vpp-adaptive"]
    assert waiting["waits"] > 100 and busy["waits"] == 0, got


@needs_namespace
@pytest.mark.skipif("af_xdp" not in _core.port_backends(), reason="built without libxdp")
def test_two_workers_receive_each_on_its_own_queue_of_one_interface(tmp_path: Any) -> None:
    got = in_namespace("queues", tmp_path / "unused", "af_xdp")
    s = got["summary"]
    assert s["missed"] == 0 and s["lossless"], s
    for w in ("0", "1"):
        flow = got["flows"][f"q{w}"]
        assert got["sent"][w] > 5000 and flow["generated"] == got["sent"][w] == flow["delivered"], got


@needs_namespace
@pytest.mark.parametrize("backend", BACKENDS[:2])
def test_workers_naming_one_interface_alike_each_get_a_share_and_no_frame_twice(tmp_path: Any, backend: str) -> None:
    got = in_namespace("spread", tmp_path / "unused", backend)
    s = got["summary"]
    assert s["missed"] == 0 and s["lossless"], s
    flows, sent = got["flows"], got["sent"]
    assert all(f["delivered"] == f["generated"] > 0 for f in flows.values()), got
    # Each frame sent reached one worker once (without a fanout group, each AF_PACKET socket takes every frame).
    assert sum(f["generated"] for f in flows.values()) == sum(sent.values()), got
    if backend == "af_xdp":
        assert all(flows[f"q{w}"]["generated"] == sent[w] for w in ("0", "1")), "each worker on its own queue"


@needs_namespace
@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_on_a_port_run_writes_the_report_of_the_periods_done_and_leaves_no_program_behind(tmp_path: Any, backend: str) -> None:
    got = in_namespace("ctrl_c", tmp_path / "unused", backend)
    assert got["code"] == 130 and "Traceback" not in got["err"], got["err"]
    report = got["report"]
    assert report is not None and report["interrupted"] == "stopped" and 5 <= len(report["periods"]) < 100, got
    s = report["summary"]
    assert s["generated"] > 0 and s["accounted"] and s["in_flight"] == 0, s
    assert not got["xdp_left"], "the XDP program left with the socket"


def write_back(path: Any, frames: list[bytes]) -> None:
    """`frames`, each behind its length (2 bytes, big-endian), for `read_back`."""
    with open(path, "wb") as f:
        for data in frames:
            f.write(len(data).to_bytes(2, "big") + data)


def read_back(path: Any) -> list[bytes]:
    """The frames `write_back` wrote."""
    data, frames, i = Path(path).read_bytes(), [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 2], "big")
        frames.append(data[i + 2:i + 2 + n])
        i += 2 + n
    return frames


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        print(json.dumps(generate()))
    elif sys.argv[1] == "scheduled":
        print(json.dumps(scheduled()))
    elif sys.argv[1] in ("queues", "spread"):
        print(json.dumps(queues(sys.argv[3], spread=sys.argv[1] == "spread")))
    elif sys.argv[1] == "ctrl_c":
        print(json.dumps(ctrl_c(sys.argv[3])))
    elif sys.argv[1] == "dpdk_queues":
        print(json.dumps(dpdk_queues(*sys.argv[3:])))
    elif sys.argv[1] == "dpdk_pcap":
        print(json.dumps(dpdk_pcap(sys.argv[2])))
    elif sys.argv[1] == "interrupts":
        print(json.dumps(interrupts(sys.argv[3])))
    else:
        got = roundtrip(sys.argv[3], composed=sys.argv[1] == "every_part")
        write_back(sys.argv[2], got.pop("back"))
        print(json.dumps(got))
