"""The write journal: how `kg log` acknowledges a write without waiting for the graph.

Many `kg` processes run at once (parallel sub-agents, hooks, a cron job), and Kùzu admits one at a time. A log
is made durable here first: under a short lock on `journal.lock` it gets its id, is appended to
`journal.jsonl` and fsynced. Only then is it acknowledged. Whoever next holds the graph (this process a moment
later, or any other kg command) drains the journal into the graph in one transaction. Applying is idempotent
(an id already in the graph is skipped), so a crash at any point replays safely.

Draining renames `journal.jsonl` to `draining-*.jsonl` (new appends start a fresh file), applies it, then
deletes it; a drainer that dies leaves the file behind for the next one.

Each store has a lane of its own. The plain names belong to the store the workspace is configured for (kg.toml's
`[store] url`, else the embedded graph); a process sent elsewhere by `KG_STORE` (`KG_STORE=kuzu` in a team's
workspace, or another server) journals to `journal.<lane>.jsonl` and drains only `draining.<lane>-*.jsonl`. Without
that, whichever store held the graph next took every pending write: a team's entries logged while its server was
away went into a local graph the team never reads, and one command's local writes into the team's graph.

The plain lane also takes back (`adopt`) the lane its own store had while the workspace was configured for another
one: `kg init --store B` hands the writes waiting for A to A's lane, and once `kg init --store A` names A again
those are the plain lane's (QA2 #2: nothing drained them, for good).
"""

from __future__ import annotations

import errno
import json
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import StoreError
from kg.core.files import fsync_dir as _fsync_dir
from kg.core.files import (
    temporaries,
    write_atomic,  # noqa: F401 - re-exported: kg.ingest.journal.write_atomic stays
)
from kg.core.paths import WaitLock

_ID = re.compile(r"^([A-Za-z]+)-(\d{8})-(\d+)$")
_SESSION = b'"op": "session"'  # a journaled session start as json.dumps writes it (an escaped quote never matches)


@dataclass
class BadLine:
    lineno: int
    text: str
    reason: str


@dataclass
class Pending:
    path: Path
    records: list[dict[str, Any]]
    skipped: int
    bad: list[BadLine] = field(default_factory=list)


class IdsDamaged(StoreError):
    """ids.json does not read as the counters: the next open of the graph rebuilds it (kg/ingest/ids_rebuild.py)."""


REJECTED = "journal.rejected"
MAX_DRAINING = 4  # draining files kept apart before `take` merges them (see `Journal._merge`)


class Journal:
    def __init__(self, folder: Path, *, timeout: float, lane: str | None = None, adopt: str | None = None):
        self.folder = folder
        self.timeout = timeout
        self.lane = lane  # None: the workspace's configured store (see the module docstring)
        self.path = folder / ("journal.jsonl" if lane is None else f"journal.{lane}.jsonl")
        self._draining = "draining-" if lane is None else f"draining.{lane}-"
        # the plain lane's store under the name it had as another store's lane (`kg.store.backend.own_lane`): its
        # files are this lane's, taken over by the next drain (see the module docstring)
        self._adopt = Journal(folder, timeout=timeout, lane=adopt) if lane is None and adopt else None
        self.ids_path = folder / "ids.json"
        self._lock = WaitLock(folder / "journal.lock", timeout=timeout, what="the write journal")
        # The file lock keeps other processes out; this keeps this process's other threads out (a workspace's
        # background applier allocates pattern ids while the caller logs). Re-entrant in one thread.
        self._threads = threading.RLock()
        self._ids: dict[str, int] | None = None
        self._checked: set[str] = set()  # counters `_catch_up` checked in this process

    @contextmanager
    def locked(self) -> Iterator[Journal]:
        with self._threads:
            if self._lock.held:  # re-entrant: this thread holds it further up
                yield self
                return
            with self._lock:
                self._ids = None
                self._sweep()
                try:
                    yield self
                finally:
                    self._ids = None

    def _sweep(self) -> None:
        """Remove the temporary id files of writers killed mid-write (issue 20: a `kg log` stopped by SIGTERM or
        SIGKILL while saving the counters left `.ids.json.<pid>.<tid>.tmp`). The id file is written under the
        journal lock only, which this process holds now: any such file is a dead writer's. So is a note of copies
        to write (`kg.ingest.copies`): they are written first."""
        for tmp in temporaries(self.ids_path):
            try:
                os.unlink(tmp)
            except OSError:
                pass
        from kg.ingest import copies

        copies.finish(self.folder)  # the copies of the entries a writer killed here had journaled (QA8 #1)

    # -- ids ----------------------------------------------------------------------------------------------
    def _load_ids(self) -> dict[str, int]:
        if self._ids is None:
            try:
                self._ids = {k: int(v) for k, v in json.loads(self.ids_path.read_text()).items()}
            except FileNotFoundError:  # `kg init` writes it: gone from a used workspace, the counters restart
                # at 001 and `kg log` answered an older entry's id (the applier stored the entry under another)
                raise IdsDamaged(f"{self.ids_path} is missing. It holds the last id kg gave out for each day; "
                                 "run `kg doctor` to rebuild it from the graph and the journal") from None
            except (ValueError, AttributeError, TypeError):
                raise IdsDamaged(f"{self.ids_path} is damaged. It holds the last id kg gave out for each day; "
                                 "run `kg doctor` to rebuild it from the graph and the journal") from None
        return self._ids

    def start_ids(self) -> None:
        """A new workspace's counters, none given out yet (`kg init`): a missing ids.json reads as damaged."""
        with self.locked():
            if not self.ids_path.exists():
                write_atomic(self.ids_path, b"{}")

    def allocate(self, prefix: str, day: str, count: int = 1) -> list[str]:
        """Reserve the next `count` ids `PREFIX-YYYYMMDD-NNN`. The counter is saved before the caller writes
        anything that carries the id, so a crash can leave a gap but never a duplicate."""
        assert self._lock.held, "allocate() needs the journal lock"
        ids = self._load_ids()
        key = f"{prefix}-{day}"
        self._catch_up(ids, [key])
        start = ids.get(key, 0) + 1
        ids[key] = start + count - 1
        write_atomic(self.ids_path, json.dumps(ids, sort_keys=True).encode())
        return [f"{prefix}-{day}-{n:03d}" for n in range(start, start + count)]

    def _catch_up(self, ids: dict[str, int], keys: Iterable[str]) -> None:
        """Raise counters this process has not checked yet past the ids the workspace holds (kg/ingest/ids_seen.py:
        an ids.json behind them, restored or copied mid-log, gave out an id another entry had, QA3 #2)."""
        unchecked = [key for key in keys if key not in self._checked]
        if not unchecked:
            return
        from kg.ingest import ids_seen

        for key, number in ids_seen.highest(self.folder, unchecked, self.counter_of).items():
            if number > ids.get(key, 0):
                ids_seen.warn(key, ids.get(key, 0), number)
                ids[key] = number
        self._checked.update(unchecked)

    def allocate_many(self, requests: list[tuple[str, str]]) -> list[str]:
        """One id per `(prefix, day)` request, in order, with the counters saved once: a bulk import that
        allocates one at a time re-writes the id file per id (quadratic in the number of days and prefixes)."""
        assert self._lock.held, "allocate_many() needs the journal lock"
        if not requests:
            return []
        ids = self._load_ids()
        self._catch_up(ids, {f"{prefix}-{day}" for prefix, day in requests})
        out = []
        for prefix, day in requests:
            key = f"{prefix}-{day}"
            ids[key] = ids.get(key, 0) + 1
            out.append(f"{prefix}-{day}-{ids[key]:03d}")
        write_atomic(self.ids_path, json.dumps(ids, sort_keys=True).encode())
        return out

    def observe(self, existing: list[str]) -> None:
        """Raise the counters past ids that came from elsewhere (an imported trail): only past those this journal
        could give out itself (`counter_of`), the others can never meet its ids."""
        assert self._lock.held
        ids = self._load_ids()
        changed = False
        for value in existing:
            match = _ID.match(value)
            number = self.counter_of(match.group(3)) if match else None
            if match and number is not None:
                key = f"{match.group(1)}-{match.group(2)}"
                if ids.get(key, 0) < number:
                    ids[key] = number
                    changed = True
        if changed:
            write_atomic(self.ids_path, json.dumps(ids, sort_keys=True).encode())

    def counter_of(self, digits: str) -> int | None:
        """The counter an id's number stands for, when `allocate` writes numbers that way (`{n:03d}`), else None:
        `002001` (a team member's tagged id, kg/store/team.py) is no counter of 2001 here."""
        number = int(digits)
        return number if digits == f"{number:03d}" else None

    # -- records ------------------------------------------------------------------------------------------
    def append(self, records: list[dict[str, Any]]) -> int:
        """Append and fsync; returns the journal file's inode, for `applied_since`."""
        assert self._lock.held, "append() needs the journal lock"
        here = clock.zone_name(clock.zone())  # the zone its naive times were read in: the applier's to convert
        records = [r if "zone" in r else {**r, "zone": here} for r in records]
        data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a torn line from a crash: never glue a good record onto it
            os.write(fd, data)
            os.fsync(fd)
            if not size:
                _fsync_dir(self.folder)  # a fresh file (a drain renamed the last one): its name is durable too
            return os.fstat(fd).st_ino
        finally:
            os.close(fd)

    def take(self) -> Iterator[Pending]:
        """Hand every pending record to the caller, who must hold the graph: one draining file at a time,
        oldest first, each read only when the caller gets to it (a drain that stops early, for a reader or at
        its budget, reads no more than it applies)."""
        with self.locked():
            if self._adopt is not None:  # first: they were written before what the plain lane holds now
                self._adopt._move_to(self)
            if self.path.is_dir():  # never renamed into the drain, where every read would fail on it (QA11 #11)
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(self.path))
            if self.path.exists() and self.path.stat().st_size:
                os.replace(self.path, self.draining_path(f"{time.time_ns():020d}-{os.getpid()}"))
        paths = self.draining_files()
        if len(paths) > MAX_DRAINING:
            paths = self._merge(paths)
        return (_pending(path) for path in paths)

    def draining_path(self, stamp: str) -> Path:
        """A draining file of this lane; `stamp` (a time in ns, the process id) orders them."""
        return self.folder / f"{self._draining}{stamp}.jsonl"

    def draining_files(self) -> list[Path]:
        """This lane's draining files, oldest first (with the adopted lane's, not yet taken over, among them)."""
        if self._adopt is None:
            return sorted(self.folder.glob(f"{self._draining}*.jsonl"))
        prefixes = (self._draining, self._adopt._draining)
        try:
            names = [n for n in os.listdir(self.folder) if n.startswith(prefixes) and n.endswith(".jsonl")]
        except FileNotFoundError:
            return []
        return [self.folder / n for n in sorted(names, key=lambda n: n.split("-", 1)[1])]  # by stamp

    def hand_over(self, lane: str | None) -> int:
        """Move every pending file of this lane to `lane`, by renames under the journal lock (so a crash leaves
        each file whole in one lane or the other), kept in order; how many files moved. `kg init --store` hands the
        writes made for the store it replaces to that store's lane: the plain lane becomes the new store's."""
        with self.locked():
            return self._move_to(Journal(self.folder, timeout=self.timeout, lane=lane))

    def _move_to(self, other: Journal) -> int:
        """`hand_over`'s renames, the journal lock held: this lane's own files (not an adopted lane's)."""
        moved = 0
        for path in sorted(self.folder.glob(f"{self._draining}*.jsonl")):
            os.replace(path, other.draining_path(path.name[len(self._draining):-len(".jsonl")]))
            moved += 1
        if self.path.exists() and self.path.stat().st_size:
            os.replace(self.path, other.draining_path(f"{time.time_ns():020d}-{os.getpid()}"))
            moved += 1
        if moved:
            _fsync_dir(self.folder)
        return moved

    def other_lanes(self) -> dict[str, int]:
        """Lines waiting in other stores' lanes, by file name (what `kg doctor` reports: they wait for a command
        run against their store)."""
        mine = {self.path, *self.draining_files(), *([self._adopt.path] if self._adopt is not None else [])}
        out = {}
        for path in sorted({*self.folder.glob("journal*.jsonl"), *self.folder.glob("draining*.jsonl")} - mine):
            try:
                lines = sum(1 for line in path.read_bytes().splitlines() if line.strip())
            except OSError:
                continue
            if lines:
                out[path.name] = lines
        return out

    def _merge(self, paths: list[Path]) -> list[Path]:
        """Drains that stop early (for a reader, at a budget) leave a draining file each round; past
        `MAX_DRAINING`, all but the oldest (the one in progress) become one, byte for byte (torn and garbled
        lines included, for the quarantine), so their number stays small. Written whole before the parts go: a
        crash in between leaves records twice, which the drain skips by id, in the same order."""
        first, rest = paths[0], paths[1:]
        parts = []
        for path in rest:
            data = path.read_bytes()
            parts.append(data if not data or data.endswith(b"\n") else data + b"\n")
        merged = self.draining_path(f"{time.time_ns():020d}-{os.getpid()}-merged")
        write_atomic(merged, b"".join(parts))
        for path in rest:
            path.unlink(missing_ok=True)
        return [first, merged]

    # -- quarantine ---------------------------------------------------------------------------------------
    @property
    def rejected_path(self) -> Path:
        return self.folder / REJECTED

    def reject(self, pending: Pending, items: list[dict[str, Any]]) -> None:
        """Move what cannot be applied to `journal.rejected` (appended and fsynced first), then rewrite the
        draining file without it, so one bad record never blocks a drain and no line is dropped unseen."""
        if not items:
            return
        data = "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n" for i in items).encode()
        fd = os.open(self.rejected_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        keep = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in pending.records)
        write_atomic(pending.path, keep.encode())
        pending.bad = []

    def rejected(self) -> list[dict[str, Any]]:
        """The quarantined lines, oldest first (for `kg status` and `kg doctor`)."""
        try:
            raw = self.rejected_path.read_bytes()
        except FileNotFoundError:
            return []
        out = []
        for line in raw.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                item = {"line": line.decode("utf-8", "replace"), "reason": "unreadable"}
            out.append(item if isinstance(item, dict) else {"line": str(item), "reason": "unreadable"})
        return out

    def applied_since(self, inode: int) -> bool:
        """True when the journal file our record went into has been taken and fully applied by another
        process: it was renamed away (so a fresh file, or none, stands at the path) and no draining file is
        left. The caller must hold the graph lock, so no drain is half-way."""
        try:
            if self.path.stat().st_ino == inode:
                return False
        except FileNotFoundError:
            pass
        return not any(self.draining_files())

    def keep(self, pending: Pending, rest: list[dict[str, Any]]) -> None:
        """A drain stopped short (handed over, or out of budget): its draining file now holds only the records
        it did not reach, so the next drain starts there and `pending_count` stays true. The records applied
        are committed already; a crash before this rewrite only makes the next drain skip them again."""
        data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rest).encode()
        write_atomic(pending.path, data)
        pending.records = rest

    def pending_count(self, *, entries: bool = False) -> int:
        """How many journal lines wait to be applied (the newest file and every draining file). `entries`: only
        the logs, not the session starts journaled while the graph was held (what a reader reports as entries)."""
        count = 0
        for path in (self.path, *([self._adopt.path] if self._adopt is not None else []), *self.draining_files()):
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            count += sum(1 for line in data.splitlines() if line.strip() and not (entries and _SESSION in line))
        return count

    def growing(self) -> bool:
        """Whether entries were appended since the last `take()` (which moved the file away): agents are
        logging while the graph is drained."""
        try:
            return self.path.stat().st_size > 0
        except FileNotFoundError:
            return False

    def has_pending(self) -> bool:
        # asked before any lock: a drainer may move the file away between two looks (it is then a draining file)
        return (self.growing() or any(self.draining_files())
                or (self._adopt is not None and self._adopt.growing()))

    @staticmethod
    def done(pending: Pending) -> None:
        pending.path.unlink(missing_ok=True)


def read_ids(path: Path) -> int:
    """How many ids `ids.json` says were given out (0 when the file is missing or unreadable)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return 0
    if not isinstance(data, dict):
        return 0
    return sum(v for v in data.values() if isinstance(v, int) and v > 0)


def _pending(path: Path) -> Pending:
    records, bad = read_lines(path)
    return Pending(path, records, len(bad), bad)


def read_lines(path: Path) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """The records of a journal file, and every line that is not one (a torn write from a crash, a garbled
    line): those are handed to the caller to quarantine, never dropped silently."""
    records: list[dict[str, Any]] = []
    bad: list[BadLine] = []
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            text = line.decode("utf-8", "replace").rstrip("\n")
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                bad.append(BadLine(lineno, text, "not a JSON line (torn by a crash, or garbled)"))
                continue
            if not isinstance(rec, dict):
                bad.append(BadLine(lineno, text, "not a JSON object"))
                continue
            records.append(rec)
    return records, bad


_STR_FIELDS = ("details", "action", "category", "area", "source", "pattern_key", "session", "error_text",
               "context", "reproducible", "user_context", "complexity", "frequency")


def check_record(rec: dict[str, Any], kinds: tuple[str, ...] | list[str]) -> str | None:
    """Why a journal record cannot be applied, or None when it can. Pure: the drain quarantines a record with
    a reason instead of failing every reader on it."""
    if rec.get("op") == "session":
        return _check_session(rec)
    if rec.get("op") != "log":
        return f"unknown op {str(rec.get('op'))[:40]!r}"
    rid = rec.get("id")
    if not isinstance(rid, str) or not _ID.match(rid) or len(rid) > 64:
        return f"bad id {str(rid)[:40]!r}"
    f = rec.get("fields")
    if not isinstance(f, dict):
        return "no 'fields' object"
    for name in ("entry_type", "text", "priority", "status", "created_at", "tokens"):
        if not isinstance(f.get(name), str):
            return f"fields.{name} missing or not text"
    if f["entry_type"] not in kinds:
        return f"unknown entry type {f['entry_type'][:40]!r}"
    try:
        from datetime import datetime

        datetime.fromisoformat(f["created_at"])
    except ValueError:
        return f"fields.created_at {f['created_at'][:40]!r} is not an ISO time"
    for name in _STR_FIELDS:
        if f.get(name) is not None and not isinstance(f[name], str):
            return f"fields.{name} is not text"
    for name in ("files", "tags"):
        value = f.get(name)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            return f"fields.{name} is not a list of text"
    red = rec.get("redacted", [])
    if not isinstance(red, list) or not all(isinstance(v, str) for v in red):
        return "'redacted' is not a list of text"
    if not isinstance(rec.get("link", True), bool):
        return "'link' is not true/false"
    after = rec.get("after")
    if after is not None and (not isinstance(after, str) or not _ID.match(after) or len(after) > 64):
        return f"bad 'after' id {str(after)[:40]!r}"
    return None


def _check_session(rec: dict[str, Any]) -> str | None:
    """Why a journaled session start (`kg.memory.sessions.start_journaled`) cannot be applied, or None. Pure."""
    from datetime import datetime

    from kg.core.paths import is_name

    sid = rec.get("id")
    if not isinstance(sid, str) or len(sid) > 64 or not is_name(sid):
        return f"bad session id {str(sid)[:40]!r}"
    if not isinstance(rec.get("at"), str):
        return "'at' missing or not text"
    try:
        datetime.fromisoformat(rec["at"])
    except ValueError:
        return f"'at' {rec['at'][:40]!r} is not an ISO time"
    if rec.get("source") is not None and not isinstance(rec["source"], str):
        return "'source' is not text"
    return None
