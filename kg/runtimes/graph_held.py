"""Whether a writer other than the read server holds the graph, looked at without waiting and without importing
anything heavy (the read client asks it for a `kg hook session-start`: before it asks the server, and while it
waits for a starting one: `kg.serve.client.run`'s `give_way`).

In production the read server answers the session-start hook. When a writer holds the graph (kg cycle, import,
doctor, `kg log --wait`: it made the server let go), a server the hook's client starts can only wait for the
graph lock (`[lock] timeout_seconds`, 10 s by default) and leave, and the client waited for it before running the
command itself, which waits `busy_wait_seconds` more and briefs from files with a journaled start: 13 s at the
defaults, and past the 30 s kg installs as the hook's timeout with a lock timeout of 30 s or more (Claude Code
and Codex then kill the hook: no brief, no session). The hook runs its own busy path instead when the graph is
held and no server could answer soon: none lives, or one lives but a process waits for the graph
(`graph.lock.wait`, `kg.store.lock`): a starting server waiting for the writer, or a process the serving one
hands the graph to. A server still importing has not said it waits yet: the client looks again as it waits.
"""

from __future__ import annotations

import fcntl
import os

from kg.core import ofdlock


def _taken(path: str, mode: int) -> bool:
    """Whether `path`'s flock is held against `mode` by another open file (an instant's try, dropped at once)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False  # no such file: never held
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _waiters(path: str) -> bool:
    """Whether a process waits for the graph (holds its read lock on `graph.lock.wait`; Linux only, else False:
    the hook then asks the server as before)."""
    if not ofdlock.OFD:
        return False
    try:
        fd = os.open(path, os.O_RDWR)  # (as kg.store.lock opens it; a lock of its kind is looked at, never taken)
    except OSError:
        return False
    try:
        return ofdlock.read_lock_held(fd)
    except OSError:
        return False
    finally:
        os.close(fd)


def by_a_writer(kg_dir: str) -> bool:
    """Whether the graph is held read-write by a process no read server could answer for soon: the graph's lock
    is held exclusively and either no server lives (`serve.lock` free) or one lives and a process waits for the
    graph (a server that holds it waits for nothing). False when it cannot tell: the hook asks the server."""
    if not _taken(os.path.join(kg_dir, "graph.lock"), fcntl.LOCK_SH):
        return False  # free, or readers only
    if not _taken(os.path.join(kg_dir, "serve.lock"), fcntl.LOCK_SH):
        return True  # no server: a writer holds it
    return _waiters(os.path.join(kg_dir, "graph.lock.wait"))
