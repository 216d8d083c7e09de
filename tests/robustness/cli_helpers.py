"""Helpers of the robustness tests: the `sluice` command in a subprocess,
its outcome, and a signal sent to it while it runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")


class Outcome:
    """What a `sluice` command did: exit status and output. (Not how long it
    took: that is the machine's speed, which no test checks.)"""

    def __init__(self, p: subprocess.CompletedProcess[str]) -> None:
        self.code, self.out, self.err = p.returncode, p.stdout, p.stderr

    def refused(self, *words: str) -> None:
        """Exit status 2, one line on stderr naming `words`, no traceback."""
        assert self.code == 2, (self.code, self.err)
        assert "Traceback" not in self.err and "panicked" not in self.err, self.err
        lines = [line for line in self.err.splitlines() if line.strip()]
        assert len(lines) == 1, self.err
        for w in words:
            assert w in lines[0], (w, lines[0])


def runner(tmp_path: Path) -> Callable[..., Outcome]:
    """Runs `sluice ARGS` in `tmp_path` (timeout 120 s)."""

    def run(*args: str, timeout: float = 120, stdin: Optional[str] = None) -> Outcome:
        p = subprocess.run([SLUICE, *args], cwd=tmp_path, capture_output=True, text=True, timeout=timeout, input=stdin)
        return Outcome(p)

    return run


def interrupt(args: list[str], cwd: Path, after_s: float, sig: int = signal.SIGINT, timeout: float = 60) -> Outcome:
    """Starts `sluice ARGS`, sends `sig` after `after_s` s; returns its outcome."""
    p = subprocess.Popen([SLUICE, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    p.send_signal(sig)
    out, err = p.communicate(timeout=timeout)
    return Outcome(subprocess.CompletedProcess(p.args, p.returncode, out, err))
