"""Sluice: an SLO-aware packet-processing engine.

Pipelines are data-flow graphs of network functions run on packet batches;
fractional buffers in front of the NFs rebuild batches, and a controller
sizes them every control period so that each flow meets its delay SLO.
"""

from typing import TYPE_CHECKING

from sluice._core import __version__, controllers
from sluice.controller import Controller
from sluice.nf import NF, Bypass, RandomSplit
from sluice.pipeline import Module, Pipeline
from sluice.result import RunResult
from sluice.run_params import BACKEND_KIND_VALUES
from sluice.traffic import Stream, Template

if TYPE_CHECKING:
    from sluice.client import ApiError, Client

__all__ = [
    "NF",
    "ApiError",
    "Client",
    "Bypass",
    "Controller",
    "Module",
    "Pipeline",
    "RandomSplit",
    "RunResult",
    "Stream",
    "Template",
    "__version__",
    "backends",
    "controllers",
]


def __getattr__(name: str) -> object:
    """The API client's names, imported when first asked for: its HTTP and
    email modules are a third of the package's import time, which every
    `sluice` command but `ctl` would otherwise pay."""
    if name in ("ApiError", "Client"):
        from sluice import client

        return getattr(client, name)
    raise AttributeError(f"module 'sluice' has no attribute {name!r}")


def backends() -> list[str]:
    """What can run a pipeline: the engine, the simulator."""
    return list(BACKEND_KIND_VALUES)
