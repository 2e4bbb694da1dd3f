"""Kùzu's own full-text index, node_fts, retired (issue 22).

Nothing asks it any more: linking and search ask the side index (kg/store/sidelink.py, kg/store/sideindex.py),
and building it cost most of a large import's CPU and memory. A new graph is made without it and marked
(`retired`); a writer's open drops an old graph's (`retire`) and marks it.

kuzu 0.11.3 may not survive a kill in the middle of a drop (issue 20: the drop replayed half, "Cannot find
table catalog entry ..." on a later write), so the drop is done as the import's is: the graph checkpointed and
copied aside first (kg/store/rollback.py), the drop checkpointed at once, then the mark written and the copy
released. Killed before the release, the next writer's open puts the copy back and drops again.

A graph with neither the index nor the mark lost its index some other way (a kill in an older kg's drop or
build). As before issue 22 the index is built once to find out: a graph in that state fails with the signs
`Store.open` repairs by rebuilding it (kg/store/rebuild.py); then it is dropped as above.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core.errors import StoreError
from kg.store import rebuild as _rebuild
from kg.store import rollback as _rollback

KEY = "fts:retired"  # Meta key: the graph has no full-text index of its own, cleanly


def retired(store: Any) -> bool:
    """Whether the graph is marked as having no full-text index of its own, cleanly. One key lookup."""
    return bool(store._execute_raw("MATCH (m:Meta {key: $key}) RETURN m.value AS v", {"key": KEY}))


def mark(store: Any) -> None:
    store._execute_raw("MERGE (m:Meta {key: $key}) SET m.value = $value",
                       {"key": KEY, "value": datetime.now().isoformat(timespec="seconds")})


def retire(store: Any) -> None:
    """Drop node_fts and mark the graph (see the module's doc). Without room for the copy, or while another
    bulk change's copy is held, nothing changes (a later open does it)."""
    from kg.store import _FTS_CREATE

    if not store.has_fts():
        try:
            store._execute_raw(_FTS_CREATE, {})
        except StoreError as exc:
            if _rebuild.stale_fts(str(exc)):
                raise  # `open` rebuilds the graph, then comes back here
            return  # (a pool too small at a million nodes) left as it is, for a later open
        finally:
            store.forget_prepared()
    try:
        taken = _rollback.take(store, "drop of the old full-text index")
    except StoreError:
        return  # (no room for the copy) nothing changed; linking asks node_fts while it is there
    if not taken:
        return
    _rebuild.drop_fts(store)
    mark(store)
    _rollback.release(store)
