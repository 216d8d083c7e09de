"""The command line's value types, each on its own: what it reads and what it refuses."""

from __future__ import annotations

from typing import Any

import click
import pytest

from sluice.cli.params import ClassFlows, ClassWeights, FlowRate, LinkRate, Outage, WorkerPoll

pytestmark = pytest.mark.offline


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (Outage(), "1:3-5", (1, 3, 5)),
        (FlowRate(), "flow0=3e5", ("flow0", 3e5)),
        (WorkerPoll(), "2=learned", (2, "learned")),
        (LinkRate(), "268.8Mbit", 268.8e6),
        (LinkRate(), "10kbit", 1e4),
        (LinkRate(), "1e9", 1e9),
        (ClassWeights(), "tight=3,bulk=1", {"tight": 3, "bulk": 1}),
        (ClassFlows(), "bulk=flow4*,flow5", ("bulk", ["flow4*", "flow5"])),
    ],
)
def test_a_value_is_read(kind: Any, text: str, value: object) -> None:
    assert kind.convert(text, None, None) == value
    assert kind.convert(value, None, None) == value, "a value already read passes as it is"


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        (Outage(), "1-3", "takes W:FROM-UNTIL"),
        (Outage(), "a:1-2", "takes W:FROM-UNTIL"),
        (FlowRate(), "flow0", "takes FLOW=PPS"),
        (FlowRate(), "flow0=fast", "'fast' is not a valid float"),
        (FlowRate(), "flow0=-1", "is not in the range"),
        (FlowRate(), "flow0=nan", "nan is not a finite number"),
        (WorkerPoll(), "0=snooze", "give W=POLICY"),
        (WorkerPoll(), "w=busy", "give W=POLICY"),
        (LinkRate(), "fast", "a rate in bit/s"),
        (LinkRate(), "0Gbit", "a rate above 0"),
        (LinkRate(), "infGbit", "a rate above 0"),
        (ClassWeights(), "tight=3,bulk", "takes CLASS=W"),
        (ClassWeights(), "tight=0", "not a whole number ≥ 1"),
        (ClassWeights(), "tight=1.5", "not a whole number ≥ 1"),
        (ClassFlows(), "bulk=", "takes CLASS=FLOW"),
        (ClassFlows(), "=flow0", "takes CLASS=FLOW"),
    ],
)
def test_a_bad_value_is_refused_by_what_it_takes(kind: Any, text: str, message: str) -> None:
    with pytest.raises(click.BadParameter, match=message):
        kind.convert(text, None, None)
