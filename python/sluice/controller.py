"""Controllers written in Python.

Subclass `Controller` and implement `step`; pass an instance where a
controller name goes (`pipeline.run(MyController())`). It runs behind the
same interface as the Rust controllers, on the engine and the simulator
(slower: it is called with the GIL once per control period).

    class Halve(Controller):
        name = "halve"

        def step(self, model, telemetry):
            return {"triggers": {m: t["trigger"] // 2 for m, t in telemetry["modules"].items()}}
"""

from __future__ import annotations

import json
from typing import Any

from sluice.json_form import dumps_finite


class Controller:
    """Base class of Python controllers; actions are `{"triggers": {MODULE: b}, "weights": {MODULE: w}}`."""

    #: Name in reports.
    name: str = "python"

    def __init__(self) -> None:
        self.model: dict[str, Any] = {}

    def init(self, model: dict[str, Any]) -> dict[str, Any]:
        """Actions before the first period; `model` has modules, flows and batch_size."""
        return {}

    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        """Actions for the next period; `telemetry` has modules and flows keyed by name."""
        raise NotImplementedError

    # The core calls these with JSON and expects JSON back.

    def init_json(self, model_json: str) -> str:
        self.model = json.loads(model_json)
        return self._actions_json("init", self.init(self.model))

    def step_json(self, telemetry_json: str) -> str:
        raw = json.loads(telemetry_json)
        modules = [m["name"] for m in self.model["modules"]]
        flows = [f["name"] for f in self.model["flows"]]
        telemetry = dict(raw)
        telemetry["modules"] = dict(zip(modules, raw["modules"]))
        telemetry["flows"] = dict(zip(flows, raw["flows"]))
        return self._actions_json("step", self.step(self.model, telemetry))

    def _actions_json(self, method: str, actions: dict[str, Any]) -> str:
        """`actions` as JSON; a NaN or infinity in them is refused by its place."""
        return dumps_finite(actions, lambda place, number: f"controller {self.name!r}: {method}() returned {number} at {place}: not a finite number")
