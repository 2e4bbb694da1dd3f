"""Kùzu's own full-text index, node_fts, retired (issue 22).

Nothing asks it any more: linking and search ask the side index (kg/store/sidelink.py, kg/store/sideindex.py),
and building it cost most of a large import's CPU and memory. A new graph is made without it and marked
(`retired`); a writer's open drops an old graph's (`retire`) and marks it.

kuzu 0.11.3 may not survive a kill in the middle of a drop (issue 20: the drop replayed half, "Cannot find
table catalog entry ..." on a later write), so the drop is done as the import's is: the graph checkpointed and
copied aside first (kg/store/rollback.py), the drop checkpointed at once, then the mark written and the copy
released. Killed before the release, the next writer's open puts the copy back and drops again.

A graph with neither the index nor the mark lost its index some other way (a kill in an older kg's drop or
build), or was made by a kg that marked nothing. Before issue 22's fix the index was built whole to find out:
at a million nodes that build fails in the default 1 GiB pool ("buffer pool is full") and was tried again at
every open. Now the graph's catalogue is read first: an index's hidden tables left without it (a build cut
short) make `Store.open` rebuild the graph (kg/store/rebuild.py). A drop replayed half leaves nothing the
catalogue shows (kuzu 0.11.3: no hidden table, SHOW_INDEXES empty, a checkpoint passes), but refuses an index
of that name ("Index with name node_fts already exists"; a write to the node table then crashes): so an index
of that name is built over `PROBE_COLUMN`, a column kg leaves empty but on a feature request's complexity (a
few words per graph: cheap whatever its size), under the same crash protection as the drop; refused with the
signs, the graph is rebuilt; built, it is dropped and the graph marked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import StoreError
from kg.store import rebuild as _rebuild
from kg.store import rollback as _rollback

KEY = "fts:retired"  # Meta key: the graph has no full-text index of its own, cleanly
DEFERRED = "fts:deferred"  # Meta key: the drop waits for room for the copy (said once, not tried at every open)
ROOM_MARGIN_MB = 16  # free space kept beyond the copy and the checkpoint's growth (a full disk aborts Kùzu)
NOT_DROPPED = "the old full-text index node_fts was not dropped"


def retired(store: Any) -> bool:
    """Whether the graph is marked as having no full-text index of its own, cleanly. One key lookup."""
    return bool(store._execute_raw("MATCH (m:Meta {key: $key}) RETURN m.value AS v", {"key": KEY}))


def mark(store: Any) -> None:
    store._execute_raw("MERGE (m:Meta {key: $key}) SET m.value = $value",
                       {"key": KEY, "value": clock.wall().isoformat()})


PROBE_COLUMN = "complexity"  # (see the module's doc) empty on every node but a feature request's
PROBE = f"CALL CREATE_FTS_INDEX('Node', 'node_fts', ['{PROBE_COLUMN}'])"


def retire(store: Any) -> None:
    """Drop node_fts and mark the graph (see the module's doc). Without room for the copy, or while another
    bulk change's copy is held, nothing changes (a later open does it)."""
    fts = store.has_fts()
    if not fts:
        half = _rebuild.half_index(store)
        if half:
            raise StoreError(half)  # `open` rebuilds the graph, then comes back here
    short = _no_room(store)
    if short:  # checked before the copy, which filled the disk and failed at every writer's open (p16 review)
        _defer(store, short)
        return
    try:
        taken = _rollback.take(store, "drop of the old full-text index")
    except StoreError as exc:
        _defer(store, str(exc))
        return  # (no room for the copy) nothing changed; a later open does it
    if not taken:
        return
    if not fts and not _probe(store):
        _rollback.release(store)
        return
    _rebuild.drop_fts(store)
    mark(store)
    store._execute_raw("MATCH (m:Meta {key: $key}) DELETE m", {"key": DEFERRED})
    _rollback.release(store)


def _no_room(store: Any) -> str | None:
    """Why the copy the drop needs would not fit, or None: the graph file and its WAL are copied after a checkpoint
    (which moves the WAL into the file), and `ROOM_MARGIN_MB` stays free."""
    if getattr(store, "backend", "kuzu") != "kuzu":
        return None
    path = _rollback.real(Path(store.path))
    try:
        size = path.stat().st_size
        wal = path.with_name(path.name + ".wal")
        size += 2 * (wal.stat().st_size if wal.exists() else 0)
        fs = os.statvfs(path.parent)
    except OSError:
        return None
    free, need = fs.f_bavail * fs.f_frsize, size + ROOM_MARGIN_MB * 1024 * 1024
    if free >= need:
        return None
    mb = 1024 * 1024
    return (f"{NOT_DROPPED}: the drop keeps a copy of the graph first ({-(-need // mb)} MB with the room kept free), "
            f"and {path.parent} has {free // mb} MB free. kg works with it in place meanwhile (each write keeps it "
            f"up to date: slower). Free {-(-(need - free) // mb)} MB there, then run `kg doctor` (or any write) to "
            "drop it")


def deferred(store: Any) -> str | None:
    """Why an old graph's node_fts is still there (`_defer`'s message), or None."""
    rows = store._execute_raw("MATCH (m:Meta {key: $key}) RETURN m.value AS v", {"key": DEFERRED})
    return rows[0]["v"] if rows else None


def _defer(store: Any, why: str) -> None:
    """Say once (a warning from the open that first finds it, and `kg doctor`'s check after) that the drop waits;
    later opens check the room again (one statvfs) and say nothing."""
    if deferred(store) is not None:
        return
    why = why if why.startswith(NOT_DROPPED) else f"{NOT_DROPPED}: {why}"
    store.repairs.append(why)
    store._execute_raw("MERGE (m:Meta {key: $key}) SET m.value = $value", {"key": DEFERRED, "value": why})


def _probe(store: Any) -> bool:
    """An index of node_fts's name over `PROBE_COLUMN` (see the module's doc): True when built (the graph is
    clean; the caller drops it); raises the error `Store.open` repairs when refused with a half-dropped
    index's signs (the copy released first: the rebuild starts from the graph as it is)."""
    try:
        store._execute_raw(PROBE, {})
    except StoreError as exc:
        if _rebuild.stale_fts(str(exc)):
            _rollback.release(store)
            raise
        return False  # (the disk) left as it is, for a later open
    finally:
        store.forget_prepared()
    return True
