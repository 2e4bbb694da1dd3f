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

Whose intent it is: a nonce the taking process holds in memory (`_taken`), never its pid alone. A killed
import's pid may be reused by a later writer (containers restart pids); by pid, that writer took the intent for
its own, wrote on, and the next writer restored the old copy over those writes. An intent this process did not
take is stale whatever its pid (the lock is held: no other import is running). An import that raises rather
than being killed gives its intent up at once (`abandon`): Kùzu rolled the failed statement back, so the graph
is whole, and the process writes on.

A graph reached through a symbolic link is copied and restored at the link's target (`real`): a restore never
puts a regular file in the link's place, so later writes keep going to the target.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from kg.core.errors import StoreError

_taken: dict[str, str] = {}  # intent file -> the nonce this process wrote in it (in memory only)


def real(path: Path) -> Path:
    """The graph file itself (a symbolic link's target), where the copy and the file a restore replaces live."""
    return Path(os.path.realpath(path))


def backup_of(path: Path) -> Path:
    path = real(path)
    return path.with_name(path.name + ".rollback")


def cut_short_of(path: Path) -> Path:
    """Where a restore keeps the file the kill left (a full-size copy; `kg doctor` removes it)."""
    path = real(path)
    return path.with_name(path.name + ".cut-short")


def _mine(path: Path, plan: Any) -> bool:
    return isinstance(plan, dict) and plan.get("token") is not None and \
        plan.get("token") == _taken.get(str(intent_of(path)))


def _own(store: Any) -> tuple[Path, dict[str, Any] | None]:
    """The graph's path and the intent of this process's own bulk change on it (None: none, not Kùzu, or
    another process's)."""
    path = Path(store.path)
    if getattr(store, "backend", "kuzu") != "kuzu":
        return path, None
    try:
        plan = json.loads(intent_of(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return path, None
    return path, plan if _mine(path, plan) else None


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
    file = real(path)
    part = file.with_name(f"{file.name}.rollback-{os.getpid()}.part")
    token = secrets.token_hex(16)
    try:
        shutil.copyfile(file, part)
        _fsync(part)
        os.replace(part, backup_of(path))
        _taken[str(intent_of(path))] = token
        _write(intent_of(path), {"what": what, "pid": os.getpid(), "token": token, "backup": str(backup_of(path)),
                                 "phase": "drop"})
    except OSError as exc:
        _taken.pop(str(intent_of(path)), None)
        part.unlink(missing_ok=True)
        backup_of(path).unlink(missing_ok=True)
        raise StoreError(f"cannot keep a copy of the graph before the {what} ({exc.strerror or exc}); free some "
                         "space and run it again. Nothing was changed") from None
    return True


def phase(store: Any, name: str) -> None:
    """The bulk change moves on to phase `name` ("load": rows only, the graph whole after a kill; else the copy
    is restored after one)."""
    path, plan = _own(store)
    if plan is not None and plan.get("phase") != name:
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


def abandon(store: Any) -> None:
    """The bulk change raised (not killed) in this process: its copy is put back at once, before the process
    writes on (a later writer's open would otherwise restore it over those writes, and a graph left without its
    index refuses them). The lock was held since `take`, so the copy plus the change run again is everything;
    the store is open again afterwards, whatever happened."""
    path, plan = _own(store)
    if plan is None:
        return
    store.forget_prepared()
    store._close()
    try:
        restore(path, plan)
        cut_short_of(path).unlink(missing_ok=True)  # the change's own half, run again from its start
    finally:
        _taken.pop(str(intent_of(path)), None)
        store._db, store._conn = store._connect()
        store.__dict__.pop("_agg_ready", None)


def discard(path: Path) -> None:
    """Intent first, then the copy: a kill in between leaves a copy without intent, which `pending` removes."""
    intent_of(path).unlink(missing_ok=True)
    _taken.pop(str(intent_of(path)), None)
    backup_of(path).unlink(missing_ok=True)


def pending(path: Path) -> dict[str, Any] | None:
    """At a writer's open (lock held, the graph not open yet): the intent of a bulk change that was cut short,
    or None. A stray copy or part file without an intent (a release cut short) is removed."""
    try:
        plan = json.loads(intent_of(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        backup_of(path).unlink(missing_ok=True)
        file = real(path)
        for part in file.parent.glob(f"{file.name}.rollback-*.part"):
            part.unlink(missing_ok=True)
        return None
    except (OSError, ValueError):
        plan = {}
    if not isinstance(plan, dict):
        plan = {}
    if _mine(path, plan):
        return None  # (this process's own change, still going)
    return plan  # stale whatever its pid: a killed import's (the pid may be this process's, reused)


def restore(path: Path, plan: dict[str, Any]) -> str:
    """Put the copy back in place of the graph a kill left (not open, lock held). The file the kill left is kept
    beside it as `*.cut-short`. Returns what was done, for the open's repairs."""
    backup = backup_of(path)
    if not backup.exists():  # a restore cut short after the swap: the graph is the copy already
        intent_of(path).unlink(missing_ok=True)
        return "found the graph restored already"
    file, kept = real(path), cut_short_of(path)
    if file.exists():
        os.replace(file, kept)
    for suffix in (".wal", ".shadow"):
        for where in {path, file}:
            where.with_name(where.name + suffix).unlink(missing_ok=True)
    os.replace(backup, file)
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
