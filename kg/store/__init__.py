"""The one module that talks to Kùzu.

Everything else in kg speaks to the graph through `Store`: named queries from `.cypher` files, run through
`Store.run`, which refuses unbound and unknown parameters. Keeping Kùzu behind this module means a later
engine (its maintained fork, or a server graph database) is a local change.

How a graph comes to be open (the file lock, the registry of open paths, the repairs after a kill) is
kg/store/opening.py's, with the Kùzu facts that shape it; `Store.open` is its `open_store`. Its names
(`CHECKPOINT_BYTES`, `_named_queries`, ...) stay importable from here.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import SchemaError, StoreError
from kg.store import aggregates as _aggregates
from kg.store import migrating as _migrating
from kg.store import opening as _opening
from kg.store import queries as _queries
from kg.store import remake as _remake
from kg.store import retire as _retire
from kg.store import sideindex as _side
from kg.store import sidestate as _sidestate
from kg.store import strings as _strings
from kg.store import tallies as _tallies
from kg.store.lock import FileLock
from kg.store.opening import (  # noqa: F401 - re-exported: tests import them from here
    CHECKPOINT_BYTES,
    _open_paths,
    _query_cache,
    _registry_lock,
)
from kg.store.opening import named_queries as _named_queries  # noqa: F401 - re-exported
from kg.store.schema import EDGE_TYPES, KNOWLEDGE_KINDS, META_DDL, NEW_GRAPH_TERMS, check_version, migrations
from kg.store.values import HIDDEN_COLUMNS, NODE_COLUMNS, check_label, plain  # noqa: F401 - re-exported
from kg.store.values import check_space as _check_space
from kg.store.values import check_values as _check_values
from kg.store.values import plain_error as _plain_error
from kg.store.values import writes as _writes

__all__ = ["Store", "EDGE_TYPES", "KNOWLEDGE_KINDS", "Row"]

Row = dict[str, Any]


class Store:
    """An open graph. Create it with `Store.open(...)` as a context manager."""

    # Watched writes whose aggregate upkeep the caller does itself, for a whole batch (kg/ingest/upkeep.py)
    upkeep_by_caller: frozenset[str] = frozenset()
    min_free_mb = 0  # a writer's free-space floor, checked before each write and each commit (`_room`)

    def __init__(self, db: Any, conn: Any, path: Path, queries: dict[str, _queries.NamedQuery]):
        self._lock: FileLock | None = None
        self.repairs: list[str] = []  # what opening repaired (for `kg doctor` and a warning)
        self._db = db
        self._conn = conn
        self.path = path
        self._queries = queries
        self._in_tx = False
        self._prepared: dict[str, Any] = {}

    @contextmanager
    def one_thread(self) -> Iterator[Store]:
        """This block's queries on one thread: Kùzu's full-text top-k picks among tied scores by thread
        timing, and memory search must answer the same every time (kg/memory/views.py)."""
        self._conn.set_max_threads_for_exec(1)
        try:
            yield self
        finally:
            self._conn.set_max_threads_for_exec(getattr(self, "_threads", 1))

    # -- opening: lock, open, repair, migrate (kg/store/opening.py) ---------------------------------------
    open = classmethod(_opening.open_store)


    def _ready(self, defer_index: bool = False) -> None:
        """A writer's open: migrations, the aggregate table (unless deferred by a resumed import, which rebuilds
        it at its end), and an old graph's full-text index dropped (issue 22: nothing asks it any more)."""
        self._migrate()
        if defer_index:
            return
        _migrating.step(self, _migrating.AGGREGATES)
        _aggregates.ensure(self)  # issue 22: built after migration 0005 or a killed import
        if self.has_fts() or not self.fts_retired():
            _migrating.step(self, _migrating.RETIRE)
            self._retire_fts()

    def fts_retired(self) -> bool:
        """Whether this graph is known to have no full-text index of its own, cleanly (kg/store/retire.py)."""
        return _retire.retired(self)

    def _retire_fts(self) -> None:
        _retire.retire(self)

    def _mark_fts_retired(self) -> None:
        _retire.mark(self)

    def others_waiting(self) -> bool:
        """Whether a foreground process waits for the graph (a polite holder hands over between batches)."""
        lock = getattr(self, "_lock", None)
        return bool(lock is not None and lock.others_waiting())

    def has_fts(self) -> bool:
        rows = self._execute_raw("CALL SHOW_INDEXES() RETURN index_name AS name", {})
        return any(r["name"] == FTS_NAME for r in rows)

    def ensure_fts(self) -> bool:
        """The graph's own full-text index is no longer built (issue 22): never rebuilt, so never True."""
        return False

    def wal_bytes(self) -> int:
        """The size of the graph's write-ahead log (0: none, or everything committed is folded in)."""
        try:
            return self.path.with_name(self.path.name + ".wal").stat().st_size
        except OSError:
            return 0

    def reopen(self, *, between: Callable[[], None] | None = None, fold: bool = False) -> None:
        """Close the database and open it again on this handle, the graph lock held all along (issue 22: the read
        server gives back what Kùzu kept resident, which it never does while open); the open replays the
        write-ahead log. `between` runs while it is closed (the server hands the freed heap back to the system).
        With `fold`, the log is then folded into the graph by a CHECKPOINT and the graph opened once more, holding
        none of the replay (at 1M entries, kuzu 0.11.3, one thread: 0.45 s, or 123 s when the logs touched much).
        Kill -9 anywhere in it: what was committed is in the log or the graph (Kùzu replays the log on the next
        open; its checkpoint is atomic)."""
        self.forget_prepared()
        self._close()
        if between is not None:
            between()
        self._db, self._conn = self._connect()
        if fold and self.wal_bytes() > 0:
            try:
                self._conn.execute("CHECKPOINT")
            except RuntimeError as exc:
                raise StoreError(f"graph checkpoint failed: {_plain_error(exc)}") from None
            self._close()
            if between is not None:
                between()
            self._db, self._conn = self._connect()

    def _close(self) -> None:
        try:
            self._conn.close()
            self._db.close()
        except Exception:  # noqa: BLE001 - closing is best effort; the data is committed already
            pass

    # -- schema -------------------------------------------------------------------------------------------
    def applied_migrations(self) -> list[str]:
        try:
            rows = self.execute("MATCH (m:Meta) WHERE m.key STARTS WITH 'migration:' RETURN m.key AS key")
        except StoreError:
            return []
        return sorted(r["key"].split(":", 1)[1] for r in rows)

    def _check_version(self) -> None:
        check_version(self.applied_migrations(), "this workspace's graph", "to upgrade it in place")

    def _migrate(self) -> None:
        known = [name for name, _ in migrations()]
        applied = set(self.applied_migrations())
        if set(known) <= applied and applied <= set(known):
            return  # the common case: a read, no DDL, on every open
        if not applied:
            self._execute_raw(META_DDL, {})
        unknown = sorted(applied - set(known))
        if unknown:
            self._check_version()
        for name, statements in migrations():
            if name in applied:
                continue
            _migrating.step(self, f"migration {name}")
            # (issue 20) one transaction per migration and its mark: cut short, it leaves nothing for a re-run to
            # fail on (Kùzu rolls DDL back too). (issue 22) 0001's full-text index is no longer made.
            later = [s for s in statements if s.lstrip().upper().startswith("CALL CREATE_FTS_INDEX")]
            try:
                with self.transaction():
                    for statement in statements:
                        if statement not in later:
                            self._execute_raw(statement, {})
                    self._execute_raw(
                        "CREATE (:Meta {key: $key, value: $value})",
                        {"key": f"migration:{name}", "value": clock.wall().isoformat()},
                    )
            except StoreError as exc:
                raise SchemaError(f"migration {name} failed: {exc}; the graph is unchanged up to the "
                                  "previous migration. Report this with the message.") from None
        if not applied:  # a new graph: its keyword table is counted from the first node on, never recounted
            self._execute_raw(NEW_GRAPH_TERMS, {})
            self._mark_fts_retired()  # (issue 22) and it never had a full-text index of its own

    # -- queries ------------------------------------------------------------------------------------------
    def query(self, name: str) -> _queries.NamedQuery:
        try:
            return self._queries[name]
        except KeyError:
            raise StoreError(f"no query named {name!r}") from None

    def run(self, name: str, **params: Any) -> list[Row]:
        """Run a named query with exactly its parameters."""
        query = self.query(name)
        query.check(params)
        if name == "node_create":
            _side.noted_create(self, params)
        if name in _remake.WRITES:  # a row's lists are made anew, never SET (kg/store/remake.py)
            with self.transaction():
                return _remake.settle(self, name, params, self._run_plain(name, query, params))
        return self._run_plain(name, query, params)

    def kept_for(self, name: str) -> bool:
        """Whether `run(name)` keeps something beside the statement (a tally, an aggregate, a remade row, the
        side index's note of a new node): a caller running it many times (`bulk.run_each`) must go through `run`."""
        return name == "node_create" or name in _remake.WRITES or (name in _AGGREGATED and name not in _READS)

    def _run_plain(self, name: str, query: _queries.NamedQuery, params: dict[str, Any]) -> list[Row]:
        if name in _AGGREGATED:  # issue 22: a maintained aggregate answers or is kept (kg/store/aggregates.py)
            return self._run_aggregated(name, query, params)
        return self._execute_raw(query.text, params)

    def _run_aggregated(self, name: str, query: _queries.NamedQuery, params: dict[str, Any]) -> list[Row]:
        if not _aggregates.ready(self):
            return self._execute_raw(query.text, params)  # no aggregate yet: the full query
        if name in _READS:
            if not query.source.startswith(("kg.rules.queries/", "kg.store/")):
                return self._execute_raw(query.text, params)  # a workspace's own query, as written
            found = _READS[name](self, **params)
            return self._execute_raw(query.text, params) if found is None else found
        if name in self.upkeep_by_caller:
            return self._execute_raw(query.text, params)
        with self.transaction():  # the write and its aggregate rows commit together
            ids = _aggregates.affected(self, name, params) if name in _aggregates.WATCH else ()
            counted = _tallies.Anchors(self, name, params) if name in _tallies.WATCH else None
            before = counted.read(self) if counted else None
            rows = self._execute_raw(query.text, params)
            _aggregates.refresh(self, ids)
            if counted:
                _tallies.apply(self, before, counted.read(self), counted.about_all)
        return rows

    def execute(self, cypher: str, params: dict[str, Any] | None = None) -> list[Row]:
        """Run inline Cypher (used where a label must be formatted in, after it was checked against the
        schema's fixed names). Its parameters are checked the same way as a named query's."""
        params = params or {}
        _queries.NamedQuery("inline", cypher, _queries.params_of(cypher)).check(params)
        if _aggregates.touches(cypher) and _aggregates.ready(self):
            _aggregates.invalidate(self)  # an inline write the upkeep does not follow: rebuilt on the next open
        return self._execute_raw(cypher, params)

    def _room(self) -> None:
        """Refuse a write while the disk holding the graph has less than `min_free_mb` free (one statvfs): Kùzu
        0.11.3 writes a transaction's WAL at its commit and aborts the process when that fails, where a refusal
        is kg's `Error:` line; the journal keeps what was acknowledged. A disk that filled after the open counts."""
        if self.min_free_mb:
            _check_space(self.path, self.min_free_mb)

    def _execute_raw(self, cypher: str, params: dict[str, Any]) -> list[Row]:
        if not self._in_tx and self.min_free_mb and _writes(cypher):
            self._room()  # a statement that commits on its own
        if params:
            _check_values(params)
        _sidestate.note(self, cypher, params)  # (issue 17) the side index's kept state, recorded before a commit
        if _strings.makes_meta(cypher):  # no Meta row is made with a NULL value (kg/store/strings.py)
            with self.transaction():
                columns, rows = self._fetch(cypher, params)
                self._fetch(_strings.FILL, {})
            return [dict(zip(columns, row, strict=True)) for row in rows]
        columns, rows = self._fetch(cypher, params)
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def _fetch(self, cypher: str, params: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
        """Column names and rows as lists (whole-table reads skip building a dict per row)."""
        try:
            if params:
                result = self._conn.execute(self._prepared_statement(cypher), params)
            else:
                result = self._conn.execute(cypher)
        except RuntimeError as exc:
            raise StoreError(f"graph query failed: {_plain_error(exc)}") from None
        if isinstance(result, list):  # several statements
            result = result[-1]
        columns = result.get_column_names()
        rows = []
        has_next, get_next, append = result.has_next, result.get_next, rows.append
        while has_next():
            append(get_next())
        _strings.read_back(cypher, columns, rows)  # a Node's '' pattern_key is None (kg/store/strings.py)
        return columns, rows

    def _prepared_statement(self, cypher: str) -> Any:
        """The statement parsed and planned once per open graph, then reused: a `kg log` runs the same two
        dozen statements, and a prepared one runs in about half the time (0.19 against 0.33 ms for a key
        lookup). Parameter types are bound at each execution, so a None or a list in a later call is fine."""
        prepared = self._prepared.get(cypher)
        if prepared is None:
            with warnings.catch_warnings():  # kuzu 0.11 deprecates prepare() in favour of execute(str); the
                warnings.simplefilter("ignore", DeprecationWarning)  # string form re-plans on every call
                prepared = self._conn.prepare(cypher)
            if not prepared.is_success():
                raise RuntimeError(prepared.get_error_message())
            self._prepared[cypher] = prepared
        return prepared

    def forget_prepared(self) -> None:
        """Drop the prepared statements (after DDL such as rebuilding the full-text index)."""
        self._prepared.clear()
        self.__dict__.pop("_has_node_fts", None)  # (issue 22) linking asks again which index answers it

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """One atomic write. Nested use joins the outer transaction."""
        if self._in_tx:
            yield self
            return
        self._room()
        self._execute_raw("BEGIN TRANSACTION", {})
        self._in_tx = True
        noted = len(self.__dict__.get("_side_created", ()))
        try:
            yield self
            self._room()  # the disk filled meanwhile: roll back (which needs no room) rather than abort at COMMIT
        except BaseException:
            self._in_tx = False
            del self.__dict__.get("_side_created", [])[noted:]  # the side index never gets rolled-back nodes
            _sidestate.drop_pending(self)
            try:
                self._execute_raw("ROLLBACK", {})
            except StoreError:
                pass
            raise
        try:  # (issue 17) the nodes whose kept state this write changes are named in the side index first
            _sidestate.flush(self)
        except (OSError, sqlite3.Error) as exc:
            self._in_tx = False
            _sidestate.drop_pending(self)
            try:
                self._execute_raw("ROLLBACK", {})
            except StoreError:
                pass
            raise StoreError(_sidestate.not_told(exc)) from None
        self._in_tx = False
        self._execute_raw("COMMIT", {})
        if self.__dict__.get("_side_links") and self.__dict__.get("_side_created"):
            _side.safe_sync(self)  # (issue 22) linking asks the side index (kg/store/sidelink.py): it follows commits


_READS = {"lc_promotion_candidates": _aggregates.promotion_candidates,
          "lc_promotion_figures": _aggregates.promotion_figures, "count_by_kind": _tallies.count_by_kind,
          "count_edges": _tallies.count_edges, "pending_high_newest": _tallies.pending_high_newest,
          "hooks_pending_high_ids": _tallies.high_ids, "hooks_pending_high_count": _tallies.high_count,
          "memory_watch": _tallies.watch, "hooks_counts": _tallies.node_totals, "hooks_edge_count": _tallies.edge_total,
          "lc_free_principles": _tallies.free_principles, "memory_principles": _tallies.principles,
          "lc_window_events_of": _aggregates.window_events_of, "lc_proposals": _aggregates.proposals}
_AGGREGATED = frozenset({*_READS, *_aggregates.WATCH, *_tallies.WATCH})

FTS_NAME = "node_fts"
FTS_RETIRED = _retire.KEY  # Meta key: the graph has no full-text index of its own, cleanly (issue 22)
_FTS_CREATE = "CALL CREATE_FTS_INDEX('Node', 'node_fts', ['tokens'], stemmer := 'porter')"
_FTS_DROP = "CALL DROP_FTS_INDEX('Node', 'node_fts')"


def existing_ids(store: Store, ids: list[str]) -> set[str]:
    """Which of `ids` are nodes. A few are looked up by primary key one by one (an `IN $list` filter scans
    the table: ~5 ms at 100k nodes); many are checked with one scan."""
    if len(ids) <= 32:
        return {i for i in dict.fromkeys(ids) if store.run("node_exists", id=i)}
    return {row["id"] for row in store.run("nodes_existing", ids=list(ids))}
