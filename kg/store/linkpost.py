"""Linking's term counts in the side file (issue 22): each node's porter stems with how often it holds each,
so that linking's candidates are scored as Kùzu's own full-text index (node_fts) scored them by reading the
counts, one index range per asked stem (kg/store/sidelink.py).

The text counted is `link_text` (kg/store/linktext.py: what node_fts indexed), stemmed by FTS5's porter
tokenizer (each new word once, in an in-memory FTS5 table, then remembered: the same stems a query's words
get in `stems`). Three tables:
- `lpost(term, pos, tf, dl)`: a node (its position in the graph's node table) holds the stem `tf` times; `dl`
  is its document's length in words (node_fts's);
- `ldf(term, df)`: how many nodes hold the stem;
- `ltot`: how many documents (every node, one without a word too) and FTS5 tokens there are: the mean length.

Before these, the same scores were made from an FTS5 table's bm25(), undone one stem at a time to give each
posting's count back: 2-3 times the work per query on a templated 100k graph (bench/link_quality.py --graph).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from itertools import chain

SCHEMA = """
CREATE TABLE IF NOT EXISTS lpost(term TEXT NOT NULL, pos INTEGER NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL,
                                 PRIMARY KEY (term, pos)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ldf(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ltot(one INTEGER PRIMARY KEY CHECK (one = 1), docs INTEGER NOT NULL,
                                tokens INTEGER NOT NULL);
"""
_STEMMER = "CREATE VIRTUAL TABLE s USING fts5(terms, content='', tokenize='porter unicode61 remove_diacritics 0')"


_STEMS: dict[str, tuple[str, ...]] = {}  # word -> its FTS5 tokens, porter-stemmed (most words give one)
_STEMS_MAX = 500_000  # words kept; past it the cache starts again


def _learn(words: Iterable[str]) -> None:
    """Stem the words the cache does not know yet, in one in-memory FTS5 table (each word a document): the
    stems the index's tokenizer gives a whole text, which splits only where these words split."""
    new = [w for w in dict.fromkeys(words) if w not in _STEMS]
    if not new:
        return
    if len(_STEMS) + len(new) > _STEMS_MAX:
        _STEMS.clear()
    found: dict[int, list[str]] = {}
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as db:
        db.execute(_STEMMER)
        db.execute("BEGIN")
        db.executemany("INSERT INTO s(rowid, terms) VALUES (?, ?)", enumerate(new))
        db.execute("COMMIT")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
        for term, doc in db.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
            found.setdefault(doc, []).append(term)
    for i, w in enumerate(new):
        _STEMS[w] = tuple(found.get(i, ()))


def stems_of(words: list[str]) -> list[tuple[str, ...]]:
    """Each word's stems, as the index's tokenizer stems them (none for a word of separators only)."""
    _learn(words)
    return [_STEMS[w] for w in words]


def postings(rows: Iterable[tuple[int, str]]) -> tuple[list[tuple[str, int, int, int]], Counter[str], int, int]:
    """What these (position, link text) rows add: lpost rows, each stem's document count, the documents and
    the FTS5 tokens."""
    split = [(p, t.split()) for p, t in rows]
    _learn(chain.from_iterable(ws for _, ws in split))
    post: list[tuple[str, int, int, int]] = []
    df: Counter[str] = Counter()
    tokens, stems = 0, _STEMS.__getitem__
    for p, ws in split:
        tf = Counter(chain.from_iterable(map(stems, ws)))
        tokens += tf.total()
        df.update(tf.keys())
        dl = len(ws)
        post += [(s, p, n, dl) for s, n in tf.items()]
    return post, df, len(split), tokens


BULK_MIN = 2000  # rows: from this many, counted by SQLite itself (`_add_bulk`)

_BULK = (
    "CREATE TEMP TABLE IF NOT EXISTS lnew_dl(pos INTEGER PRIMARY KEY, dl INTEGER NOT NULL)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lnew USING fts5(terms, content='', "
    "tokenize='porter unicode61 remove_diacritics 0')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lnew_i USING fts5vocab(temp, lnew, 'instance')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lnew_r USING fts5vocab(temp, lnew, 'row')",
)


def add(db: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Count these (position, link text) rows in (inside the caller's transaction)."""
    rows = list(rows)
    if len(rows) >= BULK_MIN:
        _add_bulk(db, rows)
        return
    post, df, docs, tokens = postings(rows)
    # (a position counted already is counted again, as FTS5 took a rowid twice: only a file edited by hand
    # holds rows past its stamp)
    db.executemany("INSERT OR REPLACE INTO lpost VALUES (?, ?, ?, ?)", post)
    db.executemany("INSERT INTO ldf VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
                   sorted(df.items()))
    db.execute("INSERT INTO ltot VALUES (1, ?, ?) ON CONFLICT(one) DO UPDATE SET docs = docs + excluded.docs, "
               "tokens = tokens + excluded.tokens", (docs, tokens))


def _add_bulk(db: sqlite3.Connection, rows: list[tuple[int, str]]) -> None:
    """`add` for many rows (a rebuild or catch-up of the side file: 20,000 a transaction): the texts go into a
    scratch FTS5 table of the same tokenizer, whose vocabulary gives each (stem, position) count in stem order,
    inserted into `lpost` in key order, with each stem's document count and the token total; no Python loop
    per posting (issue 22: the per-row path was most of the cost `lpost` added to an import, ~4 s of CPU at
    100k). The same rows as `postings` gives (tests/unit/test_linkpost.py)."""
    for statement in _BULK:
        db.execute(statement)
    db.executemany("INSERT INTO lnew(rowid, terms) VALUES (?, ?)", rows)
    db.executemany("INSERT INTO lnew_dl VALUES (?, ?)", [(p, len(t.split())) for p, t in rows])
    db.execute("INSERT OR REPLACE INTO lpost SELECT i.term, i.doc, count(*), d.dl FROM lnew_i i "
               "JOIN lnew_dl d ON d.pos = i.doc GROUP BY i.term, i.doc")
    db.execute("INSERT INTO ldf SELECT term, doc FROM lnew_r WHERE true "
               "ON CONFLICT(term) DO UPDATE SET df = df + excluded.df")
    docs, tokens = db.execute("SELECT (SELECT count(*) FROM lnew_dl), "
                              "(SELECT coalesce(sum(cnt), 0) FROM lnew_r)").fetchone()
    db.execute("INSERT INTO ltot VALUES (1, ?, ?) ON CONFLICT(one) DO UPDATE SET docs = docs + excluded.docs, "
               "tokens = tokens + excluded.tokens", (docs, tokens))
    db.execute("DELETE FROM lnew_dl")
    db.execute("INSERT INTO lnew(lnew) VALUES ('delete-all')")


def remove(db: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Count these (position, link text) rows out (inside the caller's transaction): their text gives their
    stems, so no row is searched for."""
    post, df, docs, tokens = postings(rows)
    db.executemany("DELETE FROM lpost WHERE term = ? AND pos = ?", [(t, p) for t, p, _, _ in post])
    db.executemany("UPDATE ldf SET df = df - ? WHERE term = ?", [(n, t) for t, n in df.items()])
    db.execute("DELETE FROM ldf WHERE df <= 0")
    db.execute("UPDATE ltot SET docs = docs - ?, tokens = tokens - ?", (docs, tokens))


def clear(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM lpost")
    db.execute("DELETE FROM ldf")
    db.execute("DELETE FROM ltot")


def totals(db: sqlite3.Connection) -> tuple[int, int]:
    """(documents, FTS5 tokens)."""
    row = db.execute("SELECT docs, tokens FROM ltot").fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def df(db: sqlite3.Connection, stem: str) -> int:
    row = db.execute("SELECT df FROM ldf WHERE term = ?", (stem,)).fetchone()
    return int(row[0]) if row else 0


def memory(rows: Iterable[tuple[int, str]]) -> sqlite3.Connection:
    """An in-memory side file's term counts of these (position, link text) rows (a writer's tail)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(SCHEMA)
    db.execute("BEGIN")
    add(db, rows)
    db.execute("COMMIT")
    return db
