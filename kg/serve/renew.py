"""The read server gives memory back (issue 22): it opens the graph again when what it applied made it grow.

Kùzu keeps what an open database read and wrote resident until its page cache (1 GB) is full, and gives nothing
back while it stays open: at 1M entries a fresh server held 184 MB, 341 MB once it had applied 4 logs (a new
pattern key scans the node table), 420 MB after 150. Closing and opening the graph again (the lock held all
along: nobody else gets in) starts it from a fresh open's size; the write-ahead log is replayed by the open.

When (`[serve]` in rules/policy.toml, pure: `due`): after it applied entries, once it was idle for
`renew_idle_seconds` and holds more than `renew_above_mb`, or more than `renew_grew_mb` over what its last open
left it (at 100k entries one `kg log` with a pattern key took a server from ~135 to ~171 MB: a bound in MB alone
is too low for a large graph's fresh open or too high for a small one's); at once, idle or not, past
`renew_hard_mb` or a
write-ahead log of `renew_wal_mb`, which the renewal then also folds into the graph (a CHECKPOINT), before Kùzu's
own at 8 MB would inside an agent's log; or when the open's replay of the log left the server above
`renew_above_mb` (replaying 0.8 MB of log took back ~100 MB at 1M). A CHECKPOINT at 1M entries took 0.5 s or
minutes (123 s for 20 logs, 165 s at a server's stop after 60: it rewrites what the logs touched), so it is done
only then, saying so to the commands it shuts out (`kg.serve.progress`). A read that comes during a renewal
waits at the door for it (~1 s at 1M without a fold) and is answered.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kg.serve import protocol

FOLDING = "writing the read server's log into the graph"  # what a command it shuts out is told (not an upgrade)


@dataclass(frozen=True)
class Bounds:
    idle_seconds: float
    above_mb: float
    hard_mb: float
    wal_mb: float
    grew_mb: float = 0.0  # over what its last open left (0: no such bound)


def due(bounds: Bounds, *, grown: bool, idle_for: float, rss_mb: float, wal_mb: float,
        opened_mb: float = 0.0) -> str:
    """Why to renew now ("" not to): `grown` when entries were applied since the graph was last opened, which
    left the process at `opened_mb` (0: not known)."""
    if not grown:
        return ""  # a fresh open holds what it holds: opening again would give nothing back
    if rss_mb > bounds.hard_mb:
        return f"{rss_mb:.0f} MB resident, over {bounds.hard_mb:g}"
    if wal_mb > 0 and wal_mb >= bounds.wal_mb:
        return f"a {wal_mb:.1f} MB write-ahead log"
    if idle_for >= bounds.idle_seconds and rss_mb > bounds.above_mb:
        return f"idle, {rss_mb:.0f} MB resident, over {bounds.above_mb:g}"
    if idle_for >= bounds.idle_seconds and bounds.grew_mb > 0 and opened_mb > 0 \
            and rss_mb - opened_mb > bounds.grew_mb:
        return f"idle, {rss_mb:.0f} MB resident, {rss_mb - opened_mb:.0f} MB over its open, over {bounds.grew_mb:g}"
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


def renew(store: Any, why: str, *, fold: bool = False, above_mb: float | None = None) -> float:
    """Close and open the graph again (with `fold`, folding its write-ahead log too); the resident MB after. When
    the open's replay of the log leaves it above `above_mb`, the log is folded after all: at 1M entries replaying
    the log of 150 logs (0.8 MB) took back ~100 MB, and each later renewal would give back nothing."""
    protocol.trace(f"server renews: {why}")
    with _folding(store, fold):
        store.reopen(between=trim_heap, fold=fold)
    after = resident_mb()
    if not fold and above_mb is not None and after > above_mb and store.wal_bytes() > 0:
        protocol.trace(f"server folds its log: {after:.0f} MB after the replay")
        with _folding(store, True):
            store.reopen(between=trim_heap, fold=True)
        after = resident_mb()
    protocol.trace(f"server renewed: {after:.0f} MB")
    return after


@contextmanager
def _folding(store: Any, fold: bool) -> Iterator[None]:
    """A fold's CHECKPOINT can hold the graph for minutes at 1M entries: it says so, as a migration does
    (`kg.serve.progress`), so that a command it shuts out waits for it saying so instead of failing."""
    if not fold:
        yield
        return
    from kg.serve.progress import Marker

    marker = Marker(store.path.parent, ["fold the write-ahead log into the graph"], doing=FOLDING)
    marker.step(marker.steps[0])
    try:
        yield
    finally:
        marker.done()


def renew_if_due(server: Any, idle_since: float) -> str:
    """Renew the server's graph when `due` (idle since the monotonic `idle_since`, or since it last applied an
    entry); "" when not, else why it did. Raises what a failed open raises: the server then stops (what it had not
    applied stays in the journal)."""
    if server.bounds is None or not server.grown or server.moved():
        return ""  # (moved: the graph at its path is another workspace's, whose lock it does not hold; it stops)
    held = server.ws._held
    wal_mb = held.wal_bytes() / 2**20
    why = due(server.bounds, grown=True, idle_for=time.monotonic() - max(idle_since, server.applied_at),
              rss_mb=resident_mb(), wal_mb=wal_mb, opened_mb=server.opened_mb)
    if not why:
        return ""
    if server.cache is not None:
        server.cache.clear()
    above = server.bounds.above_mb  # the replay of the log leaves it above this: the log is folded too
    if server.bounds.grew_mb > 0 and server.opened_mb > 0:  # (at 100k: 124 MB, 170 applied, 152 after a replay)
        above = min(above, server.opened_mb + server.bounds.grew_mb)
    server.opened_mb = renew(held, why, fold=wal_mb >= server.bounds.wal_mb and wal_mb > 0, above_mb=above)
    server.grown = False
    return why


def fold_before_close(store: Any) -> None:
    """The server lets go of the graph: the log it leaves is folded, so the next open replays nothing (at 10k
    entries a server that opened on the log an upgrade left held 166 MB instead of 122). A CHECKPOINT at 1M entries
    took 0.5 s or minutes (165 s after 60 logs), past the 10 s budget of a process that asked for the graph: it says
    so (the progress marker), and that process waits for it saying so. Best effort: a failure leaves the log to be
    replayed."""
    try:
        if store.wal_bytes() > 0:
            protocol.trace("server folds its log")
            with _folding(store, True):
                store.reopen(fold=True)
    except Exception:  # noqa: BLE001 - the entries are committed in the log already
        pass
