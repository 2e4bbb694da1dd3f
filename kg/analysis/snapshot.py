"""Read-only snapshots of a workspace's graph, so analysis never locks the agent out.

Kùzu lets one process hold a database, and that process shuts out every other, readers too. A notebook that
kept the graph open would make the agent's `kg log` wait, then fall back to the journal. So analysis works on
a private copy instead: `take(ws)` opens the graph for a moment under the workspace lock (which also drains
the write journal into it), checkpoints the write-ahead log into the main file, copies the file, and lets go.
Everything after that reads the copy, opened read-only under a lock file of its own, and holds nothing the
agent needs. `read(snapshot)` loads every table of the copy into plain Python values.

A copy the snapshot owns lives inside the workspace (`memory/.kg/snapshots/`), never in the system's temporary
folder: nothing is written outside the workspace, and a large graph is copied onto the disk that holds it rather
than onto a small tmpfs. Its owner holds an exclusive lock on the copy's `owner.lock` for as long as it lives;
the next `take` removes every copy whose lock nobody holds (a process killed before it could remove its own).
"""

from __future__ import annotations

import fcntl
import gc
import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Self

from kg.core import clock
from kg.core.errors import StoreError
from kg.core.files import check_folder
from kg.store import EDGE_TYPES, Row, Store, bulk
from kg.store.schema import split_meta, unmerged_end

__all__ = ["GraphData", "Snapshot", "gc_paused", "open_store", "read", "read_store", "take"]

SNAPSHOT_GRAPH = "graph.kuzu"
SNAPSHOT_LOCK = "snapshot.lock"
SNAPSHOT_URL = "graph.url"  # a team graph's snapshot: the URL of its copy on the server
SNAPSHOTS = "snapshots"  # memory/.kg/snapshots/: the copies snapshots own
OWNER_LOCK = "owner.lock"  # held (exclusive) by the process that owns the copy, as long as it lives
_UNLOCKED_GRACE = 3600.0  # a copy with no owner lock yet is being made (or a crash left it): swept after this
# Internal columns: Kùzu's own row ids and labels.
_INTERNAL = ("_id", "_label", "_src", "_dst")


def open_store(path: Path, *, lock_path: Path | None = None, lock_timeout: float = 5.0) -> Any:
    """Open a snapshot's graph file read-only (a context manager yielding a `Store`). The lock lives inside
    the snapshot folder, so it never meets the workspace's own lock."""
    path = Path(path)
    return Store.open(path, lock_path=lock_path or path.parent / SNAPSHOT_LOCK, lock_timeout=lock_timeout,
                      read_only=True, migrate=False)


class Snapshot:
    """A private copy of a workspace's graph, taken at `taken_at`. Use it as a context manager, or call
    `close()`, to remove the copy (it is removed when garbage-collected too)."""

    def __init__(self, directory: Path, *, taken_at: datetime, source: Path, owned: bool, url: Any = None,
                 owner: int | None = None):
        self.directory = directory
        self.graph_path = directory / SNAPSHOT_GRAPH
        self.taken_at = taken_at
        self.source = source
        self.url = url  # a team graph's snapshot is a copy on its server (kg.store.team.copy_graph)
        if url is not None:
            self.graph_path = directory / SNAPSHOT_URL  # names the copy; removed with it
        # one finalizer only: each closes the owner lock's descriptor, and a second close would close whatever
        # reused that number by then (an event loop's epoll, in the test that found it)
        if url is not None:
            from kg.store.team import drop_graph

            self._finalizer = weakref.finalize(self, _drop_copy, drop_graph, url, str(directory), owned, owner)
        else:
            self._finalizer = weakref.finalize(self, _remove, str(directory), owner) if owned else None

    def __repr__(self) -> str:
        return f"Snapshot({str(self.source)!r}, taken_at={self.taken_at.isoformat()!r})"

    @contextmanager
    def store(self) -> Iterator[Store]:
        """The copy, opened read-only for the duration of the block."""
        if self.closed:
            raise StoreError(f"the snapshot at {self.directory} was closed; take a new one")
        if self.url is not None:
            with Store.open(self.graph_path, lock_path=self.directory / SNAPSHOT_LOCK, lock_timeout=5.0,
                            read_only=True, migrate=False, url=self.url) as st:
                yield st
            return
        with open_store(self.graph_path) as st:
            yield st

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()

    @property
    def closed(self) -> bool:
        return not self.graph_path.exists()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def take(ws: Any, dest: str | os.PathLike[str] | None = None) -> Snapshot:
    """Copy the workspace's graph into `dest` (a new empty or missing folder), or into a temporary folder
    that the returned Snapshot owns and removes.

    The graph is held only while the journal is drained, the WAL checkpointed and the file copied: a few
    milliseconds for a small graph, about as long as copying the file for a large one.
    """
    owner = None
    # a read-only workspace (a backup, a read-only mount: QA6 #6) has no writer here to lock out, and no room for
    # a copy: its graph is read by a reader's open, and the copy goes to the system's temporary folder
    writable = getattr(ws, "store_url", None) is not None or os.access(ws.kg_dir, os.W_OK)
    if dest is None:
        parent = Path(ws.kg_dir) / SNAPSHOTS if writable else Path(tempfile.gettempdir()) / "kg-snapshots"
        if writable:  # a linked snapshots/ leading out of memory/.kg would get the whole graph's copy (QA3 #4)
            check_folder(parent, root=Path(ws.root))
        try:
            directory, owner = _own_folder(parent, _dropper(getattr(ws, "store_url", None)))
        except OSError as exc:
            raise StoreError(f"cannot make a snapshot folder in {parent}: {exc.strerror}; make it writable, or "
                             "take one into a folder you can write: kg.analysis.snapshot.take(ws, dest=FOLDER)"
                             ) from None
        owned = True
    else:
        directory = Path(dest).expanduser().resolve()
        if directory.exists() and any(directory.iterdir()):
            raise StoreError(f"the snapshot folder {directory} is not empty; name a new folder")
        directory.mkdir(parents=True, exist_ok=True)
        owned = False
    if getattr(ws, "store_url", None) is not None:  # a team graph: copied on its server, no file
        from kg.store.team import copy_graph

        with ws.store(budget=ws.policy.reader_drain_seconds) as st:  # the journal drained first, as below
            taken_at = clock.now()  # KG_NOW when set: an export replayed at a time is the same bytes
            url = copy_graph(st, "snapshot")
            (directory / SNAPSHOT_URL).write_text(url.public + "\n", encoding="utf-8")
        return Snapshot(directory, taken_at=taken_at, source=Path(ws.root), owned=owned, url=url, owner=owner)
    try:
        # the workspace lock is held, and the journal drained, inside this block; drained as a reader drains
        # (issue 20): with agents logging, a snapshot does not wait for everyone's backlog
        with ws.store(budget=ws.policy.reader_drain_seconds) if writable else ws.reading() as st:
            taken_at = clock.now()  # KG_NOW when set: an export replayed at a time is the same bytes
            try:
                if writable:
                    st.execute("CHECKPOINT")
            except StoreError:
                pass  # inside someone's open transaction: the WAL is copied along and replayed on open
            shutil.copyfile(ws.graph_path, directory / SNAPSHOT_GRAPH)
            wal = ws.graph_path.with_name(ws.graph_path.name + ".wal")
            if wal.exists():
                shutil.copyfile(wal, directory / (SNAPSHOT_GRAPH + ".wal"))
    except BaseException:
        if owned:
            _remove(str(directory), owner)
        raise
    return Snapshot(directory, taken_at=taken_at, source=Path(ws.root), owned=owned, owner=owner)


def _own_folder(parent: Path, drop: Any = None) -> tuple[Path, int]:
    """A new folder under `parent` for a copy this process owns, and the descriptor that holds its owner lock.
    Copies left by processes that died first are removed. The lock is taken on a file of a private name, then
    renamed to `owner.lock`: a sweeper never sees an owner lock that nobody holds for a copy still in use."""
    parent.mkdir(parents=True, exist_ok=True)
    sweep(parent, drop=drop)
    directory = _new_folder(parent)
    staged = directory / f".{OWNER_LOCK}.{os.getpid()}"
    fd = os.open(staged, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.replace(staged, directory / OWNER_LOCK)
    except BaseException:
        os.close(fd)
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return directory, fd


def _new_folder(parent: Path, tries: int = 5) -> Path:
    """A new `snap-*` folder in `parent`, made again when another process's last copy went between our mkdir and
    this one and `_remove` took the then empty `parent` with it."""
    for _ in range(tries - 1):
        parent.mkdir(parents=True, exist_ok=True)
        try:
            return Path(tempfile.mkdtemp(prefix="snap-", dir=parent))
        except FileNotFoundError:
            continue
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="snap-", dir=parent))


def _dropper(store_url: Any) -> Any:
    """For a team graph: what deletes a dead owner's copy on the server, by the graph name its folder names
    (only a snapshot copy of this team graph, never the graph itself)."""
    if store_url is None:
        return None
    from dataclasses import replace

    from kg.store.team import drop_graph

    def drop(name: str) -> None:
        if name.startswith(f"{store_url.graph}.snapshot-"):
            drop_graph(replace(store_url, graph=name))

    return drop


def sweep(parent: Path, *, now: float | None = None, drop: Any = None, dry_run: bool = False) -> list[Path]:
    """Remove the copies under `parent` that no living process owns: their owner lock is free, or they have
    none and are older than an hour (a process killed between making the folder and locking it); `drop(name)`
    deletes a team graph's copy on its server, named in the folder's `graph.url`. Returns the folders removed
    (with `dry_run`, the ones it would remove, removing none: `kg doctor --dry-run`)."""
    removed = []
    now = time.time() if now is None else now
    try:
        children = [c for c in parent.iterdir() if c.is_dir() and c.name.startswith("snap-")]
    except OSError:
        return removed
    for child in children:
        lock = child / OWNER_LOCK
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                stale = now - child.stat().st_mtime > _UNLOCKED_GRACE
            except OSError:
                continue
            if stale:
                if not dry_run:
                    shutil.rmtree(child, ignore_errors=True)
                removed.append(child)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its owner lives
        else:
            named = child / SNAPSHOT_URL
            if dry_run:
                removed.append(child)
                continue  # (the finally lets its lock go)
            if drop is not None and named.exists():
                try:
                    drop(named.read_text(encoding="utf-8").strip().rsplit("/", 1)[-1])
                except OSError:
                    pass
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child)
        finally:
            os.close(fd)
    return removed


def _remove(directory: str, owner: int | None) -> None:
    """Remove a copy, and with an owned one (`owner`: made by `_own_folder` in kg's own snapshots folder) that
    folder too once it is empty: every `kg.analysis.load` and `kg export graph` left an empty
    memory/.kg/snapshots/ behind (QA). `rmdir` removes only an empty folder, so another process's copy keeps it;
    a process about to make one there makes the folder again (`_own_folder`)."""
    shutil.rmtree(directory, ignore_errors=True)
    if owner is not None:
        try:
            os.close(owner)
        except OSError:
            pass
        try:
            os.rmdir(os.path.dirname(directory))
        except OSError:
            pass  # not empty (another copy lives), or gone already


def _drop_copy(drop: Any, url: Any, directory: str, owned: bool, owner: int | None = None) -> None:
    drop(url)
    if owned:
        _remove(directory, owner)
    else:
        (Path(directory) / SNAPSHOT_URL).unlink(missing_ok=True)


@dataclass
class GraphData:
    """Everything in a graph, as plain values: knowledge nodes and their typed edges, sessions, and every
    other table (lifecycle tables such as scores or decisions appear here by their table name once a
    migration adds them)."""

    nodes: list[Row]
    edges: list[Row]
    sessions: list[Row]
    tables: dict[str, list[Row]] = field(default_factory=dict)
    relations: dict[str, list[Row]] = field(default_factory=dict)
    taken_at: datetime | None = None

    def table(self, name: str) -> list[Row]:
        """Rows of a node table by name, case-insensitively; empty when the table does not exist."""
        for key, rows in self.tables.items():
            if key.lower() == name.lower():
                return rows
        return []


_CORE_TABLES = {"Node", "Meta", "Session"}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while many new containers are built (reading or converting a
    whole graph): each collection would rescan every row built so far, which doubled the time at 100k
    nodes. The rows hold no reference cycles, so nothing is left for it meanwhile."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _unmerged(row: Row) -> Row:
    """(migration 0011) An edge to or from a Meta row of a merged kind (a topic, a skill), as the analyst knew it:
    its end in the old table, by the old key."""
    if row["src_table"] == "Meta" or row["dst_table"] == "Meta":
        row["src_table"], row["src"] = unmerged_end(row["src_table"], row["src"])
        row["dst_table"], row["dst"] = unmerged_end(row["dst_table"], row["dst"])
    return row


def read(snapshot: Snapshot, *, include_tokens: bool = False) -> GraphData:
    """Load the whole snapshot. Node rows leave out `tokens` (the search index's text, derived from the
    others) unless `include_tokens`."""
    with snapshot.store() as st, gc_paused():
        return read_store(st, taken_at=snapshot.taken_at, include_tokens=include_tokens)


def read_store(st: Store, *, taken_at: datetime | None = None, include_tokens: bool = False) -> GraphData:
    """Every table of an open graph, read as columns (`kg.store.bulk`): 100k nodes in about 1.5 s."""
    kinds = bulk.table_kinds(st)
    skip = _INTERNAL if include_tokens else (*_INTERNAL, "tokens")
    nodes = bulk.read_table(st, "Node", skip=skip, order_by=("created_at", "id"), kinds=kinds)
    edges = bulk.run(st, "edges_all")
    sessions = bulk.read_table(st, "Session", skip=_INTERNAL, order_by=("started_at", "id"), kinds=kinds)
    tables: dict[str, list[Row]] = {}
    relations: dict[str, list[Row]] = {}
    if "kind" in bulk.column_names(st, "Meta", kinds=kinds):  # (migration 0011) four tables are kinds of Meta row
        tables.update(split_meta(bulk.read_table(st, "Meta", skip=_INTERNAL, kinds=kinds)))
    for name in sorted(kinds):
        if name in _CORE_TABLES or name in EDGE_TYPES:
            continue
        if kinds[name] == "NODE":
            tables[name] = bulk.read_table(st, name, skip=_INTERNAL, kinds=kinds)
        elif kinds[name] == "REL":
            relations[name] = [_unmerged(r) for r in bulk.read_relation(st, name, kinds=kinds)]
    return GraphData(nodes=nodes, edges=edges, sessions=sessions, tables=dict(sorted(tables.items())),
                     relations=relations, taken_at=taken_at)
