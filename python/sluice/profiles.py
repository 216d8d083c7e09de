"""Cost models (T0 ns per batch, T1 ns per packet) of the NFs, for pipelines.

Measured by `sluice profile`, which writes them to `profile_path()`; the
CLI's `run` and `experiment` measure every kind once when no profile file
exists yet. Where no measurement exists the reference values of
PIPELINES.md are used (and said once on stderr); NFs with neither get no
profile, so no controlled buffer.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

#: Reference costs (ns) from PIPELINES.md, for L2L3 and GW.
REFERENCE: dict[str, tuple[float, float]] = {"lpm": (68.0, 27.0), "acl": (122.0, 30.0), "static_nat": (43.0, 21.0)}
#: Reference costs (ns) from PIPELINES.md, for VRF.
REFERENCE_VRF: dict[str, tuple[float, float]] = {"lpm": (100.0, 20.0), "acl": (100.0, 15.0)}

#: Largest batch size `sluice profile` times by default (pkt).
MAX_BATCH = 32
#: Samples (of 32 walker rounds) `sluice profile` times per batch size by default.
REPS = 200

_warned: set[str] = set()


def profile_path() -> Path:
    """Where `sluice profile` writes and pipelines read: $SLUICE_PROFILE, else ~/.cache/sluice/profile.json."""
    env = os.environ.get("SLUICE_PROFILE")
    return Path(env) if env else Path.home() / ".cache" / "sluice" / "profile.json"


def load() -> dict[str, dict[str, float]]:
    """The measured profiles, by NF kind ({} when there are none; a file
    that cannot be read as one is said so, once, and counts as none)."""
    path = profile_path()
    try:
        data = json.loads(path.read_text())
        nfs = data.get("nfs") if isinstance(data, dict) else None
        if not (isinstance(nfs, dict) and all(isinstance(p, dict) and {"t0_ns", "t1_ns"} <= p.keys() for p in nfs.values())):
            raise ValueError('not {"nfs": {KIND: {"t0_ns": …, "t1_ns": …}}}')
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        if str(path) not in _warned:
            _warned.add(str(path))
            print(f"sluice: the NF cost profile {path} is not one ({e}); it is ignored (`sluice profile` writes a new one)", file=sys.stderr)
        return {}
    measured: dict[str, dict[str, float]] = nfs
    return measured


def save(report: dict[str, Any]) -> Path:
    """Merges a profiler report into the profile file; returns its path."""
    path = profile_path()
    nfs = load()
    nfs.update(report["nfs"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"nfs": nfs}, indent=1))
    return path


def measure(kinds: Optional[list[str]] = None, max_batch: Optional[int] = None, reps: Optional[int] = None) -> dict[str, Any]:
    """Runs the profiler on `kinds` (default: every kind it knows); returns
    its report {"nfs": {KIND: {"t0_ns", "t1_ns", "r2", "beta"}}}. Raises
    ValueError for a kind it has no setup for."""
    from sluice import _core

    nfs: dict[str, Any] = {}
    # A kind at a time: Ctrl-C stops between kinds, within a second.
    for kind in kinds or _core.profiled_kinds():
        nfs.update(json.loads(_core.profile([kind], max_batch or MAX_BATCH, reps or REPS))["nfs"])
    return {"nfs": nfs}


def ensure_measured() -> None:
    """Measures every NF kind the profiler knows and saves the profile, once
    per machine: only when no profile file exists (an existing one, even
    an empty one, is used as it is)."""
    if profile_path().exists():
        return
    print(f"sluice: no NF cost profile at {profile_path()}; measuring one now (`sluice profile`, a few seconds)", file=sys.stderr)
    save(measure())


def cost(kind: str, reference: Optional[dict[str, tuple[float, float]]] = None) -> Optional[tuple[float, float]]:
    """(T0 ns, T1 ns) of an NF of `kind`: measured, else the reference
    (`reference`, else L2L3/GW's), else None."""
    measured = load().get(kind)
    if measured is not None:
        return measured["t0_ns"], measured["t1_ns"]
    ref = (reference or REFERENCE).get(kind)
    if ref is not None:
        if kind not in _warned:
            _warned.add(kind)
            print(f"sluice: no measured profile for {kind}; using the reference cost (run `sluice profile`)", file=sys.stderr)
    return ref
