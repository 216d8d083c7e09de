"""A run's parameters besides the description and the controller.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sluice.checked import Part

__all__ = ["BACKEND_KIND_VALUES", "SLO_STATISTIC_VALUES", "RunParams"]


#: The names of `BackendKind`.
BACKEND_KIND_VALUES: tuple[str, ...] = ("engine", "sim")


#: The names of `SloStatistic`.
SLO_STATISTIC_VALUES: tuple[str, ...] = ("p50", "p95", "p99", "max", "mean")


@dataclass(frozen=True)
class RunParams(Part):
    """What a run goes through: its backend, length, control period and SLO
    reading. `sluice serve` reads the same, less `periods` and
    `warmup_periods` (it runs until stopped) and on the engine only.

    `backend`: What runs the pipeline (one of "engine", "sim").
    `periods`: Measured control periods.
    `warmup_periods`: Periods run first and left out of the summary.
    `period_ms`: The control period (ms, at most an hour).
    `slo_statistic`: Which statistic of a flow's delays its SLO bounds (one of
        "p50", "p95", "p99", "max", "mean").
    `delta`: δ of the built-in SLO-aware controllers, in [0, 0.5): a flow is
        active from (1 − δ)·SLO and its buffers grow up to (1 − 2δ)·SLO.
    `timing`: Whether the workers time every round (delay histograms and busy
        time); off, only the counters are kept.
    `keep_periods`: The most recent periods the report keeps (its summary counts
        them all).
    """

    part: ClassVar[str] = "run"

    backend: str = "engine"
    periods: int = 10
    warmup_periods: int = 1
    period_ms: float = 100.0
    slo_statistic: str = "p95"
    delta: float = 0.05
    timing: bool = True
    keep_periods: int = 600
