"""Inter-process locking for the graph and the journal.

Kùzu lets exactly one process hold a database read-write, and that process shuts out all others, readers
too. So every process that opens the graph first takes an exclusive `flock` on a lock file beside it, with a
bounded retry; the kernel releases the lock if the holder dies, so a crash never leaves it stuck.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from kg.errors import StoreBusy, StoreError


class FileLock:
    """An exclusive advisory lock on `path`, acquired with a bounded retry."""

    def __init__(self, path: Path, *, timeout: float, poll: float = 0.01, what: str = "the graph"):
        self.path = path
        self.timeout = timeout
        self.poll = poll
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot open lock file {self.path}: {exc.strerror}; check that the workspace "
                             "folder is writable") from None
        deadline = time.monotonic() + self.timeout
        delay = self.poll
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from None
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise StoreBusy(
                        f"{self.what} is held by another process{holder} for longer than the "
                        f"{self.timeout:g} s retry budget; try again when it finishes, or raise the budget "
                        "with KG_LOCK_TIMEOUT=SECONDS"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 1.5, 0.1)
        try:
            os.pwrite(fd, f"{os.getpid():>10}\n".encode(), 0)  # fixed width: no truncate needed
        except OSError:
            pass  # the holder's pid is only a courtesy for error messages
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 11, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
