"""`serve`: what operating a served pipeline costs its forwarding. L2L3(4)
on built-in traffic runs under `sluice serve` (a subprocess, as an operator
starts it) while a client of its control API:

- scrapes `/metrics` 10 times a second: the delivered rate against runs
  without scrapes, in pairs whose order alternates;
- replaces one route at a time as fast as the API takes them: the updates
  a second and the delivered rate against runs without;
- loads 1 M IPv4 routes in one request: how long it takes, forwarding;
  then serves them again from the state file the first run kept
  (`--state`): how long until it forwards and answers;
- over a day's periods (864 000, each 1 ms here), scrapes, replaces a route
  and now and then changes an SLO and the controller once a second:
  resident memory's trend (KiB/min), which stays flat when per-period
  state is bounded."""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.client import Client
from sluice.lab import output
from sluice.pipelines import l2l3

SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")
#: What the client does while the pipeline runs: given the client and when to stop, returns what it counted.
Activity = Callable[[Client, float], dict[str, Any]]


def _rss_kib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(float(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def served(seconds: float, period_ms: float, activity: Optional[Activity] = None, state: Optional[str] = None) -> dict[str, Any]:
    """Serves L2L3(4) (or the state file `state` where there is one, which
    it keeps) for `seconds` while `activity` runs; the report's summary,
    what the activity counted, RSS samples (s, KiB) and how long it took
    from its start to forwarding with its API answering (s)."""
    with tempfile.TemporaryDirectory() as tmp:
        description = os.path.join(tmp, "l2l3.json")
        with open(description, "w") as f:
            f.write(l2l3(4).to_json())
        run_dir, report_path = os.path.join(tmp, "run"), os.path.join(tmp, "report.json")
        # Its log (a line per change: many under the update load) goes to a file, read only on failure.
        log = open(os.path.join(tmp, "serve.log"), "w+")
        launched = time.monotonic()
        process = subprocess.Popen([SLUICE, "serve", description, "--run-dir", run_dir, "--period-ms", str(period_ms), "--keep-periods", "10",
                                    "--json", report_path, *(["--state", state] if state else [])], stdout=subprocess.DEVNULL, stderr=log, text=True)
        try:
            client = Client(run_dir, caller="lab")
            try:
                client.wait(alive=lambda: process.poll() is None)
            except (RuntimeError, TimeoutError) as e:
                raise RuntimeError(f"sluice serve did not start ({e}): {_tail(log)}") from None
            start = time.monotonic()
            counted: dict[str, Any] = {}
            worker = threading.Thread(target=lambda: counted.update(activity(client, start + seconds) if activity else {}))
            worker.start()
            rss = []
            while time.monotonic() < start + seconds:
                rss.append((time.monotonic() - start, _rss_kib(process.pid)))
                time.sleep(min(1.0, seconds / 20))
            worker.join()
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120)
        if process.returncode != 0:
            raise RuntimeError(f"sluice serve ended with {process.returncode}: {_tail(log)}")
        log.close()
        with open(report_path) as f:
            report = json.load(f)
    return {"summary": report["summary"], "counted": counted, "rss": rss, "ready_s": start - launched}


def _tail(log: Any) -> str:
    log.seek(0)
    return str(log.read()[-500:])


def scrape(client: Client, until: float) -> dict[str, Any]:
    """Scrapes /metrics 10 times a second."""
    n = 0
    while time.monotonic() < until:
        client.metrics()
        n += 1
        time.sleep(0.1)
    return {"scrapes": n}


def operate(client: Client, until: float) -> dict[str, Any]:
    """An operator's day, once a second: a scrape, a route replaced, and
    now and then the SLO and the controller changed and set back."""
    n = 0
    while time.monotonic() < until:
        client.metrics()
        client.routes("lpm", add=[(f"10.200.{n % 256}.0/24", n % 4)])
        if n % 60 == 0:
            client.set_slo("flow0", 50.0 + n % 7)
            client.set_controller("projgrad" if n % 120 == 0 else "null")
        n += 1
        time.sleep(1.0)
    return {"operations": n}


#: The rate of single route updates the forwarding rate is held to (updates/s).
UPDATE_RATE = 10_000.0
#: Single-route requests the update load keeps outstanding, each on a connection of
#: its own (the server serves 16 at once).
WINDOW = 8


def update_routes(client: Client, until: float, rate: Optional[float] = None) -> dict[str, Any]:
    """Replaces one route per request, at `rate` a second or as fast as the
    API takes them: up to `WINDOW` requests outstanding, each on a
    connection of its own (the API answers one request per connection), so
    that the server, not Python's waiting, is what is measured; every
    answer must be 200."""
    n, start = 0, time.monotonic()
    pending: collections.deque[socket.socket] = collections.deque()

    def request(i: int) -> socket.socket:
        body = json.dumps({"add": [[f"40.{i // 256 % 256}.{i % 256}.0/24", i % 4]]}).encode()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(client.socket_path())
        sock.sendall(b"POST /v1/modules/lpm/routes HTTP/1.1\r\nHost: sluice\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        return sock

    def answer(sock: socket.socket) -> None:
        with sock:
            reply = b"".join(iter(lambda: sock.recv(1 << 16), b""))
        if not reply.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"a route update was refused: {reply.decode(errors='replace')}")

    while time.monotonic() < until:
        if rate is not None:
            time.sleep(max(0.0, start + n / rate - time.monotonic()))
        while len(pending) < WINDOW:
            pending.append(request(n))
            n += 1
        answer(pending.popleft())
    while pending:
        answer(pending.popleft())
    return {"updates": n, "updates_per_s": n / (time.monotonic() - start)}


def bulk_load(client: Client, _until: float) -> dict[str, Any]:
    """Loads 1 M /24 routes (40.0.0.0 up) in one request."""
    routes = [(f"{40 + i // 65536}.{i // 256 % 256}.{i % 256}.0/24", i % 4) for i in range(1_000_000)]
    start = time.monotonic()
    client.routes("lpm", add=routes)
    return {"routes": len(routes), "load_s": time.monotonic() - start, "in_force": len(client.config("lpm")["routes"])}


def routes_in_force(client: Client, _until: float) -> dict[str, Any]:
    """The routes the LPM holds."""
    return {"in_force": len(client.config("lpm")["routes"])}


def _paired(label: str, activity: Activity, repeats: int, seconds: float, period_ms: float, progress: Callable[[str], None]) -> dict[str, Any]:
    """`repeats` pairs of runs with and without `activity`, the order
    alternating; the ratio of delivered rates per pair."""
    ratios, counts = [], []
    for r in range(repeats):
        progress(f"{label}: pair {r + 1} of {repeats}")
        runs = {}
        for with_it in ((False, True) if r % 2 == 0 else (True, False)):
            runs[with_it] = served(seconds, period_ms, activity if with_it else None)
        ratios.append(runs[True]["summary"]["rate_pps"] / runs[False]["summary"]["rate_pps"])
        counts.append(runs[True]["counted"])
    return {"measure": label, "ratio_median": round(statistics.median(ratios), 3), "ratio_min": round(min(ratios), 3),
            "ratio_max": round(max(ratios), 3), "pairs": repeats, "counted": counts}


def run(out: Path, quick: bool, progress: Callable[[str], None], repeats: Optional[int] = None) -> dict[str, Any]:
    """Measures everything above and writes serve.{json,csv,md,png} into `out`."""
    repeats = repeats or (3 if quick else 5)
    seconds, period_ms = (3.0, 100.0) if quick else (6.0, 100.0)
    rows = [_paired("scrapes at 10/s", scrape, repeats, seconds, period_ms, progress),
            _paired("single route updates at 10 k/s", lambda c, until: update_routes(c, until, UPDATE_RATE), repeats, seconds, period_ms, progress),
            _paired("single route updates, as fast as taken", update_routes, repeats, seconds, period_ms, progress)]
    progress("bulk load of 1 M routes, then a restart from its state")
    with tempfile.TemporaryDirectory() as kept:
        state = os.path.join(kept, "state.json")
        bulk = served(60.0 if not quick else 30.0, period_ms, bulk_load, state)
        again = served(5.0, period_ms, routes_in_force, state)
    rows.append({"measure": "bulk load of 1 M routes", "ratio_median": None, "ratio_min": None, "ratio_max": None, "pairs": 1, "counted": [bulk["counted"]]})
    rows.append({"measure": "restart from the state of 1 M routes", "ratio_median": None, "ratio_min": None, "ratio_max": None, "pairs": 1,
                 "counted": [{"ready_s": round(again["ready_s"], 2), **again["counted"]}]})
    # A day's periods at 100 ms (864 000), run at 1 ms each (quick: 4 000
    # of 5 ms), while an operator scrapes and changes it once a second.
    long_s, short_ms = (20.0, 5.0) if quick else (864.0, 1.0)
    progress(f"memory over {long_s:.0f} s of {short_ms} ms periods")
    soak = served(long_s, short_ms, operate)
    half = [(t, kib) for t, kib in soak["rss"] if t >= long_s / 2]
    slope = statistics.linear_regression([t for t, _ in half], [k for _, k in half]).slope * 60 if len(half) >= 2 else 0.0
    rows.append({"measure": f"RSS over {long_s * 1000 / short_ms:.0f} periods", "ratio_median": None, "ratio_min": None, "ratio_max": None, "pairs": 1,
                 "counted": [{"rss_start_kib": soak["rss"][0][1], "rss_end_kib": soak["rss"][-1][1], "slope_kib_per_min": round(slope, 1),
                              "operations": soak["counted"]["operations"], "accounted": soak["summary"]["accounted"],
                              "lossless": soak["summary"]["lossless"]}]})
    report = {"seconds": seconds, "period_ms": period_ms, "rows": rows}
    output.write(out, "serve", report, markdown, plot)
    return report


def headline(report: dict[str, Any]) -> output.Headline:
    """The README's figure: each paired ratio, the fastest updates, the bulk load, the memory trend."""
    rows = {r["measure"]: r for r in report["rows"]}
    scrape, paced, fastest = (rows[m] for m in ("scrapes at 10/s", "single route updates at 10 k/s", "single route updates, as fast as taken"))
    bulk = next(r for m, r in rows.items() if m.startswith("bulk"))["counted"][0]
    restart = rows.get("restart from the state of 1 M routes")
    restarted = f", served again from its state in {restart['counted'][0]['ready_s']:.1f} s" if restart else ""
    rss = next(r for m, r in rows.items() if m.startswith("RSS"))
    most = statistics.median(c["updates_per_s"] for c in fastest["counted"])
    ours = (f"forwarding with 10 scrapes/s ×{scrape['ratio_median']}, with 10 k route updates/s ×{paced['ratio_median']}; "
            f"{most / 1e3:.0f} k updates/s at most; 1 M routes loaded in {bulk['load_s']:.1f} s{restarted}; "
            f"RSS {rss['counted'][0]['slope_kib_per_min']:+.0f} KiB/min over {rss['measure'].split()[2]} periods")
    return output.Headline(ours, "— (target: ≥ 0.99× with scrapes, ≥ 0.95× at ≥ 10 k updates/s)")


def markdown(rows: list[dict[str, Any]]) -> str:
    """The ratios and what each activity counted."""
    lines = ["| while serving L2L3(4) | delivered rate vs without (median, range) | counted |", "|---|---|---|"]
    for r in rows:
        ratio = f"{r['ratio_median']} ({r['ratio_min']}–{r['ratio_max']}, {r['pairs']} pairs)" if r["ratio_median"] is not None else "—"
        counted = "; ".join(", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in c.items()) for c in r["counted"][:1])
        lines.append(f"| {r['measure']} | {ratio} | {counted} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """The paired ratios with their range."""
    from sluice.plot import save, subplots

    paired = [r for r in rows if r["ratio_median"] is not None]
    fig, ax = subplots(figsize=(5, 3))
    medians = [r["ratio_median"] for r in paired]
    errors = [[m - r["ratio_min"] for m, r in zip(medians, paired)], [r["ratio_max"] - m for m, r in zip(medians, paired)]]
    ax.bar([r["measure"] for r in paired], medians, yerr=errors, capsize=4)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylabel("delivered rate, with / without")
    save(fig, path)
