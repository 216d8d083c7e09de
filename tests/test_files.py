"""Output files: a plain file is replaced whole, a device or a link is
written through, and a daemon's report replaces a link planted in its
place instead of following it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sluice.files import write_replacing

pytestmark = pytest.mark.offline


def test_a_file_is_replaced_whole_with_the_usual_mode(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("old, longer than the new")
    write_replacing(out, "new")
    assert out.read_text() == "new"
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"], "no temporary file left behind"


def test_a_device_or_a_link_is_written_through_unless_links_are_not_followed(tmp_path: Path) -> None:
    write_replacing("/dev/null", "x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_text("")
    link.symlink_to(target)
    write_replacing(link, "through")
    assert target.read_text() == "through" and link.is_symlink()
    write_replacing(link, "daemon", follow_links=False)
    assert target.read_text() == "through" and not link.is_symlink() and link.read_text() == "daemon"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
