"""`sluice serve` exposed as a daemon run as root is: a run directory
another user could own or write is refused, a link planted for the
report is replaced, not followed; the TCP listener (loopback only) reads
within bounds, checks its token before a body, and keeps answering its
other clients and forwarding at its rate while slow and huge requests
come in."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from sluice import Client
from test_serve import SLUICE, Served

TOKEN = "0123456789abcdef-exposed"


def serve_refused(run_dir: Path, *args: str) -> str:
    """`sluice serve` on `run_dir`, which it must refuse: its stderr."""
    done = subprocess.run([SLUICE, "serve", "rc", "--n", "2", "--run-dir", str(run_dir), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    return done.stderr


def test_a_run_directory_others_can_write_or_own_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    os.chmod(shared, 0o777)
    assert "is writable by group or others (mode 777)" in serve_refused(shared)
    os.chmod(shared, 0o700)
    link = tmp_path / "link"
    link.symlink_to(shared)
    assert "is a symbolic link" in serve_refused(link)
    if os.geteuid() != 0:
        pytest.skip("a directory owned by another user needs root to make")
    os.chown(shared, 65534, 65534)
    assert "is owned by uid 65534, not by this user" in serve_refused(shared)
    under = tmp_path / "open"
    under.mkdir()
    os.chmod(under, 0o777)
    assert "without the sticky bit" in serve_refused(under / "run")


def test_a_link_planted_for_the_report_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (tmp_path / "run").mkdir(mode=0o700)
    (tmp_path / "run" / "report.json").symlink_to(victim)
    s = Served(tmp_path, "--json", str(tmp_path / "run" / "report.json"))
    try:
        s.report = s.run_dir / "report.json"
        code, err, report = s.stop()
    finally:
        s.close()
    assert code == 0, err[-2000:]
    assert victim.read_text() == "keep me"
    assert not (s.run_dir / "report.json").is_symlink() and report["summary"]["accounted"]


def test_a_tcp_listener_on_an_open_address_is_refused(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN)
    stderr = serve_refused(tmp_path / "run", "--listen", "0.0.0.0:1", "--token-file", str(tmp_path / "token"))
    assert "0.0.0.0 is not a loopback address" in stderr


@pytest.fixture
def exposed(tmp_path: Path) -> Iterator[tuple[Served, int]]:
    """A served pipeline listening on loopback TCP too, and its port."""
    (tmp_path / "token").write_text(TOKEN)
    port = 40000 + (os.getpid() + 11) % 20000
    s = Served(tmp_path, "--listen", f"127.0.0.1:{port}", "--token-file", str(tmp_path / "token"))
    yield s, port
    s.close()


def exchange(port: int, request: bytes, *, then: bytes = b"") -> str:
    """Sends `request`, then `then`; the answer's status line and headers."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(request)
        if then:
            try:
                c.sendall(then)
            except OSError:
                pass  # answered and closed before the body: as it should be
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = c.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer.decode(errors="replace")


def status_of(answer: str) -> int:
    found = re.match(r"HTTP/1\.1 (\d+)", answer)
    assert found, answer
    return int(found.group(1))


def test_the_token_comes_first_and_bounds_answer_before_a_body(exposed: tuple[Served, int]) -> None:
    served, port = exposed
    big = f"PUT /v1/flows/flow0/slo HTTP/1.1\r\nHost: x\r\nContent-Length: {1 << 30}\r\n"
    assert status_of(exchange(port, (big + "\r\n").encode(), then=b"x" * (1 << 20))) == 401
    answer = exchange(port, (big + f"Authorization: bearer {TOKEN}\r\n\r\n").encode(), then=b"x" * (1 << 20))
    assert status_of(answer) == 413, answer
    assert status_of(exchange(port, b"GET /v1/flows HTTP/1.1\r\nX-Pad: " + b"a" * (32 << 10) + b"\r\n\r\n")) == 431
    chunked = f"PUT /v1/flows/flow0/slo HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert status_of(exchange(port, chunked.encode())) == 411
    assert status_of(exchange(port, f"GET /v1/flows HTTP/1.1\r\nAuthorization: BEARER {TOKEN}\r\n\r\n".encode())) == 200
    assert not any("flow0" in line for line in served.client.changes())


def _counters(client: Client) -> tuple[float, float]:
    """The periods ended and the packets the modules took in so far."""
    periods = packets = 0.0
    for line in client.metrics().splitlines():
        if line.startswith("sluice_periods_total "):
            periods = float(line.split()[1])
        elif line.startswith("sluice_module_packets_total{"):
            packets += float(line.split()[1])
    return periods, packets


def _rates(client: Client, seconds: float) -> tuple[float, float]:
    before, start = _counters(client), time.monotonic()
    time.sleep(seconds)
    after = _counters(client)
    took = time.monotonic() - start
    return (after[0] - before[0]) / took, (after[1] - before[1]) / took


def test_slow_and_huge_requests_hold_up_neither_the_data_path_nor_other_clients(exposed: tuple[Served, int]) -> None:
    served, port = exposed
    client = Client(url=f"http://127.0.0.1:{port}", token=TOKEN, caller="bystander")
    periods_alone, packets_alone = _rates(client, 1.5)
    stop = threading.Event()
    held: list[socket.socket] = []

    def drip() -> None:
        """A slowloris: a header byte every 100 ms on each of several connections."""
        for _ in range(4):
            c = socket.create_connection(("127.0.0.1", port), timeout=30)
            c.sendall(b"GET /v1/flows HTTP/1.1\r\nX-Slow: ")
            held.append(c)
        while not stop.is_set():
            for c in held:
                try:
                    c.sendall(b"a")
                except OSError:
                    pass
            time.sleep(0.1)

    def upload() -> None:
        """Route bodies announced at 1 GiB, refused before they are sent, again and again."""
        big = f"POST /v1/modules/lpm/routes HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {1 << 30}\r\n\r\n"
        while not stop.is_set():
            assert status_of(exchange(port, big.encode(), then=b"[" * (1 << 20))) == 413

    attackers = [threading.Thread(target=drip), threading.Thread(target=upload)]
    for t in attackers:
        t.start()
    try:
        time.sleep(0.3)
        answered = [client.controller()["name"] for _ in range(20)]
        periods_attacked, packets_attacked = _rates(client, 1.5)
    finally:
        stop.set()
        for t in attackers:
            t.join()
        for c in held:
            c.close()
    assert answered == ["null"] * 20
    # Ratios within this run: the attack costs the data path and the control thread no more than the noise of a shared machine.
    assert periods_attacked > 0.5 * periods_alone, (periods_attacked, periods_alone)
    assert packets_attacked > 0.5 * packets_alone, (packets_attacked, packets_alone)


def test_connections_past_the_bound_are_answered_at_once_and_others_served_after(exposed: tuple[Served, int]) -> None:
    served, port = exposed
    idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(16)]
    try:
        time.sleep(0.3)
        assert status_of(exchange(port, f"GET /v1/flows HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())) == 503
    finally:
        for c in idle:
            c.close()
    time.sleep(0.5)
    assert Client(url=f"http://127.0.0.1:{port}", token=TOKEN).controller()["name"] == "null"
