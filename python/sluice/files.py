"""Output files written whole or not at all: a file is written to a fresh
temporary file beside it (created exclusively, so no one else's file or
link is opened) and renamed over it. What is not a plain file (a device
as /dev/full, a pipe, a link as /dev/stdout) is written through, unless
the writer follows no link (a daemon's report): then a link is replaced,
never followed."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Union


def write_replacing(path: Union[str, Path], data: Union[str, bytes], *, follow_links: bool = True) -> None:
    """Writes `data` to `path` (text as UTF-8); a new file gets the mode a
    plain `open(path, "w")` would give it (0666 less the umask)."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = stat.S_IFREG
    if not (stat.S_ISREG(mode) or (stat.S_ISLNK(mode) and not follow_links)):
        with open(path, "wb") as through:
            through.write(raw)
        return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask, read without setting it (setting it to read it
    would race with other threads making files)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022
