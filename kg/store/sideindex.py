"""Memory search's side index: a SQLite file beside the embedded graph (`memory/.kg/search.sqlite`).

Kùzu 0.11.3's full-text index scores every document holding any asked term, and reads whole column blocks for
a window of dates, so search grew with the graph (issues 17 and 22). SQLite answers the questions search
asks by index instead:
- `fts`: FTS5 over the same text Kùzu indexes (`Node.tokens`: redacted, CJK as bigrams; tokenizer porter
  unicode61 as Kùzu's porter stemmer), contentless (the text is in `node` once); its rowid is the node's
  position in Kùzu's node table;
- `lpost`, `ldf`, `ltot`: the tokens as Kùzu's own full-text index (node_fts) held them, counted per porter
  stem, for linking's candidates (kg/store/linkpost.py; kg/store/sidelink.py ranks them as node_fts ranked);
- `node`: each node's fields that never change after it is created (id, kind, entry type, text, details,
  category, session, tags, context, created time; priority, status and reinforcement as created: search reads
  the current ones by key for the hits it returns), with indexes on (session, created_at) and (created_at),
  so a session's members, a window of dates and the newest entries are index range reads.

The file is derived from the graph and never holds anything the graph does not: Kùzu's nodes are never
edited in their text nor deleted, and are numbered densely in creation order, so the index follows the
graph by position. A writer's open records the nodes it creates (`Store.run("node_create")`) and `sync`
adds them when it closes or drains; any other change (a bulk COPY, a crash between the graph's commit and
this file's, a rolled-back batch) shows as a stamp that differs from the graph's (node count and the id of
the last node), and `sync` catches up from the side index's high-water mark by position, or rebuilds it.
Whoever finds it behind (a writer, the read server, a one-off reader) catches up: SQLite serialises them
(`BEGIN IMMEDIATE`, the stamp re-read inside). `kg doctor` reports and repairs it. `remove` takes rows out
and leaves none of their bytes in the file (secure_delete, FTS5 optimize, VACUUM).

FalkorDB (the team store) keeps its own full-text query: this file is for the embedded store only.

The contract this rests on (break it and search answers from rows the graph no longer holds):
- any future delete of a Node, or rewrite of its text (`text`, `details`, `tokens`: redaction edits), must
  call `forget` for it BEFORE the graph's commit (the index text to delete is read from the graph);
- a migration that rewrites `tokens` (or what `_indexed` keeps) must bump `VERSION`: a file of another
  version is rebuilt by the next writer or `kg doctor`.

A read-only reader (a one-off `kg search`) never rebuilds: when the file is of another version, damaged,
missing or names another graph, or more than `CATCH_UP_MAX` nodes behind, it answers None and search asks
the graph's own index until a writer's close or `kg doctor` brings the file in step.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.store import linkpost
from kg.store.linktext import link_text

FILE = "search.sqlite"
VERSION = "5"  # a side file of another version (or stopword list: `version()`) is rebuilt (5: `lpost`)
CATCH_UP_MAX = 5000  # a one-off reader adds at most this many nodes (else it asks the graph's own index)
BATCH = 20000  # rows read from the graph and written per transaction in a catch-up or rebuild
FIELDS = ("id", "kind", "entry_type", "text", "details", "category", "priority", "status", "session", "tags",
          "context", "created_at")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS node(pos INTEGER PRIMARY KEY, {", ".join(f + " TEXT" for f in FIELDS)});
CREATE UNIQUE INDEX IF NOT EXISTS node_id ON node(id);
CREATE INDEX IF NOT EXISTS node_session ON node(session, created_at, id) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS node_created ON node(created_at);
"""
_FTS = "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(tokens, content='', tokenize='porter unicode61')"
_SCHEMA += _FTS + ";\n" + linkpost.SCHEMA  # linking's term counts (kg/store/linkpost.py)
_OLD = "DROP TABLE IF EXISTS lfts; DROP TABLE IF EXISTS ldl;"  # version 4's linking tables, replaced by linkpost's
_READ = ("MATCH (n:Node) WHERE offset(ID(n)) >= $start AND offset(ID(n)) < $stop "
         "RETURN offset(ID(n)) AS pos, " + ", ".join(f"n.{f} AS {f}" for f in FIELDS) + ", n.tokens AS tokens")
_POS = "MATCH (n:Node {id: $id}) RETURN offset(ID(n)) AS pos"
_TOKENS = "MATCH (n:Node {id: $id}) RETURN n.tokens AS tokens"
_COUNT = "MATCH (n:Node) RETURN count(n) AS n"


def path_of(graph_path: Path) -> Path:
    return Path(graph_path).parent / FILE


def _time(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo is None else value.replace(tzinfo=None)).isoformat(" ", "microseconds")
    return str(value)


def parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


_TAGS = FIELDS.index("tags")
_AT = FIELDS.index("created_at")


def _row(pos: int, r: dict[str, Any]) -> list[Any]:
    vals = [pos, *map(r.get, FIELDS)]
    vals[_AT + 1] = _time(vals[_AT + 1])
    tags = vals[_TAGS + 1]
    vals[_TAGS + 1] = json.dumps(list(tags), ensure_ascii=False) if tags else None
    return vals


def _indexed(tokens: str | None) -> str:
    """The index text without stopwords (rules/search_stopwords.toml), as Kùzu's index kept it."""
    stop = _stop()
    return " ".join(w for w in (tokens or "").split() if w not in stop)


def _stop() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from kg.core.policy import packaged

        _STOP = frozenset(packaged("search_stopwords")["fts"]["stopwords"])
    return _STOP


_STOP: frozenset[str] | None = None


def version() -> str:
    """The side file's form: this module's and the stopword list's (rules/search_stopwords.toml)."""
    import hashlib

    from kg.store.linktext import form

    link = form()
    digest = hashlib.sha256((" ".join(sorted(_stop())) + "|" + link).encode()).hexdigest()[:12]
    return f"{VERSION}:{digest}"


def fts_query(terms: Iterable[str], op: str) -> str:
    """FTS5 syntax for these terms joined by `op` (AND / OR), each quoted (no operator can be injected)."""
    return f" {op} ".join('"' + t.replace('"', '""') + '"' for t in terms)


class SideIndex:
    """One open side file (`writable` for sync, else a read-only connection)."""

    def __init__(self, path: Path, writable: bool):
        self.path = path
        if writable:
            self.db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'lfts'").fetchone():
                self.db.executescript(_OLD)  # (the stamp's version differs: the next sync rebuilds it)
        else:
            # kept open on the read server's store: its requests may come on another thread than the first
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0, isolation_level=None,
                                      check_same_thread=False)
        self.db.execute("PRAGMA secure_delete=ON")

    def close(self) -> None:
        self.db.close()

    # -- the stamp ------------------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def stamp(self) -> tuple[int, str | None]:
        """(nodes indexed, id of the last one)."""
        return int(self.meta("count") or 0), self.meta("last_id")

    def current(self, count: int) -> bool:
        """Whether this file holds the graph's `count` nodes, in this version's form."""
        return self.stamp()[0] == count and self.meta("version") == version()

    def _set_stamp(self, count: int, last_id: str | None) -> None:
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            [("count", str(count)), ("last_id", last_id), ("version", version())])

    # -- writing --------------------------------------------------------------------------------------------
    def _add(self, start: int, rows: list[dict[str, Any]]) -> None:
        """Rows at positions start, start+1, ... (inside the caller's transaction)."""
        self.db.executemany(f"INSERT OR REPLACE INTO node VALUES ({', '.join('?' * (len(FIELDS) + 1))})",
                            [_row(start + k, r) for k, r in enumerate(rows)])
        self.db.executemany("INSERT INTO fts(rowid, tokens) VALUES (?, ?)",
                            [(start + k, _indexed(r.get("tokens"))) for k, r in enumerate(rows)])
        # every node is a document, a node left without a word too (length 0): node_fts counted each node
        # inserted after it was made (and those a build found with a word: the same unless a text is all
        # stopwords or digits)
        linkpost.add(self.db, [(start + k, link_text(r.get("tokens"))) for k, r in enumerate(rows)])

    def clear(self) -> None:
        """Empty it (inside the caller's transaction); the FTS5 table is made again, not emptied: its pages
        may be the damaged part."""
        self.db.execute("DELETE FROM node")
        self.db.execute("DROP TABLE IF EXISTS fts")
        self.db.execute(_FTS)
        linkpost.clear(self.db)
        self._set_stamp(0, None)

    def remove(self, rows: list[tuple[str, str]]) -> int:
        """Take these nodes ((id, index text) pairs: a contentless index deletes a document by its text) out,
        leaving none of their bytes in the file: FTS5 keeps deleted documents in old segments until they are
        merged ('optimize'), freed pages are zeroed (secure_delete) and the file vacuumed, its WAL
        truncated. Returns how many were found."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            gone = 0
            for node_id, tokens in rows:
                found = self.db.execute("SELECT pos FROM node WHERE id = ?", (node_id,)).fetchone()
                if found is None:
                    continue
                self.db.execute("INSERT INTO fts(fts, rowid, tokens) VALUES ('delete', ?, ?)",
                                (found[0], _indexed(tokens)))
                linkpost.remove(self.db, [(found[0], link_text(tokens))])
                self.db.execute("DELETE FROM node WHERE pos = ?", (found[0],))
                gone += 1
            self.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.execute("VACUUM")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    # -- reading --------------------------------------------------------------------------------------------
    def ranked(self, terms: list[str], k: int) -> list[tuple[int, float]]:
        """Any of the terms, best BM25 first (exhaustive over their postings): (position, score > 0).

        Scored as Kùzu's index scored (idf log(1 + (N - n + 0.5) / (n + 0.5))): FTS5's bm25() floors the idf
        of a term in more than half the documents to 1e-6, which made such a word (a speaker's name in a
        conversation) count for nothing. Each term is asked alone, its bm25() divided by FTS5's idf to give
        the term's share, and weighed again by Kùzu's idf."""
        if not terms or k < 1:
            return []
        n = max(1, int(self.meta("count") or 0))
        total: dict[int, float] = {}
        for t in dict.fromkeys(terms):
            rows = self.db.execute("SELECT rowid, -bm25(fts) FROM fts WHERE fts MATCH ?",
                                   (fts_query([t], "AND"),)).fetchall()
            df = len(rows)
            if not df:
                continue
            fts_idf = math.log((n - df + 0.5) / (df + 0.5))
            fts_idf = fts_idf if fts_idf > 0 else 1e-6
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for p, s in rows:
                total[p] = total.get(p, 0.0) + idf * s / fts_idf
        best = sorted(((p, round(s, 9)) for p, s in total.items()), key=lambda x: (-x[1], x[0]))
        if len(best) > k:  # those tied with the k-th too: the caller breaks ties by id, as before
            best = [x for x in best if x[1] >= best[k - 1][1]]
        return best

    def newest(self, terms: list[str], k: int) -> list[tuple[int, float]]:
        """Nodes holding all the terms, newest (last created) first, at most `k`: bounded by `k`, whatever
        the terms' posting lists."""
        if not terms or k < 1:
            return []
        rows = self.db.execute("SELECT rowid, -bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?",
                               (fts_query(terms, "AND"), k)).fetchall()
        return [(int(p), float(s)) for p, s in rows]

    def df(self, term: str) -> int:
        """How many nodes hold the term (its posting list; the porter stem's, as FTS5 matches)."""
        row = self.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (fts_query([term], "AND"),)).fetchone()
        return int(row[0])

    def rows_at(self, positions: list[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        for chunk in _chunks(positions, 500):
            q = f"SELECT * FROM node WHERE pos IN ({', '.join('?' * len(chunk))})"
            for r in self.db.execute(q, chunk):
                out[r[0]] = _dict(r)
        return out

    def rows_by_id(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(ids, 500):
            q = f"SELECT * FROM node WHERE id IN ({', '.join('?' * len(chunk))})"
            for r in self.db.execute(q, chunk):
                d = _dict(r)
                out[d["id"]] = d
        return out

    def session_members(self, sessions: list[str], limit: int) -> list[tuple[str, datetime | None, str]]:
        """(session, time, id) of these sessions' entries, by session then time (none last) and id."""
        if not sessions or limit < 1:
            return []
        q = (f"SELECT session, created_at, id FROM node WHERE session IN ({', '.join('?' * len(sessions))}) "
             "ORDER BY session, created_at IS NULL, created_at, id LIMIT ?")
        return [(s, parse_time(t), i) for s, t, i in self.db.execute(q, (*sessions, limit))]

    def between(self, start: datetime, end: datetime, limit: int) -> list[dict[str, Any]]:
        """Entries (not patterns) created in [start, end), newest first."""
        q = ("SELECT * FROM node WHERE created_at >= ? AND created_at < ? AND kind <> 'pattern' "
             "ORDER BY created_at DESC, id LIMIT ?")
        return [_dict(r) for r in self.db.execute(q, (_time(start), _time(end), limit))]

    def newest_ids(self, since: datetime | None, limit: int) -> list[tuple[str, datetime | None]]:
        """(id, time) of the newest nodes of any kind created at or after `since`, newest first, ties by id
        descending (`nodes_newest_any`'s rows): an index range read."""
        q = ("SELECT id, created_at FROM node WHERE created_at >= ? ORDER BY created_at DESC, id DESC LIMIT ?"
             if since is not None else
             "SELECT id, created_at FROM node WHERE created_at IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT ?")
        args = (_time(since), limit) if since is not None else (limit,)
        return [(i, parse_time(t)) for i, t in self.db.execute(q, args)]

    def recent(self, limit: int) -> list[dict[str, Any]]:
        q = "SELECT * FROM node WHERE kind <> 'pattern' ORDER BY created_at DESC, id LIMIT ?"
        return [_dict(r) for r in self.db.execute(q, (limit,))]


def _chunks(items: list[Any], n: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _dict(r: tuple) -> dict[str, Any]:
    d = dict(zip(("pos", *FIELDS), r, strict=True))
    d["created_at"] = parse_time(d["created_at"])
    d["tags"] = json.loads(d["tags"]) if d["tags"] else []
    d["pinned"], d["reinforced_at"], d["stale"] = False, None, False
    d["side"] = True  # priority, status, pinned and reinforcement as created: `fresh` reads the current ones
    return d


# -- keeping it in step -------------------------------------------------------------------------------------
def embedded(st: Any) -> bool:
    """Whether `st` is the embedded (Kùzu) store this index is for."""
    from kg.store import Store

    return isinstance(st, Store)


def _pos_of(st: Any, node_id: str | None) -> int | None:
    """A node's position in the graph's node table, by its key (one indexed lookup)."""
    if node_id is None:
        return None
    rows = st._execute_raw(_POS, {"id": node_id})
    return int(rows[0]["pos"]) if rows else None


def _count(st: Any) -> int:
    return int(st._execute_raw(_COUNT, {})[0]["n"])


def _read_count(st: Any) -> int:
    """The graph's node count for a read: once per open of a read-only graph, and as a named query otherwise,
    which the read server keeps until the graph changes (issue 22: each count scans the node table, and a
    session brief counted ten times)."""
    memo = st.__dict__.get("_side_count")
    if memo is not None:
        return memo
    n = int(st.run("side_node_count")[0]["n"])
    if getattr(st, "read_only", False):
        st.__dict__["_side_count"] = n
    return n


def sync(st: Any, *, rebuild: bool = False) -> str:
    """Bring the side index in step with the graph `st` holds. Returns what it did: "in step", "added N",
    "caught up N", "rebuilt N". Never fails the caller's write: the graph is the truth, and the next sync
    (or `kg doctor`) catches up."""
    if not embedded(st):
        return "not embedded"
    created = st.__dict__.pop("_side_created", [])
    dirty = st.__dict__.pop("_side_dirty", False)
    path = path_of(st.path)
    try:
        side = SideIndex(path, writable=True)
    except sqlite3.OperationalError:
        raise  # locked, or the disk: left to the next sync
    except sqlite3.DatabaseError:  # not a database, or damaged: derived data, made again from the graph
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            p.unlink(missing_ok=True)
        side, rebuild = SideIndex(path, writable=True), True
    with closing(side):
        side.db.execute("BEGIN IMMEDIATE")
        try:
            done = _sync(st, side, [] if dirty else created, rebuild)
            side.db.execute("COMMIT")
        except BaseException:
            side.db.execute("ROLLBACK")
            raise
    return done


def _sync(st: Any, side: SideIndex, created: list[dict[str, Any]], rebuild: bool) -> str:
    count = _count(st)
    have, last = side.stamp()
    rebuild = rebuild or side.meta("version") != version()
    # the side index's last node is where it was: what it holds is the graph's first `have` nodes
    kept = not rebuild and 0 < have <= count and _pos_of(st, last) == have - 1
    if not rebuild and have == count and (have == 0 or kept):
        return "in step"
    # the nodes this process created, when they are exactly the graph's new ones
    if (created and (have == 0 or kept) and have + len(created) == count
            and _pos_of(st, created[-1]["id"]) == count - 1):
        side._add(have, created)
        side._set_stamp(count, created[-1]["id"])
        return f"added {len(created)}"
    start = have if kept else 0
    if start == 0:
        side.clear()
    at = start
    for rows in _stream(st, start, count):
        if [r["pos"] for r in rows] != list(range(at, at + len(rows))):
            raise RuntimeError("the graph's node positions are not dense")  # never seen: nodes are not deleted
        side._add(at, rows)
        at += len(rows)
        last = rows[-1]["id"]
    if at != count:
        raise RuntimeError(f"read {at} of the graph's {count} nodes")
    side._set_stamp(count, last if count else None)
    return f"{'caught up' if start else 'rebuilt'} {count - start}"


def _stream(st: Any, start: int, stop: int) -> Iterator[list[dict[str, Any]]]:
    """The graph's nodes at positions [start, stop), in order, `BATCH` rows at a time: one scan on one thread
    (rows come in position order; `_sync` checks it), fetched row by row. Not sorted by Kùzu: sorting a
    million rows with their text fills its buffer pool; nor a range query per batch: each scans the table."""
    with st.one_thread():
        result = st._conn.execute(_READ, {"start": start, "stop": stop})
        columns = result.get_column_names()
        batch: list[dict[str, Any]] = []
        while result.has_next():
            batch.append(dict(zip(columns, result.get_next(), strict=True)))
            if len(batch) >= BATCH:
                yield batch
                batch = []
        if batch:
            yield batch


def safe_sync(st: Any) -> str:
    """`sync` for a writer's close or drain: a failure (a full disk, a locked file) is left to the next sync
    and to `kg doctor`; the graph's write is committed already."""
    if st.__dict__.get("_side_hold"):
        return "held"  # `kg doctor --dry-run` reports it and changes nothing
    try:
        return sync(st)
    except (sqlite3.Error, OSError, RuntimeError) as exc:
        st.__dict__["_side_dirty"] = True
        return f"failed: {exc}"


def noted_create(st: Any, params: dict[str, Any]) -> None:
    """`Store.run` hands this every node it creates (the fields the index keeps), for the next `sync`."""
    st.__dict__.setdefault("_side_created", []).append(
        {f: params.get(f) for f in (*FIELDS, "tokens")})


def for_reading(st: Any) -> SideIndex | None:
    """The side index in step with the graph `st` holds, kept open on `st` for its later reads (the read
    server's), caught up first when it is behind (whoever reads first pays for it); None for a store it is
    not for, or a file that cannot be brought in step (search then asks the graph's own index). A read-only
    reader catches up at most `CATCH_UP_MAX` nodes and never rebuilds (see the module's doc)."""
    if not embedded(st):
        return None
    side = st.__dict__.get("_side_reader")
    try:
        count = _read_count(st)
        if side is not None and side.current(count):
            return side
        if side is None and path_of(st.path).exists():
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
            if side.current(count):
                return side
        if getattr(st, "read_only", False) and to_write(st, side, count) > CATCH_UP_MAX:
            return None  # a one-off reader does not rebuild it: the graph's own index, until a writer does
        sync(st)
        if side is None:
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
        return side if side.current(count) else None
    except (sqlite3.Error, OSError, RuntimeError):
        return None


def open_reader(st: Any, *, open_it: bool = False) -> SideIndex | None:
    """The side index a read on `st` keeps open (`for_reading`; or, `open_it`, opened read-only here), when
    it is in step with the graph; None otherwise. Never catches up or rebuilds (nor writes anything): for
    reads that may take rows from it but do not need it."""
    if not embedded(st):
        return None
    side = st.__dict__.get("_side_reader")
    try:
        if side is None:
            if not open_it or not path_of(st.path).exists():
                return None
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
        return side if side.current(_read_count(st)) else None
    except (sqlite3.Error, OSError, RuntimeError):
        return None


def to_write(st: Any, side: SideIndex | None, count: int) -> int:
    """How many rows `sync` would write to bring `side` in step with the graph's `count` nodes: the gap
    when it holds the graph's first nodes in this version's form; for a rebuild, more than `CATCH_UP_MAX`
    whatever the graph's size, so that a read-only reader leaves every rebuild to a writer."""
    rebuild = max(count, CATCH_UP_MAX + 1)
    if side is None or side.meta("version") != version():
        return rebuild
    have, last = side.stamp()
    if have == count and (have == 0 or _pos_of(st, last) == have - 1):
        return 0
    kept = 0 < have <= count and _pos_of(st, last) == have - 1
    return count - have if kept else rebuild


def forget(st: Any, ids: list[str]) -> int:
    """Take these nodes out of the side index before the graph forgets them (their index text is read from
    the graph). For `kg forget` and redaction edits."""
    if not embedded(st) or not path_of(st.path).exists():
        return 0
    rows = [(i, r["tokens"] or "") for i in ids for r in st._execute_raw(_TOKENS, {"id": i})]
    with closing(SideIndex(path_of(st.path), writable=True)) as side:
        return side.remove(rows)


def status(st: Any) -> tuple[bool, str]:
    """For `kg doctor`: whether the side index is in step with the graph, and what it holds."""
    ok, what, _ = check(st)
    return ok, what


def check(st: Any) -> tuple[bool, str, bool]:
    """(in step, what it holds or what is wrong, whether only a rebuild repairs it): the stamp against the
    graph, the version, `PRAGMA quick_check` and FTS5's own integrity check (zeroed or damaged index pages
    otherwise answer every query with nothing). Raises sqlite3.Error / OSError when the file cannot be
    opened at all (a directory in its place, no permission)."""
    path = path_of(st.path)
    if not path.exists():
        return False, f"{FILE} is missing", True
    try:
        # writable, for FTS5's integrity check (an INSERT that changes nothing); no schema is created
        with closing(sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=30.0, isolation_level=None)) as db:
            quick = [r[0] for r in db.execute("PRAGMA quick_check")]
            if quick != ["ok"]:
                return False, f"{FILE} is damaged ({'; '.join(quick[:3])})", True
            db.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
            raise
        return False, f"{FILE} cannot be read or is damaged: {exc}", True
    if meta.get("version") != version():
        return False, f"{FILE} is of another version ({meta.get('version')}, now {version()})", True
    have, last = int(meta.get("count") or 0), meta.get("last_id")
    count = _count(st)
    if have != count or (count and _pos_of(st, last) != count - 1):
        kept = 0 < have <= count and _pos_of(st, last) == have - 1
        return False, f"{FILE} holds {have} of the graph's {count} nodes", not kept
    return True, f"{FILE} holds all {count} nodes", False
