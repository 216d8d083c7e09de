"""The `sluice` command: `demo`, `run`, `serve`, `ctl`, `embed`, `soak`, `profile`,
`experiment`, `train`, `trace`, `gen` and `net`, a module each group.
Its errors and stops follow `sluice.errors`: one line and exit 2 for a
mistake, exit 130 for Ctrl-C or SIGTERM after writing what was measured."""

import os

# numpy (through matplotlib) starts an OpenBLAS thread per core, and they
# spin for a while at start-up; on a small machine that takes time from
# the engine's pinned workers, and the plots need no parallel BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from sluice.cli.app import main  # noqa: E402  (its commands' modules join it when asked for)

__all__ = ["main"]
