"""Writing a file so that a reader sees the old or the new content, never a mix: the one way kg replaces a file.

Every module that owns a file kg writes (see docs/architecture.md, "Files kg writes") replaces it through
`write_atomic` (bytes in hand) or `atomic_writer` (a format streamed into a handle, as GraphML is).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def fsync_dir(path: Path) -> None:
    """Make a folder's entries durable (a new or renamed file's name survives a power loss)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create(tmp: Path, mode: int | None) -> int:
    """A new temp file that has the replaced file's mode before anything is written to it (a 0600 file's new
    content is never readable by others). A leftover of a killed writer with the same name is replaced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666)
    except FileExistsError:
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666)
    if mode is not None:
        try:
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
    return fd


@contextmanager
def atomic_writer(path: Path, *, text: bool = False, encoding: str = "utf-8") -> Iterator[IO[Any]]:
    """A handle on a temporary file beside `path` that replaces `path` when the block ends without error.

    A symlink is written through: its target gets the new content and the link stays a link (a person who
    linked CLAUDE.md to AGENTS.md keeps the link), and the file keeps its permission bits. A failed write (disk
    full, read-only folder, an exception in the block) leaves no temporary file behind and the old content in
    place."""
    path = Path(path)
    if os.path.islink(path):
        path = Path(os.path.realpath(path))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:  # the replaced file keeps its permissions: a USER.md a person made read-only (or 0600) stays so
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    try:
        fd = _create(tmp, mode)
        with (open(fd, "w", encoding=encoding, newline="\n") if text else open(fd, "wb")) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` (see `atomic_writer`)."""
    with atomic_writer(path) as fh:
        fh.write(data)
