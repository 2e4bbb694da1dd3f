"""Inter-process locking for the graph and the journal.

Kùzu lets exactly one process hold a database read-write, and that process shuts out all others, readers
too; several processes may hold it read-only at once. So every process that opens the graph first takes a
`flock` on a lock file beside it, with a bounded retry: exclusive to write, shared to read (a read-only open,
which applies nothing: `Workspace.reading` takes it only when the journal is empty). The kernel releases the
lock if the holder dies, so a crash never leaves it stuck.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from kg.core import ofdlock
from kg.core.errors import StoreBusy, StoreError
from kg.core.files import pid_alive  # noqa: F401 - kg.store.lock.pid_alive stays
from kg.core.paths import HeldLock
from kg.serve.progress import Watch, give_up_line


class Yielded(Exception):
    """A polite acquirer stood aside: a foreground process waits for the lock and will do the work."""


class FileLock(HeldLock):
    """An exclusive advisory lock on `path`, acquired with a bounded retry.

    Fairness: a process that has to wait for the lock says so by holding a read lock on `PATH.wait` while it
    waits (`_announce`). A *polite* acquirer (a detached applier draining the journal after `kg log` answered) does not
    compete with such a waiter: it stands aside (`Yielded`), because the waiter drains the journal itself
    once it holds the graph. A polite holder also checks `others_waiting()` between drain batches and hands
    over. So a reader's wait is one record of the current holder, not the stream of every agent's appliers.

    `shared` (a read-only open) takes the lock shared: readers read side by side. So that a stream of them
    cannot keep a writer out, a waiting writer also holds a shared lock on `PATH.xwait`, and a shared
    acquirer that sees it waits behind the writer instead of joining the readers in front of it."""

    def __init__(self, path: Path, *, timeout: float, poll: float = 0.01, what: str = "the graph",
                 polite: bool = False, shared: bool = False):
        self.path = path
        self.timeout = timeout
        self.poll = poll
        self.what = what
        self.polite = polite
        self.shared = shared
        self._fd: int | None = None
        self.wait_path = path.with_name(path.name + ".wait")
        self.xwait_path = path.with_name(path.name + ".xwait")

    def acquire(self) -> None:
        fd = self._open()
        deadline = time.monotonic() + self.timeout
        delay = self.poll
        waiting: list[int] = []  # our shared locks on the .wait (and a writer's .xwait) files, while we wait
        ask_at = 0.0  # when to ask a read server holding the graph to hand it over (kg/serve/)
        mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        watch: Watch | None = None  # a migration in progress this waiter waits for past its budget
        try:
            while True:
                if self.polite and self.others_waiting():
                    os.close(fd)
                    raise Yielded()
                try:
                    if self.shared and _waited_for(self.xwait_path):
                        raise BlockingIOError(errno.EWOULDBLOCK, "a writer waits")  # behind it, not in front
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        os.close(fd)
                        raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from None
                    if watch is None and not self.polite and self.path.name == "graph.lock":
                        watch = Watch(self.path.parent)  # (issue 22) a migration holds it: wait, saying so
                    going = None if watch is None else watch.check()
                    if going is False:
                        os.close(fd)
                        raise StoreBusy(give_up_line(watch.record)) from None
                    if going:  # the budget counts from the migration's end
                        deadline = max(deadline, time.monotonic() + self.timeout)
                    elif time.monotonic() >= deadline:
                        raise self._busy(fd) from None
                    if self.path.name == "graph.lock" and time.monotonic() >= ask_at:
                        ask_at = time.monotonic() + 0.25  # it may be starting: ask again
                        from kg.serve.client import hand_over

                        if hand_over(self.path.parent, polite=self.polite, timeout=deadline - time.monotonic()):
                            if self.polite:  # the server applies the journal itself
                                os.close(fd)
                                raise Yielded() from None
                            continue  # it closed the graph and left: take the lock now
                    if not waiting and not self.polite:
                        waiting = [w for w in (_announce(self.wait_path),
                                               None if self.shared else _announce(self.xwait_path)) if w is not None]
                    time.sleep(delay)
                    delay = min(delay * 1.5, 0.05)
        finally:
            for w in waiting:
                os.close(w)  # closing drops the shared lock
        self._took(fd)

    def others_waiting(self) -> bool:
        """Whether a foreground process waits for this lock."""
        return _waited_for(self.wait_path)

    def release(self) -> None:
        held = self.held
        super().release()
        if held and self.path.name == "graph.lock":
            # the graph was free to this process: a read server's busy back-off (kg/serve/client.py) is over
            try:
                os.unlink(self.path.with_name("serve.busy"))
            except OSError:
                pass


# How a waiter says it waits, and how others look. On Linux (64-bit) a waiter holds an open-file-description read
# lock on the file, and a checker asks the kernel whether one is held (F_OFD_GETLK) without taking any lock
# itself: nothing a checker does can look like a waiter. Elsewhere a waiter holds a shared flock, and a checker
# tries the exclusive one for a moment; another checker's moment can then look like a waiter (a few quick
# tries tell them apart on an idle machine; on a loaded one a checker descheduled mid-try is read as a waiter,
# which costs a reader a short delay, never a lost write).
_OFD = ofdlock.OFD
_range = ofdlock.whole_file


def _waited_for(path: Path) -> bool:
    """Whether a waiter holds its lock on `path` (see above)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        if _OFD:
            try:
                return ofdlock.read_lock_held(fd)
            except OSError:
                return False
        for attempt in range(3):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return False
            except OSError:
                if attempt < 2:
                    time.sleep(0.002)
        return True
    finally:
        os.close(fd)


def _announce(path: Path) -> int | None:
    """Say that this process waits, until the returned descriptor is closed (None when it cannot say so)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _range(fcntl.F_RDLCK))  # read locks never conflict: no wait
        else:
            fcntl.flock(fd, fcntl.LOCK_SH)  # blocks only for another checker's instant
    except OSError:
        os.close(fd)
        return None
    return fd


