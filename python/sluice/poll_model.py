"""The learned poll policy's model file: a scikit-learn tree ensemble
written as the flat arrays the engine walks in the worker (the format is
described in crates/sluice-pipeline/src/poll_model_file.rs), and the features
it reads.

A decision after a round that drains the input sees the sizes of the worker's last
rounds (latest first), the time since its last round with work (µs) and
the rate packets arrived at over the last 10–20 ms (pkt/µs);
workers log those at each such round when asked (`log_features`), as rows
of `LOGGED` values: `HISTORY` sizes, then the idle time and the rate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluice import _core
from sluice.description import PollSettingsJson
from sluice.extras import missing

if TYPE_CHECKING:
    import numpy as np

#: The model file's format and version, as the engine reads them.
FORMAT = _core.POLL_MODEL_FORMAT
VERSION = _core.POLL_MODEL_VERSION
#: Round sizes a logged row holds (the engine's `poll::features::HISTORY`).
HISTORY = _core.POLL_HISTORY
#: Values in a logged row: the sizes, then the idle time (µs) and the arrival rate (pkt/µs).
LOGGED = HISTORY + 2
#: The model shipped in the package, trained on the development machine by `sluice train polling`.
DEFAULT = Path(__file__).parent / "models" / "polling.json"


def with_default_model(poll: PollSettingsJson) -> PollSettingsJson:
    """A description's `poll` object, the shipped model filled in where the learned policy names none."""
    if poll.get("policy") == "learned" and not poll.get("model"):
        return {**poll, "model": str(DEFAULT)}
    return poll


def features(logged: np.ndarray, rounds: int) -> np.ndarray:
    """The features of a model reading `rounds` round sizes, from logged rows."""
    import numpy as np

    logged = np.asarray(logged, dtype=np.float64).reshape(-1, LOGGED)
    return np.hstack([logged[:, :rounds], logged[:, HISTORY:]])


def export(model: Any, rounds: int, path: Path, trained: dict[str, Any]) -> None:
    """Writes a fitted `RandomForestRegressor` or `GradientBoostingRegressor`
    reading `rounds` round sizes, the idle time and the arrival rate to
    `path`, with `trained` (how it was trained) kept beside it."""
    try:
        import numpy as np
        from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    except ImportError as e:
        raise missing("lab", "training a poll model", e) from None

    if isinstance(model, RandomForestRegressor):
        trees, offset, scale = [e.tree_ for e in model.estimators_], 0.0, 1.0 / len(model.estimators_)
    elif isinstance(model, GradientBoostingRegressor):
        trees = [e[0].tree_ for e in model.estimators_]
        offset, scale = float(np.ravel(model.init_.constant_)[0]), float(model.learning_rate)
    else:
        raise TypeError(f"a poll model is a random forest or gradient boosting of regression trees, not {type(model).__name__}")
    if model.n_features_in_ != rounds + 2:
        raise ValueError(f"the model reads {model.n_features_in_} features; {rounds} round sizes, the idle time and the rate are {rounds + 2}")
    doc = {
        "format": FORMAT, "version": VERSION, "rounds": rounds, "features": int(model.n_features_in_), "offset": offset, "scale": scale,
        "trees": [{"feature": t.feature.tolist(), "threshold": t.threshold.tolist(), "left": t.children_left.tolist(),
                   "right": t.children_right.tolist(), "value": t.value[:, 0, 0].tolist()} for t in trees],
        "trained": trained,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
