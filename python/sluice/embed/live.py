"""Applying an embedding to a running pipeline: high-availability (HA)
flows get disjoint copies of their modules, the ingress replicates their
packets onto every copy and the egress keeps the first of each, and every
network function runs on the worker the embedding gives it.

    ha = ["dl_b0_u0", "ul_b0_u0"]
    instance = from_pipeline(p, cores=3).resilient(ha)
    e = embed(instance, "path-fit")
    live = resilient(p, ha)                 # copies, replicate, dedup
    place(live, instance, e.placement)      # workers 1..3; I/O on worker 0
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, cast

from sluice.embed.instance import Instance
from sluice.nf import Dedup, Replicate
from sluice.description import PipelineJson
from sluice.pipeline import Pipeline

#: Sink that unused gates of copied modules lead to (HA packets never take them).
UNUSED = "~unused"


def resilient(pipeline: Pipeline, ha_flows: Sequence[str], k: int = 1) -> Pipeline:
    """`pipeline` with every module of the HA flows copied `k` times (copy j
    of module m is "m~j", as in `Instance.resilient`). The HA flows' streams
    move to a source of their own ("SRC~ha") followed by a replicator
    ("SRC~replicate") whose gate j feeds copy j of the flows' first module;
    each HA flow's egress is preceded by a de-duplicator ("FLOW~dedup") that
    the original and every copy of its last module feed. Other flows are
    untouched. Raises ValueError naming an HA flow that cannot be made so."""
    if k < 1:
        raise ValueError(f"k (core failures to survive) must be ≥ 1, got {k}")
    # Rewritten freely below, then read back (and checked) as a description.
    spec = cast(dict[str, Any], copy.deepcopy(pipeline.spec()))
    modules: dict[str, dict[str, Any]] = {m["name"]: m for m in spec["modules"]}
    flows = {f["name"]: f for f in spec["flows"]}
    for name in ha_flows:
        if name not in flows:
            raise ValueError(f"HA flow '{name}' is not a flow of '{pipeline.name}'")
    ha = [flows[n] for n in ha_flows]
    inner = [m for f in ha for m in f["path"][1:-1]]
    copied = list(dict.fromkeys(inner))
    sources = {f["path"][0] for f in ha}
    for f in ha:
        src = modules[f["path"][0]]
        if "synthetic" not in src.get("source", {}):
            raise ValueError(f"HA flow '{f['name']}' must start at a synthetic source, not '{src['name']}'")
        if len(f["path"]) < 3:
            raise ValueError(f"HA flow '{f['name']}' has no module between its source and egress to copy")
    entry = {s: {f["path"][1] for f in ha if f["path"][0] == s} for s in sources}
    for s, first in entry.items():
        if len(first) > 1:
            raise ValueError(f"the HA flows from '{s}' enter through several modules ({', '.join(sorted(first))}); they must share the first one")

    new_modules = list(spec["modules"])
    new_edges = list(spec["edges"])
    for j in range(1, k + 1):
        for name in copied:
            twin = copy.deepcopy(modules[name])
            twin["name"] = f"{name}~{j}"
            new_modules.append(twin)
    copied_set = set(copied)
    for e in spec["edges"]:
        if e["from"] in copied_set:
            for j in range(1, k + 1):
                to = f"{e['to']}~{j}" if e["to"] in copied_set else UNUSED
                new_edges.append({"from": f"{e['from']}~{j}", "outgate": e["outgate"], "to": to, "ingate": e["ingate"] if to != UNUSED else 0})
    if any(e["to"] == UNUSED for e in new_edges):
        new_modules.append({"name": UNUSED, "sink": {}})
    # Ingress: the HA flows' streams move to a source of their own.
    for s in sorted(sources):
        src = modules[s]
        streams = src["source"]["synthetic"]["streams"]
        mine = [st for st in streams if st.get("flow") in set(ha_flows)]
        src["source"]["synthetic"]["streams"] = [st for st in streams if st not in mine]
        ha_src = copy.deepcopy(src)
        ha_src["name"] = f"{s}~ha"
        ha_src["source"]["synthetic"]["streams"] = mine
        new_modules.append(ha_src)
        rep = {"name": f"{s}~replicate", "nf": Replicate(k).spec(), "worker": src.get("worker", 0)}
        new_modules.append(rep)
        (first,) = entry[s]
        new_edges.append({"from": ha_src["name"], "outgate": 0, "to": rep["name"], "ingate": 0})
        new_edges.append({"from": rep["name"], "outgate": 0, "to": first, "ingate": 0})
        new_edges += [{"from": rep["name"], "outgate": j, "to": f"{first}~{j}", "ingate": 0} for j in range(1, k + 1)]
    # Egress: a de-duplicator in front of each HA flow's sink, fed by the
    # gate of the flow's last module (and of each copy) that led to the sink.
    for f in ha:
        last, sink = f["path"][-2], f["path"][-1]
        dedup = {"name": f"{f['name']}~dedup", "nf": Dedup(k + 1, len(flows)).spec()}
        new_modules.append(dedup)
        feeds = {last: 0, **{f"{last}~{j}": j for j in range(1, k + 1)}}
        gate = next(e["outgate"] for e in spec["edges"] if e["from"] == last and e["to"] == sink)
        new_edges = [
            {**e, "to": dedup["name"], "ingate": feeds[e["from"]]} if e["from"] in feeds and e["outgate"] == gate else e
            for e in new_edges
        ]
        new_edges.append({"from": dedup["name"], "outgate": 0, "to": sink, "ingate": 0})
        f["path"] = [f"{f['path'][0]}~ha", f"{f['path'][0]}~replicate", *f["path"][1:-1], dedup["name"], sink]
    spec["modules"], spec["edges"] = new_modules, new_edges
    spec["name"] = f"{pipeline.name} resilient"
    return Pipeline.from_spec(cast(PipelineJson, spec))


def place(pipeline: Pipeline, instance: Instance, placement: Sequence[int], *, io_worker: int = 0, first_worker: int = 1) -> None:
    """Puts module `instance.names[v]` of `pipeline` on worker
    `first_worker + placement[v]`, and every other module (sources, sinks,
    replicators, de-duplicators) on `io_worker`. Edges between workers
    become lock-free rings when the pipeline starts."""
    if len(placement) != len(instance.names):
        raise ValueError(f"the placement has {len(placement)} entries for {len(instance.names)} modules")
    worker = {name: first_worker + core for name, core in zip(instance.names, placement)}
    known = pipeline.modules()
    for name in worker:
        if name not in known:
            raise ValueError(f"the embedding places '{name}', which '{pipeline.name}' does not have")
    for name in known:
        pipeline.set_worker(name, worker.get(name, io_worker))
