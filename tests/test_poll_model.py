"""The learned poll policy's model: what the engine evaluates is what
scikit-learn predicts, a bad model file is named, training writes a model
the engine reads."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

from sluice import Pipeline, _core
from sluice.lab import poll_worker
from sluice.poll_model import DEFAULT, HISTORY, LOGGED, export, features
from sluice.pipelines import rc
from sluice.poll import PollSettings

ROUNDS = 16


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """Round sizes 0..64 (mostly small, as at light load), idle times 0..2000 µs and rates 0..20 pkt/µs."""
    sizes = np.minimum(rng.geometric(0.3, size=(n, ROUNDS)) - 1, 64).astype(np.float64)
    return np.hstack([sizes, rng.uniform(0, 2000, size=(n, 1)), rng.uniform(0, 20, size=(n, 1))])


@pytest.mark.parametrize("kind", ["forest", "boosting"])
def test_the_engine_predicts_what_scikit_learn_predicts_on_10000_vectors(tmp_path: Path, kind: str) -> None:
    rng = np.random.default_rng(7)
    x = _vectors(rng, 4000)
    y = np.clip(x[:, -2] / 4 - 10 * x[:, 0] - 20 * x[:, -1] + rng.normal(0, 20, len(x)), 0, 500)
    model = (RandomForestRegressor(n_estimators=16, max_depth=10, random_state=1) if kind == "forest"
             else GradientBoostingRegressor(n_estimators=40, max_depth=4, random_state=1)).fit(x, y)
    path = tmp_path / "m.json"
    export(model, ROUNDS, path, {"test": kind})
    probe = _vectors(rng, 10_000)
    # Some features exactly at split thresholds: ≤ goes left in both.
    first = model.estimators_[0] if kind == "forest" else model.estimators_[0][0]
    split = first.tree_.feature[0]
    probe[:100, split] = first.tree_.threshold[0]
    ours = np.array(_core.poll_model_predict(str(path), probe.tolist()))
    np.testing.assert_allclose(ours, model.predict(probe), rtol=1e-9, atol=1e-9)


def test_a_missing_or_corrupt_model_is_named_in_the_error(tmp_path: Path) -> None:
    p = rc(2)
    p.set_poll(PollSettings("learned", model=str(tmp_path / "absent.json")))
    with pytest.raises(ValueError, match=r"poll model .*absent\.json: cannot read it"):
        p.validate()
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text(DEFAULT.read_text()[:500])
    p.set_poll(PollSettings("learned", model=str(corrupt)))
    with pytest.raises(ValueError, match=r"poll model .*corrupt\.json: not a Sluice poll model"):
        p.validate()
    wrong = tmp_path / "wrong.json"
    doc = json.loads(DEFAULT.read_text())
    wrong.write_text(json.dumps({**doc, "rounds": doc["rounds"] + 1}))
    p.set_poll(PollSettings("learned", model=str(wrong)))
    with pytest.raises(ValueError, match=r"poll model .*wrong\.json: its trees read"):
        p.validate()


def test_the_shipped_model_is_the_learned_policys_default_and_reads_logged_rows() -> None:
    p = rc(2)
    p.set_poll("learned")
    assert p.spec()["poll"]["model"] == str(DEFAULT)
    p.validate()
    rounds = json.loads(DEFAULT.read_text())["rounds"]
    logged = np.zeros((3, LOGGED))
    logged[:, HISTORY] = [0.0, 100.0, 5000.0]
    sleeps = _core.poll_model_predict(str(DEFAULT), features(logged, rounds).tolist())
    assert all(0 <= s <= 1000 for s in sleeps), sleeps
    with pytest.raises(ValueError, match="reads"):
        _core.poll_model_predict(str(DEFAULT), [[0.0] * 3])


def test_a_worker_logs_what_the_learned_policy_reads(tmp_path: Path) -> None:
    p = poll_worker.pipeline({"policy": "busy", "log_features": True}, 0.0001, 10e6)
    r = p.run("null", periods=2, period_ms=50, backend="engine")
    rows = [row for q in r.periods for row in q["workers"][0].get("poll_features", [])]
    assert rows and all(len(row) == LOGGED for row in rows)
    # At 1 kpps a busy worker finds most rounds empty: idle times grow between packets.
    assert max(row[HISTORY] for row in rows) > 10
    # And the rate it reads is the offered one: 1 kpps is 0.001 pkt/µs.
    assert 0.0005 < statistics.median(row[HISTORY + 1] for row in rows) < 0.002


def test_each_worker_may_poll_its_own_way() -> None:
    # Two independent chains, one a worker: worker 1 sleeps, worker 0 spins.
    p = Pipeline("two")
    for w in (0, 1):
        p.connect(p.source(f"src{w}", worker=w), p.sink(f"out{w}", worker=w))
        p.flow(f"f{w}", [f"src{w}", f"out{w}"], slo_us=10_000, rate_pps=1000)
    p.set_poll("learned", worker=1)
    assert p.spec()["worker_poll"]["1"]["model"] == str(DEFAULT)
    r = p.run("null", periods=3, period_ms=50, backend="engine")
    assert r.summary["lossless"]
    # What each decided: worker 0 never waits, worker 1 asks to sleep through most of each period.
    waits = [sum(q["workers"][w]["waits"] for q in r.periods[1:]) for w in (0, 1)]
    asleep = statistics.fmean(q["workers"][1]["waits"] * q["workers"][1]["wait_asked_us"] / 50e3 for q in r.periods[1:])
    assert waits[0] == 0 and asleep > 0.5, (waits, asleep)
    p.set_poll("busy", worker=2)
    with pytest.raises(ValueError, match="worker_poll: worker 2: the pipeline has 2 workers"):
        p.validate()
