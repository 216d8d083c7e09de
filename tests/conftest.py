import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

# Let tests import the example scripts.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

# Tests never read or write the user's measured profile: pipelines built in
# tests (and in the commands they start) use the reference costs, from an
# empty profile that keeps the CLI from measuring one.
os.environ["SLUICE_PROFILE"] = os.path.join(tempfile.mkdtemp(prefix="sluice-test-"), "profile.json")
with open(os.environ["SLUICE_PROFILE"], "w") as empty:
    empty.write('{"nfs": {}}')


#: NF costs: (T0 ns, T1 ns/pkt) per NF kind.
Costs = dict[str, tuple[float, float]]


@pytest.fixture
def nf_costs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Costs], None]:
    """Points the pipelines a test builds at a profile of the given costs."""
    from sluice import profiles

    def use(costs: Costs) -> None:
        monkeypatch.setenv("SLUICE_PROFILE", str(tmp_path / "profile.json"))
        profiles.save({"nfs": {k: {"t0_ns": t0, "t1_ns": t1} for k, (t0, t1) in costs.items()}})

    return use
