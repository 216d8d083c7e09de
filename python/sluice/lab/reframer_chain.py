"""The Reframer paper's chain (flow statistics → router with 200 routes →
firewall with 10 000 rules → NAT, every NF flow-aware) behind a replay of
a trace, and one run of it measured on the engine."""

from __future__ import annotations

import statistics
from typing import Any, Callable, Optional, Sequence

from sluice import Pipeline
from sluice.nf import NF, Acl, FlowStats, Lpm, Napt, Reframer, ReframerBypass, Rule

NF_NAMES = ("flowstats", "router", "firewall", "nat")


def _routes() -> dict[str, int]:
    """200 routes: 198 /24s of the servers' space and two /8s that catch the rest (one gate: the chain goes on)."""
    return {**{f"20.0.{i}.0/24": 0 for i in range(198)}, "20.0.0.0/8": 0, "10.0.0.0/8": 0}


def _rules() -> list[Rule]:
    """10 000 rules: 9 999 denials of unused ports from the clients' /24s,
    which the tree must tell apart from the traffic, then permit all."""
    deny = [Rule(permit=False, src=f"10.{j % 40}.{(j // 40) % 256}.0/24", dport=(1 + j % 7, 1 + j % 7)) for j in range(9999)]
    return [*deny, Rule(permit=True)]


def _nf(name: str) -> NF:
    """The chain's NF `name` (one of `NF_NAMES`)."""
    nfs: dict[str, Callable[[], NF]] = {"flowstats": FlowStats, "router": lambda: Lpm(_routes()), "firewall": lambda: Acl(_rules()),
                                        "nat": lambda: Napt("10.0.0.0/8", "30.0.0.1", 1024, 65535, 30.0)}
    return nfs[name]()


def chain(trace: str, *, t_buff_us: float = 0.0, slo_control: bool = False, external: bool = False,
           rate_pps: Optional[float] = None, slo_us: Optional[float] = None,
           costs: Optional[dict[str, float]] = None, bypass: ReframerBypass = ReframerBypass(), copies: int = 1,
           nfs: Sequence[str] = NF_NAMES) -> Pipeline:
    """The chain behind a replay of `trace`; a Reframer in front when `t_buff_us`
    (on worker 1 with the source when `external`), holding all but `bypass`;
    controlled buffers priced at `costs` (ns per packet) when given; the
    chain's NFs `nfs` (none: the Reframer alone before the sink). With
    `copies`, one replay and chain on each of that many workers (copy i's
    modules named with the suffix i from the second on; the first's flow is
    `all`)."""
    assert copies == 1 or not external, "a copy per worker has no worker to spare for an external Reframer"
    p = Pipeline("reframer-chain")
    for i in range(copies):
        tag, worker = (str(i) if i else ""), i
        src = p.pcap_source(f"src{tag}", trace, {f"all{tag}": "0.0.0.0/0"}, rate_pps=rate_pps, worker=1 if external else worker)
        front = []
        if t_buff_us:
            front.append(p.module(f"reframer{tag}", Reframer(t_buff_us=t_buff_us, max_burst=64, bypass=bypass, slo_control=slo_control),
                                  worker=1 if external else worker))
        modules = [p.module(f"{name}{tag}", _nf(name), worker=worker, controlled=costs is not None,
                          t0_ns=None if costs is None else 50.0, t1_ns=None if costs is None else costs[name])
                 for name in nfs]
        out = p.sink(f"out{tag}", worker=worker)
        p.chain(src, *front, *modules, out)
        p.flow(f"all{tag}", [src, *front, *modules, out], slo_us=slo_us)
    return p


def measure(p: Pipeline, controller: str, periods: int, period_ms: float) -> dict[str, Any]:
    """One run on the engine: rate, run length at the first NF, ns per packet per NF, delays, violations."""
    r = p.run(controller, periods=periods, period_ms=period_ms, warmup_periods=2, backend="engine")
    totals = r.data["module_totals"]
    measured = [q for q in r.periods if not q["warmup"] and q["flows"]["all"]["delivered"]]
    flows = [q["flows"]["all"] for q in measured]
    return {
        "pps": r.summary["rate_pps"],
        "slf_out": totals["flowstats"]["run_pkts"] / max(1, r.nf_counters("flowstats")["lookups"]) if "flowstats" in totals else 0.0,
        "nf_ns": {m: totals[m]["busy_ns"] / max(1, totals[m]["run_pkts"]) for m in ("reframer", *NF_NAMES) if m in totals},
        "mean_us": statistics.fmean(f["mean_us"] for f in flows) if flows else 0.0,
        "p99_us": statistics.median(f["p99_us"] for f in flows) if flows else 0.0,
        "viol_pct": r.summary["violation_pct"],
        "holds_us": [q["modules"]["reframer"].get("hold_us") for q in measured if "reframer" in q["modules"]],
        "bypassed_share": r.nf_counters("reframer")["bypassed"] / max(1, r.nf_counters("reframer")["packets_in"]) if "reframer" in totals else 0.0,
        "delivered": {name: t["delivered"] for name, t in r.flow_totals.items()},
        "accounted": r.summary["accounted"] and r.summary["dropped"] == 0,
    }


def saturation(p: Pipeline, controller: str, periods: int, period_ms: float, repeats: int) -> dict[str, Any]:
    """The fastest of `repeats` runs at saturation."""
    return max((measure(p, controller, periods, period_ms) for _ in range(repeats)), key=lambda m: float(m["pps"]))
