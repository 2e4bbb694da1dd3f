"""Session ends handed to a detached child, kept in `memory/.kg/ending/<session>.json` until that child has ended
the session, so that a child that never does (a full disk, a crash, kill -9) leaves a session that the next one
to look ends.

A runtime's session end answers at once and leaves the reflection and the summary to a detached child
(`kg.runtimes.hooks.hand_over_end`); the session stops being current and tied to its runtime session as the hook
answers, so nothing would ever end it if the child failed. Before answering, the hook writes the record under an
exclusive `flock`, taken on a private name and then renamed into place (a sweeper never sees an unheld lock on
a record whose owner lives), and keeps the descriptor open: the forked child inherits it, so the lock is held
exactly as long as the hook or its child lives. The child removes the record once the session is ended. A
record whose lock can be taken belongs to no one alive: `sweep` ends its session, once (the record goes after,
and a session that ended already is only forgotten), with the summary the graph can still make. A private name
whose writer was killed before its rename (`.<session>.<pid>.tmp`, its pid gone) is removed by the same sweep; a
live writer's is left to it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIR = "ending"
_held: list[int] = []  # this process's record locks: inherited by the detached child, released when it exits


def _path(ws: Any, sid: str) -> Path:
    return ws.kg_dir / DIR / f"{sid}.json"


def unstarted(transcript: str) -> str:
    """The record name of an end that has no kg session to end (none was started: a start behind a team server that
    was down, or hooks installed mid-session), named after its transcript: the early record and the full path name
    it alike. Its record (`no_session`) asks only for the reflection on that transcript. Pure."""
    return "transcript-" + hashlib.sha256(transcript.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def hand_over(ws: Any, sid: str, at: str, transcript: str | None, *, no_session: bool = False) -> None:
    """Record that session `sid`'s end (dated `at`, reflecting on `transcript`) is left to this process's
    detached child; the record's lock is held until this process and that child are gone. A session id that is
    not a plain name (`--session ../x`, a hand-edited current-session file) is refused before anything is written,
    as the end refuses it: it is the record's file name, which it would put outside memory/.kg/ending."""
    from kg.core.files import check_folder
    from kg.core.paths import check_name

    check_name(sid, "session id")
    body = json.dumps({"session": sid, "at": at, "transcript": transcript}
                      | ({"no_session": True} if no_session else {})).encode()
    fd = _mine(ws, sid)
    if fd is not None:  # written already by this process (`kg.runtimes.early_end`): the record, as now known
        os.ftruncate(fd, 0)
        os.pwrite(fd, body, 0)
        os.fsync(fd)
        return
    folder = ws.kg_dir / DIR
    check_folder(folder)  # a linked ending/ leading out of memory/.kg is not written through (QA3 #4)
    folder.mkdir(parents=True, exist_ok=True)
    private = folder / f".{sid}.{os.getpid()}.tmp"
    fd = os.open(private, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, body)
        os.fsync(fd)
        os.rename(private, _path(ws, sid))
    except BaseException:
        os.close(fd)
        private.unlink(missing_ok=True)
        raise
    _held.append(fd)


def _mine(ws: Any, sid: str) -> int | None:
    """The descriptor this process holds session `sid`'s record by, or None."""
    try:
        ino = _path(ws, sid).stat().st_ino
    except OSError:
        return None
    return next((fd for fd in _held if os.fstat(fd).st_ino == ino), None)


def withdraw(ws: Any, keep: str | None = None) -> None:
    """The records this process wrote early (`kg.runtimes.early_end`) for an end it does not hand over after all
    (`keep`: the one it does): removed, so no sweep ends a session nobody ended."""
    if not _held:
        return
    folder = ws.kg_dir / DIR
    try:
        found = [p for p in folder.iterdir() if p.suffix == ".json"]
    except OSError:
        return
    for path in found:
        if path.stem == keep:
            continue
        fd = _mine(ws, path.stem)
        if fd is not None:
            path.unlink(missing_ok=True)
            _held.remove(fd)
            os.close(fd)


def leave(ws: Any, sid: str, at: str, transcript: str | None) -> None:
    """Record session `sid`'s end (dated `at`, reflecting on `transcript`) for the next `sweep` to do: written as
    `hand_over` writes it, but its lock is let go at once, as if its child had died. (A start that finds the
    runtime ended a session without saying so: OpenClaw's daily reset.)"""
    hand_over(ws, sid, at, transcript)
    fd = _held.pop()
    os.close(fd)


def done(ws: Any, sid: str) -> None:
    """Session `sid`'s end is done (by its child, or by a sweep): its record goes, if it is this process's."""
    path = _path(ws, sid)
    try:
        mine = any(os.fstat(fd).st_ino == path.stat().st_ino for fd in _held)
    except OSError:
        return
    if mine:
        path.unlink(missing_ok=True)


def _writer(name: str) -> int | None:
    """The pid in a private name `.<session>.<pid>.tmp` (`hand_over`), or None for a name kg did not make."""
    if not name.startswith(".") or not name.endswith(".tmp"):
        return None
    pid = name[:-len(".tmp")].rpartition(".")[2]
    return int(pid) if pid.isdigit() and int(pid) > 0 else None


def _alive(pid: int | None) -> bool:
    """Whether process `pid` exists (another user's counts: it may still rename its record). None: unknown, kept."""
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _clear_private(found: list[Path]) -> None:
    for path in found:
        if path.suffix == ".tmp" and not _alive(_writer(path.name)):
            path.unlink(missing_ok=True)  # its writer died between the open and the rename: never a record


def _listed(ws: Any) -> list[Path]:
    """What memory/.kg/ending holds; nothing when it is missing, unreadable or a link leading out of memory/.kg
    (`hand_over` writes no record there, so none there is kg's to end or remove: QA3 #4)."""
    from kg.core.files import outside_problem

    folder = ws.kg_dir / DIR
    if outside_problem(folder):
        return []
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def left(ws: Any) -> bool:
    """Whether a record waits for `sweep` (its lock is free: its hook and child are gone). Cheap, and it needs no
    graph: a session start asks it to know whether to hand the sweep to a detached child
    (`kg.runtimes.hooks.finish_left`). A private name a dead writer left goes here too, as in `sweep`."""
    found = _listed(ws)
    _clear_private(found)
    for path in sorted(p for p in found if p.suffix == ".json"):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            continue  # its hook or child lives
        finally:
            os.close(fd)  # (the lock goes with it)
    return False


def sweep(ws: Any, finish: Callable[[dict[str, Any]], bool]) -> list[str]:
    """Give each record whose owner died (its lock free) to `finish`, holding its lock, and remove it when
    `finish` says so (True: the session is ended, or there is none to end). The sessions finished. A private
    name left by a writer that died before its rename goes too (no record was handed over under it)."""
    out: list[str] = []
    found = _listed(ws)
    _clear_private(found)
    names = sorted(p for p in found if p.suffix == ".json")
    for path in names:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its hook or child lives: the end is under way
            try:
                if os.fstat(fd).st_ino != path.stat().st_ino:
                    continue  # finished and removed by another sweep while this one waited
            except OSError:
                continue
            try:
                record = json.loads(path.read_bytes())
                sid = record["session"]
                if not isinstance(sid, str) or not sid:
                    raise ValueError(sid)
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # not a record kg wrote whole (written before the rename): nothing to do
                continue
            if finish(record):
                path.unlink(missing_ok=True)
                out.append(sid)
        finally:
            os.close(fd)
    return out
