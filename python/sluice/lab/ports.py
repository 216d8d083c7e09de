"""`ports`: what a port costs. Per backend, the rx → tx forwarding rate of
one worker running Bypass(0, 0) between two ports, against a bare loop
over the same rings (the backend's ceiling here). AF_PACKET and AF_XDP
forward between the ports of one end of a veth pair while a sender on the
other end offers as much as it can (the fastest kernel backend this build
has sends for both), in a network namespace it makes and removes (root);
DPDK forwards from a null device (frames as fast as asked) to another
(takes all), and DPDK's own loop, which passes mbufs on without copying
them into the pool, says what Sluice's copies cost."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sluice import _core
from sluice.lab import _core as lab_core
from sluice import net
from sluice.lab import output, ports_control

NAMESPACE = "sluice-ports"
#: The backends measured, those this build has.
BACKENDS = tuple(_core.port_backends())
#: The kernel backends, which forward on the veth pair; the last (AF_XDP where built) also sends.
KERNEL = tuple(b for b in BACKENDS if b != "dpdk")
#: The sender's port, on one end of the pair; the forwarder is on the other.
GEN = f"{KERNEL[-1]}:{net.GEN_END}"
#: DPDK's ports: a null device that makes frames, one that takes them.
DPDK_RX, DPDK_TX = "dpdk:net_null0", "dpdk:net_null1"


def row_name(backend: str) -> str:
    """A backend's name in the report: DPDK's says which devices it ran on."""
    return "dpdk-null" if backend == "dpdk" else backend
#: The rate at which `sluice gen`'s sender and tcpreplay are compared (pkt/s).
RATE_CHECK_PPS = 200_000.0


def _forwarder(rx_port: str, tx_port: str) -> Any:
    from sluice import Bypass, Pipeline

    p = Pipeline("forward", batch_size=32)
    rx = p.rx_port("rx", rx_port, {"all": "0.0.0.0/0"})
    nf = p.module("nf", Bypass(0, 0))
    tx = p.tx_port("tx", tx_port)
    p.chain(rx, nf, tx)
    p.flow("all", [rx, nf, tx])
    return p


def measure_dpdk(mode: str, seconds: float) -> dict[str, Any]:
    """DPDK's null devices for `seconds`, forwarded by `mode`: "bare"
    (DPDK's own loop), "raw" (Sluice's loop, copies) or "pipeline"."""
    if mode != "pipeline":
        done = json.loads(lab_core.forward_raw(DPDK_RX, DPDK_TX, seconds, 32, bare=mode == "bare"))
        taken = done["packets"] + done["tx_full"]
        return {"forwarded": done["packets"], "received": taken, "ring_dropped": 0, "sent": taken, "seconds": done["seconds"]}
    periods = int(seconds * 10) + 1
    result = _forwarder(DPDK_RX, DPDK_TX).run("null", periods=periods, period_ms=100, warmup_periods=1)
    s = result.summary
    rate = statistics.median(q["rate_pps"] for q in result.periods if not q["warmup"])
    return {"forwarded": rate * seconds, "received": s["generated"], "ring_dropped": s["missed"], "sent": s["generated"] + s["missed"],
            "seconds": seconds, "lossless": s["lossless"]}


def measure(backend: str, mode: str, seconds: float) -> dict[str, Any]:
    """Offers traffic for `seconds` while `mode` ("raw" or "pipeline";
    DPDK: also "bare") forwards on `backend`'s ports; what each side
    counted. The kernel backends run inside the namespace."""
    from sluice.pipelines import l2l3

    if backend == "dpdk":
        return measure_dpdk(mode, seconds)
    sender = net.Sender(lambda: l2l3(4).send(GEN, seconds))
    if mode == "raw":
        # The loop opens its rings at once; the sender starts once they are there.
        threading.Timer(0.2, sender.start).start()
        fwd = f"{backend}:{net.SWITCH_END}"
        done = json.loads(lab_core.forward_raw(fwd, fwd, seconds + 0.6, 32))
        sent = sender.wait()
        return {"forwarded": done["packets"], "received": done["packets"] + done["tx_full"], "ring_dropped": done["missed"],
                "sent": sent["packets"], "seconds": sent["seconds"]}

    port = f"{backend}:{net.SWITCH_END}"
    result = net.run_while_sending(_forwarder(port, port), "null", [sender], period_ms=100)
    sent = sender.wait()
    s = result.summary
    return {"forwarded": s["delivered"], "received": s["generated"], "ring_dropped": s["missed"], "sent": sent["packets"],
            "seconds": sent["seconds"]}


def rate(sender: str, pps: float, seconds: float) -> float:
    """Inside the namespace: the rate (pkt/s) at which frames from
    `sender` ("sluice": `Pipeline.send`; "tcpreplay": Debian's replayer, a
    synthetic trace) set to `pps` arrive at the forwarder's rx port: the
    median of its per-period counts while the sender sends."""
    import tempfile

    from sluice.pipelines import l2l3

    with tempfile.TemporaryDirectory() as folder:
        if sender == "sluice":
            source = l2l3(4)
            for flow in source.flows():
                source.set_rate(flow, pps / 4)
            send: Callable[[], Any] = lambda: source.send(GEN, seconds)
        else:
            trace = Path(folder) / "trace.pcap"
            _core.trace_synth(str(trace), 20_000)
            send = lambda: subprocess.run(["tcpreplay", f"--intf1={net.GEN_END}", f"--pps={pps:.0f}", "--loop=1000",
                                           f"--limit={int(pps * seconds)}", str(trace)], capture_output=True, check=True)
        port = f"{KERNEL[0]}:{net.SWITCH_END}"
        # Until the sender has finished, however late it starts on a busy machine.
        result = net.run_while_sending(_forwarder(port, port), "null", [net.Sender(send)], period_ms=100)
        counts = [q["modules"]["rx"]["port"]["rx_pkts"] for q in result.periods if not q["warmup"]]
    busy = [c for c in counts if c > 0][1:-1]
    return statistics.median(busy) * 10 if busy else 0.0


def run(out: Path, quick: bool, progress: Callable[[str], None], repeats: Optional[int] = None) -> dict[str, Any]:
    """Measures each backend, `repeats` runs a mode (default 3 quick, else 5); writes ports.{json,csv,md,png} into `out`."""
    seconds = 1.0 if quick else 3.0
    reps = repeats or (3 if quick else 5)
    net.up(NAMESPACE)
    try:
        modes = {b: ("bare", "raw", "pipeline") if b == "dpdk" else ("raw", "pipeline") for b in BACKENDS}
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {b: {m: [] for m in modes[b]} for b in BACKENDS}
        for i in range(reps):
            for backend in BACKENDS:
                for mode in modes[backend] if i % 2 == 0 else modes[backend][::-1]:
                    progress(f"{backend} {mode}, run {i + 1} of {reps}")
                    # Each run a process of its own (DPDK's EAL starts once a process); the kernel's in the namespace.
                    inside = ["ip", "netns", "exec", NAMESPACE] if backend != "dpdk" else []
                    done = subprocess.run([*inside, sys.executable, "-m", "sluice.lab.ports", backend, mode, str(seconds)],
                                          capture_output=True, text=True, timeout=120)
                    if done.returncode != 0:
                        raise RuntimeError(f"ports experiment, {backend} {mode} run: {done.stderr.strip().splitlines()[-1:]}")
                    runs[backend][mode].append(json.loads(done.stdout.splitlines()[-1]))
                    time.sleep(0.2)
        # `sluice gen`'s sender against tcpreplay at the same rate, as the other end sees them.
        rate_check = []
        for sender in ("sluice", "tcpreplay") if shutil.which("tcpreplay") else ("sluice",):
            progress(f"{sender} at {RATE_CHECK_PPS:.0f} pkt/s")
            done = subprocess.run(["ip", "netns", "exec", NAMESPACE, sys.executable, "-m", "sluice.lab.ports", "rate", sender, str(seconds)],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                raise RuntimeError(f"ports experiment, {sender} rate: {done.stderr.strip().splitlines()[-1:]}")
            got = float(json.loads(done.stdout.splitlines()[-1]))
            rate_check.append({"sender": sender, "target_pps": RATE_CHECK_PPS, "received_pps": round(got), "of_target": round(got / RATE_CHECK_PPS, 3)})
    finally:
        net.down(NAMESPACE)

    def mpps(r: dict[str, Any]) -> float:
        return float(r["forwarded"]) / float(r["seconds"]) / 1e6

    def summary(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        ratios = [mpps(p) / mpps(r) for p, r in zip(runs["pipeline"], runs["raw"]) if mpps(r) > 0]
        last = runs["pipeline"][-1]
        return {
            "mpps": round(statistics.median(mpps(r) for r in runs["pipeline"]), 3),
            "raw_mpps": round(statistics.median(mpps(r) for r in runs["raw"]), 3),
            "ratio": round(statistics.median(ratios), 2) if ratios else None,
            "ratio_min": round(min(ratios), 2) if ratios else None,
            "ratio_max": round(max(ratios), 2) if ratios else None,
            # Below the forwarder's ceiling while the sender is the limit: then nothing is dropped at the ring.
            "sender_mpps": round(statistics.median(r["sent"] / r["seconds"] / 1e6 for r in runs["pipeline"]), 3) if "bare" not in runs else None,
            # A null device offers as fast as the forwarder asks: always saturated.
            "saturated": "bare" in runs or all(r["ring_dropped"] > 0 for r in runs["pipeline"] + runs["raw"]),
            "sent": last["sent"], "received": last["received"], "ring_dropped": last["ring_dropped"],
            "lossless": all(r.get("lossless", r["sent"] == r["received"] + r["ring_dropped"]) for r in runs["pipeline"]),
            # DPDK: its own loop, without Sluice's copies.
            "bare_mpps": round(statistics.median(mpps(r) for r in runs["bare"]), 3) if "bare" in runs else None,
        }

    progress(f"null and projgrad on {KERNEL[-1]} ports")
    controllers = ports_control.run(KERNEL[-1], quick)
    backends = {row_name(b): summary(runs[b]) for b in BACKENDS}
    rows = [{"backend": name, **b} for name, b in backends.items()]
    report = {"backends": backends, "sender": GEN, "rate_check": rate_check, "controllers": controllers, "runs": runs, "seconds": seconds,
              "reps": reps, "rows": rows}
    output.write(out, "ports", report, lambda rows: markdown(rows) + "\n" + ports_control.markdown(controllers), plot)
    return report


def headline(report: dict[str, Any]) -> output.Headline:
    """The README's figure: each backend's forwarding rate and its ratio to the bare loop."""
    def one(name: str, b: dict[str, Any]) -> str:
        limit = "" if b["saturated"] else " (the sender's rate)"
        return f"{name} {b['mpps']} Mpps{limit}, {b['ratio']}× the bare loop"

    by = {r["controller"]: r for r in report["controllers"]}
    batches = f"on {by['null']['backend']} ports projgrad batches {by['projgrad']['mean_batch']} where Null {by['null']['mean_batch']}, " \
              f"{max(r['violation_pct'] for r in by.values())}% SLO violations"
    return output.Headline("; ".join([*(one(n, b) for n, b in report["backends"].items()), batches]), "—")


def markdown(rows: list[dict[str, Any]]) -> str:
    """One line per backend: the pipeline's rate, the bare loop's, their ratio."""
    lines = ["| backend | pipeline Mpps | bare loop Mpps | ratio (min–max) | sender Mpps | saturated | sent | received | ring dropped | lossless |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['backend']} | {r['mpps']} | {r['raw_mpps']} | {r['ratio']} ({r['ratio_min']}–{r['ratio_max']}) | "
                     f"{r['sender_mpps'] or '—'} | {'yes' if r['saturated'] else 'no: the sender is the limit'} | "
                     f"{r['sent']} | {r['received']} | {r['ring_dropped']} | {'yes' if r['lossless'] else 'NO'} |")
    for r in rows:
        if r["bare_mpps"]:
            copies_ns = 1e3 / r["raw_mpps"] - 1e3 / r["bare_mpps"]
            lines.append(f"\n{r['backend']}: DPDK's own loop, which passes mbufs on, {r['bare_mpps']} Mpps; Sluice's loop copies each "
                         f"frame into the pool and out into a fresh mbuf: {r['raw_mpps']} Mpps, {copies_ns:.1f} ns/pkt more.")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Forwarding rate per backend: the pipeline beside the bare loop."""
    from sluice.plot import save, subplots

    fig, ax = subplots(figsize=(5, 3.5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["raw_mpps"] for r in rows], 0.4, label="bare loop")
    ax.bar([x + 0.2 for x in xs], [r["mpps"] for r in rows], 0.4, label="pipeline, Bypass(0, 0)")
    ax.set_xticks(list(xs), [r["backend"] for r in rows])
    ax.set_ylabel("forwarded Mpps")
    ax.legend(fontsize=8)
    save(fig, path)


if __name__ == "__main__":
    if sys.argv[1] == "rate":
        print(json.dumps(rate(sys.argv[2], RATE_CHECK_PPS, float(sys.argv[3]))))
    else:
        print(json.dumps(measure(sys.argv[1], sys.argv[2], float(sys.argv[3]))))
