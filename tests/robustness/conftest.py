"""The `sluice` fixture of the robustness tests (see cli_helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from .cli_helpers import Outcome, runner


@pytest.fixture
def sluice(tmp_path: Path) -> Callable[..., Outcome]:
    """Runs `sluice ARGS` in the test's folder."""
    return runner(tmp_path)
