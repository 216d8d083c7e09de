"""Controllers written in Python run behind the same interface."""

from __future__ import annotations

from typing import Any

import pytest

from sluice import Controller
from sluice.pipelines import rc


class Fixed(Controller):
    name = "fixed"

    def init(self, model: dict[str, Any]) -> dict[str, Any]:
        assert model["batch_size"] == 32 and model["modules"][2]["name"] == "rc"
        return {"triggers": {"bulk1": 16}}

    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        assert set(telemetry["flows"]) == {"rc", "bulk1"}
        return {"triggers": {"rc": 3}}


def test_actions_of_a_python_controller_take_effect() -> None:
    r = rc(2).run(Fixed(), periods=2, period_ms=5, backend="sim")
    assert r.controller == "fixed"
    assert r.periods[0]["modules"]["bulk1"]["trigger"] == 16
    assert r.periods[-1]["modules"]["rc"]["trigger"] == 3


class Broken(Controller):
    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("oops")


class Unknown(Controller):
    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        return {"triggers": {"nowhere": 1}}


def test_python_controller_errors_reach_the_caller() -> None:
    with pytest.raises(KeyError, match="oops"):
        rc(2).run(Broken(), periods=1, period_ms=5, backend="sim")
    with pytest.raises(ValueError, match="the controller names unknown module 'nowhere'"):
        rc(2).run(Unknown(), periods=1, period_ms=5, backend="sim")


def test_example_controller_runs() -> None:
    import python_controller

    r = rc(4).run(python_controller.Additive(), periods=3, period_ms=5, backend="sim")
    assert r.periods[1]["modules"]["bulk1"]["trigger"] == 4
