"""The `sluice` command group, which every command module joins."""

from __future__ import annotations

import importlib
from typing import Optional

import click

from sluice import _core
from sluice.errors import Command

#: The module (in sluice.cli) that defines each command, imported when the
#: command runs or help lists it: a run does not pay for the experiments'
#: and the server's imports.
COMMAND_MODULES = {
    "demo": "run", "run": "run", "embed": "run", "soak": "run", "profile": "run",
    "experiment": "experiment", "train": "experiment",
    "serve": "serve", "ctl": "serve",
    "gen": "net", "net": "net",
    "trace": "trace",
}


class Commands(Command):
    """The group, its commands' modules imported on demand."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, name: str) -> Optional[click.Command]:
        if name in COMMAND_MODULES and name not in self.commands:
            importlib.import_module(f"sluice.cli.{COMMAND_MODULES[name]}")
        return super().get_command(ctx, name)


@click.group(cls=Commands)
@click.version_option(_core.__version__, prog_name="sluice")
@click.option("--debug", is_flag=True, help="Show the traceback of an error instead of one line.")
def main(debug: bool) -> None:
    """Sluice: SLO-aware packet processing with fractional buffers."""
