"""Resilient embedding: which worker (CPU core) runs each module.

    from sluice.embed import embed, from_pipeline
    inst = from_pipeline(pipeline, cores=4)   # a Pipeline's modules and flows
    e = embed(inst, "path-fit")               # ours, in Rust, about a millisecond
    e.sum, e.max, e.placement

Every embedding any method returns has passed the independent checker
(capacity, conflicts, one existing core per module, crossings recomputed).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Optional

from sluice import _core
from sluice.embed.ilp import fewest_cores, solve
from sluice.embed.instance import Flow, Instance, from_pipeline

__all__ = ["HEURISTICS", "METHODS", "Embedding", "Flow", "Instance", "cores_needed", "embed", "fewest_cores", "fitted", "from_pipeline"]

#: Heuristic methods (Rust) by the names the dissertation uses, and ours.
HEURISTICS = {"worst-case": "round-robin", "straw-man": "random", "best-fit": "best-fit", "path-fit": "path-fit"}
#: Every method: the heuristics and the ILP with either objective.
METHODS = (*HEURISTICS, "ilp-sum", "ilp-max")


@dataclass
class Embedding:
    """A checked embedding (or none): the method, each module's core, the
    crossings of each flow, the solver status ("optimal", "feasible",
    "heuristic", "no-fit", "infeasible", "unknown"), the proven lower bound
    of the objective (ILP only), the cores it was given and the run time (s)."""

    method: str
    placement: Optional[list[int]]
    crossings: list[int]
    status: str
    bound: Optional[float]
    cores: int
    time_s: float

    @property
    def sum(self) -> int:
        """Total crossings over all flows."""
        return sum(self.crossings)

    @property
    def max(self) -> int:
        """Crossings of the flow that crosses most."""
        return max(self.crossings, default=0)

    @property
    def cores_used(self) -> int:
        """Cores holding at least one module."""
        return len(set(self.placement or ()))

    def gap_pct(self) -> Optional[float]:
        """How far the ILP's objective may still be above the optimum (% of
        the objective; 0 when proven optimal); None for the heuristics."""
        if self.bound is None or self.placement is None:
            return None
        value = self.max if self.method == "ilp-max" else self.sum
        return round(100 * (value - self.bound) / value, 1) if value else 0.0

    def row(self) -> dict[str, Any]:
        """The experiment's JSON row for this method."""
        found = self.placement is not None and bool(self.crossings)
        return {
            "sum": self.sum if found else None,
            "min": min(self.crossings) if found else None,
            "max": self.max if found else None,
            "mean": round(statistics.fmean(self.crossings), 3) if found else None,
            # The sample's (n − 1), as Table 4.1's.
            "std": (round(statistics.stdev(self.crossings), 3) if len(self.crossings) > 1 else 0.0) if found else None,
            "time_s": self.time_s,
            "status": self.status,
            "bound": self.bound,
            "gap_pct": self.gap_pct(),
            "cores": self.cores,
            "cores_used": self.cores_used if found else None,
        }


def embed(
    instance: Instance,
    method: str,
    *,
    seed: int = 0,
    time_limit_s: float = 30.0,
    backend: str = "cp-sat",
    hint: Optional[list[int]] = None,
    first: bool = False,
) -> Embedding:
    """Embeds `instance` with `method` (see METHODS): a heuristic, or the
    ILP ("ilp-sum", "ilp-max") on `backend` within `time_limit_s`, started
    from `hint` if given, stopping at its first placement with `first`. A heuristic that finds no room, or an ILP without
    a solution, gives an Embedding without placement and says why in its
    status; the placement of any other is checked before it is returned."""
    if method in HEURISTICS:
        start = time.perf_counter()
        try:
            placement: Optional[list[int]] = _core.embed_place(HEURISTICS[method], *instance.core_args(), seed=seed)
            status, bound = "heuristic", None
        except ValueError as e:
            if "no core can take" not in str(e):
                raise
            placement, status, bound = None, "no-fit", None
        elapsed = time.perf_counter() - start
    elif method in ("ilp-sum", "ilp-max"):
        solution = solve(instance, method[4:], backend=backend, time_limit_s=time_limit_s, hint=hint, first=first)
        placement, status, bound, elapsed = solution.placement, solution.status, solution.bound, solution.time_s
    else:
        raise ValueError(f"unknown embedding method '{method}' (known: {', '.join(METHODS)})")
    crossings = _core.embed_check(*instance.core_args(), placement) if placement is not None else []
    return Embedding(method, placement, crossings, status, bound, instance.cores, elapsed)


def fitted(whole: Instance, method: str, *, time_limit_s: float = 30.0) -> tuple[Instance, list[int]]:
    """`whole` on cores a little bigger than their share of its work (so
    that the embedding spreads over all of them), bigger again while
    `method` finds no room: the sized instance and `method`'s placement on
    it. Raises RuntimeError if it finds none on cores of thrice the share."""
    for slack in (1.2, 1.5, 2.0, 3.0):
        instance = whole.with_capacity(math.ceil(slack * sum(whole.weights) / whole.cores))
        placement = embed(instance, method, time_limit_s=time_limit_s).placement
        if placement is not None:
            return instance, placement
    raise RuntimeError(f"{method} found no embedding on {whole.cores} cores, even of thrice their share of the work")


def cores_needed(instance: Instance, method: str, *, upper: int, time_limit_s: float = 30.0) -> Optional[int]:
    """The fewest cores, from `fewest_cores`' bound up to `upper`, on which
    `method` finds an embedding of `instance` (an ILP: any placement within
    `time_limit_s` a try); None if none up to `upper`. Where it equals the
    bound, no method can do with fewer."""
    for cores in range(fewest_cores(instance), upper + 1):
        if embed(instance.with_cores(cores), method, time_limit_s=time_limit_s, first=True).placement is not None:
            return cores
    return None
