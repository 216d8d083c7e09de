"""What a command needs beyond the data plane: the extras of
`pip install 'sluice[plot]'` (matplotlib), `'sluice[embed]'` (the ILP's
solvers) and `'sluice[lab]'` (the experiments and poll-model training),
and the error that names the one missing."""

from __future__ import annotations

import importlib.util


class MissingExtra(RuntimeError):
    """A command needs a package this installation does not have."""


def missing(extra: str, what: str, error: ImportError) -> MissingExtra:
    """The error for `what`, which needs extra `extra`, failing to import (`error`)."""
    return MissingExtra(f"{what} needs {error.name or 'a package'}, which is not installed: pip install 'sluice[{extra}]'")


def require(extra: str, what: str, module: str) -> None:
    """Refuses `what` before it starts if `module` of extra `extra` is not
    installed (without importing it: matplotlib alone takes most of a
    command's start-up)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        raise missing(extra, what, ModuleNotFoundError(name=module))
