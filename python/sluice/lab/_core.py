"""Stands in for the lab's compiled module where the core was built
without it: `sluice._core` built with its `lab` feature registers
`sluice.lab._core` itself (see `sluice-py`), and this file is never read."""

from sluice.extras import MissingExtra

raise MissingExtra(
    "the lab's measurements are not in this build of sluice._core: build it with its `lab` feature "
    "(`make setup` does; or MATURIN_PEP517_ARGS='--features lab' pip install -e '.[lab]')"
)
