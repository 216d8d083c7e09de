"""The NF classes: generated from the core's definitions, checked by them."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from sluice.nf import Acl, ExactMatch, Lpm, Napt, Reframer, ReframerBypass, Rule, TypeCheck, VlanPush
from sluice.poll import PollSettings
from sluice.template import Template

pytestmark = pytest.mark.offline

ROOT = Path(__file__).resolve().parent.parent


def test_the_generated_classes_are_current() -> None:
    spec = importlib.util.spec_from_file_location("generate", ROOT / "scripts" / "generate.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for path, source in gen.generated().items():
        assert source == path.read_text(), f"{path.name} is stale: run `make generate`"


def test_defaults_are_the_cores() -> None:
    napt = Napt("10.0.0.0/8", "192.0.2.1")
    assert (napt.first_port, napt.last_port, napt.timeout_s) == (1024, 65535, 30.0)
    assert TypeCheck().ether_type == 0x0800
    assert Reframer(t_buff_us=10).bypass == ReframerBypass(tcp_control=True)


def test_spec_is_what_a_description_writes() -> None:
    assert Lpm({"10.0.0.0/8": 0, "0.0.0.0/0": 1}).spec() == {"type": "lpm", "routes": [["10.0.0.0/8", 0], ["0.0.0.0/0", 1]], "unreachable": False, "multipath": [], "hash_seed": 0, "hash_flow_label": False}
    assert Lpm([("10.0.0.0/8", 0)]).spec() == Lpm({"10.0.0.0/8": 0}).spec()
    rule = Acl([Rule(False, dst="40.0.1.0/24")]).spec()["rules"][0]
    assert rule == {"permit": False, "src": "0.0.0.0/0", "dst": "40.0.1.0/24", "proto": None, "sport": [0, 65535], "dport": [0, 65535]}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: VlanPush(-1), "VlanPush: vlan: invalid value: integer `-1`, expected u16"),
        (lambda: Reframer(t_buff_us=math.nan), "Reframer: t_buff_us: nan is not a finite number"),
        (lambda: Reframer(t_buff_us=5, bypass=ReframerBypass(dscp=[300])), "Reframer: bypass.dscp[0]: invalid value: integer `300`"),
        (lambda: ExactMatch("vlan_id", {7: 0}), "ExactMatch: table[0][0]: invalid type: integer `7`, expected a string"),
        (lambda: ExactMatch("vlan", {"7": 0}), "ExactMatch: field: unknown variant `vlan`"),
        (lambda: Template(src_port=70000), "Template: src_port: invalid value: integer `70000`, expected u16"),
        (lambda: Template(vlan=4096, ttl=-1), "Template: ttl: invalid value: integer `-1`, expected u8"),
        (lambda: PollSettings("snooze"), "PollSettings: policy: unknown kind `snooze` (known: busy, empty-poll,"),
        (lambda: PollSettings(max_sleep_us="1ms"), "PollSettings: max_sleep_us: invalid type: string \"1ms\", expected f64"),
    ],
)
def test_a_bad_field_is_named_when_the_nf_is_made(make: object, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        make()  # type: ignore[operator]
    assert str(raised.value).startswith(message), raised.value
