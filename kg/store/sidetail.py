"""Reading the side index (kg/store/sideindex.py) while the graph is ahead of it: a read never writes it.

The graph runs ahead of the side index by a *tail*: the nodes past its stamp, created since the last sync (a
drain that applied entries, the read server's own drain for the read in hand, a writer whose sync failed).
Issue 20: a read used to catch the side index up itself (`sync`: a writable connection, the stamp checked
against the graph, the rows added and committed) before answering. Now a read
- answers from the side file as it is when it is in step;
- otherwise, when the tail is short (`TAIL_MAX` nodes), adds the tail's rows inside a transaction on its own
  connection that is never committed, and answers from there: exactly what a synced index answers (the same
  FTS5 statistics, idf, lengths and rows: the same SQL over the same rows), without the sync's stamp checks,
  without committing, and without leaving the file changed. The rows come from what this process created
  (the read server's drain noted them: no graph read), else from the graph by position;
- `settle` rolls the transaction back when the read is over; the read server then syncs, after its answer
  was sent (`defer`), so the next reader finds the file in step.
Syncing stays with writers and drains: a one-off reader never writes the file, whatever its state. A tail
longer than `TAIL_MAX`, or a file to rebuild, is left to a writer (a read-only reader answers None: search
then falls back, see `kg.memory.views`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from kg.store.sideindex import (
    CATCH_UP_MAX,
    SideIndex,
    _count,
    _pos_of,
    _stream,
    embedded,
    path_of,
    safe_sync,
    sync,
    version,
)

TAIL_MAX = CATCH_UP_MAX  # nodes a read adds privately (more: a writer catches up or rebuilds)
TAIL_WAIT_MS = 2000  # how long a read waits for another process's sync to finish before falling back


@dataclass
class _Tail:
    side: SideIndex  # a writable connection, inside an uncommitted transaction holding the tail's rows
    count: int       # the graph's node count it answers for
    have: int        # the file's own count (its stamp)


def for_reading(st: Any) -> SideIndex | None:
    """The side index as a synced one would answer for the graph `st` holds, for this read: the file itself
    when in step (kept open on `st` for later reads: the read server's), else the file plus the tail in an
    uncommitted transaction (see the module's doc). None for a store it is not for, or a file a read cannot
    use (search then asks the graph's own index). A writer holding the graph (the read server) rebuilds a
    file of another version or one that names another graph, as before; a read-only reader never does."""
    if not embedded(st):
        return None
    try:
        count = _count(st)
        tail = st.__dict__.get("_side_tail")
        if tail is not None and st.__dict__.get("_side_dirty"):
            release(st)  # a rolled-back batch: its nodes may be in the tail
        elif tail is not None:
            if tail.count == count:
                return tail.side
            if tail.count < count and count - tail.have <= TAIL_MAX:  # a writer created more (linking
                return _extend(st, tail, count)  # each node of a batch): the next rows, in the same transaction
            release(st)
        side = st.__dict__.get("_side_reader")
        if side is None:
            if not path_of(st.path).exists():
                return _rebuilt(st, count)
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
        if side.current(count):
            return side
        have, last = side.stamp()
        kept = side.meta("version") == version() and have <= count and (
            _pos_of(st, last) == have - 1 if have else last is None)
        if kept and count - have <= TAIL_MAX:
            return _with_tail(st, have, count)
        return _rebuilt(st, count)
    except (sqlite3.Error, OSError, RuntimeError):
        release(st)
        return None


def _rebuilt(st: Any, count: int) -> SideIndex | None:
    if getattr(st, "read_only", False):
        return None  # a one-off reader does not rebuild it: the graph's own index, until a writer does
    sync(st)
    side = st.__dict__.get("_side_reader")
    if side is None:
        side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
    return side if side.current(count) else None


def _tail_rows(st: Any, have: int, count: int) -> list[dict[str, Any]]:
    """The graph's nodes at positions [have, count): those this process created and noted when they are
    exactly these (no graph read), else read from the graph by position."""
    created = st.__dict__.get("_side_created") or []
    gap = count - have
    if not st.__dict__.get("_side_dirty") and len(created) >= gap and gap:
        mine = created[len(created) - gap:]
        if _pos_of(st, mine[0]["id"]) == have and _pos_of(st, mine[-1]["id"]) == count - 1:
            return mine
    rows: list[dict[str, Any]] = []
    for batch in _stream(st, have, count):
        rows += batch
    if [r["pos"] for r in rows] != list(range(have, count)):
        raise RuntimeError("the graph's node positions are not dense")
    return rows


def _with_tail(st: Any, have: int, count: int) -> SideIndex:
    rows = _tail_rows(st, have, count)
    side = SideIndex(path_of(st.path), writable=True, timeout=TAIL_WAIT_MS / 1000)
    try:
        side.db.execute("BEGIN IMMEDIATE")
        side._add(have, rows)
        side._set_stamp(count, rows[-1]["id"] if rows else None)
    except BaseException:
        side.close()
        raise
    st.__dict__["_side_tail"] = _Tail(side, count, have)
    return side


def _extend(st: Any, tail: _Tail, count: int) -> SideIndex:
    rows = _tail_rows(st, tail.count, count)
    tail.side._add(tail.count, rows)
    tail.side._set_stamp(count, rows[-1]["id"])
    tail.count = count
    return tail.side


def release(st: Any) -> bool:
    """End the read's private transaction (rolled back: the file is as it was). Whether there was one."""
    tail = st.__dict__.pop("_side_tail", None)
    if tail is None:
        return False
    try:
        tail.side.db.execute("ROLLBACK")
    except sqlite3.Error:
        pass
    tail.side.close()
    return True


def defer(st: Any, on: bool = True) -> None:
    """The read server: the syncs of the drains it runs wait for `settle` (after the answer is sent)."""
    if on:
        st.__dict__["_side_defer"] = True
    else:
        st.__dict__.pop("_side_defer", None)


def settle(st: Any) -> str:
    """After a read: its private transaction rolled back, then the side index synced when this process
    holds the graph for writing and created nodes since the last sync (the read server, after its answer)."""
    behind = release(st)
    if getattr(st, "read_only", False) or not embedded(st):
        return ""
    if not (behind or st.__dict__.get("_side_created") or st.__dict__.get("_side_dirty")):
        return ""
    return safe_sync(st, deferred=False)
