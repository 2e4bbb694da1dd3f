"""Opening a Kùzu graph: `Store.open`'s body, and what it keeps per process.

Apart from `Store` (kg/store/__init__.py) because opening is its own subject: the graph lock, the registry of
paths this process has open, the repairs a kill can call for (a rolled-back import, a half-swapped rebuild, a
half-dropped full-text index, an open that crashed), and migration. `Store` is what an open graph answers;
this is how one comes to be open. `Store.open` is `open_store`, bound to the class.

Kùzu facts this module is shaped by (kuzu 0.11.3):
- one read-write process per database, and it shuts out every other process, readers too: `open_store`
  takes an exclusive file lock with a bounded retry before it opens the database, and holds it until close;
- a second `Database` on the same path in one process opens silently and its writes are lost: the process
  keeps a registry of open paths and refuses a second handle.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.core.errors import GraphUnopenable, StoreError
from kg.store import compact as _compact
from kg.store import migrating as _migrating
from kg.store import probe as _probe
from kg.store import queries as _queries
from kg.store import rebuild as _rebuild
from kg.store import rollback as _rollback
from kg.store import sideindex as _side
from kg.store import sidestate as _sidestate
from kg.store.lock import FileLock, Yielded
from kg.store.values import check_space as _check_space
from kg.store.values import db_size_args, resource_error
from kg.store.values import empty as _empty
from kg.store.values import plain_error as _plain_error

if TYPE_CHECKING:
    from kg.store import Store

CHECKPOINT_BYTES = 8 * 1024 * 1024

_open_paths: set[str] = set()
_registry_lock = threading.Lock()
_query_cache: dict[str, dict[str, _queries.NamedQuery]] = {}


def named_queries(extra_dir: Path | None) -> dict[str, _queries.NamedQuery]:
    """kg's own queries and the rules' candidate queries (a workspace's rules folder overriding those by name),
    parsed once per process and folder."""
    key = str(extra_dir or "")
    if key not in _query_cache:
        found = dict(_queries.load_package("kg.store"))
        rule_queries = _queries.load_package("kg.rules.queries")
        if extra_dir is not None and any(extra_dir.glob("*.cypher")):
            # A workspace's rules folder overrides the packaged candidate queries by name.
            rule_queries.update(_queries.load_dir(extra_dir))
        for name, query in rule_queries.items():
            if name in found:
                raise StoreError(f"{query.source}: query name {name!r} is reserved by kg's own queries")
            found[name] = query
        _query_cache[key] = found
    return _query_cache[key]


@contextmanager
def open_store(
    cls: type[Store],
    path: Path,
    *,
    lock_path: Path,
    lock_timeout: float,
    read_only: bool = False,
    queries_dir: Path | None = None,
    migrate: bool = True,
    unless: Callable[[], bool] | None = None,
    buffer_pool_mb: int = 1024,
    max_threads: int = 0,
    polite: bool = False,
    must_exist: Callable[[], str | None] | None = None,
    min_free_mb: int = 0,
    url: Any = None,
    origin: dict[str, str] | None = None,
    defer_index: bool = False,
) -> Iterator[Store | None]:
    """Lock, open, migrate, check the full-text index. With `unless`, that check runs once the lock is
    held, and when it is true the database is not opened at all and None is yielded (a cheap way out for
    a caller whose work another process has done meanwhile). A `polite` caller (a background drain)
    also gets None when a foreground process is waiting for the graph (it drains instead).

    `must_exist`, when given, is asked before a missing or empty graph file is created: it returns why
    the graph should exist (entries were acknowledged), and then the open is refused instead of silently
    starting an empty graph.

    With `url` (a `kg.store.backend.StoreUrl`) the graph is a team's on a FalkorDB server instead, and
    `origin` names this workspace and agent there (see kg/store/falkor.py).

    `defer_index`: a resumed import's open (kg/ingest/importing.py), which rebuilds the full-text index
    and the aggregate table after its last batch: a missing one is not built here only to be dropped."""
    if url is not None:
        from kg.store.falkor import FalkorStore

        with FalkorStore.open(url, queries=named_queries(queries_dir), lock_timeout=lock_timeout,
                              read_only=read_only, migrate=migrate, unless=unless, origin=origin,
                              lock_path=lock_path, polite=polite) as team:
            yield team  # type: ignore[misc] - it answers what Store answers
        return
    key = os.path.realpath(path)
    with _registry_lock:
        if key in _open_paths:
            raise StoreError(
                f"the graph {path} is already open in this process; use the handle you have "
                "(a second Kùzu handle on one file silently loses its writes)"
            )
        _open_paths.add(key)
    lock = FileLock(lock_path, timeout=lock_timeout, polite=polite, shared=read_only)  # readers side by side
    from kg.store.kuzu_import import import_kuzu  # late: `kg --help` does not need it

    if unless is None or not unless():
        # Before the lock, not under it: on a loaded machine the import takes seconds of wall time, which
        # every process waiting for the graph would wait too. (`unless` already true: likely no open at all.)
        import_kuzu()
    try:
        try:
            lock.acquire()
        except Yielded:
            yield None
            return
        if unless is not None and unless():
            yield None
            return
        if must_exist is not None and _empty(path):
            why = must_exist()
            if why:
                raise StoreError(
                    f"the graph {path} is {'empty' if path.exists() else 'missing'}, but {why}; kg will not "
                    "start an empty graph over them. Restore the file from a backup, or run `kg doctor "
                    "--repair` to start a new graph (rebuilt from memory/.learning-trail.json when present)")
        if not read_only and min_free_mb:
            _check_space(path, min_free_mb)
        kuzu = import_kuzu()

        if path.exists() and _empty(path):  # zero bytes (a create cut short): no graph, and Kùzu fails on it
            if read_only:
                raise StoreError(f"the graph {path} is an empty file")
            for stale in (path, path.with_name(path.name + ".wal")):  # nothing acknowledged: start afresh
                stale.unlink(missing_ok=True)
        cut_short = None if read_only else _rollback.pending(path)  # an import a kill cut short (rollback.py)
        if read_only and _rebuild.unfinished(path):  # (a reader takes the writer's open: `Workspace.reading`)
            raise StoreError(f"the graph {path} was being swapped for its rebuilt copy when a process died; a "
                             "writer's open finishes that (any kg command that writes, or `kg doctor`)")
        if not read_only:
            _rebuild.finish(path)  # a swap of a rebuilt graph cut short (kg/store/rebuild.py)
            _migrating.sweep(lock_path.parent)  # a killed migration's marker (its pid may be reused)

        def connect() -> tuple[Any, Any]:
            left = _probe.left_marks(path)  # an open before this one never returned (kg/store/probe.py)
            if left:
                how = _probe.crashes(path)
                if how:  # it would crash this process too, saying nothing (or take the machine's memory)
                    raise GraphUnopenable(_probe.crashed_text(path, how))
                _probe.unmark(left)
            opening = _probe.mark(path)
            try:
                db = kuzu.Database(str(path), read_only=read_only, checkpoint_threshold=CHECKPOINT_BYTES,
                                   buffer_pool_size=buffer_pool_mb * 1024 * 1024, **db_size_args(),
                                   **({"max_num_threads": max_threads} if max_threads else {}))
                conn = kuzu.Connection(db)
                if not read_only:
                    # Committed transactions are durable in the WAL already. Checkpointing on every close
                    # costs 0.1-0.3 s at 100k nodes, which a short-lived `kg log` cannot afford; the WAL is
                    # checkpointed instead when it passes CHECKPOINT_BYTES, and replayed on open until then.
                    conn.execute("CALL force_checkpoint_on_close=false")
            except (RuntimeError, IndexError, MemoryError) as exc:  # a damaged file: IndexError on some
                limits = resource_error(exc)
                if limits is not None:  # this process's limits or rights: no repair may set the file aside
                    raise StoreError(f"cannot open the graph {path}: {limits}") from None
                raise GraphUnopenable(f"cannot open the graph {path}: {_plain_error(exc)}. Run `kg doctor`: it "
                                      "says what can be done") from None
            finally:
                _probe.unmark([opening])
            return db, conn

        restored = None
        if cut_short and not _rollback.trusted(cut_short):  # killed in the index's drop or build
            restored, cut_short = _rollback.restore(path, cut_short), None
        try:
            handles = connect()
        except GraphUnopenable:  # (not a limit or a right: the copy a killed import kept is no answer to those)
            if not cut_short:
                raise
            restored, cut_short = _rollback.restore(path, cut_short), None  # Kùzu cannot open what the kill left
            handles = connect()
        store = cls(*handles, path, named_queries(queries_dir))
        store._connect = connect
        store.repairs += [restored] if restored else []
        if restored and _side.path_of(path).exists():  # the graph went back to a copy: every kept state is
            _sidestate.mark_stale(_side.path_of(path), (), everything=True)  # reread (kg/store/sidestate.py)
        store._lock = lock
        store.read_only = read_only
        store.min_free_mb = 0 if read_only else min_free_mb
        store._threads = max_threads or (os.cpu_count() or 1)  # Kùzu's default: every core
        try:
            if migrate and not read_only:
                _migrating.begin(store, lock_path.parent)  # (issue 22) the steps, for those it shuts out
                try:
                    half = _rebuild.half_index(store) if cut_short or defer_index else None
                    if half:  # (issue 20) the import after a crash: its COPY would fail on it
                        raise StoreError(half)
                    store._ready(defer_index)
                except StoreError as exc:
                    if not _rebuild.stale_fts(str(exc)):
                        raise
                    store.forget_prepared()
                    store._close()
                    try:
                        backup = _rebuild.rebuild(path, kuzu, "", buffer_pool_mb=buffer_pool_mb)
                        note = ("rebuilt the graph, whose full-text index a kill had left half-dropped or half-"
                                f"built (kuzu 0.11.3); every row was kept; the old file is at {backup}")
                    except Exception:
                        if not cut_short:
                            raise
                        note, cut_short = _rollback.restore(path, cut_short), None  # the copy, as a last resort
                    store._db, store._conn = connect()
                    store.forget_prepared()
                    store.__dict__.pop("_agg_ready", None)
                    store._ready(defer_index)
                    store.repairs.append(note)
                if cut_short:  # the graph as the kill left it opens and is whole: kept, the copy goes
                    _rollback.discard(path)
                _migrating.finish(store)
            else:
                store._check_version()
            if not read_only:
                _compact.settle(store)  # a compaction a kill cut short: its old file and work folder
            yield store
            if not read_only:  # memory search's side index follows what this writer committed
                _side.safe_sync(store)
        finally:
            _migrating.finish(store)  # (a migration that failed: its marker goes)
            store._close()
    finally:
        lock.release()
        with _registry_lock:
            _open_paths.discard(key)
