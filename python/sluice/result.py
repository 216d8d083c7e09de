"""The result of a run: per-period table, summary, JSON, CSV and plots."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Optional

from sluice.files import write_replacing


class RunResult:
    """What `Pipeline.run` returns; `data` is the report `sluice run --json` writes."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def summary(self) -> dict[str, Any]:
        """rate_pps, mean_batch, violation_pct, generated, delivered, dropped, in_flight, missed."""
        summary: dict[str, Any] = self.data["summary"]
        return summary

    @property
    def flow_totals(self) -> dict[str, dict[str, int]]:
        """Per flow over the whole run (warm-up and final drain included): generated, delivered, dropped (pkt)."""
        totals: dict[str, dict[str, int]] = self.data["flow_totals"]
        return totals

    @property
    def classes(self) -> dict[str, dict[str, Any]]:
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
        out: dict[str, dict[str, Any]] = {}
        for c in classes:
            flows = c["flows"]
            p99 = [p["flows"][f]["p99_us"] for p in measured for f in flows if p["flows"][f]["delivered"]]
            out[c["name"]] = {"weight": c["weight"], "flows": flows, **{k: sum(totals[f][k] for f in flows) for k in ("generated", "delivered", "dropped")},
                              "p99_us_max": max(p99, default=0.0)}
        delivered = sum(c["delivered"] for c in out.values())
        for c in out.values():
            c["share"] = c["delivered"] / delivered if delivered else 0.0
        return out

    def nf_counters(self, module: str) -> dict[str, int]:
        """Module `module`'s own NF counters over the whole run (a
        `Reframer`'s: packets_in, runs_in, packets_out, runs_out, releases by
        cause…; empty for NFs that keep none)."""
        counters: dict[str, int] = self._module_totals(module).get("nf", {})
        return counters

    def port_counters(self, module: str) -> dict[str, int]:
        """A port module's own counters over the whole run: a receive port's
        rx_pkts, rx_bytes, ring_dropped, oversize; a transmit port's tx_pkts,
        tx_bytes, tx_retries, tx_full, tx_refused (each period's report has
        them for the period, under "port")."""
        counters: dict[str, int] = self._module_totals(module).get("port", {})
        return counters

    def _module_totals(self, module: str) -> dict[str, Any]:
        """Module `module`'s counters over the whole run; a name the run has no module of is refused by name."""
        totals = self.data["module_totals"]
        if module not in totals:
            raise KeyError(f"no module '{module}' in this run of {self.data['pipeline']} (it has {', '.join(totals)})")
        found: dict[str, Any] = totals[module]
        return found

    @property
    def interrupted(self) -> Optional[str]:
        """Why the run ended before its last period ("stopped", or the error), or None."""
        why = self.data.get("interrupted")
        return None if why is None else str(why)

    @property
    def rate_bound(self) -> Optional[str]:
        """Why the summary's rate is a bound of the simulator's model rather
        than a rate an engine reaches (modules it charged no time), or None."""
        why = self.data.get("rate_bound")
        return None if why is None else str(why)

    @property
    def periods(self) -> list[dict[str, Any]]:
        """The periods kept (the last `keep_periods`), warm-up included (`warmup` marks it)."""
        periods: list[dict[str, Any]] = self.data["periods"]
        return periods

    @property
    def moves(self) -> dict[int, dict[str, int]]:
        """Modules pipeline decomposition moved, by the period after which
        they moved: {period: {module: worker}}."""
        return {p["period"]: p["moves"] for p in self.periods if p["moves"]}

    @property
    def controller(self) -> str:
        """Name of the controller that ran."""
        return str(self.data["controller"])

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per period: totals, then per flow and per module columns."""
        rows = []
        for p in self.periods:
            row: dict[str, Any] = {k: p[k] for k in ("period", "t_s", "warmup", "rate_pps", "mean_batch", "violated")}
            for name, f in p["flows"].items():
                for k in ("rate_pps", "p50_us", "p95_us", "p99_us", "max_us", "slo_us"):
                    row[f"flow.{name}.{k}"] = f[k]
            for name, m in p["modules"].items():
                for k in ("trigger", "x", "r", "b_in", "b_round", "b_round_sd", "b"):
                    row[f"module.{name}.{k}"] = m[k]
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
