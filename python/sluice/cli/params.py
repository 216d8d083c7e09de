"""The `sluice` command's value types: numbers within the core's bounds, and
the compound values its options take (`W:FROM-UNTIL`, `FLOW=PPS`,
`W=POLICY`, `CLASS=W,…`, `CLASS=FLOW,…`, link rates with units), each
parsed and refused by one click `ParamType`."""

from __future__ import annotations

import ipaddress
import math
from typing import TYPE_CHECKING, Any, Optional

import click

from sluice import _core
from sluice.pipeline import POLL_POLICIES


class Number(click.FloatRange):
    """A float within a range, never NaN or infinite."""

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number", param, ctx)
        return number


LIMITS = _core.limits()
#: Option types within the core's bounds: a count of periods, a period length, a rate.
PERIODS = click.IntRange(1, int(LIMITS["max_periods"]))
WARMUP = click.IntRange(0, int(LIMITS["max_periods"]))
PERIOD_MS = Number(0, LIMITS["max_period_ms"], min_open=True)
RATE = Number(0, LIMITS["max_rate_pps"], min_open=True)
SIZE = click.IntRange(1, 1 << 16)

# click's ParamType is generic in newer clicks' type hints (what it
# converts to and from); older clicks take it plain.
if TYPE_CHECKING:
    ValueType = click.ParamType[Any, Any]
else:
    ValueType = click.ParamType


def _pairs(param: ValueType, text: str, what: str, cli_param: Optional[click.Parameter], ctx: Optional[click.Context]) -> list[tuple[str, str]]:
    """`NAME=VALUE,…` as pairs; fails (as `param`) naming `what` it takes."""
    out = [item.partition("=") for item in text.split(",") if item]
    if not out or any(not sep or not key or not value for key, sep, value in out):
        param.fail(f"takes {what}, got '{text}'", cli_param, ctx)
    return [(key, value) for key, _, value in out]


class Outage(ValueType):
    """`W:FROM-UNTIL`: worker W down from period FROM until period UNTIL."""

    name = "W:FROM-UNTIL"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[int, int, int]:
        if isinstance(value, tuple):
            return value
        worker, _, span = str(value).partition(":")
        start, _, until = span.partition("-")
        if not (worker.isdigit() and start.isdigit() and until.isdigit()):
            self.fail(f"takes W:FROM-UNTIL (worker and periods, e.g. 1:3-5), got '{value}'", param, ctx)
        return int(worker), int(start), int(until)


class FlowRate(ValueType):
    """`FLOW=PPS`: one flow's offered rate (pkt/s)."""

    name = "FLOW=PPS"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[str, float]:
        if isinstance(value, tuple):
            return value
        flow, sep, rate = str(value).partition("=")
        if not sep or not flow:
            self.fail(f"takes FLOW=PPS, got '{value}'", param, ctx)
        return flow, RATE.convert(rate, param, ctx)


class WorkerPoll(ValueType):
    """`W=POLICY`: worker W's own poll policy."""

    name = "W=POLICY"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[int, str]:
        if isinstance(value, tuple):
            return value
        worker, _, policy = str(value).partition("=")
        if not worker.isdigit() or policy not in POLL_POLICIES:
            self.fail(f"'{value}': give W=POLICY, W a worker number and POLICY one of {', '.join(POLL_POLICIES)}", param, ctx)
        return int(worker), policy


#: Units of a link rate (bit/s).
LINK_UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}


class LinkRate(ValueType):
    """A link's rate: bit/s, or with a unit (1Gbit, 500Mbit, 10kbit); returns bit/s."""

    name = "RATE"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip().lower()
        unit = next((u for u in LINK_UNITS if text.endswith(u)), None)
        try:
            bits = float(text[: -len(unit)] if unit else text) * (LINK_UNITS[unit] if unit else 1.0)
        except ValueError:
            self.fail(f"{value}: a rate in bit/s, or with a unit (1Gbit, 500Mbit)", param, ctx)
        if not (math.isfinite(bits) and bits > 0):
            self.fail(f"{value}: a rate above 0 bit/s", param, ctx)
        return bits


class ClassWeights(ValueType):
    """`CLASS=W,…`: the classes of a scheduled egress and their whole-number weights."""

    name = "CLASS=W,…"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> dict[str, int]:
        if isinstance(value, dict):
            return value
        pairs = _pairs(self, str(value), "CLASS=W,…", param, ctx)
        weights = {}
        for name, weight in pairs:
            if not weight.isdigit() or int(weight) == 0:
                self.fail(f"{value}: weight {weight!r} of class {name!r} is not a whole number ≥ 1", param, ctx)
            weights[name] = int(weight)
        return weights


class ClassFlows(ValueType):
    """`CLASS=FLOW,…`: a class's flows (names, or a prefix ending in *)."""

    name = "CLASS=FLOW,…"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[str, list[str]]:
        if isinstance(value, tuple):
            return value
        name, sep, flows = str(value).partition("=")
        members = [f for f in flows.split(",") if f]
        if not sep or not name or not members:
            self.fail(f"takes CLASS=FLOW,…, got '{value}'", param, ctx)
        return name, members


class RouterPort(ValueType):
    """`BACKEND:IFACE=ADDR[,ADDR…]`: a router's port and its interface's addresses with prefix lengths."""

    name = "PORT=ADDRS"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[str, list[str]]:
        if isinstance(value, tuple):
            return value
        port, sep, addresses = str(value).partition("=")
        if not sep or ":" not in port or not addresses:
            self.fail(f"takes BACKEND:IFACE=ADDR[,ADDR…] (af_packet:sw1=10.0.1.254/24,2001:db8:1::fe/64), got '{value}'", param, ctx)
        for a in addresses.split(","):
            try:
                ipaddress.ip_interface(a)
            except ValueError:
                self.fail(f"'{a}' is not an address with a prefix length like 10.0.1.254/24", param, ctx)
        return port, addresses.split(",")


class RouteVia(ValueType):
    """`PREFIX=GATEWAY`: a route through a gateway on one of the router's networks."""

    name = "PREFIX=GATEWAY"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        prefix, sep, via = str(value).partition("=")
        try:
            ipaddress.ip_network(prefix)
            ipaddress.ip_address(via)
        except ValueError:
            self.fail(f"takes PREFIX=GATEWAY (10.9.0.0/16=10.0.2.100), got '{value}'", param, ctx)
        if not sep:
            self.fail(f"takes PREFIX=GATEWAY, got '{value}'", param, ctx)
        return prefix, via
