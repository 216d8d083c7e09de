"""Group 2 of the robustness issue: nothing that passes validation
crashes, and sizes beyond the bounds are refused by name, fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ENGINE_AND_SIM

from sluice import Bypass, Pipeline
from sluice.embed import embed
from sluice.lab.mgw import mgw_instance
from sluice.nf import Dedup
from sluice.pipelines import mgw, rc


@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_a_chain_of_5000_modules_runs(backend: str) -> None:
    p = Pipeline("deep")
    path = [p.source("src")]
    for i in range(5000):
        m = p.module(f"m{i}", Bypass(1, 1))
        p.connect(path[-1], m)
        path.append(m)
    out = p.sink("out")
    p.connect(path[-1], out)
    p.flow("f", [*path, out], slo_us=100_000)
    s = p.run("null", periods=1, period_ms=10, backend=backend).summary
    assert s["delivered"] > 0 and s["lossless"], s


@pytest.mark.offline
def test_huge_worker_counts_are_refused_by_the_cli(sluice) -> None:  # type: ignore[no-untyped-def]
    sluice("run", "rc", "--n", "4", "--periods", "1", "--period-ms", "10", "--spare-workers", "100000").refused("--spare-workers", "100000")


@pytest.mark.parametrize("worker", [65536, 2**40, 2**63])
@pytest.mark.parametrize("backend", ENGINE_AND_SIM)
def test_huge_workers_in_the_api_are_refused_by_path(worker: int, backend: str) -> None:
    p = rc(4)
    p.set_worker("rc", worker)
    with pytest.raises(ValueError, match=r"modules\[2\]\.worker: .* is out of range 0..=255|modules\[2\]\.worker: invalid value"):
        p.run("null", periods=1, period_ms=5, backend=backend)


@pytest.mark.offline
def test_huge_workers_in_a_description_are_refused(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for key, value in (("spare_workers", 2**40), ("worker", 2**40)):
        spec = rc(4).spec()
        if key == "worker":
            spec["modules"][1]["worker"] = value
        else:
            spec[key] = value
        (tmp_path / "p.json").write_text(json.dumps(spec))
        sluice("run", "p.json", "--periods", "1", "--period-ms", "10", "--backend", "sim").refused("out of range")


@pytest.mark.offline
def test_embedding_on_2_to_the_40_cores_is_refused() -> None:
    with pytest.raises(ValueError, match="cores"):
        embed(mgw_instance().with_cores(2**40), "path-fit")


@pytest.mark.offline
def test_a_dedup_of_2_to_the_40_flows_is_refused() -> None:
    p = Pipeline("dedup")
    src = p.source("src")
    d = p.module("d", Dedup(1, 2**40))
    out = p.sink("out")
    p.chain(src, d, out)
    p.flow("f", [src, d, out])
    with pytest.raises(ValueError, match=r"modules\[1\].*flows 1099511627776 is out of range 0..=65535"):
        p.validate()


@pytest.mark.offline
def test_too_many_branches_are_refused_fast(sluice) -> None:  # type: ignore[no-untyped-def]
    # Refused before anything is built: one line, no estimate of a build's time, no table.
    out = sluice("run", "rc", "--n", "70000", "--periods", "1")
    out.refused("--n", "70000")
    out = sluice("run", "rc", "--n", "65536", "--periods", "1", "--backend", "sim")
    out.refused("modules", "131074 is out of range 1..=131072")
    assert out.out == "", out.out


@pytest.mark.offline
def test_the_largest_documented_mgw_runs_on_the_simulator() -> None:
    p = mgw(64, 250)
    s = p.run("null", periods=1, period_ms=1, warmup_periods=0, backend="sim").summary
    assert s["accounted"] and s["delivered"] > 0, s
