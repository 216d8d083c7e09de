"""The exact embedding model of the dissertation as an integer program,
solved by OR-Tools CP-SAT or by HiGHS.

Binary x[v,i] (module v on core i), one core per module, Σ w_v x[v,i] ≤ C,
x[u,i] + x[v,i] ≤ 1 for conflicting u, v, and a crossing indicator per
flow edge (u, v) with φ ≥ x[u,i] − x[v,i] for every core i. Objective
"sum": Σ over edges of φ times the flows using the edge; "max": the
largest Σ φ along any single flow's path.

Identical cores make every solution appear n! times, which is what keeps
solvers from proving optimality. Symmetry breaking: a clique of pairwise
conflicting modules is pinned to cores 0..q−1, and the m-th remaining
module may only use cores 0..q+m (any embedding can be relabelled so).
"""

from __future__ import annotations

import math
import select
import signal
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from sluice.embed.instance import Instance
from sluice.extras import missing

OBJECTIVES = ("sum", "max")
BACKENDS = ("cp-sat", "highs")


@dataclass
class Solution:
    """A solver's answer: the placement (None if it found none), its status
    (optimal, feasible, infeasible, unknown), the proven lower bound on the
    objective and the wall-clock time (s)."""

    placement: Optional[list[int]]
    status: str
    bound: float
    time_s: float


@dataclass
class Formulation:
    """The parts of the model both backends build from."""

    allowed: list[list[int]]  # per module, the cores it may use
    edges: list[tuple[int, int, int]]  # (u, v, flows using the edge), u < v
    flow_edges: list[list[int]]  # per flow, indices into edges
    clique: list[int]


def conflict_clique(instance: Instance) -> list[int]:
    """A large clique of the conflict graph, found greedily (most conflicts
    first, lower index on ties); at most `cores` modules."""
    neighbours: list[set[int]] = [set() for _ in instance.names]
    for a, b in instance.conflicts:
        neighbours[a].add(b)
        neighbours[b].add(a)
    clique: list[int] = []
    for v in sorted(range(len(instance.names)), key=lambda v: (-len(neighbours[v]), v)):
        if len(clique) < instance.cores and all(u in neighbours[v] for u in clique):
            clique.append(v)
    return clique


def fewest_cores(instance: Instance) -> int:
    """A lower bound on the cores any embedding of `instance` needs: its
    weight over a core's capacity, or the size of a conflict clique (each
    member on a core of its own), whichever is more."""
    clique = conflict_clique(instance.with_cores(len(instance.names)))
    return max(math.ceil(sum(instance.weights) / instance.capacity), len(clique), 1)


def formulate(instance: Instance) -> Formulation:
    """Edges with their flow counts, and the cores each module may use after symmetry breaking."""
    clique = conflict_clique(instance)
    n = instance.cores
    allowed: list[list[int]] = []
    rank = 0
    pinned = {v: i for i, v in enumerate(clique)}
    for v in range(len(instance.names)):
        if v in pinned:
            allowed.append([pinned[v]])
        else:
            allowed.append(list(range(min(n, len(clique) + rank + 1))))
            rank += 1
    index: dict[tuple[int, int], int] = {}
    edges: list[tuple[int, int, int]] = []
    flow_edges: list[list[int]] = []
    for f in instance.flows:
        mine = []
        for a, b in zip(f.path, f.path[1:]):
            if a == b:
                continue
            key = (min(a, b), max(a, b))
            if key not in index:
                index[key] = len(edges)
                edges.append((key[0], key[1], 0))
            e = index[key]
            edges[e] = (edges[e][0], edges[e][1], edges[e][2] + 1)
            mine.append(e)
        flow_edges.append(mine)
    return Formulation(allowed, edges, flow_edges, clique)


def canonical(form: Formulation, placement: Sequence[int], cores: int) -> Optional[list[int]]:
    """`placement` relabelled to satisfy the symmetry breaking (for a
    solver hint), or None if its clique members share a core."""
    label: dict[int, int] = {}
    for i, v in enumerate(form.clique):
        if placement[v] in label:
            return None
        label[placement[v]] = i
    for v in range(len(placement)):
        if placement[v] not in label:
            label[placement[v]] = len(label)
    relabelled = [label[c] for c in placement]
    return relabelled if all(c in form.allowed[v] for v, c in enumerate(relabelled)) else None


def solve(
    instance: Instance,
    objective: str = "sum",
    *,
    backend: str = "cp-sat",
    time_limit_s: float = 30.0,
    hint: Optional[Sequence[int]] = None,
    workers: int = 8,
    first: bool = False,
) -> Solution:
    """Solves the embedding ILP with `objective` ("sum" or "max") on
    `backend` ("cp-sat" or "highs") within `time_limit_s`; `hint` is a
    placement to start from (CP-SAT only). With `first`, stops at the
    first placement found (CP-SAT only: whether the instance's cores are
    enough, whatever the crossings)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective '{objective}' (known: {', '.join(OBJECTIVES)})")
    if not time_limit_s > 0:
        raise ValueError(f"time limit must be > 0 s, got {time_limit_s}")
    form = formulate(instance)
    start = time.perf_counter()
    if backend == "cp-sat":
        placement, status, bound = _cp_sat(instance, form, objective, time_limit_s, hint, workers, first)
    elif first:
        raise ValueError("stopping at the first placement is CP-SAT's (backend 'cp-sat')")
    elif backend == "highs":
        placement, status, bound = _highs(instance, form, objective, time_limit_s)
    else:
        raise ValueError(f"unknown ILP backend '{backend}' (known: {', '.join(BACKENDS)})")
    return Solution(placement, status, bound, time.perf_counter() - start)


def _build(
    instance: Instance, form: Formulation, objective: str, binary: Callable[[], Any], integer: Callable[[int], Any], add: Callable[[Any], Any]
) -> tuple[list[dict[int, Any]], list[Any], Any]:
    """The model on a backend that makes binaries, bounded integers and
    constraints: returns x (per module, core → binary), φ per edge and the
    objective expression."""
    x = [{i: binary() for i in cores} for cores in form.allowed]
    for v in range(len(x)):
        add(sum(x[v].values()) == 1)
    for i in range(instance.cores):
        on = [(instance.weights[v], x[v][i]) for v in range(len(x)) if i in x[v]]
        if on:
            add(sum(w * b for w, b in on) <= instance.capacity)
    for a, b in instance.conflicts:
        for i in x[a].keys() & x[b].keys():
            add(x[a][i] + x[b][i] <= 1)
    phi = [binary() for _ in form.edges]
    for e, (u, v, _) in enumerate(form.edges):
        for i in x[u]:  # u on i and v elsewhere: φ = 1
            add(phi[e] - x[u][i] + x[v].get(i, 0) >= 0)
    if objective == "sum":
        return x, phi, sum(count * phi[e] for e, (_, _, count) in enumerate(form.edges))
    z = integer(max((len(fe) for fe in form.flow_edges), default=0))
    for fe in form.flow_edges:
        add(z - sum(phi[e] for e in fe) >= 0)
    return x, phi, z


def _cp_sat(
    instance: Instance, form: Formulation, objective: str, time_limit_s: float, hint: Optional[Sequence[int]], workers: int,
    first: bool
) -> tuple[Optional[list[int]], str, float]:
    try:
        from ortools.sat.python import cp_model
    except ImportError as absent:
        raise missing("embed", "the ILP on cp-sat", absent) from None

    m = cp_model.CpModel()
    x, phi, goal = _build(instance, form, objective, lambda: m.new_bool_var(""), lambda ub: m.new_int_var(0, ub, ""), m.add)
    m.minimize(goal)
    for e, (u, v, _) in enumerate(form.edges):
        for i in x[u].keys() | x[v].keys():  # no crossing: the same core (stronger propagation)
            m.add(x[u].get(i, 0) == x[v].get(i, 0)).only_enforce_if(~phi[e])
    if hint is not None:
        start = canonical(form, hint, instance.cores)
        if start is not None:
            for v, core in enumerate(start):
                for i, var in x[v].items():
                    m.add_hint(var, i == core)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = workers
    solver.parameters.stop_after_first_solution = first
    # The default portfolio of a few workers never raises the lower bound
    # of the sum objective; the core-based subsolver does.
    solver.parameters.extra_subsolvers.append("core")
    # Users with identical chains are interchangeable; breaking that
    # symmetry too is what proves the MGW optima in seconds (without it,
    # ILP-sum on 10 cores stalls at 33 with a bound near 21 after 30 s).
    solver.parameters.symmetry_level = 4
    # Not CP-SAT's own SIGINT handler: it would end the search as if its time were up, and Ctrl-C would go unseen.
    solver.parameters.catch_sigint_signal = False
    code = _interruptible(lambda: solver.solve(m), solver.stop_search)
    names = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.INFEASIBLE: "infeasible"}
    status = names.get(code, "unknown")
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, status, solver.best_objective_bound if code != cp_model.INFEASIBLE else math.inf
    placement = [next(i for i, var in x[v].items() if solver.value(var)) for v in range(len(x))]
    return placement, status, solver.best_objective_bound


def _interruptible(run: Callable[[], Any], stop: Callable[[], None]) -> Any:
    """`run()` (a solve) stopped by `stop()` when Ctrl-C or SIGTERM arrive,
    which are then raised here as usual, not after the solver's time limit:
    while the solve holds this thread, a watcher learns of the signal from
    Python's wake-up descriptor."""
    if threading.current_thread() is not threading.main_thread():
        return run()  # signals reach the main thread only
    wake, woken = socket.socketpair()
    wake.setblocking(False)
    earlier = signal.set_wakeup_fd(wake.fileno(), warn_on_full_buffer=False)
    solved = threading.Event()

    def watch() -> None:
        while not solved.is_set():
            # The descriptor carries the number of each signal Python handles.
            if select.select([woken], [], [], 0.1)[0] and {signal.SIGINT, signal.SIGTERM} & set(woken.recv(64)):
                stop()
                return

    watcher = threading.Thread(target=watch, name="ilp-signals", daemon=True)
    watcher.start()
    try:
        return run()
    finally:
        solved.set()
        watcher.join()
        signal.set_wakeup_fd(earlier)
        wake.close()
        woken.close()


def _highs(instance: Instance, form: Formulation, objective: str, time_limit_s: float) -> tuple[Optional[list[int]], str, float]:
    try:
        import highspy
    except ImportError as absent:
        raise missing("embed", "the ILP on HiGHS", absent) from None

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit_s))
    x, _, goal = _build(instance, form, objective, h.addBinary, lambda ub: h.addIntegral(0, ub), h.addConstr)
    h.setObjective(goal, highspy.ObjSense.kMinimize)
    h.HandleUserInterrupt = True  # what makes cancelSolve stop a solve
    _interruptible(h.run, h.cancelSolve)
    status_text = h.modelStatusToString(h.getModelStatus()).lower()
    info = h.getInfo()
    status = "optimal" if status_text == "optimal" else "infeasible" if "infeasible" in status_text else "unknown"
    bound = float(info.mip_dual_bound)
    if info.primal_solution_status != 2:  # kSolutionStatusFeasible
        return None, status, bound
    values = h.getSolution().col_value
    if status != "optimal":
        status = "feasible"
    placement = [max(x[v], key=lambda i: values[x[v][i].index]) for v in range(len(x))]
    return placement, status, bound
