"""`sluice train polling`: trains the learned poll policy's trees by trial,
as the adaptive-polling paper did, on the worker of `sluice experiment
polling` (L2L3(4), one worker, the emulated NIC's receive queues).

Each iteration runs the paper's six load scenarios (2, 10, 500, 1000, 5000
and 7500 Mbit/s of a 10 Gbit/s link), 2500 (a quarter of the link, where
the experiment's headline is measured) and 9000 (near saturation, where a
worker rarely drains its input), as shares of what a busy worker
carries here) twice: under a model fitted to each scenario's best sleep so
far and under one fitted to a candidate sleep drawn around it with the
paper's rule (normal, standard deviation s = 100·p_deviate⁵ + c_explore,
p_deviate falling as the reward rises). The workers log what the model reads at each
round that drains its input (short of a full batch, under load too); a candidate that scores better becomes the best, and
the next models are fitted to the logged features labelled with each
scenario's best and next candidate.

Three changes make it converge where the paper's did not (its Figure 3):
- the draw is centred on the best sleep so far, not the last one (the
  paper's walk moves whether or not the last step helped, by at least
  c_explore, so it never settles), and the best is measured again beside
  each candidate, so one lucky run does not hold the search (its reward is
  the median of its last `BEST_RUNS` runs, so one unlucky run does not
  lose it either); a candidate
  replaces the best only if it scores `MARGIN` more or, if it sleeps
  longer, no less than `MARGIN` below (on the flat top of the reward noise
  alone moved a settled best, and three trainings ended 94–383 µs apart at
  75% load; see `better`), and only if its model slept what it was
  fitted to (off the features it was fitted on, a model may not: such a
  run says nothing of its target);
- s is in % of the range in octaves (1 µs to the longest sleep), where the
  paper's was in its sleep's units: a worker's CPU falls about as the
  inverse of its sleep, so equal ratios of sleep change the reward alike;
  c_explore is 10 (the paper's 5 left steps of half an octave, which this
  machine's noise hides);
- the reward is ours, bounded by construction and by what a user asks of a
  worker: r = 100·(delivered share) − 50·(CPU share) − 50·(the p99's excess
  over half the SLO, as a share of that half, at most 1), in [−50, 100]:
  delay within half the SLO costs nothing, so the worker sleeps as long as
  the SLO allows and no longer than loses packets. The paper's reward,
  −0.5·latency_µs + 4000·pps / (cycles·10⁻⁷), is reported beside it: with
  cycles a second it lands far outside the [−10, 120] its p_deviate
  assumes at every load (so p_deviate clips and the search never
  narrows), and it has no term for loss or SLOs.

The model reads the last 100 round sizes, as the paper's, or 16, whichever
predicts the final sleeps better on features it has not seen (both scores
are in the report), the idle time, and the rate packets arrived at over
the last 10–20 ms. Without the rate the features do not tell
the loads apart: what a round after a sleep brings is the rate times the
model's own last sleep, so 500 Mbit/s after a long sleep looks like
1000 Mbit/s after a short one, and a model fitted to both sleeps between
their targets whatever either asks (the 1000 Mbit/s scenario then never
settled: its search compared sleeps the model did not take). Above the
highest rate it was fitted at, the trees answer as there; the worker bounds
every answer by the slack and the queues' room at the measured rate.

Seeded: the draws and the trees follow `seed`. The runs are measurements
on a shared machine, so two trainings see different numbers; given the
same logged features and rewards, the same model results."""

from __future__ import annotations

import json
import math
import random
import statistics
from pathlib import Path
from typing import Any, Callable

from sluice.lab import poll_worker
from sluice.poll_model import LOGGED, export, features
from sluice.poll import PollSettings

#: The paper's scenarios (Mbit/s of a 10 Gbit/s link), run as these shares of the saturation rate.
SCENARIOS_MBPS = [2, 10, 500, 1000, 2500, 5000, 7500, 9000]
LINK_MBPS = 10_000
#: The longest sleep the policy takes (µs), the shortest (a target below it polls) and where training starts.
MAX_SLEEP_US = 500.0
MIN_SLEEP_US = 1.0
START_US = 50.0
#: Our reward's range, and the paper's exploration rule's constants.
R_MIN, R_MAX = -50.0, 100.0
C_EXPLORE = 10.0
#: Round sizes a model may read: the paper's 100, or fewer.
ROUNDS = (100, 16)
#: Reward points a candidate must win by: about twice the spread of one sleep's reward between runs here.
MARGIN = 1.0
#: The best sleep's reward is the median of its last runs (up to this many):
#: a run this machine stalled scores the best far below what it gives, and
#: one such run against a candidate's would hand the search to the candidate.
BEST_RUNS = 5
#: A run tested its target if its mean sleep is within this share of it (and 1 µs).
ON_TARGET_SHARE = 0.25
#: A scenario has settled when its best sleep moved less than this share over the last `SETTLE_ITERATIONS`.
SETTLE_SHARE = 0.2
SETTLE_ITERATIONS = 5


def reward(m: dict[str, Any], offered_pps: float) -> float:
    """Ours: delivery, CPU and the p99 against the SLO, in [R_MIN, R_MAX];
    the p99 of the median period, so that one period in which this
    machine stalled the worker does not decide a comparison."""
    delivered = 1.0 - float(m["loss_pct"]) / 100 if offered_pps > 0 else 1.0
    half = poll_worker.SLO_US / 2
    p99_us = statistics.median(float(q["p99_us"]) for q in m["periods"][1:])
    return 100 * delivered - 50 * float(m["cpu_pct"]) / 100 - 50 * min(1.0, max(0.0, p99_us - half) / half)


def paper_reward(m: dict[str, Any], cpu_hz: float) -> float:
    """The paper's: −0.5·mean latency (µs) + 4000·throughput (pkt/s) / (cycles/s · 10⁻⁷)."""
    cycles = max(float(m["cpu_pct"]) / 100 * cpu_hz, 1.0)
    return -0.5 * float(m["mean_us"]) + 4000 * float(m["mpps"]) * 1e6 / (cycles * 1e-7)


def better(candidate: float, best: float, longer: bool) -> bool:
    """Whether a candidate's reward beats the best's: by `MARGIN`, or, for a
    longer sleep, by no less than −`MARGIN` (at a tie within this machine's
    noise the longer sleep wins: a worker's CPU only falls as its sleeps
    grow, and the policy's bounds keep a sleep within the SLOs and the
    queues' room, so where the reward is flat the search climbs to the
    longest sleep the bounds allow instead of settling wherever noise left it)."""
    return candidate > best + MARGIN or (longer and candidate >= best - MARGIN)


def next_target(best_us: float, best_reward: float, rng: random.Random) -> float:
    """The paper's draw around the best sleep, in octaves: wide while the
    reward is low, down to c_explore % of the range; 0 (poll) below the shortest sleep."""
    p_deviate = min(1.0, max(0.0, 1 - (best_reward - R_MIN) / (R_MAX - R_MIN)))
    octaves = math.log2(MAX_SLEEP_US / MIN_SLEEP_US)
    at = rng.gauss(math.log2(max(best_us, MIN_SLEEP_US) / MIN_SLEEP_US), (100 * p_deviate ** 5 + C_EXPLORE) / 100 * octaves)
    return 0.0 if at < 0 else MIN_SLEEP_US * 2 ** min(at, octaves)


def tested(m: dict[str, Any], target_us: float) -> bool:
    """Whether the worker of run `m` slept what its model was fitted to sleep."""
    return abs(float(m["wait_asked_us"]) - target_us) <= ON_TARGET_SHARE * target_us + MIN_SLEEP_US


def fit(x: Any, y: Any, seed: int) -> Any:
    """A small random forest: 16 trees of depth ≤ 8 (a decision takes under 200 ns here)."""
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=16, max_depth=8, min_samples_leaf=4, random_state=seed).fit(x, y)


def _cpu_hz() -> float:
    """This machine's nominal clock (Hz), for the paper's reward; 3 GHz where it does not say."""
    try:
        mhz = [float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("cpu MHz")]
        return mhz[0] * 1e6 if mhz else 3e9
    except OSError:
        return 3e9


def train(out: Path, model_path: Path, iterations: int, seed: int, quick: bool, progress: Callable[[str], None]) -> dict[str, Any]:
    """Trains for `iterations`, writes the model to `model_path` and
    polling-training.{json,png} into `out`; returns the report."""
    import numpy as np

    rng = random.Random(seed)
    periods, period_ms = (2, 50.0) if quick else (3, 100.0)
    progress("busy polling's saturation rate")
    saturation_pps = poll_worker.measure(poll_worker.pipeline(poll_worker.POLICIES["busy"], 0.0, 0.0), periods, period_ms)["mpps"] * 1e6
    loads = [mbps / LINK_MBPS for mbps in SCENARIOS_MBPS]
    cpu_hz = _cpu_hz()
    rounds = ROUNDS[0]
    best = [START_US] * len(loads)
    # The rewards of each scenario's best sleep, run by run since it became the best.
    best_rewards: list[list[float]] = [[] for _ in loads]
    candidates = [next_target(START_US, R_MIN, rng) for _ in loads]
    history: list[dict[str, Any]] = []

    def run(model: Any, which: str, it: int) -> list[dict[str, Any]]:
        export(model, rounds, model_path, {"iteration": it, "sleeps": which})
        poll = PollSettings("learned", max_sleep_us=MAX_SLEEP_US, model=str(model_path), log_features=True).spec()
        measured = []
        for s, load in enumerate(loads):
            progress(f"iteration {it + 1}/{iterations}, {which}: {SCENARIOS_MBPS[s]} Mbit/s")
            m = poll_worker.measure(poll_worker.pipeline(poll, load, saturation_pps), periods, period_ms)
            measured.append({**m, "reward": reward(m, load * saturation_pps), "paper_reward": paper_reward(m, cpu_hz)})
        return measured

    # What the worker sees under a model that sleeps START_US after every round that drains the input.
    start = run(fit(features(np.zeros((1, LOGGED)), rounds), [START_US], seed), "start", -1)
    # A scenario whose worker never drained its input logged nothing: it adds no rows to a fit.
    logged = [np.asarray(m["features"], dtype=np.float64).reshape(-1, LOGGED) for m in start]
    for it in range(iterations):
        runs = {which: run(_fit_scenarios(logged, targets, rounds, seed), which, it) for which, targets in (("best", best), ("candidate", candidates))}
        row = []
        for s in range(len(loads)):
            b, c = runs["best"][s], runs["candidate"][s]
            row.append({"mbps": SCENARIOS_MBPS[s], "best_us": round(best[s], 2), "candidate_us": round(candidates[s], 2),
                        "slept_us": round(b["wait_asked_us"], 2), "candidate_slept_us": round(c["wait_asked_us"], 2),
                        "reward": round(b["reward"], 2), "candidate_reward": round(c["reward"], 2),
                        "paper_reward": round(b["paper_reward"], 1), **{k: round(b[k], 3) for k in ("cpu_pct", "mpps", "loss_pct", "mean_us", "p99_us")}})
            best_rewards[s] = (best_rewards[s] + [b["reward"]])[-BEST_RUNS:]
            won = c if tested(c, candidates[s]) and better(c["reward"], statistics.median(best_rewards[s]), candidates[s] > best[s]) else b
            if won is c:
                best[s], best_rewards[s] = candidates[s], [c["reward"]]
            logged[s] = np.vstack([np.asarray(r["features"]) for r in (b, c) if r["features"]] or [logged[s]])
            candidates[s] = next_target(best[s], won["reward"], rng)
        history.append({"iteration": it, "runs": row})
    fit_scores = {r: _held_out_score(logged, best, r, seed) for r in ROUNDS}
    rounds = max(ROUNDS, key=lambda r: (fit_scores[r], -r))  # at a tie, the fewer
    window = history[-SETTLE_ITERATIONS:] if len(history) >= SETTLE_ITERATIONS else []
    # A scenario whose worker never drained its input never asks the model: nothing to settle (None).
    settled = [None if window and all(h["runs"][s]["slept_us"] == 0 for h in window)
               else bool(window) and _spread([h["runs"][s]["best_us"] for h in window]) < SETTLE_SHARE for s in range(len(loads))]
    report = {
        "seed": seed, "iterations": iterations, "rounds": rounds, "saturation_mpps": round(saturation_pps / 1e6, 3),
        "scenarios_mbps": SCENARIOS_MBPS, "loads": loads, "best_us": [round(b, 2) for b in best], "settled": settled,
        "held_out_r2": {f"{r}_rounds": round(v, 3) for r, v in fit_scores.items()}, "history": history,
    }
    export(_fit_scenarios(logged, best, rounds, seed), rounds, model_path,
           {k: report[k] for k in ("seed", "iterations", "saturation_mpps", "scenarios_mbps", "best_us", "settled", "held_out_r2")})
    out.mkdir(parents=True, exist_ok=True)
    (out / "polling-training.json").write_text(json.dumps(report, indent=1))
    plot(report, out / "polling-training.png")
    return report


def train_seeds(out: Path, model_path: Path, iterations: int, seeds: list[int], quick: bool, progress: Callable[[str], None]) -> dict[str, Any]:
    """Trains once per seed (the first's model to `model_path`, its report
    into `out`; the others' into `out/seed<k>/`) and writes how far apart
    their sleeps ended into `out/polling-convergence.json`; returns
    {"reports", "convergence"}."""
    reports = []
    for i, seed in enumerate(seeds):
        where = (out, model_path) if i == 0 else (out / f"seed{seed}", out / f"seed{seed}" / "polling-model.json")
        where[0].mkdir(parents=True, exist_ok=True)
        reports.append(train(where[0], where[1], iterations, seed, quick, _prefixed(progress, f"seed {seed}: ")))
    result = {"seeds": seeds, "reports": reports, "convergence": convergence(reports)}
    (out / "polling-convergence.json").write_text(json.dumps(result["convergence"], indent=1))
    return result


def _prefixed(progress: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    """`progress` with `prefix` before each message."""
    return lambda message: progress(prefix + message)


def convergence(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per scenario, what each training's worker slept at its last
    iteration (µs) and their spread ((max − min) / max): the policy's
    sleeps, its bounds applied, as a worker takes them."""
    out = []
    for s, mbps in enumerate(reports[0]["scenarios_mbps"]):
        slept = [r["history"][-1]["runs"][s]["slept_us"] for r in reports]
        out.append({"mbps": mbps, "slept_us": slept, "spread": round(_spread(slept), 3)})
    return out


def _labelled(logged: list[Any], targets: list[float], rounds: int) -> tuple[Any, Any]:
    """Each scenario's logged features, labelled with its target sleep."""
    import numpy as np

    x = np.vstack([features(rows, rounds) for rows in logged])
    y = np.concatenate([np.full(len(rows), t) for rows, t in zip(logged, targets)])
    if not len(y):
        raise RuntimeError("no scenario's worker drained its input, so none asked the model: nothing to fit it to")
    return x, y


def _fit_scenarios(logged: list[Any], targets: list[float], rounds: int, seed: int) -> Any:
    """A model fitted to each scenario's logged features labelled with its target."""
    return fit(*_labelled(logged, targets, rounds), seed)


def _held_out_score(logged: list[Any], targets: list[float], rounds: int, seed: int) -> float:
    """How well a model reading `rounds` round sizes predicts the targets
    from features it has not seen (R² on a held-out half; 1 where the targets are all one)."""
    import numpy as np

    x, y = _labelled(logged, targets, rounds)
    order = np.random.default_rng(seed).permutation(len(y))
    train, test = order[: len(y) // 2], order[len(y) // 2:]
    if len(test) < 2 or np.var(y[test]) == 0:
        return 1.0
    return float(fit(x[train], y[train], seed).score(x[test], y[test]))


def _spread(values: list[float]) -> float:
    """(max − min) / max; 0 for values all 0."""
    top = max(values)
    return (top - min(values)) / top if top > 0 else 0.0


def plot(report: dict[str, Any], path: Path) -> None:
    """The sleep each scenario's best model took and its best target (where the worker was ever idle), over iterations."""
    from sluice.plot import save, subplots

    fig, ax = subplots(1, 1, figsize=(8, 4))
    its = [h["iteration"] + 1 for h in report["history"]]
    for s, mbps in enumerate(report["scenarios_mbps"]):
        ax.plot(its, [h["runs"][s]["slept_us"] for h in report["history"]], "o-", color=f"C{s}", ms=3, label=f"{mbps} Mbit/s")
        if report["settled"][s] is not None:  # a worker never idle never asks the model: its target means nothing
            ax.plot(its, [h["runs"][s]["best_us"] for h in report["history"]], "--", color=f"C{s}", lw=1)
    ax.set(xlabel="training iteration", ylabel="sleep after a round that drained the input (µs)",
           title="learned polling: sleep taken (solid) and best target (dashed) per scenario")
    ax.legend(fontsize=7, ncol=2)
    save(fig, path)
