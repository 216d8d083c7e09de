"""`pspat`: the PSPAT paper's measurements of a scheduled egress, on this
machine. PSPAT (clients write into lock-free mailboxes, one arbiter thread
schedules and transmits) against the same algorithm behind one mutex every
client takes per packet (Linux TC's architecture) and, for throughput, no
scheduler. The transmit is a no-op, what is measured is scheduling, except
in the real-frame throughput test.

- `arbiter`: the arbiter alone over pre-filled mailboxes (decisions/s), at
  1..100 clients and 1..64 packets a client a scan, and a cost model fitted
  to it (a scan costs a·clients + b·packets) that predicts larger machines.
- `throughput`: 1, 2, 4, 8 greedy clients, 60-byte packets, unlimited link;
  and with real frames on a veth (`pspat_frames`): 1 and 2 clients through
  the engine's scheduled egress, through Linux TC, and through nothing.
- `share`: the 10:1 test, two greedy flows of weights 10 and 1 over a link
  set to 25–200% of what the mutex scheduler sustains (measured first, in
  the same harness over an unlimited link); each flow's share in every
  10 ms window against 10/11 and 1/11, per run (3), beside the
  scheduler's headroom: what it sustains there over the link's rate (the
  arbiter shares this machine's two cores with its clients, so its own
  capacity, not the algorithm, sets where the share breaks).
- `victim`: the latency test (Table 3), a 4 kpps victim with 50× the
  weight of each greedy interferer, 1500-byte frames on a 10 Gbit/s link,
  WF²Q+, QFQ and DRR (the paper's); the victim's latency from enqueue to the end of its frame on the
  emulated link (a 1500-byte frame takes 1.22 µs at 10 Gbit/s). Five
  runs, each beside a run of the victim alone: the p99's ratio to alone,
  median and range, and PSPAT's runs in which the arbiter spent over 1%
  of the run off its core (gaps between its scans beyond 20 µs): there
  the machine, not the scheduler, may set the p99 (the mutex has no
  thread of its own whose stall could be told from the lock's).

Two cores here: PSPAT's arbiter has core 1, its clients share core 0; the
mutex and no-scheduler clients alternate between both cores."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable, Optional

from sluice.lab import _core
from sluice.lab import htb_share, output, pspat_frames
from sluice.lab.reference import table

CLIENTS = [1, 2, 4, 8]
#: Clients of the real-frame throughput test: one and one a core.
FRAME_CLIENTS = [1, 2]
OVERLOADS = [0.25, 0.5, 1.0, 1.5, 2.0]
#: HTB's links, as shares of what its two senders put through the veth unshaped: lower ones too, where it holds.
HTB_OVERLOADS = [0.0625, 0.125, 0.25, 0.5, 1.0, 2.0]
INTERFERERS = [1, 2, 4]
#: Quick (CI-sized): one count of interferers.
QUICK_INTERFERERS = [2]
#: The arbiter-alone grid: clients × packets a client a scan.
ALONE_CLIENTS = [1, 2, 4, 8, 16, 32, 40, 100]
ALONE_PER_CLIENT = [1, 8, 64]
#: Clients the cost model predicts for.
PREDICT = [8, 40, 100]
WINDOW_MS = 10.0
#: Runs of each share row and victim row (full; quick runs one of each).
SHARE_RUNS = 3
VICTIM_RUNS = 5
#: A PSPAT run whose arbiter spent more than this share of it off its core (%) may have its p99 set by the machine.
STALL_PCT = 1.0
#: A window holds the 10:1 share when each flow's share is within this of its target (% of the target).
SHARE_TOLERANCE_PCT = 5.0
VICTIM_PPS = 4000.0
LINK_10G = 10e9


def _published(figure: str, configuration_part: str, metric: str) -> str:
    """A published figure of `pspat_figures.csv` ('' when absent)."""
    for r in table("pspat_figures.csv"):
        if r["figure"] == figure and configuration_part in r["configuration"] and r["metric"] == metric:
            return f"{r['value']} {r['unit']}"
    return ""


def _fit(points: list[tuple[int, int, float]]) -> tuple[float, float]:
    """Least squares of ns per scan = a·clients + b·packets through
    (clients, packets a client, M decisions/s), relative errors."""
    rows = [(c, c * m, c * m / (d * 1e6) * 1e9) for c, m, d in points]
    # Minimise Σ ((a·x + b·y − t) / t)²: normal equations of the scaled system.
    sxx = sum((x / t) ** 2 for x, _, t in rows)
    syy = sum((y / t) ** 2 for _, y, t in rows)
    sxy = sum(x * y / t**2 for x, y, t in rows)
    sx1 = sum(x / t for x, _, t in rows)
    sy1 = sum(y / t for _, y, t in rows)
    det = sxx * syy - sxy**2
    return (sx1 * syy - sy1 * sxy) / det, (sy1 * sxx - sx1 * sxy) / det


def run(out: Path, quick: bool, progress: Callable[[str], None], repeats: Optional[int] = None) -> dict[str, Any]:
    """Every measurement, each `repeats` times (default 3 quick, else 5); writes pspat.{json,csv,md,png} into `out`."""
    seconds = 0.3 if quick else 1.0
    reps = repeats or (3 if quick else 5)
    rows: list[dict[str, Any]] = []

    progress("the arbiter alone")
    alone = []
    for c in ALONE_CLIENTS:
        for m in ALONE_PER_CLIENT:
            mdps = max(_core.pspat_arbiter_alone("drr", c, m, seconds / 3) for _ in range(reps))
            alone.append((c, m, mdps))
            rows.append({"test": "arbiter", "scheduler": "pspat drr", "x": f"{c} clients × {m}", "metric": "M decisions/s",
                         "value": round(mdps, 1), "published": _published("fig10", "no-op transmit", "arbiter decisions") if m == 64 else ""})
    arbiter_mdps = max(d for c, m, d in alone if m == 64)
    # QFQ's choice is O(1) as DRR's: its decisions/s at few and many clients.
    for c in (ALONE_CLIENTS[0], ALONE_CLIENTS[-1]):
        mdps = max(_core.pspat_arbiter_alone("qfq", c, 64, seconds / 3) for _ in range(reps))
        rows.append({"test": "arbiter", "scheduler": "pspat qfq", "x": f"{c} clients × 64", "metric": "M decisions/s", "value": round(mdps, 1), "published": ""})
    a_ns, b_ns = _fit(alone)
    predicted = []
    for c in PREDICT:
        for m in (1, 64):
            model = c * m / (a_ns * c + b_ns * c * m) * 1e3
            measured = next(d for cc, mm, d in alone if cc == c and mm == m)
            predicted.append({"clients": c, "per_client": m, "predicted_mdps": round(model, 1), "measured_mdps": round(measured, 1)})

    progress("throughput against clients")
    throughput = []
    for c in CLIENTS:
        runs = {arch: [_core.pspat_throughput(arch, "drr", c, seconds) for _ in range(reps)] for arch in ("pspat", "mutex", "none")}
        med = {arch: statistics.median(r[0] for r in v) for arch, v in runs.items()}
        ratios = [p[0] / m[0] for p, m in zip(runs["pspat"], runs["mutex"]) if m[0] > 0]
        throughput.append({"clients": c, "pspat_mpps": round(med["pspat"], 2), "mutex_mpps": round(med["mutex"], 2), "none_mpps": round(med["none"], 1),
                           "pspat_over_mutex": round(statistics.median(ratios), 1), "arbiter_busy_mdps": round(statistics.median(r[1] for r in runs["pspat"]), 1)})
        for arch in ("pspat", "mutex", "none"):
            rows.append({"test": "throughput", "scheduler": arch, "x": f"{c} clients", "metric": "Mpps", "value": round(med[arch], 2),
                         "published": {"pspat": _published("fig7", "arbiter transmits", "throughput saturation"),
                                       "mutex": _published("fig7", "TC QFQ", "throughput saturation"),
                                       "none": ""}[arch] if c == CLIENTS[-1] else ""})
    frames: list[dict[str, Any]] = []
    if pspat_frames.available():
        progress("throughput with real frames on a veth")
        for c in FRAME_CLIENTS:
            points = {arch: [pspat_frames.measure(arch, c, seconds) for _ in range(reps)] for arch in pspat_frames.ARCHITECTURES}
            by_arch = {arch: [m["mpps"] for m in v] for arch, v in points.items()}
            med = {arch: statistics.median(v) for arch, v in by_arch.items()}
            frames.append({"clients": c, **{f"{arch}_mpps": round(med[arch], 3) for arch in by_arch},
                           **{f"{arch}_fewest_frames": min(int(m["frames"]) for m in v) for arch, v in points.items()},
                           "pspat_over_tc": round(statistics.median(p / t for p, t in zip(by_arch["pspat"], by_arch["tc"]) if t > 0), 2)})
            for arch in pspat_frames.ARCHITECTURES:
                rows.append({"test": "throughput, real frames", "scheduler": arch, "x": f"{c} clients", "metric": "Mpps on a veth (median; range)",
                             "value": f"{med[arch]:.3f} ({min(by_arch[arch]):.3f}–{max(by_arch[arch]):.3f})",
                             "published": {"pspat": _published("fig7", "arbiter transmits", "throughput saturation"),
                                           "tc": _published("fig7", "TC QFQ", "throughput saturation"), "none": ""}[arch] if c == FRAME_CLIENTS[-1] else ""})
    progress("the 10:1 share under overload")
    # What the mutex scheduler sustains in the share test's own harness (two greedy clients, an unlimited link).
    def sustained(scheduler: str) -> float:
        runs = [_core.pspat_share(scheduler, "drr", float("inf"), seconds, WINDOW_MS) for _ in range(reps)]
        return statistics.median(sum(map(sum, w)) / (len(w) * WINDOW_MS * 1e-3) for w in runs)

    mutex_pps, pspat_pps = sustained("mutex"), sustained("pspat")
    share = []
    share_runs, victim_runs = (1, 1) if quick else (SHARE_RUNS, VICTIM_RUNS)

    def add_share(scheduler: str, overload: float, link_pps: float, available_pps: float, runs: list[list[list[int]]], of: str) -> None:
        """A share row from `runs` (each a run's windows) over a link of `link_pps`,
        where the scheduler sustains `available_pps` (its headroom: the second over the first)."""
        def error(w: list[int]) -> float:
            return max(abs(w[0] / sum(w) - 10 / 11) / (10 / 11), abs(w[1] / sum(w) - 1 / 11) / (1 / 11)) * 100 if sum(w) else 100.0

        windows = [w for run in runs for w in run]
        errors = [error(w) for w in windows]
        carried = statistics.median(sum(w) for w in windows) / (WINDOW_MS * 1e-3) / link_pps if windows else 0.0
        held_per_run = [sum(error(w) <= SHARE_TOLERANCE_PCT for w in run) for run in runs]
        headroom = available_pps / link_pps if link_pps else 0.0
        share.append({"scheduler": scheduler, "overload": overload, "link_mpps": round(link_pps / 1e6, 3), "headroom": round(headroom, 2),
                      "max_share_error_pct": round(max(errors, default=100.0), 1), "median_share_error_pct": round(statistics.median(errors), 1) if errors else 100.0,
                      "windows_held": sum(held_per_run), "held_per_run": held_per_run, "link_carried": round(carried, 2), "windows": len(windows)})
        per_run = ", ".join(f"{h}/{len(run)}" for h, run in zip(held_per_run, runs))
        rows.append({"test": "share", "scheduler": scheduler, "x": f"{overload:.0%} of {of} (headroom ×{headroom:.2f})",
                     "metric": "windows within 5% of 10:1, per run (worst error %)", "value": f"{per_run} ({max(errors, default=100.0):.1f})",
                     "published": _published("sec6.4", "TC two flows", "rate share holds up to") if scheduler != "pspat" else ""})

    for scheduler, available in (("pspat", pspat_pps), ("mutex", mutex_pps)):
        for overload in OVERLOADS:
            link_pps = mutex_pps * overload
            per_run = [_core.pspat_share(scheduler, "drr", link_pps, max(seconds, 0.3) * 2, WINDOW_MS) for _ in range(share_runs)]
            add_share(scheduler, overload, link_pps, available, per_run, "mutex max")
    htb_pps = 0.0
    if htb_share.available():
        # Linux HTB on a veth pair, its link set against what two senders put through it unshaped.
        progress("the 10:1 share on Linux HTB (veth)")
        unshaped = htb_share.windows(None, max(seconds, 0.3) * 2, WINDOW_MS)
        htb_pps = statistics.median(sum(w) for w in unshaped) / (WINDOW_MS * 1e-3) if unshaped else 0.0
        for overload in HTB_OVERLOADS if htb_pps else []:
            add_share("htb", overload, htb_pps * overload, htb_pps, [htb_share.windows(htb_pps * overload, max(seconds, 0.3) * 2, WINDOW_MS)], "veth max")

    progress("a victim's latency")
    victim = []
    # WF²Q+ and QFQ, and DRR as the paper's Table 3 (a flow that wakes waits a turn behind each backlogged one).
    for algorithm in ("wf2q+", "qfq", "drr"):
        for scheduler in ("pspat", "mutex"):
            for n in QUICK_INTERFERERS if quick else INTERFERERS:
                # Each run beside its own run alone, so that a ratio pairs two runs of one moment.
                trials: list[dict[str, Any]] = []
                for _ in range(victim_runs):
                    alone_q, _, alone_off = _core.pspat_victim(scheduler, algorithm, 0, VICTIM_PPS, LINK_10G, seconds * 3)
                    q, packets, off = _core.pspat_victim(scheduler, algorithm, n, VICTIM_PPS, LINK_10G, seconds * 3)
                    trials.append({"q": q, "alone": alone_q, "packets": packets, "stalled": max(off or 0.0, alone_off or 0.0) > STALL_PCT})
                ratios = sorted(r["q"][3] / r["alone"][3] for r in trials if r["alone"][3] > 0)
                median = {k: statistics.median(r["q"][i] for r in trials) for i, k in enumerate(("p10_us", "p50_us", "p90_us", "p99_us", "max_us"))}
                stalled = [i + 1 for i, r in enumerate(trials) if r["stalled"]]
                victim.append({"scheduler": scheduler, "algorithm": algorithm, "interferers": n, **{k: round(v, 2) for k, v in median.items()},
                               "p99_alone_us": round(statistics.median(t["alone"][3] for t in trials), 2), "packets": sum(t["packets"] for t in trials),
                               "runs": len(trials), "p99_ratio": round(statistics.median(ratios), 2) if ratios else 0.0,
                               "p99_ratio_min": round(ratios[0], 2) if ratios else 0.0, "p99_ratio_max": round(ratios[-1], 2) if ratios else 0.0,
                               "stalled_runs": stalled if scheduler == "pspat" else None})
                v = victim[-1]
                published = _published("table3", "PSPAT @ 10G" if scheduler == "pspat" else "TC @ 10G", "latency p10/p50/p90/p99")
                touched = f"; runs a stall touched: {', '.join(map(str, stalled))}" if stalled else ""
                rows.append({"test": "victim", "scheduler": f"{scheduler} {algorithm}", "x": f"{n} interferers",
                             "metric": f"p99 µs (alone); p99 / alone over {v['runs']} runs, median (range)",
                             "value": f"{v['p99_us']:.2f} ({v['p99_alone_us']:.2f}); ×{v['p99_ratio']:.2f} (×{v['p99_ratio_min']:.2f}–×{v['p99_ratio_max']:.2f}){touched}",
                             "published": published if algorithm == "drr" else ""})

    report = {"arbiter_mdps": round(arbiter_mdps, 1), "mutex_sustained_mpps": round(mutex_pps / 1e6, 2), "pspat_sustained_mpps": round(pspat_pps / 1e6, 2),
              "htb_veth_mpps": round(htb_pps / 1e6, 3), "cost_model": {"scan_ns_per_client": round(a_ns, 2), "ns_per_packet": round(b_ns, 2), "predicted": predicted},
              "throughput": throughput, "throughput_frames": frames, "share": share, "victim": victim, "seconds": seconds, "reps": reps, "rows": rows}
    output.write(out, "pspat", report, markdown, lambda _rows, png: plot(report, png))
    return report


def headline(report: dict[str, Any]) -> output.Headline:
    """The arbiter's decisions/s and PSPAT over the mutex at the most clients."""
    top = report["throughput"][-1]

    def held(scheduler: str) -> str:
        rows = [s for s in report["share"] if s["scheduler"] == scheduler]
        return f"{sum(s['windows_held'] for s in rows)}/{sum(s['windows'] for s in rows)}"

    htb = f", Linux HTB {held('htb')} (of its veth rate)" if any(s["scheduler"] == "htb" for s in report["share"]) else ""
    return output.Headline(f"arbiter {report['arbiter_mdps']} M decisions/s (DRR); {top['clients']} clients: PSPAT {top['pspat_over_mutex']}× the mutex; "
                           f"10 ms windows holding 10:1 up to 2× the mutex's rate: PSPAT {held('pspat')}, mutex {held('mutex')}{htb}",
                           "userspace 30–40 M decisions/s; PSPAT ≥ 2× TC; TC's shares break past its rate")


def markdown(rows: list[dict[str, Any]]) -> str:
    """One table per test: our figure and the paper's where a row corresponds."""
    lines: list[str] = []
    for test in dict.fromkeys(r["test"] for r in rows):
        lines += ["", f"**{test}**", "", "| scheduler | configuration | metric | ours | paper |", "|---|---|---|---|---|"]
        lines += [f"| {r['scheduler']} | {r['x']} | {r['metric']} | {r['value']} | {r['published']} |" for r in rows if r["test"] == test]
    return "\n".join(lines).strip() + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """Throughput against clients, windows holding 10:1 against the link rate, victim p99 against interferers."""
    from sluice.plot import save, subplots

    fig, axes = subplots(1, 3, figsize=(13, 3.6))
    clients = [t["clients"] for t in report["throughput"]]
    for scheduler in ("pspat", "mutex", "none"):
        axes[0].plot(clients, [t[f"{scheduler}_mpps"] for t in report["throughput"]], "o-", label=scheduler)
    axes[0].set_xscale("log", base=2)
    axes[0].set_yscale("log")
    axes[0].set_xlabel("clients")
    axes[0].set_ylabel("Mpps (no-op transmit)")
    for scheduler in ("pspat", "mutex"):
        share = [s for s in report["share"] if s["scheduler"] == scheduler]
        axes[1].plot([100 * s["overload"] for s in share], [100 * s["windows_held"] / max(s["windows"], 1) for s in share], "o-", label=scheduler)
    axes[1].set_ylim(-5, 105)
    axes[1].set_xlabel("link rate, % of what the mutex sustains")
    axes[1].set_ylabel("10 ms windows holding 10:1 within 5% (%)")
    for scheduler, algorithm in dict.fromkeys((v["scheduler"], v["algorithm"]) for v in report["victim"]):
        victim = [v for v in report["victim"] if (v["scheduler"], v["algorithm"]) == (scheduler, algorithm)]
        axes[2].plot([v["interferers"] for v in victim], [v["p99_us"] for v in victim], "o-", label=f"{scheduler} {algorithm}")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("greedy interferers")
    axes[2].set_ylabel("victim p99 latency (µs)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save(fig, path)
