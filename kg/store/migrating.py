"""A writer's open that has work to do before it answers (issue 22): migrations not applied yet, the pattern
aggregates a migration asked to rebuild, a missing full-text index. At a million entries that is minutes with
the graph held; this module names the steps for the processes waiting (`kg.serve.progress`, the marker) and
lets an open that reads with a small buffer pool (the read server's) do that work with the workspace's pool,
then go back to the small one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kg.serve.progress import Marker

AGGREGATES = "rebuild the pattern aggregates"
INDEX = "build the full-text index"


def plan(store: Any) -> list[str]:
    """The steps this open will take before it answers; [] in the common case (a few small queries)."""
    from kg.store.aggregates import FLAG_VALUE
    from kg.store.schema import migrations

    applied = set(store.applied_migrations())
    steps = [f"migration {name}" for name, _ in migrations() if name not in applied]
    if not applied:
        return steps  # a new graph: nothing to rebuild, and it is small
    try:  # not `aggregates.ready`, which caches a flag a pending migration may clear
        flag = any(r["value"] == FLAG_VALUE for r in store.run("agg_flag"))
    except Exception:  # noqa: BLE001 - a graph before migration 0005 has no aggregate
        flag = False
    if steps or not flag:
        steps.append(AGGREGATES)
    if not store.has_fts():
        steps.append(INDEX)
    return steps


def begin(store: Any, kg_dir: Any, pool: int, work_pool: int, connect: Callable[[int], Any]) -> int:
    """Before a writer's open migrates: the marker of its steps written, and the graph reopened with
    `work_pool` when it is larger than `pool` and there is work. The pool the work runs with."""
    steps = plan(store)
    if not steps:
        return pool
    marker = Marker(kg_dir, steps)
    marker.step(steps[0])
    store._progress = marker
    if work_pool > pool:
        _reopen(store, connect, work_pool)
        return work_pool
    return pool


def settle(store: Any, pool: int, small: int, connect: Callable[[int], Any]) -> None:
    """The work done: the marker goes, and a graph reopened with a larger pool goes back to `small`."""
    finish(store)
    if pool != small:
        store.forget_prepared()
        store._close()
        trim()
        store._db, store._conn = connect(small)


def _reopen(store: Any, connect: Callable[[int], Any], pool: int) -> None:
    store.forget_prepared()
    store._close()
    store._db, store._conn = connect(pool)


def step(store: Any, name: str) -> None:
    """The open moves on to step `name` (a no-op when it is not one of its planned steps)."""
    marker = getattr(store, "_progress", None)
    if marker is not None and name in marker.steps:
        marker.step(name)


def finish(store: Any) -> None:
    marker = store.__dict__.pop("_progress", None)
    if marker is not None:
        marker.done()


def trim() -> None:
    """Give the freed heap back to the system after a large pool was closed (glibc keeps it otherwise: a Kùzu
    handle's ~120 MB stay resident after its close)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
