"""The `sluice` command group, which every command module joins."""

from __future__ import annotations

import click

from sluice import _core
from sluice.errors import Command


@click.group(cls=Command)
@click.version_option(_core.__version__, prog_name="sluice")
@click.option("--debug", is_flag=True, help="Show the traceback of an error instead of one line.")
def main(debug: bool) -> None:
    """Sluice: SLO-aware packet processing with fractional buffers."""
