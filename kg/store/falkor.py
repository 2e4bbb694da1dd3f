"""The graph on a FalkorDB server: a team's shared memory (`kg init --store falkordb://HOST:PORT/GRAPH`).

`FalkorStore` answers what `Store` answers (named queries through `run`, checked against their `$params`;
`execute`, `transaction`, the full-text index checks), so the rest of kg does not know which one it holds.
How it differs from the embedded Kùzu graph, and why:

- Many writers on many machines. FalkorDB runs one query at a time per graph, each atomic; kg's own
  read-then-write steps (a pattern found by key, else made) are serialised by a lock on the server
  (`SET key token NX PX ttl`), held while a process applies its journal: milliseconds, and across the team,
  where the Kùzu file lock serialises one machine. A crashed holder's lock lapses after `LOCK_TTL_MS`.
- Readers take no lock: a one-off read runs beside the writers.
- No multi-statement transactions: `transaction()` groups nothing. Each statement is atomic, and a journal
  record is applied again by id when a process dies half-way (the journal keeps it until it is applied).
- Unreachable server: opening raises StoreError, so `kg log` keeps the entry in the local journal
  (acknowledged) and the next command that reaches the server applies it.
- Every node a workspace creates is stamped with its workspace and agent (`$origin_*` parameters, bound
  here: see the `// dialect: falkordb` variant of node_create).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import StoreError, TeamGraphUnreachable
from kg.store import falkor_batch, falkor_clone, falkor_copy, falkor_params
from kg.store import falkor_dialect as dialect
from kg.store import queries as _queries
from kg.store.backend import ENV_CA, ENV_PASSWORD, ENV_STORE, StoreUrl
from kg.store.falkor_lock import ServerLock
from kg.store.lock import Yielded
from kg.store.schema import NEW_GRAPH_TERMS, check_version, migrations

Row = dict[str, Any]

CONNECT_TIMEOUT_S = 3.0
QUERY_TIMEOUT_S = 300.0
# the client's first question (INFO, when it connects) must be answered this soon: a server that accepts the
# connection and then says nothing (hung, stopped, swamped) is said at once, not after QUERY_TIMEOUT_S. A command
# may meet it twice (QA7 saw 20 s at 10 s), so a silent server is said within about 10 s.
ANSWER_TIMEOUT_S = 5.0
FTS_FIELD = "tokens"
_ORIGIN = ("origin_workspace", "origin_agent")
_clients: dict[str, Any] = {}
# where the URL a message tells the user to check came from, when it is neither KG_STORE nor kg.toml (`named_by`)
_named_by: ContextVar[str | None] = ContextVar("kg_store_named_by", default=None)


def _client(url: StoreUrl) -> Any:
    """One connection pool per server per process (a hook or the MCP server opens the graph many times)."""
    try:
        return _connect(url)
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - redis raises its own classes; said plainly
        raise _plain(exc, url) from None


def _connect(url: StoreUrl) -> Any:
    """`_client` with redis's own errors: the client asks the server at once (INFO, to learn whether it is a
    sentinel), so a server away, or one refusing the password, fails here."""
    key = f"{url.public}|{url.password or ''}"
    if key not in _clients:
        try:
            from falkordb import FalkorDB
        except ImportError:
            raise StoreError("this workspace's graph is on a FalkorDB server, and the client is an optional "
                             "extra: install it with `pip install 'kaizen-kg[falkordb]'`") from None
        tls: dict[str, Any] = {}
        if url.tls:
            tls = {"ssl": True, **({"ssl_ca_certs": os.environ[ENV_CA]} if os.environ.get(ENV_CA) else {})}
        client = FalkorDB(host=url.host, port=url.port, username=url.username, password=url.password,
                          socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=ANSWER_TIMEOUT_S, **tls)
        pool = getattr(client.connection, "connection_pool", None)
        if pool is not None:  # queries may take longer than that first answer
            pool.connection_kwargs["socket_timeout"] = QUERY_TIMEOUT_S
            pool.disconnect()  # the connection that asked kept the short timeout (a query timed out at 5 s in CI):
            pool.reset()  # it is dropped, and the next one is made with the long one
        _clients[key] = client
    return _clients[key]


def _plain(exc: BaseException, url: StoreUrl, *, journaled: bool = True) -> StoreError:
    """A redis or FalkorDB failure as kg's own error, naming the server and what to do. `journaled`: whether
    what was being written waits in the local journal (a log does; the member number a first write asks for
    does not: kg/store/team.py)."""
    if isinstance(exc, StoreError):  # already said plainly (the client missing: _client)
        return exc
    import redis.exceptions as rx

    if isinstance(exc, rx.AuthenticationError) or "NOAUTH" in str(exc) or "WRONGPASS" in str(exc):
        given = "refused the password" if url.password else "asks for a password and none was given"
        in_url = bool(url.password) and url.password != os.environ.get(ENV_PASSWORD)  # written in KG_STORE's URL
        fix = ("correct the password in the URL of KG_STORE (or leave it out and set KG_STORE_PASSWORD)" if in_url
               else "set KG_STORE_PASSWORD to the password it expects")
        return StoreError(f"the FalkorDB server at {url.public} {given} ({str(exc).rstrip('.')}): {fix}")
    if isinstance(exc, (rx.ConnectionError, rx.TimeoutError, OSError)):
        return TeamGraphUnreachable(unreachable(url, exc, journaled=journaled))
    if isinstance(exc, rx.InvalidResponse) or "unknown command 'GRAPH." in str(exc):
        return StoreError(f"the server at {url.public} is not a FalkorDB server ({exc}); check "
                          f"{_configured_in()}: it must name a Redis server with the FalkorDB module")
    return StoreError(f"graph query failed on the team graph at {url.public}: {exc}")


def _configured_in() -> str:
    return _named_by.get() or ("KG_STORE" if os.environ.get(ENV_STORE, "").strip() else "`[store] url` in kg.toml")


@contextmanager
def named_by(source: str) -> Iterator[None]:
    """Messages inside name `source` as where the URL came from (`kg init --store` tries a server that kg.toml
    does not name yet: "check `[store] url` in kg.toml" would send the user to a file that does not hold it)."""
    token = _named_by.set(source)
    try:
        yield
    finally:
        _named_by.reset(token)


def unreachable(url: StoreUrl, exc: BaseException, *, journaled: bool = True) -> str:
    """Why the server could not be reached and what to do: one line (kg/ingest/drain.py keeps a record whose
    write failed with "cannot reach the team graph" for the next drain)."""
    import redis.exceptions as rx

    text = str(exc).strip().rstrip(".")
    local = f" (kg's own loopback server: `kg server start --port {url.port}` in the workspace that keeps its data)" \
        if url.host in ("127.0.0.1", "localhost", "::1") else ""
    if isinstance(exc, (rx.TimeoutError, TimeoutError)):
        why, do = "it did not answer in time", "Check that the FalkorDB server there runs and is not overloaded"
    elif "refused" in text.lower():
        why, do = "nothing accepts connections there (connection refused)", f"Start the FalkorDB server{local}"
    else:
        why, do = text.rsplit(". ", 1)[-1] or type(exc).__name__, f"Start the FalkorDB server{local}"
    then = ("entries logged meanwhile wait in the local journal and are applied when it is back" if journaled
            else "nothing was recorded")
    return f"cannot reach the team graph at {url.public}: {why}. {do}, or check {_configured_in()}; {then}"


class FalkorStore:
    """An open team graph. Create it with `FalkorStore.open(...)` (through `Store.open(..., url=...)`)."""

    backend = dialect.DIALECT
    prefetch_min = 1  # keyword counts read in one `UNWIND` (which uses the index here: kg/graph/term_counts.py)

    def __init__(self, url: StoreUrl, graph: Any, queries: dict[str, _queries.NamedQuery],
                 origin: dict[str, str] | None = None):
        self.url = url
        self.path = Path(url.public)  # what messages name; no file behind it
        self.repairs: list[str] = []
        self._graph = graph
        self._queries = queries
        self._translated: dict[str, _queries.NamedQuery] = {}
        self._lock: ServerLock | None = None
        self.read_only = False
        self.lock_timeout = 10.0  # how long a writer waits for the team's lock (Store.open sets it)
        self._batch: falkor_batch.Batch | None = None
        self.origin = {"origin_workspace": "", "origin_agent": "", **(origin or {})}

    @classmethod
    @contextmanager
    def open(cls, url: StoreUrl, *, queries: dict[str, _queries.NamedQuery], lock_timeout: float,
             read_only: bool = False, migrate: bool = True, unless: Callable[[], bool] | None = None,
             origin: dict[str, str] | None = None, lock_path: Path | None = None, polite: bool = False,
             **_kuzu_only: Any) -> Iterator[FalkorStore | None]:
        """Connect, take the team's writer lock (not for a read), migrate, check the full-text index. With
        `unless`, as `Store.open`: when it is true once the lock is held, None is yielded; so it is for a
        `polite` opener when a foreground process waits (see `ServerLock`). `lock_path` is the workspace's
        graph.lock, beside which this machine's waiters announce themselves."""
        db = _client(url)
        store = cls(url, db.select_graph(url.graph), queries, origin)
        store.read_only, store.lock_timeout = read_only, lock_timeout
        try:
            if not read_only:
                store._lock = ServerLock(db.connection, f"kg:lock:{url.graph}", lock_timeout,
                                          lock_path=lock_path, polite=polite)
                store._lock.acquire()
        except Yielded:
            yield None
            return
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - redis raises its own classes; said plainly
            raise _plain(exc, url) from None
        try:
            if unless is not None and unless():
                yield None
                return
            if migrate and not read_only:
                store._migrate()
                if store.ensure_fts():
                    store.repairs.append("made the full-text index on Node.tokens, which was missing")
            else:
                store._check_version()
            yield store
        finally:
            if store._lock is not None:
                try:
                    store._lock.release()
                except Exception:  # noqa: BLE001 - the lease lapses by itself
                    pass

    # -- what Store answers ---------------------------------------------------------------------------------
    def others_waiting(self) -> bool:
        """Whether a foreground process of this workspace waits for the team graph (a polite holder hands
        over between batches, a reader with a drain budget reads what is there): see `ServerLock`."""
        return self._lock is not None and self._lock.others_waiting()

    def forget_prepared(self) -> None:
        pass

    def query(self, name: str) -> _queries.NamedQuery:
        """The falkordb variant of a named query when there is one, else the query translated."""
        found = self._translated.get(name)
        if found is None:
            base = self._queries.get(f"{name}@{dialect.DIALECT}") or self._queries.get(name)
            if base is None:
                raise StoreError(f"no query named {name!r}")
            found = _queries.NamedQuery(name, dialect.translate(base.text), base.params, base.doc, base.source)
            self._translated[name] = found
        return found

    def run(self, name: str, **params: Any) -> list[Row]:
        query = self.query(name)
        for key in _ORIGIN:  # bound by the store, not the caller
            if key in query.params and key not in params:
                params[key] = self.origin[key]
        query.check(params)
        if self._batch is not None:
            if name in falkor_batch.WRITES:
                return self._batch.write(name, params)
            found = self._batch.answer(name, params)
            if found is not None:
                return found
        return self._execute_raw(query.text, params)

    def present(self, ids: list[str]) -> set[str]:
        """Which of these ids are nodes, in one query (each looked up by the index)."""
        return {r["id"] for r in self.run("bulk_present", ids=ids)} if ids else set()

    def prefetch_candidates(self, texts: list[str], rules: Any) -> None:
        """Inside `batched()`: the full-text lookups the batch's records are about to make (guessed from the
        keyword counts: `falkor_batch.guess_candidates`), sent in one pipeline; a record whose lookup was
        guessed right reads it from memory, any other asks the server as usual."""
        if self._batch is None:
            return
        wanted = falkor_batch.guess_candidates(getattr(self, "_term_counts", None), texts, rules)
        if not wanted:
            return
        from falkordb.query_result import QueryResult

        text = self.query("link_candidates").text
        try:
            pipe = _client(self.url).connection.pipeline(transaction=False)
            for p in wanted:
                pipe.execute_command("GRAPH.RO_QUERY", self._graph.name, falkor_params.header(p) + text, "--compact")
            replies = pipe.execute()
        except Exception as exc:  # noqa: BLE001 - redis raises its own classes
            raise _plain(exc, self.url) from None
        for p, reply in zip(wanted, replies, strict=True):
            result = QueryResult(self._graph, reply)
            columns = [h[1] for h in (result.header or [])]
            self._batch.memo[("link_candidates", repr(sorted(p.items())))] = [
                dict(zip(columns, [dialect.from_server(v) for v in row], strict=True))
                for row in result.result_set or []]

    @contextmanager
    def batched(self) -> Iterator[FalkorStore]:
        """Writes kept and sent as one atomic query when the block ends, dropped when it raises; reads inside
        see them (kg/store/falkor_batch.py). Nested: joins the outer batch."""
        if self._batch is not None or self.read_only:
            yield self
            return
        self._batch = falkor_batch.Batch(lambda name: self.query(name).text,
                                         lambda name, p: self._rows(self.query(name).text, p), self._send)
        try:
            yield self
            self._batch.flush()
        finally:
            self._batch = None

    def _send(self, parts: list[tuple[str, Row]]) -> None:
        sent = falkor_batch.queries(parts)
        if len(sent) == 1:
            self._rows(*sent[0])
            return
        try:  # MULTI/EXEC: the server runs and persists the queries together, or none of them
            if self._lock is not None:
                self._lock.renew()
            pipe = _client(self.url).connection.pipeline(transaction=True)
            for text, params in sent:
                pipe.execute_command("GRAPH.QUERY", self._graph.name, falkor_params.header(params) + text)
            pipe.execute()
        except Exception as exc:  # noqa: BLE001 - redis raises its own classes
            raise _plain(exc, self.url) from None

    def execute(self, cypher: str, params: dict[str, Any] | None = None) -> list[Row]:
        params = params or {}
        _queries.NamedQuery("inline", cypher, _queries.params_of(cypher)).check(params)
        return self._execute_raw(dialect.translate(cypher), params)

    def _execute_raw(self, cypher: str, params: dict[str, Any]) -> list[Row]:
        if self._batch is not None:
            self._batch.flush()  # a statement the batch does not model sees every write before it
        return self._rows(cypher, params)

    def _rows(self, cypher: str, params: dict[str, Any]) -> list[Row]:
        columns, rows = self._fetch(cypher, params)
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def _fetch(self, cypher: str, params: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
        if falkor_copy.bulk_statement(cypher, self._execute_raw, self.ensure_fts, self.origin):
            return [], []  # Kùzu's COPY FROM a file, and its full-text index drop and rebuild
        try:
            known = dialect.catalogue(cypher)
        except ValueError as exc:
            raise StoreError(f"graph query failed: {exc}") from None
        if known is not None:
            return known
        text = falkor_params.header(params) + cypher  # checks the values as Kùzu's runner does
        try:
            if self._lock is not None:
                self._lock.renew()
            run = self._graph.ro_query if self.read_only else self._graph.query  # a replica takes reads only
            result = run(text)
        except Exception as exc:  # noqa: BLE001 - redis and falkordb raise their own classes
            raise _plain(exc, self.url) from None
        columns = [h[1] for h in (result.header or [])]
        return columns, [[dialect.from_server(v) for v in row] for row in result.result_set or []]

    def copy_rows(self, label: str, rows: list[Row], columns: list[str]) -> int:
        """kg/store/bulk.py's `copy_rows` on a team graph: the rows sent in chunks, no file between."""
        return falkor_copy.copy(label, rows, self._execute_raw, self.origin, columns)

    # kg/store/bulk.py streams rows through Kùzu's connection (`_conn.execute(_prepared_statement(q), p)`,
    # then `has_next`/`get_next`); the same calls here run the query on the server.
    @property
    def _conn(self) -> _Cursorless:
        return _Cursorless(self)

    def _prepared_statement(self, cypher: str) -> str:
        return cypher

    @contextmanager
    def transaction(self) -> Iterator[FalkorStore]:
        """Each statement is atomic on the server; there is no multi-statement transaction to open."""
        yield self

    @contextmanager
    def scratch_copy(self) -> Iterator[FalkorStore]:
        """Statements run on a copy of the graph, deleted afterwards: a dry run's writes undone, as a
        rolled-back transaction undoes them on the embedded graph. The writer lock stays held."""
        name = falkor_clone.copy_name(self.url.graph, "dry-run")
        real = self._graph
        self.copy_into(name)
        self._graph = _client(self.url).select_graph(name)
        try:
            yield self
        finally:
            self._graph = real
            falkor_clone.drop(_client(self.url), name)

    def copy_into(self, name: str) -> None:
        """Copy the graph into the new graph `name` on its server (by queries: kg/store/falkor_clone.py says why
        not with `GRAPH.COPY`), with the team's writer lock held and renewed throughout, so no member writes
        half-way: a reader's handle takes the lock for the copy. The copies a killed process left first go
        (`falkor_clone.drop_dead`: made on this machine by a process that runs no more)."""
        falkor_clone.drop_dead(_client(self.url), self.url.graph)
        if self._batch is not None:
            self._batch.flush()  # the copy holds every write made before it
        lock = self._lock
        if lock is None:
            lock = ServerLock(_client(self.url).connection, f"kg:lock:{self.url.graph}", self.lock_timeout)
            try:
                lock.acquire()
            except StoreError:
                raise
            except Exception as exc:  # noqa: BLE001 - redis raises its own classes
                raise _plain(exc, self.url) from None
        try:
            falkor_clone.copy(_client(self.url), self.url.graph, name, lambda exc: _plain(exc, self.url),
                              lock.renew)
            if not lock.held():  # a page outlasted the lease: a member may have written half-way
                falkor_clone.drop(_client(self.url), name)
                raise StoreError(f"the team graph {self.url.public} could not be held for its copy (the writer "
                                 "lock lapsed: the server is slow or overloaded); run the command again")
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - redis raises its own classes
            raise _plain(exc, self.url) from None
        finally:
            if lock is not self._lock:
                try:
                    lock.release()
                except Exception:  # noqa: BLE001 - the lease lapses by itself
                    pass

    def effects_threshold(self) -> int | None:
        """The server's `EFFECTS_THRESHOLD` (µs; kg/store/falkor_server.py says why kg wants it out of reach), or
        None when it does not say (an older FalkorDB, or a user not allowed GRAPH.CONFIG)."""
        try:
            got = _client(self.url).connection.execute_command("GRAPH.CONFIG", "GET", "EFFECTS_THRESHOLD")
            return int(got[1])
        except Exception:  # noqa: BLE001 - redis raises its own classes; not knowing is not an error
            return None

    # -- schema ---------------------------------------------------------------------------------------------
    def has_fts(self) -> bool:
        try:
            rows = self._execute_raw("CALL db.indexes() YIELD label, types RETURN label, types", {})
        except StoreError:
            return False
        return any(r["label"] == "Node" and "FULLTEXT" in (r["types"] or {}).get(FTS_FIELD, []) for r in rows)

    def ensure_fts(self) -> bool:
        if self.has_fts():
            return False
        # English stemming (Kùzu's index uses the porter stemmer); the tokens field is already normalised:
        # Latin words lower-cased and CJK runs as character bigrams (kg.core.text.index_tokens), on both backends.
        self._execute_raw(f"CALL db.idx.fulltext.createNodeIndex({{label: 'Node', language: 'english'}}, "
                          f"'{FTS_FIELD}')", {})
        return True

    def applied_migrations(self) -> list[str]:
        rows = self._execute_raw("MATCH (m:Meta) WHERE m.key STARTS WITH 'migration:' RETURN m.key AS key", {})
        return sorted(r["key"].split(":", 1)[1] for r in rows)

    def _check_version(self) -> None:
        check_version(self.applied_migrations(), f"the team graph {self.url.public}", "to upgrade it")

    def _migrate(self) -> None:
        known = [name for name, _ in migrations()]
        applied = set(self.applied_migrations())
        if set(known) == applied:
            return
        if applied - set(known):
            self._check_version()
        if not applied:  # a new graph: indexes instead of Kùzu's typed tables
            existing = self._range_indexes()
            for statement in dialect.schema().index_statements():
                if _index_key(statement) not in existing:
                    self._execute_raw(statement, {})
            self.ensure_fts()  # part of a new graph's schema, not a repair to warn about
        for name in known:
            if name in applied:
                continue
            for statement in dialect.data_statements(name):
                self._execute_raw(statement, {})
            self._execute_raw("MERGE (m:Meta {key: $key}) SET m.value = $value",
                              {"key": f"migration:{name}", "value": clock.wall().isoformat()})
        if not applied:  # a new graph: its keyword table is counted from the first node on, never recounted
            self._execute_raw(NEW_GRAPH_TERMS, {})

    def _range_indexes(self) -> set[tuple[str, str]]:
        rows = self._execute_raw("CALL db.indexes() YIELD label, types RETURN label, types", {})
        return {(r["label"], field) for r in rows for field, kinds in (r["types"] or {}).items() if "RANGE" in kinds}


class _Cursorless:
    """Kùzu's `Connection.execute` shape over `FalkorStore._fetch` (the rows come in one reply)."""

    def __init__(self, store: FalkorStore):
        self.store = store

    def execute(self, cypher: str, params: dict[str, Any] | None = None) -> _Rows:
        if self.store._batch is not None:
            self.store._batch.flush()  # a streamed read sees every write before it
        return _Rows(*self.store._fetch(cypher, params or {}))


class _Rows:
    def __init__(self, columns: list[str], rows: list[list[Any]]):
        self.columns, self.rows, self.at = columns, rows, 0

    def get_column_names(self) -> list[str]:
        return self.columns

    def has_next(self) -> bool:
        return self.at < len(self.rows)

    def get_next(self) -> list[Any]:
        self.at += 1
        return self.rows[self.at - 1]


def _index_key(statement: str) -> tuple[str, str]:
    import re

    m = re.search(r"\(n:(\w+)\) ON \(n\.(\w+)\)", statement)
    return (m.group(1), m.group(2)) if m else ("", "")
