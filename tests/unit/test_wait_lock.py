"""`kg.core.paths.flock_wait` / `WaitLock`: the journal's lock waits in the kernel (no polling, no signal) and
gives up after its timeout with kg's busy error."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from kg.core.errors import StoreBusy
from kg.core.paths import WaitLock, flock_wait

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


def _holder(path):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_the_wait_ends_when_the_holder_lets_go(tmp_path):
    path = tmp_path / "journal.lock"
    proc = _holder(path)
    gave_up = os.open(path, os.O_RDWR)
    assert not flock_wait(gave_up, 0.05)  # held: the wait gives up after its timeout
    os.close(gave_up)  # as WaitLock does: a file whose wait gave up is never waited on again (see flock_wait)
    fd = os.open(path, os.O_RDWR)
    try:
        proc.stdin.close()  # the holder exits, and the kernel hands the lock to a blocked wait
        assert flock_wait(fd, 30)
        assert not _free(path)  # held through `fd`, though the helper's duplicate is closed
    finally:
        os.close(fd)
        proc.wait()


def _free(path) -> bool:
    """Whether another open file of `path` can take the lock now."""
    import fcntl

    other = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(other)


def test_no_signal_is_used(tmp_path):
    """An alarm could fire after the lock was granted and end the process that held it (a `kg log` exit 1
    under load): the wait sets no timer and no handler."""
    import signal

    before = signal.getsignal(signal.SIGALRM)
    path = tmp_path / "journal.lock"
    proc = _holder(path)
    fd = os.open(path, os.O_RDWR)
    try:
        assert not flock_wait(fd, 0.01)
        assert signal.getsignal(signal.SIGALRM) is before
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        os.close(fd)
        proc.stdin.close()
        proc.wait()


def test_a_wait_given_up_lets_go_of_the_lock_when_it_comes(tmp_path):
    """The helper of a wait that timed out is still queued in the kernel: when the lock comes to it, it lets
    go at once, so nobody is shut out by a wait that ended."""
    import time

    path = tmp_path / "journal.lock"
    proc = _holder(path)
    fd = os.open(path, os.O_RDWR)
    try:
        assert not flock_wait(fd, 0.05)
    finally:
        os.close(fd)
    proc.stdin.close()
    proc.wait()
    deadline = time.monotonic() + 30
    while not _free(path):  # the abandoned helper takes it for an instant, then lets go
        assert time.monotonic() < deadline, "a wait given up kept the lock"
        time.sleep(0.01)


def test_another_thread_waits_with_a_timeout(tmp_path):
    path = tmp_path / "journal.lock"
    proc = _holder(path)
    got = []
    fd = os.open(path, os.O_RDWR)
    try:
        t = threading.Thread(target=lambda: got.append(flock_wait(fd, 0.05)))
        t.start()
        t.join(30)
        assert got == [False]
        proc.stdin.close()
        t = threading.Thread(target=lambda: got.append(flock_wait(fd, 30)))
        t.start()
        t.join(30)
        assert got == [False, True]
    finally:
        os.close(fd)
        proc.wait()


def test_wait_lock_names_the_holder_when_busy(tmp_path):
    path = tmp_path / "journal.lock"
    first = WaitLock(path, timeout=1, what="the write journal")
    with first:
        assert first.held
        second = WaitLock(path, timeout=0.05, what="the write journal")
        with pytest.raises(StoreBusy, match=rf"the write journal is held by another process \(pid {os.getpid()}\)"):
            second.acquire()
        assert not second.held
    assert not first.held
    with WaitLock(path, timeout=0.05, what="the write journal") as again:  # released: free at once
        assert again.held
