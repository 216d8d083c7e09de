"""`sluice.Client`: the control API of a running `sluice serve`, over its
Unix socket (the run directory's `sluice.sock`) or over TCP with its token.

Reads return the server's JSON; a change returns the line that says what
it changed, or raises `ApiError` naming what was wrong (nothing changed).
The API is described in `docs/api/openapi.json` (also served at
`GET /v1/openapi.json`)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.parse
from typing import Any, Callable, Optional, Sequence, Union

#: The socket `sluice serve` makes in its run directory.
SOCKET = "sluice.sock"


class ApiError(Exception):
    """A request the server refused: its HTTP status and the server's reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


#: A POST on a connection idle longer than this opens a fresh one (s).
_IDLE_S = 1.0


#: An outgate by its number or by its name.
Gate = Union[int, str]


class Client:
    """A client of one served pipeline: `Client(run_dir)` over its socket,
    or `Client(url="http://host:port", token=...)` over TCP. It keeps its
    connection open between requests; use one client per thread."""

    def __init__(self, run_dir: Optional[str] = None, *, url: Optional[str] = None, token: Optional[str] = None,
                 caller: Optional[str] = None, timeout: float = 60.0) -> None:
        if (run_dir is None) == (url is None):
            raise ValueError("Client needs a run directory or a url, not both")
        self._socket = os.path.join(run_dir, SOCKET) if run_dir is not None else None
        self._url = urllib.parse.urlsplit(url) if url is not None else None
        if self._url is not None and (self._url.scheme != "http" or not self._url.hostname):
            raise ValueError(f"url {url!r}: expected http://HOST:PORT")
        self._token = token
        self._caller = caller
        self._timeout = timeout
        self._connection: Optional[http.client.HTTPConnection] = None
        #: When the connection last answered (monotonic s).
        self._last = 0.0

    def _connect(self) -> http.client.HTTPConnection:
        if self._socket is not None:
            return _UnixConnection(self._socket, self._timeout)
        assert self._url is not None and self._url.hostname is not None
        return http.client.HTTPConnection(self._url.hostname, self._url.port or 80, timeout=self._timeout)

    def socket_path(self) -> str:
        """The Unix socket it speaks to (a TCP client has none)."""
        if self._socket is None:
            raise ValueError("a TCP client has no socket path")
        return self._socket

    def close(self) -> None:
        """Closes the connection (the next request opens another)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def request_raw(self, method: str, path: str, body: Optional[str] = None) -> tuple[int, str]:
        """One request as it is: the status and the body's text. The
        connection is kept for the next request; one the server has closed
        meanwhile is opened again and the request repeated, for GET and PUT
        (setting a value twice is setting it once), not for POST (a route
        deleted twice is not): a POST on a connection idle for a while opens
        a fresh one first."""
        headers = {"Content-Type": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        if self._caller is not None:
            headers["X-Sluice-Caller"] = self._caller
        if method == "POST" and time.monotonic() - self._last > _IDLE_S:
            self.close()
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = self._connect()
            try:
                self._connection.request(method, path, body=body.encode() if body is not None else None, headers=headers)
                response = self._connection.getresponse()
                text = response.read().decode()
                self._last = time.monotonic()
                if response.will_close:
                    self.close()
                return response.status, text
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2 or method == "POST":
                    raise
            except BaseException:
                self.close()
                raise
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One request with a JSON body; its JSON answer, or ApiError."""
        status, text = self.request_raw(method, path, None if body is None else json.dumps(body))
        if status != 200:
            try:
                message = json.loads(text)["error"]
            except (ValueError, KeyError, TypeError):
                message = text.strip() or http.client.responses.get(status, "error")
            raise ApiError(status, message)
        return json.loads(text) if path.startswith("/v1/") else text

    def wait(self, timeout: float = 60.0, alive: Optional[Callable[[], bool]] = None) -> None:
        """Waits until the server answers (a `sluice serve` just started
        makes its socket once its ports are open); TimeoutError after
        `timeout` s, RuntimeError as soon as `alive` says the server's
        process has ended."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.controller()
                return
            except (FileNotFoundError, ConnectionRefusedError):
                if alive is not None and not alive():
                    raise RuntimeError("the served pipeline ended before it answered") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer within {timeout} s") from None
                time.sleep(0.05)

    @staticmethod
    def _name(name: str) -> str:
        return urllib.parse.quote(name, safe="")

    # Reads.
    def pipeline(self) -> dict[str, Any]:
        """The description in force (the one served from, with every change
        applied since written in), the controller, the batch size and the
        workers: what `serve --state` keeps and starts from."""
        return dict(self.request("GET", "/v1/pipeline"))

    def flows(self) -> list[dict[str, Any]]:
        """Every flow: path, SLO, its last period's delays and rate, totals."""
        return list(self.request("GET", "/v1/flows"))

    def modules(self) -> list[dict[str, Any]]:
        """Every module: kind, worker, trigger (pinned or not), counters."""
        return list(self.request("GET", "/v1/modules"))

    def workers(self) -> list[dict[str, Any]]:
        """Every worker: its modules, whether it is down, its last period's CPU share."""
        return list(self.request("GET", "/v1/workers"))

    def controller(self) -> dict[str, Any]:
        """The controller in force and its last fallback."""
        return dict(self.request("GET", "/v1/controller"))

    def changes(self) -> list[str]:
        """The most recent changes made, one line each, oldest first."""
        return list(self.request("GET", "/v1/changes"))

    def egress(self) -> dict[str, Any]:
        """The scheduled egress: algorithm, link rate, classes with their weights and flows."""
        return dict(self.request("GET", "/v1/egress"))

    def config(self, module: str) -> dict[str, Any]:
        """An NF's configuration in force (its fields, as `set_config` takes them)."""
        return dict(self.request("GET", f"/v1/modules/{self._name(module)}/config"))

    def metrics(self) -> str:
        """The Prometheus exposition."""
        return str(self.request("GET", "/metrics"))

    def neighbors(self) -> list[dict[str, Any]]:
        """Each interface's addresses, MAC, MTU, neighbours (address, MAC, state) and resolution counters."""
        return list(self.request("GET", "/v1/neighbors"))

    # Changes, each made at the next period boundary.
    def set_slo(self, flow: str, slo_us: Optional[float]) -> str:
        """Sets a flow's SLO (µs; None: no SLO)."""
        return str(self.request("PUT", f"/v1/flows/{self._name(flow)}/slo", {"slo_us": slo_us})["applied"])

    def add_flow(self, name: str, path: list[str], slo_us: Optional[float] = None, rules: Optional[list[dict[str, Any]]] = None) -> str:
        """Adds flow `name` along `path` (module names, source to sink) under
        `slo_us` (µs; None: no SLO), its packets sorted into it by `rules`:
        each `{"source": MODULE, "prefix": "20.0.9.0/24"}` or `{"source": MODULE,
        "five_tuple": {"src": …, "dst": …, "proto": "udp", "sport": …, "dport": …}}`
        of a port or capture source."""
        body = {"name": name, "path": path, "slo_us": slo_us, "rules": rules or []}
        return str(self.request("POST", "/v1/flows", body)["applied"])

    def remove_flow(self, name: str) -> str:
        """Removes a flow: its rules first; its packets in flight are counted where they end."""
        return str(self.request("DELETE", f"/v1/flows/{self._name(name)}")["applied"])

    def set_controller(self, name: str) -> str:
        """Switches the controller."""
        return str(self.request("PUT", "/v1/controller", {"name": name})["applied"])

    def pin_trigger(self, module: str, trigger: Optional[int]) -> str:
        """Pins a module's trigger (pkt), or hands it back to the controller (None)."""
        return str(self.request("PUT", f"/v1/modules/{self._name(module)}/trigger", {"trigger": trigger})["applied"])

    def move(self, module: str, worker: int) -> str:
        """Moves a module to another worker, packets and state with it."""
        return str(self.request("PUT", f"/v1/modules/{self._name(module)}/worker", {"worker": worker})["applied"])

    def set_weight(self, module: str, weight: int) -> str:
        """Sets a module's weighted-fair weight (≥ 1)."""
        return str(self.request("PUT", f"/v1/modules/{self._name(module)}/weight", {"weight": weight})["applied"])

    def set_rate(self, module: str, rate_pps: Optional[float], stream: int = 0) -> str:
        """Sets the rate limit of a built-in source's stream (pkt/s; None or inf: unlimited)."""
        rate = None if rate_pps is None or rate_pps == float("inf") else rate_pps
        return str(self.request("PUT", f"/v1/modules/{self._name(module)}/rate", {"stream": stream, "rate_pps": rate})["applied"])

    def set_egress_weight(self, egress_class: str, weight: int) -> str:
        """Sets a scheduled egress class's weight (≥ 1): its share of the link against the others'."""
        return str(self.request("PUT", f"/v1/egress/classes/{self._name(egress_class)}/weight", {"weight": weight})["applied"])

    def set_link_rate(self, bits_per_s: float) -> str:
        """Sets the rate of the scheduled egress's link (bit/s), from its next packet on."""
        return str(self.request("PUT", "/v1/egress/link", {"link_bits_per_s": bits_per_s})["applied"])

    def set_egress_parent(self, parent: str, rate_bits_per_s: float, ceil_bits_per_s: Optional[float] = None) -> str:
        """Sets a class-tree parent's rate and the ceiling it may borrow up to (bit/s; None: the link's)."""
        body: dict[str, float] = {"rate_bits_per_s": rate_bits_per_s}
        if ceil_bits_per_s is not None:
            body["ceil_bits_per_s"] = ceil_bits_per_s
        return str(self.request("PUT", f"/v1/egress/parents/{self._name(parent)}", body)["applied"])

    def set_egress_codel(self, egress_class: str, target_us: Optional[int] = None, interval_us: Optional[int] = None,
                         ecn: Optional[bool] = None) -> str:
        """Sets the CoDel of a scheduled egress class that has CoDel or
        FQ-CoDel (its target and interval in µs, its ECN marking) from its
        next packet on; what is not given stays as it is."""
        given = {"target_us": target_us, "interval_us": interval_us, "ecn": ecn}
        body = {k: v for k, v in given.items() if v is not None}
        return str(self.request("PUT", f"/v1/egress/classes/{self._name(egress_class)}/codel", body)["applied"])

    def set_config(self, module: str, fields: dict[str, Any]) -> str:
        """Replaces an NF's configuration whole (its tables rebuilt and swapped in)."""
        return str(self.request("PUT", f"/v1/modules/{self._name(module)}/config", fields)["applied"])

    def routes(self, module: str, add: Optional[Sequence[tuple[str, Union[Gate, Sequence[tuple[Gate, int]]]]]] = None,
               delete: Optional[list[str]] = None) -> str:
        """Adds (or replaces, by prefix) and deletes an LPM's routes in one
        change: a route leads to a gate (its number, or a name the module's
        description gave it) or, multipath, to (gate, weight) pairs."""
        body = {"add": [list(r) for r in add or []], "delete": list(delete or [])}
        return str(self.request("POST", f"/v1/modules/{self._name(module)}/routes", body)["applied"])

    def set_poll(self, worker: int, policy: str, **settings: Any) -> str:
        """Puts a worker under a poll policy (busy, empty-poll, slo-aware,
        vpp-adaptive, metronome, learned) with the settings of a
        description's `poll` object (max_sleep_us=…)."""
        return str(self.request("PUT", f"/v1/workers/{worker}/poll", {"policy": policy, **settings})["applied"])

    def add_neighbor(self, interface: str, address: str, mac: str) -> str:
        """Sets a static neighbour of an interface: `address` (IPv4 or IPv6) at `mac`, never aged or replaced by what is heard."""
        return str(self.request("POST", "/v1/neighbors", {"interface": interface, "address": address, "mac": mac})["applied"])

    def remove_neighbor(self, interface: str, address: str) -> str:
        """Removes an interface's entry of `address`, static or learned (the next packet to it asks again)."""
        return str(self.request("DELETE", f"/v1/neighbors/{self._name(interface)}/{self._name(address)}")["applied"])

    def transaction(self, changes: Sequence[tuple[str, str, Any]]) -> str:
        """Makes `changes`, each (method, path, body) as its endpoint takes
        it alone, at one period boundary in order, all or none: where one
        is refused, those before it are undone and the ApiError names it
        (`changes[i]`). Flows are added and removed alone."""
        body = {"changes": [{"method": m, "path": p, "body": b} for m, p, b in changes]}
        return str(self.request("POST", "/v1/transactions", body)["applied"])

    def trace(self, module: str, count: int, bpf_filter: Optional[str] = None) -> str:
        """Follows the next `count` packets to reach `module` (those a
        tcpdump-style `bpf_filter` takes) through the graph, replacing any
        trace; `trace_records` shows where each went."""
        body: dict[str, Any] = {"module": module, "count": count}
        if bpf_filter is not None:
            body["filter"] = bpf_filter
        return str(self.request("POST", "/v1/trace", body)["applied"])

    def trace_records(self) -> dict[str, Any]:
        """The trace's records so far: each packet's hops (module, worker,
        µs since its arrival, the gate it left by or how it ended)."""
        return dict(self.request("GET", "/v1/trace"))

    def end_trace(self) -> str:
        """Ends the trace; its records go with it."""
        return str(self.request("DELETE", "/v1/trace")["applied"])

    def capture(self, module: str, name: str, count: int, gate: Optional[Gate] = None, bpf_filter: Optional[str] = None) -> str:
        """Writes the next `count` packets to reach `module` (or leave it
        by `gate`) that `bpf_filter` takes to `name`, a new pcap file in
        the server's run directory, as the pipeline runs; the server's log
        says when it is written."""
        body: dict[str, Any] = {"module": module, "file": name, "count": count}
        if gate is not None:
            body["gate"] = gate
        if bpf_filter is not None:
            body["filter"] = bpf_filter
        return str(self.request("POST", "/v1/captures", body)["applied"])

    def end_captures(self) -> str:
        """Ends every capture (what each took so far stays in its file)."""
        return str(self.request("DELETE", "/v1/captures")["applied"])

    def set_worker_down(self, worker: int, down: bool) -> str:
        """Takes a worker down (what reaches its modules is dropped, counted) or brings it back."""
        return str(self.request("PUT", f"/v1/workers/{worker}", {"down": down})["applied"])
