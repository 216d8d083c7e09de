import os
import signal
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

# Ctrl-C as a terminal gives it, to this process and the commands it starts:
# a suite started in the background (`make test &`) inherits SIGINT ignored,
# which Python keeps, and the tests of stopping on Ctrl-C would wait.
signal.signal(signal.SIGINT, signal.default_int_handler)


#: The backends of a test that runs on both: its simulator half runs nothing
#: in real time (`make test` runs it beside the engine's tests).
ENGINE_AND_SIM = ["engine", pytest.param("sim", marks=pytest.mark.offline)]

#: NF costs: (T0 ns, T1 ns/pkt) per NF kind.
Costs = dict[str, tuple[float, float]]

#: Costs of L2L3's NFs as this engine measures them (`sluice profile`): the
#: reference costs price only the LPM, and with free next hops the simulator
#: would serve every order and phase alike.
L2L3_COSTS: Costs = {"type_check": (14.0, 1.8), "exact_match": (23.0, 5.0), "lpm": (18.0, 4.5),
                     "ttl_decrement": (15.0, 4.7), "mac_rewrite": (17.0, 1.7), "ip_checksum": (15.0, 4.8)}


@pytest.fixture
def nf_costs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Costs], None]:
    """Points the pipelines a test builds at a profile of the given costs."""
    from sluice import profiles

    def use(costs: Costs) -> None:
        monkeypatch.setenv("SLUICE_PROFILE", str(tmp_path / "profile.json"))
        profiles.save({"nfs": {k: {"t0_ns": t0, "t1_ns": t1} for k, (t0, t1) in costs.items()}})

    return use
