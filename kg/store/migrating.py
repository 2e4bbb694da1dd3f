"""A writer's open that has work to do before it answers (issue 22): migrations not applied yet, the pattern
aggregates a migration asked to rebuild, an old full-text index to drop. At a million entries that is minutes with
the graph held; this module names the steps for the processes waiting (`kg.serve.progress`, the marker).
"""

from __future__ import annotations

from typing import Any

from kg.serve.progress import Marker, sweep  # noqa: F401 - sweep: a writer's open, with the lock held

AGGREGATES = "rebuild the pattern aggregates"
RETIRE = "drop the old full-text index node_fts"  # (issue 22) linking and search ask the side index instead


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
    if store.has_fts():
        steps.append(RETIRE)
    return steps


def begin(store: Any, kg_dir: Any) -> None:
    """Before a writer's open migrates: the marker of its steps, written when there is work."""
    steps = plan(store)
    if steps:
        store._progress = Marker(kg_dir, steps)
        store._progress.step(steps[0])


def step(store: Any, name: str) -> None:
    """The open moves on to step `name` (a no-op when it is not one of its planned steps)."""
    marker = getattr(store, "_progress", None)
    if marker is not None and name in marker.steps:
        marker.step(name)


def finish(store: Any) -> None:
    marker = store.__dict__.pop("_progress", None)
    if marker is not None:
        marker.done()
