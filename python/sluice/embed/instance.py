"""The embedding instance: modules with weights, identical cores, flows as
module paths, and conflict pairs that keep the copies of a
high-availability (HA) flow on different cores."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Optional, Sequence, Union

from sluice import _core

if TYPE_CHECKING:
    from sluice.pipeline import Pipeline

#: Weight of a whole core when weights come from a pipeline's profile:
#: weights are then in thousandths of a core.
PER_MILLE = 1000


@dataclass(frozen=True)
class Flow:
    """A flow: its name, its path (module indices), whether it is HA, and
    for a copy the name of the flow it duplicates."""

    name: str
    path: tuple[int, ...]
    ha: bool = False
    copy_of: Optional[str] = None


@dataclass
class Instance:
    """Modules (names, integer weights = CPU demand), `cores` identical cores
    of `capacity` each, flows and conflict pairs (module indices). Checked
    on construction; a ValueError names the problem."""

    names: list[str]
    weights: list[int]
    cores: int
    capacity: int
    flows: list[Flow]
    conflicts: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The core takes weights as unsigned numbers: a negative one is named here.
        negative = next((n for n, w in zip(self.names, self.weights) if w < 0), None)
        if negative is not None:
            raise ValueError(f"module '{negative}' has a negative weight")
        _core.embed_validate(self.names, *self.core_args())

    def core_args(self) -> tuple[list[int], int, int, list[list[int]], list[tuple[int, int]]]:
        """(weights, cores, capacity, flows, conflicts) as the compiled core takes them."""
        return self.weights, self.cores, self.capacity, [list(f.path) for f in self.flows], self.conflicts

    def with_cores(self, cores: int) -> Instance:
        """The same instance on `cores` cores."""
        return replace(self, cores=cores)

    def renumbered(self, names: Sequence[str]) -> Instance:
        """The same instance with its modules numbered in the order of `names` (every module's, once)."""
        index = {n: i for i, n in enumerate(self.names)}
        if sorted(names) != sorted(self.names):
            raise ValueError(f"an order of the modules names each once; these differ: {sorted(set(names) ^ set(self.names))}")
        return _renumbered(self.names, self.weights, self.cores, self.capacity, self.flows, self.conflicts, [index[n] for n in names])

    def with_capacity(self, capacity: int) -> Instance:
        """The same instance with cores of `capacity`."""
        return replace(self, capacity=capacity)

    @property
    def edges(self) -> int:
        """Distinct directed edges over all flows."""
        return len({(a, b) for f in self.flows for a, b in zip(f.path, f.path[1:])})

    def summary(self) -> dict[str, Any]:
        """Sizes as the dissertation states them."""
        return {
            "modules": len(self.names),
            "flows": len(self.flows),
            "edges": self.edges,
            "conflicts": len(self.conflicts),
            "weight": sum(self.weights),
            "cores": self.cores,
            "capacity": self.capacity,
        }

    def resilient(self, ha_flows: Sequence[str], k: int = 1, *, group: Optional[Callable[[str], Hashable]] = None) -> Instance:
        """This instance made to survive `k` core failures: the modules of
        the HA flows are copied k times (copy j of module m is "m~j"), each
        HA flow gets k copies along them, and every module of one path of a
        conflict group conflicts with every other module of another path of
        the group. A group is an HA flow and its copies, or, with `group`,
        all HA flows (and copies) for which `group(flow name)` is equal.
        Modules are then numbered in order of first appearance along the
        flows, each copy flow right after its original."""
        if k < 1:
            raise ValueError(f"k (core failures to survive) must be ≥ 1, got {k}")
        if self.cores < k + 1:
            raise ValueError(f"surviving {k} core failure(s) puts each HA flow on {k + 1} disjoint sets of cores (itself and {k} copies), but there are {self.cores} core(s)")
        by_name = {f.name: f for f in self.flows}
        for name in ha_flows:
            if name not in by_name:
                raise ValueError(f"HA flow '{name}' is not a flow of the instance")
        ha_set = set(ha_flows)
        ha_modules = sorted({v for f in self.flows if f.name in ha_set for v in f.path})
        names, weights = list(self.names), list(self.weights)
        copies: list[dict[int, int]] = []
        for j in range(1, k + 1):
            copy = {}
            for v in ha_modules:
                copy[v] = len(names)
                names.append(f"{self.names[v]}~{j}")
                weights.append(self.weights[v])
            copies.append(copy)
        flows: list[Flow] = []
        groups: dict[Hashable, list[tuple[int, ...]]] = {}
        for f in self.flows:
            if f.name not in ha_set:
                flows.append(f)
                continue
            flows.append(replace(f, ha=True))
            key = group(f.name) if group else f.name
            groups.setdefault(key, []).append(f.path)
            for j, copy in enumerate(copies, start=1):
                path = tuple(copy[v] for v in f.path)
                flows.append(Flow(f"{f.name}~{j}", path, ha=True, copy_of=f.name))
                groups[key].append(path)
        conflicts: set[tuple[int, int]] = set(self.conflicts)
        for paths in groups.values():
            for p, q in itertools.combinations(paths, 2):
                conflicts.update((min(u, v), max(u, v)) for u in p for v in q if u != v)
        return _renumbered(names, weights, self.cores, self.capacity, flows, sorted(conflicts))


def _renumbered(names: list[str], weights: list[int], cores: int, capacity: int, flows: list[Flow], conflicts: list[tuple[int, int]],
                order: Optional[Sequence[int]] = None) -> Instance:
    """The instance with modules numbered in `order` (old numbers, new
    first), by default by first appearance along `flows` (then the rest)."""
    if order is None:
        order = list(dict.fromkeys(itertools.chain((v for f in flows for v in f.path), range(len(names)))))
    new = {old: i for i, old in enumerate(order)}
    return Instance(
        [names[v] for v in order],
        [weights[v] for v in order],
        cores,
        capacity,
        [replace(f, path=tuple(new[v] for v in f.path)) for f in flows],
        sorted((min(new[a], new[b]), max(new[a], new[b])) for a, b in conflicts),
    )


def from_pipeline(
    pipeline: Pipeline,
    cores: int,
    *,
    capacity: int = PER_MILLE,
    rate_pps: Union[float, Mapping[str, float]] = 1e6,
    weights: Optional[Mapping[str, int]] = None,
) -> Instance:
    """The instance of a pipeline: its network functions and flows (paths
    without their source and sink, which stay with the I/O worker). Weights
    are given explicitly, or are each module's CPU share in thousandths of a
    core: Σ over its flows of rate × (T0/B + T1) from the profile (B the
    pipeline's batch size; at least 1). `rate_pps` is one rate for every
    flow or a rate per flow name (pkt/s)."""
    model = pipeline.validate()
    modules = model["modules"]
    kept = [v for v, m in enumerate(modules) if m["role"] == "function"]
    index = {v: i for i, v in enumerate(kept)}
    names = [modules[v]["name"] for v in kept]
    flow_names = [f["name"] for f in model["flows"]]
    flows = [Flow(f["name"], tuple(index[v] for v in f["path"] if v in index)) for f in model["flows"]]
    if weights is not None:
        missing = [n for n in names if n not in weights]
        if missing:
            raise ValueError(f"no weight for module '{missing[0]}'")
        w = [int(weights[n]) for n in names]
    else:
        rates = rate_pps if isinstance(rate_pps, Mapping) else {f: rate_pps for f in flow_names}
        for name in rates:
            if name not in flow_names:
                raise ValueError(f"rate given for '{name}', which is not a flow of the pipeline")
        share = [0.0] * len(names)  # ns of CPU per second
        batch = model["batch_size"]
        for f in flows:
            for i in f.path:
                prof = modules[kept[i]]["profile"]
                if prof is not None:
                    share[i] += rates.get(f.name, 0.0) * (prof["t0_ns"] / batch + prof["t1_ns"])
        w = [max(1, math.ceil(s * 1e-9 * PER_MILLE)) for s in share]
    return Instance(names, w, cores, capacity, [f for f in flows if f.path])
