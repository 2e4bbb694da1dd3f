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
