"""`embedding`: the dissertation's Table 4.1 on the MGW instance (10 cores)
and the scaled instance (5 HA users, 40 cores): crossings per flow of every
method, run time, and for the ILP its status, bound and gap; the cores each
method needs (§4.3.4 on the scaled instance); Figure 4.3, the crossings
per flow on the 10-core instance without resilience; and the case study of
Figures 4.1/4.5 on the engine (`embedding_engine`).

A heuristic that finds no room on the instance's cores is given one more
core at a time (up to twice as many) and reports the cores it needed.
Best-fit runs twice: in pipeline order, and in the order the
dissertation's tool took the modules (where it breaks its ties the same
way and reproduces the published row exactly)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.embed import HEURISTICS, METHODS, Embedding, Instance, cores_needed, embed, fewest_cores
from sluice.lab import lgf
from sluice.lab.mgw import as_published, mgw_instance
from sluice.lab import embedding_engine, output
from sluice.lab.reference import table

#: Our heuristics (the others are the dissertation's baselines).
OURS = ("path-fit",)
#: Times each heuristic runs; its time is the median.
HEURISTIC_REPEATS = 21


#: The case study on the engine: each flow's rate during the outage
#: (pkt/s), the control period (ms) and how long the worker is down (s).
CASE_RATE_PPS, CASE_PERIOD_MS, CASE_DOWN_S = 20e3, 100.0, 1.0

#: Best-fit on the instance with its modules in the order the dissertation's
#: tool takes them (see `as_published`): the order its ties break by.
AS_PUBLISHED = "best-fit, published order"


def instances() -> dict[str, tuple[Instance, Instance]]:
    """The two instances by name, each in pipeline order and in the published tool's order."""
    small, large = mgw_instance(), mgw_instance(ha_users=5, cores=40)
    return {"mgw-10": (small, as_published(small)), "mgw-40": (large, as_published(large, ha_users=5))}


def _heuristic(instance: Instance, method: str) -> Embedding:
    """The method on the fewest cores (from the instance's up) where it finds room; its median run time."""
    for cores in range(instance.cores, 2 * instance.cores + 1):
        sized = instance.with_cores(cores)
        times = []
        for _ in range(HEURISTIC_REPEATS):
            start = time.perf_counter()
            result = embed(sized, method)
            times.append(time.perf_counter() - start)
        if result.placement is not None:
            result.time_s = statistics.median(times)
            return result
    return result


def _cores_needed(instance: Instance, time_limit_s: float) -> dict[str, Optional[int]]:
    """Per method, the fewest cores on which it finds an embedding (up to
    three times the instance's); the two ILPs share theirs (the same
    constraints)."""
    upper = 3 * instance.cores
    needed = {m: cores_needed(instance, m, upper=upper) for m in HEURISTICS}
    ilp = cores_needed(instance, "ilp-sum", upper=upper, time_limit_s=time_limit_s)
    return {**needed, "ilp-sum": ilp, "ilp-max": ilp}


def without_resilience(time_limit_s: float, hint_method: str = "path-fit") -> list[dict[str, Any]]:
    """Figure 4.3: every method's crossings per flow on the 10-core
    instance with no flow made resilient (22 flows, no conflicts)."""
    instance = mgw_instance(k=0)
    rows = []
    hint = None
    for method in METHODS:
        e = embed(instance, method, time_limit_s=time_limit_s, hint=hint)
        hint = e.placement if method == hint_method else hint
        rows.append({"method": method, "crossings": sorted(e.crossings), "status": e.status})
    return rows


def run(out: Path, time_limit_s: float, progress: Callable[[str], None]) -> dict[str, Any]:
    """Runs every method on both instances and writes embedding.{json,csv,md,png} (and the instances as .lgf) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"instances": {}, "rows": [], "time_limit_s": time_limit_s}
    for name, (instance, published) in instances().items():
        lgf.write(instance, out / f"{name}.lgf")
        methods: dict[str, Any] = {}
        hint = None
        for method in METHODS:
            progress(f"{name}: {method}")
            if method in HEURISTICS:
                result = _heuristic(instance, method)
                if method in OURS:
                    hint = result.placement
            else:
                result = embed(instance, method, time_limit_s=time_limit_s, hint=hint)
            row = result.row()
            methods[method] = row
            report["rows"].append({"instance": name, "method": method, **row})
        row = _heuristic(published, "best-fit").row()
        methods[AS_PUBLISHED] = row
        report["rows"].append({"instance": name, "method": AS_PUBLISHED, **row})
        progress(f"{name}: the cores each method needs")
        needed = {**_cores_needed(instance, time_limit_s), AS_PUBLISHED: cores_needed(published, "best-fit", upper=3 * instance.cores)}
        for method, row in methods.items():
            row["cores_needed"] = needed[method]
        for r in report["rows"]:
            if r["instance"] == name:
                r["cores_needed"] = needed[r["method"]]
        report["instances"][name] = {"cores": instance.cores, "capacity": instance.capacity, **instance.summary(), "methods": methods,
                                     "fewest_cores": fewest_cores(instance)}
    progress("mgw-10 without resilience (Figure 4.3)")
    report["without_resilience"] = without_resilience(time_limit_s)
    report["engine"] = embedding_engine.case_study(CASE_RATE_PPS, CASE_PERIOD_MS, CASE_DOWN_S, time_limit_s, progress)
    report["best_heuristic"] = min(OURS, key=lambda m: max(report["instances"][i]["methods"][m]["sum"] or 1 << 30 for i in report["instances"]))
    output.write(out, "embedding", report, lambda rows: markdown(rows, report), lambda rows, path: plot(rows, path, report["without_resilience"]))
    return report


def markdown(rows: list[dict[str, Any]], report: dict[str, Any]) -> str:
    """Per instance, every method beside the published Table 4.1 (10-core
    instance) or the cores each method needs (scaled instance); then
    Figure 4.3's crossings per flow without resilience."""
    pub = {r["method"]: r for r in table("embedding_table41.csv")}
    needs = {r["method"]: r["cores_needed"] for r in table("embedding_scaled.csv")}
    lines = []
    for name in dict.fromkeys(r["instance"] for r in rows):
        lines += [f"**{name}** (no embedding fits on fewer than {report['instances'][name]['fewest_cores']} cores: its weight over a core's "
                  "capacity, or a conflict clique)", "",
                  "| method | sum | min | max | mean | std | time | status (bound) | cores used | cores needed | published |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in (r for r in rows if r["instance"] == name):
            method = "best-fit" if r["method"] == AS_PUBLISHED else r["method"]
            p = pub.get(method)
            if name == "mgw-10":
                published = f"{p['sum']}/{p['min']}/{p['max']}/{p['mean']}/{p['std']}, {p['exec_time']}" if p else "—"
            else:
                published = f"needs {needs[method]} cores" if method in needs else "—"
            bound = f" ({r['bound']:g})" if r["bound"] is not None else ""
            found = r["sum"] is not None
            stats = f"{r['sum']} | {r['min']} | {r['max']} | {r['mean']:.2f} | {r['std']:.2f}" if found else "— | — | — | — | —"
            lines.append(f"| {r['method']} | {stats} | {_duration(r['time_s'])} | {r['status']}{bound} | "
                         f"{r['cores_used'] if found else '—'} of {r['cores']} | {r.get('cores_needed') or '—'} | {published} |")
        lines.append("")
    fig43 = {r["method"]: r for r in table("embedding_fig43.csv")}
    lines += ["**mgw-10 without resilience** (Figure 4.3: 22 flows, no copies, no conflicts; crossings per flow)", "",
              "| method | min | median | max | mean | published range |", "|---|---|---|---|---|---|"]
    for r in report["without_resilience"]:
        c, f = r["crossings"], fig43.get(r["method"])
        cells = f"{c[0]} | {statistics.median(c):g} | {c[-1]} | {statistics.fmean(c):.2f}" if c else "— | — | — | —"
        published = f"{f['crossings_min']}–{f['crossings_max']}" if f else "—"
        lines.append(f"| {r['method']} | {cells} | {published} |")
    case = {r["method"]: r for r in table("embedding_case_study.csv")}
    paper = "the dissertation on BESS: " + ", ".join(f"{m} {r['mpps']} Mpps" + (", HA flow cut off" if r["ha_outage"] == "yes" else "")
                                                      for m, r in case.items())
    return "\n".join(lines) + "\n\n" + embedding_engine.markdown(report["engine"], paper)


def _duration(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.1f} s"


def plot(rows: list[dict[str, Any]], path: Path, without_resilience: list[dict[str, Any]]) -> None:
    """Total crossings per method and instance, with the published Table
    4.1 for the 10-core instance; Figure 4.3's distribution of crossings
    per flow without resilience."""
    from sluice.plot import save, subplots

    pub = {r["method"]: float(r["sum"]) for r in table("embedding_table41.csv")}
    names = list(dict.fromkeys(r["instance"] for r in rows))
    fig, axes = subplots(1, len(names) + 1, figsize=(5 * (len(names) + 1), 4))
    cdf = axes[-1]
    for i, r in enumerate(without_resilience):
        c = r["crossings"]
        cdf.step(c, [(j + 1) / len(c) for j in range(len(c))], where="post", color=f"C{i}", label=r["method"])
    cdf.set(xlabel="crossings per flow", ylabel="share of flows (CDF)", title="mgw-10 without resilience (Fig. 4.3)")
    cdf.grid(alpha=0.3)
    cdf.legend(fontsize=7)
    for ax, name in zip(axes, names):
        mine = [r for r in rows if r["instance"] == name]
        x = range(len(mine))
        ax.bar([i - 0.2 for i in x], [r["sum"] or 0 for r in mine], width=0.4, label="Sluice")
        if name == "mgw-10" and pub:
            ax.bar([i + 0.2 for i in x], [pub.get(r["method"], 0) for r in mine], width=0.4, color="k", alpha=0.6, label="published")
        ax.set_xticks(list(x), [r["method"] for r in mine], rotation=30)
        ax.set_ylabel("total crossings")
        ax.set_title(name)
        ax.grid(alpha=0.3, axis="y")
        ax.legend()
    save(fig, path)


def headline(report: dict[str, Any]) -> output.Headline:
    """Total crossings on the 10-core instance: path-fit and the best ILP, beside Table 4.1's best."""
    methods = report["instances"]["mgw-10"]["methods"]
    ilp = min((m for m in methods if m.startswith("ilp")), key=lambda m: methods[m]["sum"] if methods[m]["sum"] is not None else 1 << 30)
    pub = {r["method"]: r for r in table("embedding_table41.csv")}
    theirs = f"best-fit {pub['best-fit']['sum']}, ilp-sum {pub['ilp-sum']['sum']}" if {"best-fit", "ilp-sum"} <= pub.keys() else "—"
    return output.Headline(f"crossings on MGW, 10 cores: path-fit {methods['path-fit']['sum']}, {ilp} {methods[ilp]['sum']}", theirs)
