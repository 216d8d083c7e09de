"""A network namespace with a veth pair, for running pipelines on real
ports without touching the machine's interfaces: `sluice net up` makes
namespace `sluice` with `veth0` ↔ `veth1` inside it, both up;
`sluice net down` removes it (and the pair with it)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

if TYPE_CHECKING:
    from sluice.outputs import PeriodOutputJson
    from sluice.pipeline import Pipeline
    from sluice.result import RunResult

#: The namespace and the two ends of its veth pair.
NAMESPACE, GEN_END, SWITCH_END = "sluice", "veth0", "veth1"


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def _check_can() -> None:
    if shutil.which("ip") is None:
        raise RuntimeError("'ip' (iproute2) is not installed: apt-get install iproute2")
    if os.geteuid() != 0:
        raise RuntimeError("making a network namespace needs root (or CAP_NET_ADMIN)")


def exists(name: str = NAMESPACE) -> bool:
    """Whether namespace `name` exists."""
    return name in _ip("netns", "list").stdout.split()


def _pair(queues: int, *where: str) -> list[tuple[str, ...]]:
    """The `ip` steps that make the veth pair, `queues` queues each way (one
    per worker that receives on it over AF_XDP), both ends up; `where`: `-n NS`."""
    q = ("numrxqueues", str(queues), "numtxqueues", str(queues))
    return [(*where, "link", "add", GEN_END, *q, "type", "veth", "peer", "name", SWITCH_END, *q),
            (*where, "link", "set", GEN_END, "up"), (*where, "link", "set", SWITCH_END, "up")]


def up(name: str = NAMESPACE, queues: int = 1) -> None:
    """Makes namespace `name` with the veth pair (`queues` queues each
    way), both ends up and IPv6 off (so that the kernel sends nothing of
    its own on them)."""
    _check_can()
    if exists(name):
        raise RuntimeError(f"namespace '{name}' exists already: `sluice net down` removes it")
    for step in [("netns", "add", name), *_pair(queues, "-n", name)]:
        done = _ip(*step)
        if done.returncode != 0:
            _ip("netns", "del", name)
            raise RuntimeError(f"ip {' '.join(step)}: {done.stderr.strip()}")
    subprocess.run(["ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], check=False)


def can_unshare(*tools: str) -> bool:
    """Whether this machine lets a process make a network namespace of its
    own (root, `unshare`, `ip`) and has `tools` for it."""
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("unshare", "ip", *tools))


def run_unshared(module: str, *args: str, timeout: float) -> Any:
    """Runs `python -m module args` in a network namespace of its own and
    returns the JSON its last line of output holds."""
    run = subprocess.run(["unshare", "--net", sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"{module} in a namespace of its own: {run.stderr.strip()[-500:]}")
    return json.loads(run.stdout.splitlines()[-1])


class Sender(threading.Thread):
    """A thread that calls `send` (a pipeline's `send` onto a port, a
    replayer): `wait` returns what it returned and raises what it raised,
    so that a sender's failure is said where its traffic is awaited, not
    lost with its thread."""

    def __init__(self, send: Callable[[], Any]) -> None:
        super().__init__(name="sluice-sender")
        self._send = send
        self._sent: Any = None
        self._error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            self._sent = self._send()
        except BaseException as e:  # raised again by `wait`
            self._error = e

    def wait(self) -> Any:
        """Joins the sender; what `send` returned."""
        self.join()
        if self._error is not None:
            stderr = getattr(self._error, "stderr", None)
            if isinstance(stderr, bytes):
                stderr = stderr.decode(errors="replace")
            detail = f": {stderr.strip()[-500:]}" if stderr else ""
            raise RuntimeError(f"a sender failed: {self._error}{detail}") from self._error
        return self._sent


def greedy_sender(flow: str, dst_ip: str, seconds: float) -> Sender:
    """A sender (not started) that puts `flow`'s frames, the built-in
    template to `dst_ip`, on the generator's end as fast as it can for
    `seconds`, over AF_PACKET."""
    from sluice.pipeline import Pipeline
    from sluice.traffic import Template

    p = Pipeline(f"send-{flow}")
    p.connect(p.source("src"), p.sink("out"))
    p.flow(flow, ["src", "out"], template=Template(dst_ip=dst_ip))
    return Sender(functools.partial(p.send, f"af_packet:{GEN_END}", seconds))


def tc(*args: str) -> None:
    """Runs `tc args`; raises RuntimeError with its error."""
    done = subprocess.run(["tc", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"tc {' '.join(args)}: {done.stderr.strip()}")


def htb_class(parent: str, classid: str, rate_bps: float, ceil_bps: float, dst_ip: str, *settings: str) -> None:
    """An HTB class `classid` under `parent` on the generator's end, at
    `rate_bps` borrowing up to `ceil_bps` (and `settings`), which packets
    to `dst_ip` go to; the qdisc's handle is 1:."""
    tc("class", "add", "dev", GEN_END, "parent", parent, "classid", classid, "htb", "rate", f"{rate_bps:.0f}bit", "ceil", f"{ceil_bps:.0f}bit", *settings)
    tc("filter", "add", "dev", GEN_END, "protocol", "ip", "parent", "1:", "prio", "1", "u32", "match", "ip", "dst", f"{dst_ip}/32", "flowid", classid)


def sending(*senders: Sender) -> Callable[[PeriodOutputJson], None]:
    """An `on_period` for the run of a pipeline receiving on a port: starts
    `senders` when its first period ends (its rings are open by then)."""

    def start(_: PeriodOutputJson) -> None:
        if senders and not senders[0].ident:
            for s in senders:
                s.start()

    return start


class SendersDone(Exception):
    """Ends a run whose senders have all finished (see `run_while_sending`)."""


def run_while_sending(p: Pipeline, controller: str, senders: Sequence[Sender], period_ms: float,
                      then_periods: int = 4, most_s: float = 60.0) -> RunResult:
    """Runs `p` under `controller` while `senders` send: they start when its
    first period (a warm-up) ends, as with `sending`, and the run stops
    `then_periods` periods after the last of them has finished (at most
    `most_s` seconds in all): on a slow machine a sender that takes longer
    is still received whole. Returns the run's result once every sender
    has ended; raises a sender's error."""
    start = sending(*senders)
    left = then_periods

    def step(period: PeriodOutputJson) -> None:
        nonlocal left
        start(period)
        if all(s.ident and not s.is_alive() for s in senders):
            left -= 1
            if left <= 0:
                raise SendersDone()

    result: RunResult
    try:
        result = p.run(controller, periods=max(2, int(most_s * 1e3 / period_ms)), period_ms=period_ms, warmup_periods=1, on_period=step)
    except SendersDone as e:
        result = e.result  # type: ignore[attr-defined]
    for s in senders:
        s.wait()
    return result


def pair_here() -> None:
    """Makes the veth pair in this process's own namespace (one `unshare
    --net` made for an experiment), both ends up and IPv6 off."""
    for step in _pair(1):
        done = _ip(*step)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(step)}: {done.stderr.strip()}")
    subprocess.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], check=False)


def down(name: str = NAMESPACE) -> None:
    """Removes namespace `name` and the veth pair in it."""
    _check_can()
    if not exists(name):
        raise RuntimeError(f"no namespace '{name}'")
    done = _ip("netns", "del", name)
    if done.returncode != 0:
        raise RuntimeError(f"ip netns del {name}: {done.stderr.strip()}")
