"""The read server gives memory back (issue 22): it opens the graph again when what it applied made it grow.

Kùzu keeps what an open database read and wrote resident until its page cache (1 GB) is full, and gives nothing
back while it stays open: at 1M entries a fresh server held 176 MB, 231 MB after applying 60 logs, and it grows
with every log of a long day. Closing and opening the graph again (the lock held all along: nobody else gets in)
starts it from a fresh open's size. The same renewal folds the write-ahead log into the graph, the cheap way:
Kùzu 0.11.3's CHECKPOINT of logs applied in this open took 161 s at 1M entries (20 logs; the server's own
stop paid it), of the same logs replayed by a fresh open 0.45 s (`Store.reopen`).

When (`[serve]` in rules/policy.toml, pure: `due`): after it applied entries, once it was idle for
`renew_idle_seconds` and holds more than `renew_above_mb`; at once, idle or not, past `renew_hard_mb` or a
write-ahead log of `renew_wal_mb` (below Kùzu's own checkpoint at 8 MB, which would fold it the slow way inside
an agent's log). A read that comes during the renewal waits at the door for it (~1 s at 1M) and is answered.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from kg.serve import protocol


@dataclass(frozen=True)
class Bounds:
    idle_seconds: float
    above_mb: float
    hard_mb: float
    wal_mb: float


def due(bounds: Bounds, *, grown: bool, idle_for: float, rss_mb: float, wal_mb: float) -> str:
    """Why to renew now ("" not to): `grown` when entries were applied since the graph was last opened."""
    if not grown:
        return ""  # a fresh open holds what it holds: opening again would give nothing back
    if rss_mb > bounds.hard_mb:
        return f"{rss_mb:.0f} MB resident, over {bounds.hard_mb:g}"
    if wal_mb >= bounds.wal_mb:
        return f"a {wal_mb:.1f} MB write-ahead log"
    if idle_for >= bounds.idle_seconds and rss_mb > bounds.above_mb:
        return f"idle, {rss_mb:.0f} MB resident, over {bounds.above_mb:g}"
    return ""


def resident_mb() -> float:
    """This process's resident memory (0 where /proc is missing: nothing is ever due for its size)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def trim_heap() -> None:
    """Hand the heap Kùzu freed on its close back to the system (glibc keeps it otherwise: 162 -> 52 MB at 1M)."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def renew(store: Any, why: str) -> float:
    """Close and open the graph again, folding its write-ahead log; the resident MB after."""
    protocol.trace(f"server renews: {why}")
    store.reopen(between=trim_heap, fold=True)
    after = resident_mb()
    protocol.trace(f"server renewed: {after:.0f} MB")
    return after


def renew_if_due(server: Any, idle_since: float) -> str:
    """Renew the server's graph when `due` (idle since the monotonic `idle_since`, or since it last applied an
    entry); "" when not, else why it did. Raises what a failed open raises: the server then stops (what it had not
    applied stays in the journal)."""
    if server.bounds is None or not server.grown:
        return ""
    held = server.ws._held
    why = due(server.bounds, grown=True, idle_for=time.monotonic() - max(idle_since, server.applied_at),
              rss_mb=resident_mb(), wal_mb=held.wal_bytes() / 2**20)
    if not why:
        return ""
    if server.cache is not None:
        server.cache.clear()
    renew(held, why)
    server.grown = False
    return why


def fold_before_close(store: Any) -> None:
    """The server lets go of the graph (asked to, idle, stopped): the log it leaves is folded so the next open
    replays nothing, by a reopen (seconds at 1M) rather than a CHECKPOINT of what it applied (minutes). Best
    effort: a failure leaves the log to be replayed."""
    try:
        if store.wal_bytes() > 0:
            protocol.trace("server folds its log")
            store.reopen(fold=True)
    except Exception:  # noqa: BLE001 - the entries are committed in the log already
        pass
