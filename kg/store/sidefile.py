"""The side index's file (`memory/.kg/search.sqlite`, kg/store/sideindex.py keeps it in step with the graph):
its tables, their form (`version`), and one open file's writes and reads (`SideIndex`).

- `fts`: FTS5 over the same text Kùzu indexes (`Node.tokens`: redacted, CJK as bigrams; tokenizer porter
  unicode61 as Kùzu's porter stemmer), contentless (the text is in `node` once); its rowid is the node's
  position in Kùzu's node table;
- `lpost`, `ldf`, `ltot`: the tokens as Kùzu's own full-text index (node_fts) held them, counted per porter
  stem, for linking's candidates (kg/store/linkpost.py; kg/store/sidelink.py ranks them as node_fts ranked);
- `node`: each node's fields that never change after it is created (id, kind, entry type, text, details,
  category, session, tags, context, created time; priority, status and reinforcement as created: the current
  ones are in `state`), with indexes on (session, created_at) and (created_at),
  so a session's members, a window of dates and the newest entries are index range reads;
- `state`, `dirty`: what changes on a node after it is created, kept current (kg/store/sidestate.py);
- `pkey`: each pattern's Pattern-Key (a pattern's key never changes after it is created), indexed, so that a key
  no pattern has is known absent without reading the node table (kg/store/sidekeys.py);
- `nodekey`: each node's Pattern-Key kept current (an event's changes when it joins or leaves a pattern), as
  `state` is (kg/store/sidestate.py): the pattern a restored event goes back into (kg/ingest/recover.py).

`remove` takes rows out and leaves none of their bytes in the file (secure_delete, FTS5 optimize, VACUUM).
"""

from __future__ import annotations

import heapq
import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.store import linkpost, sidestate
from kg.store.linktext import link_text

FILE = "search.sqlite"
VERSION = "8"  # a side file of another version (or stopword list: `version()`) is rebuilt (5: `lpost`)
# 8: `nodekey`. A file of version 6 or 7 is brought to 8 in place (kg/store/sidekeys.py: the keys read from the
# graph once); an older kg rebuilds a file of version 8 as its own 7, leaving `nodekey` as it was, which this kg
# then fills again as a file of version 7
# 7: `pkey`. A file of version 6 with the same stopwords is brought to 7 in place (kg/store/sidekeys.py: its
# patterns' keys, read from the graph once), not rebuilt; an older kg rebuilds a file of version 7 as its own 6
# 6: `state` (kg/store/sidestate.py). An older kg changes a node's status without telling this file, so it must
# not read or keep ours (it rebuilds a file of another version; ours then rebuilds its own, the kept state whole)
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
_SCHEMA += sidestate.SCHEMA  # what changes on a node after it is created (kg/store/sidestate.py)
_SCHEMA += """
CREATE TABLE IF NOT EXISTS pkey(pos INTEGER PRIMARY KEY, key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS pkey_key ON pkey(key);
"""
_OLD = "DROP TABLE IF EXISTS lfts; DROP TABLE IF EXISTS ldl;"  # version 4's linking tables, replaced by linkpost's
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


_TAGS_TEXT = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(..., ensure_ascii=False), one encoder:
# json.dumps with an option builds an encoder per call (a fifth of a rebuild's Python per row)


def _row(pos: int, r: dict[str, Any]) -> list[Any]:
    vals = [pos, *map(r.get, FIELDS)]
    vals[_AT + 1] = _time(vals[_AT + 1])
    tags = vals[_TAGS + 1]
    vals[_TAGS + 1] = _TAGS_TEXT(list(tags)) if tags else None
    return vals


def _indexed(tokens: str | None) -> str:
    """The index text without stopwords (rules/search_stopwords.toml), as Kùzu's index kept it."""
    stop = _stop()
    return " ".join([w for w in (tokens or "").split() if w not in stop])  # (a list joins faster)


def _stop() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from kg.core.policy import packaged

        _STOP = frozenset(packaged("search_stopwords")["fts"]["stopwords"])
    return _STOP


_STOP: frozenset[str] | None = None


def version(form: str = VERSION) -> str:
    """The side file's form: this module's (or an earlier `form`'s) and the stopword list's
    (rules/search_stopwords.toml)."""
    import hashlib

    from kg.store.linktext import form as link_form

    digest = hashlib.sha256((" ".join(sorted(_stop())) + "|" + link_form()).encode()).hexdigest()[:12]
    return f"{form}:{digest}"


def fts_query(terms: Iterable[str], op: str) -> str:
    """FTS5 syntax for these terms joined by `op` (AND / OR), each quoted (no operator can be injected). A term
    of several words ("2 4 1": a version or id, kg/core/text.py `joined`) is a phrase, its pieces in a row; one
    starting with a number is a version also written with a `v` ("v2 4 1", one token in the index)."""
    return f" {op} ".join(_quoted(t) for t in terms)


def _quoted(term: str) -> str:
    q = '"' + term.replace('"', '""') + '"'
    return f'({q} OR "v{q[1:]})' if " " in term and term[:1].isdigit() else q


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
        sidestate.add(self.db, start, rows)
        self.db.executemany("INSERT OR REPLACE INTO pkey VALUES (?, ?)",
                            [(start + k, r["pattern_key"]) for k, r in enumerate(rows)
                             if r.get("kind") == "pattern" and r.get("pattern_key")])

    def clear(self) -> None:
        """Empty it (inside the caller's transaction); the FTS5 table is made again, not emptied: its pages
        may be the damaged part."""
        self.db.execute("DELETE FROM node")
        self.db.execute("DROP TABLE IF EXISTS fts")
        self.db.execute(_FTS)
        linkpost.clear(self.db)
        sidestate.clear(self.db)
        self.db.execute("DELETE FROM pkey")
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
                self.db.execute("DELETE FROM state WHERE pos = ?", (found[0],))
                self.db.execute("DELETE FROM pkey WHERE pos = ?", (found[0],))
                self.db.execute("DELETE FROM nodekey WHERE pos = ?", (found[0],))
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
            get = total.get
            for p, s in rows:
                total[p] = get(p, 0.0) + idf * s / fts_idf
        return top_scores(total, k)

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

    def pattern_ids(self, key: str) -> list[str]:
        """The ids of the patterns the file holds whose Pattern-Key is `key`, in id order (one index read)."""
        return [r[0] for r in self.db.execute(
            "SELECT n.id FROM pkey k JOIN node n ON n.pos = k.pos WHERE k.key = ? ORDER BY n.id", (key,))]

    def state(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The current priority, status, pinning, reinforcement, area, action and source of these nodes, for
        those the file keeps right (kg/store/sidestate.py); the others are asked of the graph by key."""
        return sidestate.current(self.db, ids)

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


# -- a file damaged in a way its stamp and SQLite's checks do not see (for `kg doctor`) ----------------------------
SAMPLE = 16  # nodes whose rows `missing` reads back (the first, the last, and evenly between)
_TABLES = ("meta", "node", "fts", "fts_docsize", "lpost", "ldf", "ltot")


def sample_positions(count: int, n: int = SAMPLE) -> list[int]:
    if count <= n:
        return list(range(count))
    return sorted({round(i * (count - 1) / (n - 1)) for i in range(n)})


def missing(db: sqlite3.Connection, count: int, in_graph: Callable[[str], tuple[int | None, str | None]],
            keys: Callable[[], set[tuple[int, str]]] | None = None) -> str | None:
    """What a side file stamped as holding the graph's `count` nodes lacks, or None; rows deleted by hand (or by
    a tool) leave its stamp and SQLite's integrity checks as they were, and linking then silently finds fewer or
    no candidates. Cheap reads, none growing with the postings: its tables; a node row and a linking document
    per node (`count(*)` over the node table's smallest index; `ltot`); for `SAMPLE` nodes, their row at their
    graph position and each of their stems' counts (`lpost`, `ldf`) as `_add` wrote them. `in_graph` gives a
    node id's (position, tokens) in the graph; `keys`, every keyed pattern's (position, Pattern-Key) in it: `pkey`
    must hold exactly those, or a known key looks absent and a second pattern is made for it (kg/store/sidekeys.py
    trusts the file; one read of the patterns, not of their postings)."""
    try:
        have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        gone = [t for t in _TABLES if t not in have]
        if gone:
            return f"has no table {', '.join(gone)}"
        rows = db.execute("SELECT count(*) FROM node").fetchone()[0]
        if rows != count:
            return f"holds {rows} node rows for its {count} nodes"
        docs, _ = linkpost.totals(db)
        if docs != count:
            return f"counts {docs} linking documents for its {count} nodes"
        searched = db.execute("SELECT count(*) FROM fts_docsize").fetchone()[0]  # (one row per FTS5 document)
        if searched != count:
            return f"holds {searched} search documents for its {count} nodes"
        sample = sample_positions(count)
        ids = dict(db.execute(f"SELECT pos, id FROM node WHERE pos IN ({', '.join('?' * len(sample))})",
                              sample).fetchall()) if sample else {}
        for pos in sample:
            at, tokens = in_graph(ids[pos]) if pos in ids else (None, None)
            if at != pos:
                return f"holds no row for the graph's node at position {pos}"
            post, _, _, _ = linkpost.postings([(pos, link_text(tokens))])
            for term, p, tf, dl in post:
                if db.execute("SELECT 1 FROM lpost WHERE term = ? AND pos = ? AND tf = ? AND dl = ?",
                              (term, p, tf, dl)).fetchone() is None:
                    return f"lacks the linking count of '{term}' in node {ids[pos]}"
                if not linkpost.df(db, term):
                    return f"lacks the document count of '{term}'"
        if keys is not None:
            graph, held = keys(), set(db.execute("SELECT pos, key FROM pkey").fetchall())
            if graph - held:
                pos, key = min(graph - held)
                return f"lacks the Pattern-Key '{key}' of the graph's pattern at position {pos}"
            if held - graph:
                pos, key = min(held - graph)
                return f"names a Pattern-Key '{key}' at position {pos} that the graph's patterns do not have"
    except sqlite3.DatabaseError as exc:
        return f"cannot be read ({exc})"
    return None


def top_scores(total: dict[int, float], k: int) -> list[tuple[int, float]]:
    """(position, score rounded to 9 decimals), best first then by position: the k best and those tied with the
    k-th (the caller breaks ties by id). Only the entries that can make the cut are rounded and sorted (issue 17:
    sorting every posting, 14,600 for a session brief's message at 100k entries, was ~0.06 s of its 0.3 s of CPU);
    round() keeps the scores' order, so the k-th rounded score is the k-th score rounded."""
    if len(total) > k:
        kth = round(heapq.nlargest(k, total.values())[-1], 9)
        floor = kth - 1e-6  # a cheap first cut, far below any score that rounds to kth; the exact test follows
        best = [(p, r) for p, s in total.items() if s >= floor and (r := round(s, 9)) >= kth]
    else:
        best = [(p, round(s, 9)) for p, s in total.items()]
    best.sort(key=lambda x: (-x[1], x[0]))
    return best
