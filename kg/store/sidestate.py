"""What changes on a node after it is created, kept in the side index (issue 17): the `state` table of
`memory/.kg/search.sqlite` holds every node's priority, status, pinning, reinforcement, area, action and source,
and the table `nodekey` each node's Pattern-Key: an event's names the pattern it belongs to, set when it joins one
(`kg doctor` restores an event into its pattern from it, kg/ingest/recover.py).

A cold session brief read these by key from Kùzu, one statement per node (258 of its 309 statements at 100k
entries, 0.2-0.6 ms each: search hits 100, a ready pattern's window events 76, the watch list 50, the pending
entries 32), and a list of keys is a scan in Kùzu 0.11.3. SQLite reads them by key in microseconds.

Kept right by writing ahead, never behind the graph:
- every statement run on the graph is classed once by its text (`classify`): one that may set a state column
  names the nodes it changes by its parameters (`KNOWN`), or changes no node (`NOT_NODES`), or is unknown, which
  marks the whole table stale (a safe default for any new query, inline Cypher included) unless its caller names
  the nodes (`naming`: a cycle's decay, the ids it staged);
- before the graph commits (`Store.transaction`, or before an autocommit statement) and after the free-space
  floor's check (a write refused for room, DiskFull, is rolled back with nothing recorded), `flush` records the
  named nodes in the table `dirty`, or clears the `state` mark in `meta`, in a committed SQLite transaction; a
  failure to record fails the write before it commits;
- after a commit, `sync` (kg/store/sideindex.py: a writer's close, a drain) rereads the dirty nodes by key, or
  the whole table in one scan when it is stale, and clears them.
A reader takes a node's state from here only when the mark says the table is whole and the node is not dirty;
otherwise it asks the graph by key, as before. So a kill -9 between the graph's commit and this file's update, or
a rolled-back write, leaves dirty names (reread, harmless) and never a wrong answer.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

STATE = ("priority", "status", "pinned", "reinforced_at", "area", "action", "source")
KEY = "pattern_key"  # kept in its own table (`nodekey`): an older kg's rows of `state` keep their seven columns
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS state(pos INTEGER PRIMARY KEY, {", ".join(f + " TEXT" for f in STATE)});
CREATE TABLE IF NOT EXISTS dirty(id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS nodekey(pos INTEGER PRIMARY KEY, key TEXT NOT NULL);
"""
MARK = "state"  # meta key: "ok" when `state` holds every node's current values but those named in `dirty`
LOCK_WAIT = 30.0  # seconds a write waits for the side file's lock before it is refused (and retried)
DIRTY_MAX = 2000  # more dirty nodes than this: the next sync refills the whole table in one scan

# a statement that may set one of the columns (a false alarm only costs a reread)
_MAY_CHANGE = re.compile(r"\bSET\b.*?\.(" + "|".join((*STATE, KEY)) + r")\s*=(?!=)", re.I | re.S)
# named queries that set these columns on the nodes their parameters name (by key)
KNOWN: dict[str, tuple[str, ...]] = {
    "status_set": ("id",), "status_close": ("id",), "status_reopen": ("id",),
    "lc_pin": ("id",), "lc_reinforce": ("id",),
    "pattern_retire": ("id",),
    "pattern_add_member": ("pattern",), "pattern_add_new_member": ("pattern",),
    "pattern_event_set_key": ("id",),
}
# named queries that set a column of that name on other tables (changes, sessions; decisions, proposals and skills
# are Meta rows since migration 0011)
NOT_NODES = frozenset({"lc_change_confirm", "lc_change_update", "lc_decision_override", "lc_decision_upsert",
                       "lc_proposal_decide", "lc_proposals_obsolete", "memory_session_start",
                       "memory_skill_upsert", "sessions_touch"})
_COLUMNS = ", ".join(f"n.{f} AS {f}" for f in (*STATE, KEY))
_READ = "MATCH (n:Node) RETURN offset(ID(n)) AS pos, " + _COLUMNS
_BY_KEY = "MATCH (n:Node {id: $id}) RETURN offset(ID(n)) AS pos, " + _COLUMNS
BATCH = 50000
DOING = "bringing the search side index in step with the graph"  # what a waiter is told, during a long refill


# -- classing the graph's statements (pure) -----------------------------------------------------------------------
def classify(cypher: str, known_texts: dict[str, tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """What a statement does to the kept columns: () nothing, a tuple of parameter names naming the nodes it
    changes, or None: it may change any node's (the table goes stale)."""
    if not _MAY_CHANGE.search(cypher):
        return ()
    return known_texts.get(cypher)


def known_texts(queries: dict[str, Any]) -> dict[str, tuple[str, ...] | None]:
    """The texts of the classed named queries (both dialects' share a name; only the embedded store asks)."""
    out: dict[str, tuple[str, ...] | None] = {}
    for name, q in queries.items():
        base = name.split("@", 1)[0]
        if base in KNOWN:
            out[q.text] = KNOWN[base]
        elif base in NOT_NODES:
            out[q.text] = ()
    return out


def ids_of(names: tuple[str, ...], params: dict[str, Any]) -> list[str]:
    return [params[n] for n in names if isinstance(params.get(n), str)]


# -- the store's side: noting and recording ahead of a commit ---------------------------------------------------------
def note(st: Any, cypher: str, params: dict[str, Any]) -> None:
    """Called by the store for every statement it runs: remember what it may change, and record it now when no
    transaction is open (the statement commits as it runs)."""
    cache = st.__dict__.setdefault("_state_class", {})
    how = cache.get(cypher, False)
    if how is False:
        texts = st.__dict__.get("_state_texts")
        if texts is None:
            texts = st.__dict__["_state_texts"] = known_texts(st._queries)
        how = cache[cypher] = classify(cypher, texts)
    if how == ():
        return
    pending = st.__dict__.setdefault("_state_pending", [set(), False])
    named = st.__dict__.get("_state_named")
    if how is None and named is not None:  # a caller that knows which nodes this statement changes
        pending[0].update(named)
    elif how is None:
        pending[1] = True
    else:
        pending[0].update(ids_of(how, params))
    if not st._in_tx:
        try:
            flush(st)
        except (OSError, sqlite3.Error) as exc:
            from kg.core.errors import StoreError

            raise StoreError(not_told(exc)) from None


@contextmanager
def naming(st: Any, ids: Iterable[str]) -> Iterator[None]:
    """The statements run inside change the kept state of these nodes only (a cycle's decay: the ids it staged),
    where their text alone would mark the whole table stale."""
    st.__dict__["_state_named"] = list(ids)
    try:
        yield
    finally:
        st.__dict__.pop("_state_named", None)


def drop_pending(st: Any) -> None:
    """A rolled-back transaction changed nothing: what it noted is not recorded."""
    st.__dict__.pop("_state_pending", None)


def flush(st: Any) -> None:
    """Record what the open write noted, before the graph commits it. Raises OSError / sqlite3.Error: the caller
    does not commit (a state the file cannot be told about would be read as it was)."""
    pending = st.__dict__.pop("_state_pending", None)
    if not pending or (not pending[0] and not pending[1]):
        return
    from kg.store.sidefile import path_of

    path = path_of(st.path)
    if not path.exists():
        return  # nothing kept: the file's first build reads every node's current state
    mark_stale(path, pending[0], everything=pending[1])


def not_told(exc: BaseException) -> str:
    """The error of a write refused because the side file could not be told first: "not writable" makes the
    journal's drain keep the entries and retry them (kg/ingest/drain.py `operational`), never set them aside."""
    return (f"the write was not made: the search index beside the graph (memory/.kg/search.sqlite) is not writable "
            f"now ({exc}); try again, or run `kg doctor`")


def mark_stale(path: Path, ids: Iterable[str], *, everything: bool = False) -> None:
    """Name these nodes dirty (or the whole table stale) in a committed SQLite transaction. A file that is not a
    database, or is damaged, is derived data: it goes (the next sync builds it from the graph, as it would).
    Raises sqlite3.OperationalError (locked past 30 s, the disk) and OSError."""
    try:
        _mark(path, ids, everything)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError:
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            p.unlink(missing_ok=True)


def _mark(path: Path, ids: Iterable[str], everything: bool) -> None:
    with closing(sqlite3.connect(path, timeout=LOCK_WAIT, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);" + SCHEMA)
        db.execute("BEGIN IMMEDIATE")
        try:
            if everything:
                db.execute("DELETE FROM meta WHERE key = ?", (MARK,))
            else:
                db.executemany("INSERT OR IGNORE INTO dirty(id) VALUES (?)", [(i,) for i in ids])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


# -- the side file's side: keeping and reading --------------------------------------------------------------------
def _text(value: Any) -> Any:
    if isinstance(value, datetime):
        return (value if value.tzinfo is None else value.replace(tzinfo=None)).isoformat(" ", "microseconds")
    if isinstance(value, bool):
        return "1" if value else "0"
    return value


def row(pos: int, r: dict[str, Any]) -> tuple:
    # (text and None as they are, without a call each: a rebuild makes 7 values a node)
    return (pos, *[v if v is None or v.__class__ is str else _text(v) for v in map(r.get, STATE)])


def add(db: sqlite3.Connection, start: int, rows: list[dict[str, Any]]) -> None:
    """New nodes' state as created (or as read from the graph), at positions start, start+1, ..."""
    db.executemany(f"INSERT OR REPLACE INTO state VALUES ({', '.join('?' * (len(STATE) + 1))})",
                   [row(start + k, r) for k, r in enumerate(rows)])
    db.executemany("INSERT OR REPLACE INTO nodekey VALUES (?, ?)",
                   [(start + k, r[KEY]) for k, r in enumerate(rows) if r.get(KEY)])


def _reread(db: sqlite3.Connection, pos: int, r: dict[str, Any]) -> None:
    """A node's state read again from the graph: its key too, gone when it left its pattern."""
    add(db, pos, [r])
    if not r.get(KEY):
        db.execute("DELETE FROM nodekey WHERE pos = ?", (pos,))


def _keys_changed(db: sqlite3.Connection, rows: list[dict[str, Any]]) -> int:
    """A refill's batch of rows (in position order): the keys that differ from the file's written, those gone
    deleted. How many changed."""
    lo, hi = int(rows[0]["pos"]), int(rows[-1]["pos"])
    held = dict(db.execute("SELECT pos, key FROM nodekey WHERE pos BETWEEN ? AND ?", (lo, hi)))
    now = {int(r["pos"]): r[KEY] for r in rows if r.get(KEY)}
    put = [(p, k) for p, k in now.items() if held.get(p) != k]
    gone = [(p,) for p in held if p not in now]
    db.executemany("INSERT OR REPLACE INTO nodekey VALUES (?, ?)", put)
    db.executemany("DELETE FROM nodekey WHERE pos = ?", gone)
    return len(put) + len(gone)


def created(params: dict[str, Any]) -> dict[str, Any]:
    """A node's state as `node_create` makes it (pinned false, reinforced when created, or when kg learned it)."""
    return {**{f: params.get(f) for f in (*STATE, KEY)}, "pinned": False,
            "reinforced_at": params.get("reinforced_at") or params.get("created_at")}


def catch_up(st: Any, db: sqlite3.Connection, whole: bool) -> str:
    """Inside the side file's write transaction, after the graph committed: reread the dirty nodes by key, or
    refill every node's state in one scan when the table is not whole (`whole`: it was built whole or refilled
    in this same transaction). Never inside an open graph transaction: it would read what may roll back."""
    if st._in_tx:
        return "in a transaction"
    ok = whole or _meta(db) == "ok"
    dirty = [r[0] for r in db.execute("SELECT id FROM dirty LIMIT ?", (DIRTY_MAX + 1,))]
    if ok and len(dirty) <= DIRTY_MAX:
        for i in dirty:
            found = st._execute_raw(_BY_KEY, {"id": i})
            if found:
                _reread(db, int(found[0]["pos"]), found[0])
        db.execute("DELETE FROM dirty")
        if not whole and not dirty:
            return "state in step"
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, 'ok')", (MARK,))
        return f"state reread {len(dirty)}"
    if getattr(st, "read_only", False):
        return "state left stale"  # a one-off reader does not refill it (the graph answers by key meanwhile)
    n = 0
    marker = _marked(st)
    try:
        for rows in _stream(st):  # in position order: each batch compared with the rows the file keeps for it
            new = [row(int(r["pos"]), r) for r in rows]
            have = set(db.execute("SELECT * FROM state WHERE pos BETWEEN ? AND ?", (new[0][0], new[-1][0])))
            changed = [x for x in new if x not in have]  # only what differs is written (a cycle's refill at 1M)
            db.executemany(f"INSERT OR REPLACE INTO state VALUES ({', '.join('?' * (len(STATE) + 1))})", changed)
            n += len(changed) + _keys_changed(db, rows)
    finally:
        if marker is not None:
            marker.done()
    db.execute("DELETE FROM dirty")
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, 'ok')", (MARK,))
    return f"state refilled ({n} changed)"


def _marked(st: Any) -> Any:
    """A refill of many nodes' state holds the graph for about a minute at 1M entries (the first writer after the
    upgrade to side file version 6, or after a write that changed more than DIRTY_MAX nodes): marked as the node
    index's rebuild is (`sideindex._marked`), so that a command it shuts out waits for it saying so."""
    from kg.store import sideindex

    rows = sideindex._count(st)
    return sideindex._marked(st, rows, f"refill the kept state of {rows:,} entries", DOING)


def _meta(db: sqlite3.Connection) -> str | None:
    found = db.execute("SELECT value FROM meta WHERE key = ?", (MARK,)).fetchone()
    return found[0] if found else None


def _stream(st: Any) -> Iterator[list[dict[str, Any]]]:
    return in_batches(st, _READ, {}, BATCH)


def in_batches(st: Any, cypher: str, params: dict[str, Any], size: int) -> Iterator[list[dict[str, Any]]]:
    """The rows of one Kùzu read, `size` at a time: one scan on one thread (rows come in the table's order),
    fetched row by row, never all in memory (the side files' rebuilds at 1M nodes)."""
    with st.one_thread():
        result = st._conn.execute(cypher, params)
        columns = result.get_column_names()
        batch: list[dict[str, Any]] = []
        while result.has_next():
            batch.append(dict(zip(columns, result.get_next(), strict=True)))
            if len(batch) >= size:
                yield batch
                batch = []
        if batch:
            yield batch


def clear(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM state")
    db.execute("DELETE FROM nodekey")
    db.execute("DELETE FROM dirty")
    db.execute("DELETE FROM meta WHERE key = ?", (MARK,))


def current(db: sqlite3.Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The kept state of these nodes, for those it is right for (the table whole, the node not dirty), in one
    read transaction; {} when the table is not whole."""
    from kg.store.sidefile import parse_time

    out: dict[str, dict[str, Any]] = {}
    if not ids:
        return out
    db.execute("BEGIN")
    try:
        if _meta(db) != "ok":
            return out
        for k in range(0, len(ids), 400):
            chunk = ids[k:k + 400]
            marks = ", ".join("?" * len(chunk))
            dirty = {r[0] for r in db.execute(f"SELECT id FROM dirty WHERE id IN ({marks})", chunk)}
            q = (f"SELECT n.id, {', '.join('s.' + f for f in STATE)} FROM node n JOIN state s ON s.pos = n.pos "
                 f"WHERE n.id IN ({marks})")
            for r in db.execute(q, chunk):
                if r[0] in dirty:
                    continue
                d = dict(zip(STATE, r[1:], strict=True))
                d["pinned"] = None if d["pinned"] is None else bool(int(d["pinned"]))
                d["reinforced_at"] = parse_time(d["reinforced_at"])
                out[r[0]] = d
    finally:
        db.execute("COMMIT")
    return out


def differences(st: Any, db: sqlite3.Connection, sample: list[int]) -> str | None:
    """For `kg doctor`: the kept state of the nodes at these positions against the graph's, each read by key
    (only when the table says it is whole; a dirty node is reread anyway), or None when they agree."""
    if _meta(db) != "ok" or not sample:
        return None
    dirty = {r[0] for r in db.execute("SELECT id FROM dirty")}
    for pos in sample:
        found = db.execute("SELECT id FROM node WHERE pos = ?", (pos,)).fetchone()
        if found is None or found[0] in dirty:
            continue
        graph = st._execute_raw(_BY_KEY, {"id": found[0]})
        got = db.execute("SELECT * FROM state WHERE pos = ?", (pos,)).fetchone()
        key = db.execute("SELECT key FROM nodekey WHERE pos = ?", (pos,)).fetchone()
        if graph and (got is None or tuple(got) != row(pos, graph[0])
                      or (key[0] if key else None) != (graph[0][KEY] or None)):
            return f"keeps a state of node {found[0]} that the graph no longer holds"
    return None
