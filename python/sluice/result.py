"""The result of a run: per-period table, summary, JSON, CSV and plots."""

from __future__ import annotations

import csv
import io
import json
from typing import Optional, TypedDict, Union

from sluice.files import write_replacing
from sluice.outputs import FlowTotalsJson, ModuleTotalsJson, PeriodOutputJson, RunOutputJson, SummaryJson

#: A value of a per-period row (`RunResult.rows`).
Cell = Union[int, float, bool, None]


class ClassTotals(TypedDict):
    """A scheduled egress's class over the whole run (see `RunResult.classes`)."""

    weight: int
    flows: list[str]
    generated: int
    delivered: int
    dropped: int
    #: The largest p99 delay of its flows over the measured periods (µs).
    p99_us_max: float
    #: Its share of what the classes delivered (0..1).
    share: float


class RunResult:
    """What `Pipeline.run` returns; `data` is the report `sluice run --json` writes."""

    def __init__(self, data: RunOutputJson) -> None:
        self.data = data

    @property
    def summary(self) -> SummaryJson:
        """rate_pps, mean_batch, violation_pct, generated, delivered, dropped (by reason), in_flight, missed, accounted, lossless."""
        return self.data["summary"]

    @property
    def flow_totals(self) -> dict[str, FlowTotalsJson]:
        """Per flow over the whole run (warm-up and final drain included): generated, delivered, dropped, misdelivered (pkt)."""
        return self.data["flow_totals"]

    @property
    def classes(self) -> dict[str, ClassTotals]:
        """Per class of a scheduled egress (see `Pipeline.schedule_egress`;
        empty without one), over the whole run: weight, flows, generated,
        delivered, dropped (pkt), share of what was delivered, and the
        largest p99 delay of its flows over the measured periods (µs). Each
        period's `classes` holds the same per period."""
        classes = self.data.get("egress_classes")
        if not classes:
            return {}
        totals = self.flow_totals
        measured = [p for p in self.periods if not p.get("warmup")]
        out: dict[str, ClassTotals] = {}
        for c in classes:
            flows = c["flows"]
            p99 = [p["flows"][f]["p99_us"] for p in measured for f in flows if p["flows"][f]["delivered"]]
            out[c["name"]] = ClassTotals(weight=c["weight"], flows=flows, generated=sum(totals[f]["generated"] for f in flows),
                                         delivered=sum(totals[f]["delivered"] for f in flows), dropped=sum(totals[f]["dropped"] for f in flows),
                                         p99_us_max=max(p99, default=0.0), share=0.0)
        delivered = sum(t["delivered"] for t in out.values())
        for t in out.values():
            t["share"] = t["delivered"] / delivered if delivered else 0.0
        return out

    def nf_counters(self, module: str) -> dict[str, int]:
        """Module `module`'s own NF counters over the whole run (a
        `Reframer`'s: packets_in, runs_in, packets_out, runs_out, releases by
        cause…; empty for NFs that keep none)."""
        return self._module_totals(module).get("nf", {})

    def port_counters(self, module: str) -> dict[str, int]:
        """A port module's own counters over the whole run: a receive port's
        rx_pkts, rx_bytes, ring_dropped, oversize; a transmit port's tx_pkts,
        tx_bytes, tx_retries, tx_full, tx_refused (each period's report has
        them for the period, under "port")."""
        return self._module_totals(module).get("port", {})

    def _module_totals(self, module: str) -> ModuleTotalsJson:
        """Module `module`'s counters over the whole run; a name the run has no module of is refused by name."""
        totals = self.data["module_totals"]
        if module not in totals:
            raise KeyError(f"no module '{module}' in this run of {self.data['pipeline']} (it has {', '.join(totals)})")
        return totals[module]

    @property
    def interrupted(self) -> Optional[str]:
        """Why the run ended before its last period ("stopped", or the error), or None."""
        return self.data.get("interrupted")

    @property
    def rate_bound(self) -> Optional[str]:
        """Why the summary's rate is a bound of the simulator's model rather
        than a rate an engine reaches (modules it charged no time), or None."""
        return self.data.get("rate_bound")

    @property
    def periods(self) -> list[PeriodOutputJson]:
        """The periods kept (the last `keep_periods`), warm-up included (`warmup` marks it)."""
        return self.data["periods"]

    @property
    def moves(self) -> dict[int, dict[str, int]]:
        """Modules pipeline decomposition moved, by the period after which
        they moved: {period: {module: worker}}."""
        return {p["period"]: p["moves"] for p in self.periods if p["moves"]}

    @property
    def controller(self) -> str:
        """Name of the controller that ran."""
        return self.data["controller"]

    def rows(self) -> list[dict[str, Cell]]:
        """One flat row per period: totals, then per flow and per module columns."""
        rows = []
        for p in self.periods:
            row: dict[str, Cell] = {"period": p["period"], "t_s": p["t_s"], "warmup": p["warmup"], "rate_pps": p["rate_pps"],
                                    "mean_batch": p["mean_batch"], "violated": p["violated"]}
            for name, f in p["flows"].items():
                row.update({f"flow.{name}.{k}": v for k, v in (("rate_pps", f["rate_pps"]), ("p50_us", f["p50_us"]), ("p95_us", f["p95_us"]),
                                                              ("p99_us", f["p99_us"]), ("max_us", f["max_us"]), ("slo_us", f.get("slo_us")))})
            for name, m in p["modules"].items():
                row.update({f"module.{name}.{k}": v for k, v in (("trigger", m["trigger"]), ("x", m["x"]), ("r", m["r"]), ("b_in", m["b_in"]),
                                                                ("b_round", m.get("b_round")), ("b_round_sd", m.get("b_round_sd")), ("b", m["b"]))})
            rows.append(row)
        return rows

    def to_json(self, path: Optional[str] = None) -> str:
        """The report as JSON; written to `path` when given."""
        text = json.dumps(self.data, indent=1)
        if path:
            write_replacing(path, text)
        return text

    def to_csv(self, path: Optional[str] = None) -> str:
        """The per-period rows as CSV; written to `path` when given."""
        rows = self.rows()
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)
        if path:
            write_replacing(path, out.getvalue())
        return out.getvalue()

    def plot(self, path: str) -> None:
        """A PNG: triggers per module, p95 delay vs SLO per flow, rate per flow and total."""
        from sluice.plot import plot_run

        plot_run(self.data, path)
