"""Linking's term counts (kg/store/linkpost.py) stem word by word, remembering each word: the counts must be
those FTS5's tokenizer gives each whole document, separators inside a word (non-ASCII punctuation) and
repeated words included."""

from __future__ import annotations

import sqlite3
from collections import Counter

from kg.store import linkpost
from kg.store.linktext import link_text

TEXTS = ["git push rejected again, pull --rebase first then push push",
         "数据库，连接 失败：请 检查 配置 数据库",
         "café naïve résumé — l'été «quoted» a·b",
         "the bs4 parser ay os es gave up on the html table",
         "",
         "running runs ran runner"]


def _whole(texts: list[str]) -> list[tuple[str, int, int, int]]:
    """FTS5's own counts of each whole document, its length in words as linking counts it."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE s USING fts5(terms, content='', tokenize='porter unicode61 remove_diacritics 0')")
    db.executemany("INSERT INTO s(rowid, terms) VALUES (?, ?)", list(enumerate(texts)))
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
    found = Counter(db.execute("SELECT term, doc FROM v").fetchall())
    return sorted((t, d, n, len(texts[d].split())) for (t, d), n in found.items())


def test_counts_word_by_word_are_the_whole_documents_counts():
    texts = [link_text(t) for t in TEXTS]
    linkpost._STEMS.clear()
    post, df, docs, tokens = linkpost.postings(enumerate(texts))
    assert sorted(post) == _whole(texts)
    assert docs == len(texts) and tokens == sum(n for _, _, n, _ in post)
    assert df == Counter(t for t, _, _, _ in post)
    assert linkpost.postings(enumerate(texts))[0] == post  # remembered words give the same


def test_a_file_counts_in_and_out_to_nothing():
    db = linkpost.memory(enumerate(link_text(t) for t in TEXTS))
    assert linkpost.totals(db)[0] == len(TEXTS)
    linkpost.remove(db, list(enumerate(link_text(t) for t in TEXTS)))
    assert linkpost.totals(db) == (0, 0)
    assert db.execute("SELECT count(*) FROM lpost").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM ldf").fetchone()[0] == 0


def _dump(db: sqlite3.Connection) -> tuple[list, list, tuple[int, int]]:
    return (db.execute("SELECT * FROM lpost ORDER BY term, pos").fetchall(),
            db.execute("SELECT * FROM ldf ORDER BY term").fetchall(), linkpost.totals(db))


def test_many_rows_counted_by_sqlite_are_counted_as_row_by_row(monkeypatch):
    """A rebuild's batches (`BULK_MIN` rows or more) are counted by a scratch FTS5 table's vocabulary: the same
    rows, document counts and totals, into a file that holds counts already too."""
    texts = [link_text(t) for t in TEXTS] * 3 + [link_text("retries retry retrying the flaky test_api_v2")]
    first, second = list(enumerate(texts)), list(enumerate(texts, start=len(texts)))
    files = []
    for bulk_min in (10**9, 1):  # row by row; by SQLite
        monkeypatch.setattr(linkpost, "BULK_MIN", bulk_min)
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.executescript(linkpost.SCHEMA)
        for rows in (first, second):
            db.execute("BEGIN")
            linkpost.add(db, rows)
            db.execute("COMMIT")
        files.append(db)
    assert _dump(files[1]) == _dump(files[0])
    assert _dump(files[1])[2][0] == 2 * len(texts)
    linkpost.remove(files[1], first + second)  # and counted out again to nothing
    assert linkpost.totals(files[1]) == (0, 0)
