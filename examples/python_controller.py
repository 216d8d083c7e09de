"""A controller written in Python: grow every controlled buffer by 4
packets per period while all flows meet their SLOs, halve them all (down
to none) when one does not. Runs on RC(8) in the simulator.

    .venv/bin/python examples/python_controller.py
"""

from __future__ import annotations

from typing import Any

from sluice import Controller
from sluice.pipelines import rc


class Additive(Controller):
    name = "additive"

    def step(self, model: dict[str, Any], telemetry: dict[str, Any]) -> dict[str, Any]:
        controlled = [m["name"] for m in model["modules"] if m["controlled"]]
        batch = model["batch_size"]
        violated = any(
            f["delivered"] and slo is not None and f["p95_ns"] > slo
            for f, slo in zip(telemetry["flows"].values(), (fl["slo_ns"] for fl in model["flows"]))
        )
        triggers = {}
        for name in controlled:
            now = telemetry["modules"][name]["trigger"]
            halved = now // 2 if now // 2 >= 2 else 0
            triggers[name] = halved if violated else min(batch, now + 4)
        return {"triggers": triggers}


def main() -> None:
    result = rc(8).run(Additive(), periods=10, period_ms=20, backend="sim")
    for p in result.periods:
        print(f"period {p['period']:2}: rc trigger {p['modules']['rc']['trigger']:2}, "
              f"rc p95 {p['flows']['rc']['p95_us']:6.1f} µs, {p['rate_pps'] / 1e6:5.2f} Mpps")


if __name__ == "__main__":
    main()
