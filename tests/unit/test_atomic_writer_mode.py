"""The atomic writer's temp file: the replaced file's mode holds from the first byte written."""

from __future__ import annotations

import os
import stat

import pytest

from kg.core.files import atomic_writer


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o400, 0o755])
def test_the_new_content_is_never_readable_beyond_the_old_files_mode(tmp_path, mode):
    target = tmp_path / "secret.md"
    target.write_text("old")
    target.chmod(mode)
    old_umask = os.umask(0o022)
    try:
        with atomic_writer(target, text=True) as fh:
            # the moment of writing: the temp file must already have the target's mode
            assert stat.S_IMODE(os.fstat(fh.fileno()).st_mode) == mode
            fh.write("new")
    finally:
        os.umask(old_umask)
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["secret.md"]


def test_a_new_file_follows_the_umask_and_a_killed_writers_leftover_is_replaced(tmp_path):
    target = tmp_path / "new.md"
    leftover = tmp_path / f".new.md.{os.getpid()}.{__import__('threading').get_ident()}.tmp"
    leftover.write_text("stale")
    old_umask = os.umask(0o027)
    try:
        with atomic_writer(target) as fh:
            fh.write(b"x")
    finally:
        os.umask(old_umask)
    assert target.read_bytes() == b"x" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not leftover.exists()
