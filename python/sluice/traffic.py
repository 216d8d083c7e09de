"""Traffic settings: packet templates and streams of a synthetic source."""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Optional, Sequence

from sluice.description import StreamDefaults, StreamJson
from sluice.template import Gtpu, Template

__all__ = ["Gtpu", "Stream", "Template", "readable_capture"]


@dataclass(frozen=True)
class Stream:
    """One stream of a synthetic source: a template, an optional flow, an
    optional rate (pkt/s), and how many of its packets arrive together
    (`burst_pkts`: bursts at the same mean rate; 1, evenly spaced)."""

    template: Template = field(default_factory=Template)
    flow: Optional[str] = None
    rate_pps: Optional[float] = None
    rate_schedule: Sequence[tuple[int, float]] = ()
    burst_pkts: int = StreamDefaults.burst_pkts

    def spec(self) -> StreamJson:
        """The JSON form the core reads."""
        return {
            "template": self.template.spec(),
            "flow": self.flow,
            "rate_pps": self.rate_pps,
            "rate_schedule": [list(s) for s in self.rate_schedule],
            "burst_pkts": self.burst_pkts,
        }


def readable_capture(path: str) -> str:
    """`path`, unless it is a pipe, FIFO or character device (`<(cat
    x.pcap)`, `/dev/stdin`): those can be read once only, so it is read
    now into a temporary file (removed at exit), whose path is returned and
    can be read as often as needed. Anything else (a missing file, a
    folder) the core reports by name."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return path
    if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)):
        return path
    fd, copy = tempfile.mkstemp(prefix="sluice-capture-", suffix=".pcap")
    atexit.register(_remove, copy)
    with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return copy


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)
