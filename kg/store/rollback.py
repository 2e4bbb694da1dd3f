"""The graph as it was before a bulk change that a kill can leave unopenable (issue 20).

kuzu 0.11.3 does not survive every kill in the middle of the import's work: its full-text index dropped and built
again, COPY into tables with a primary key, the checkpoints in between. Killed there, the next open failed with
"Found duplicated primary key value ..." (the log replayed over a file that already held it) or "Cannot read from
file graph.kuzu ... numBytesRead: 0", or a later COPY with "Cannot find table catalog entry with id 2^63+12" (a
drop replayed half). No repair inside such a file is possible when Kùzu cannot open it at all.

So the import is not done unprotected: before its first write it checkpoints the graph (the file alone then holds
everything) and copies the file aside (`graph.kuzu.rollback`), then writes the intent (`graph.kuzu.rollback.json`).
It holds the graph's lock from then until it is done, so nothing else is written meanwhile: the copy plus the
import run again is everything. At its end it checkpoints and `release`s both.

The intent names the phase the import is in. The next writer's open (with the lock, before Kùzu opens the file)
that finds the intent of a process that is gone `restore`s the copy (the import then runs again from its start)
when the kill came in the middle of the index's drop or build ("drop", "index": kuzu 0.11.3 leaves half-states
there that no cheap check finds: killed right after the drop, the next COPY crashed the process), or when the file
does not open. Killed while loading rows ("load": the drop checkpointed, only COPY and plain writes since), a
graph that opens is kept, so the import resumes where it was, and the copy goes: from then on other writers
change the graph, and the copy would lose their writes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from kg.core.errors import StoreError


def backup_of(path: Path) -> Path:
    return path.with_name(path.name + ".rollback")


def intent_of(path: Path) -> Path:
    return path.with_name(path.name + ".rollback.json")


def take(store: Any, what: str) -> bool:
    """Before a bulk change of the open graph `store` (its lock held until `release`): checkpoint, copy the file
    aside, then write the intent. False for a team graph (no file) and when a copy is held already."""
    if getattr(store, "backend", "kuzu") != "kuzu":
        return False
    path = Path(store.path)
    if intent_of(path).exists():
        return False
    store._execute_raw("CHECKPOINT", {})  # the file holds every committed write; the log is empty
    part = path.with_name(f"{path.name}.rollback-{os.getpid()}.part")
    try:
        shutil.copyfile(path, part)
        _fsync(part)
        os.replace(part, backup_of(path))
        _write(intent_of(path), {"what": what, "pid": os.getpid(), "backup": str(backup_of(path)), "phase": "drop"})
    except OSError as exc:
        part.unlink(missing_ok=True)
        backup_of(path).unlink(missing_ok=True)
        raise StoreError(f"cannot keep a copy of the graph before the {what} ({exc.strerror or exc}); free some "
                         "space and run it again. Nothing was changed") from None
    return True


def phase(store: Any, name: str) -> None:
    """The bulk change moves on to phase `name` ("load": rows only, the graph whole after a kill; else the copy
    is restored after one)."""
    if getattr(store, "backend", "kuzu") != "kuzu":
        return
    path = Path(store.path)
    try:
        plan = json.loads(intent_of(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if plan.get("pid") == os.getpid() and plan.get("phase") != name:
        _write(intent_of(path), {**plan, "phase": name})


def trusted(plan: dict[str, Any]) -> bool:
    """Whether a graph a kill left in this phase is kept when it opens (else the copy is restored at once)."""
    return plan.get("phase") == "load"


def release(store: Any) -> None:
    """The bulk change is complete: checkpoint (so no log of it is replayed later), then drop intent and copy."""
    if getattr(store, "backend", "kuzu") != "kuzu" or not intent_of(Path(store.path)).exists():
        return
    store._execute_raw("CHECKPOINT", {})
    discard(Path(store.path))


def discard(path: Path) -> None:
    """Intent first, then the copy: a kill in between leaves a copy without intent, which `pending` removes."""
    intent_of(path).unlink(missing_ok=True)
    backup_of(path).unlink(missing_ok=True)


def pending(path: Path) -> dict[str, Any] | None:
    """At a writer's open (lock held, the graph not open yet): the intent of a bulk change that was cut short,
    or None. A stray copy or part file without an intent (a release cut short) is removed."""
    try:
        plan = json.loads(intent_of(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        backup_of(path).unlink(missing_ok=True)
        for part in path.parent.glob(f"{path.name}.rollback-*.part"):
            part.unlink(missing_ok=True)
        return None
    except (OSError, ValueError):
        plan = {}
    if not isinstance(plan, dict) or plan.get("pid") == os.getpid():
        return None  # (this process's own change, still going)
    return plan


def restore(path: Path, plan: dict[str, Any]) -> str:
    """Put the copy back in place of the graph a kill left (not open, lock held). The file the kill left is kept
    beside it as `*.cut-short`. Returns what was done, for the open's repairs."""
    backup = backup_of(path)
    if not backup.exists():  # a restore cut short after the swap: the graph is the copy already
        intent_of(path).unlink(missing_ok=True)
        return "found the graph restored already"
    kept = path.with_name(path.name + ".cut-short")
    if path.exists():
        os.replace(path, kept)
    for suffix in (".wal", ".shadow"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    os.replace(backup, path)
    intent_of(path).unlink(missing_ok=True)
    what = plan.get("what") or "bulk change"
    where = {"drop": "dropping the full-text index", "index": "building the full-text index"}.get(
        plan.get("phase"), "loading rows, and the graph would not open")
    return (f"the {what} was cut short while {where} (kuzu 0.11.3 may not recover there); restored the graph as it "
            f"was before the {what}, which runs again from its start; the file the kill left is at {kept}")


def _write(path: Path, data: dict[str, Any]) -> None:
    part = path.with_name(path.name + f".{os.getpid()}.part")
    with open(part, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(part, path)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
