"""The team's writer lock on a FalkorDB server (kg/store/falkor.py): one key with a lease, renewed while held."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

from kg.core.errors import TeamGraphBusy
from kg.store.lock import FileLock, Yielded, _announce, pid_alive

LOCK_TTL_MS = 30_000
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
_REFRESH = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
            "else return 0 end")


def _process_tag() -> str:
    """Who holds the lock, as `<boot id>/<pid namespace>/<pid>`: a waiter on the same machine and in the same
    pid namespace can tell that the holder died (a `kill -9` in the middle of an import) instead of waiting out
    its lease. Empty where /proc does not say (then the lease is the only way a dead holder's lock goes)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return f"{boot}/{ns}/{os.getpid()}"


def _holder_is_dead(value: Any) -> bool:
    """Whether the lock's value names a process of this machine and pid namespace that no longer runs."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    here = _process_tag()
    if not here or not isinstance(value, str) or value.count("/") != 3:
        return False
    tag, _, _token = value.rpartition("/")
    boot, ns, pid = tag.split("/")
    return f"{boot}/{ns}" == here.rpartition("/")[0] and pid.isdigit() and not pid_alive(int(pid))


class ServerLock:
    """The team's writer lock: one key on the server, with a lease that a crashed holder lets lapse.

    Fairness within a workspace, as on the embedded graph (kg/store/lock.py): a foreground process that has to
    wait says so with a shared lock on the workspace's `graph.lock.wait`, as a Kùzu waiter does. A polite
    acquirer (a background drain) stands aside for it, and a holder draining under a budget or politely hands
    over: the waiter drains the same journal. (A waiter in another workspace is not one to stand aside for: it
    would not drain this workspace's journal, and what was logged here would wait for this workspace's next
    command.)"""

    def __init__(self, conn: Any, key: str, timeout: float, *, lock_path: Path | None = None,
                 polite: bool = False):
        self.conn, self.key, self.timeout = conn, key, timeout
        self.local = FileLock(lock_path, timeout=timeout) if lock_path is not None else None  # its .wait file
        self.polite = polite
        tag = _process_tag()
        self.token = f"{tag}/{secrets.token_hex(12)}" if tag else secrets.token_hex(12)
        self.renewed = 0.0

    def acquire(self) -> None:
        deadline = time.monotonic() + self.timeout
        delay = 0.002
        waiting: int | None = None
        try:
            while True:
                if self.polite and self.others_waiting():
                    raise Yielded()
                if self.conn.set(self.key, self.token, nx=True, px=LOCK_TTL_MS):
                    break
                held_by = self.conn.get(self.key)
                if held_by is not None and _holder_is_dead(held_by):
                    self.conn.eval(_RELEASE, 1, self.key, held_by)  # only if it still holds that value
                    continue
                if time.monotonic() >= deadline:
                    raise TeamGraphBusy(f"the team graph stayed busy for {self.timeout:.0f} s (another agent is "
                                     "writing); the entry waits in the local journal for the next command")
                if waiting is None and not self.polite and self.local is not None:
                    waiting = _announce(self.local.wait_path)
                time.sleep(delay * (0.5 + secrets.randbelow(1000) / 1000))
                delay = min(delay * 2, 0.1)
        finally:
            if waiting is not None:
                os.close(waiting)  # closing drops the shared lock
        self.renewed = time.monotonic()

    def others_waiting(self) -> bool:
        """Whether a foreground process of this workspace waits for the team graph."""
        return self.local is not None and self.local.others_waiting()

    def renew(self) -> None:
        if time.monotonic() - self.renewed > LOCK_TTL_MS / 3000:
            self.conn.eval(_REFRESH, 1, self.key, self.token, LOCK_TTL_MS)
            self.renewed = time.monotonic()

    def held(self) -> bool:
        """Whether the lock is still this holder's (its lease did not lapse and pass to another)."""
        got = self.conn.get(self.key)
        return (got.decode() if isinstance(got, bytes) else got) == self.token

    def release(self) -> None:
        self.conn.eval(_RELEASE, 1, self.key, self.token)
