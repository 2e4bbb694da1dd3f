"""Linking's candidates from the side index (kg/store/sidelink.py) are those Kùzu's own full-text index
(node_fts) gives: the same nodes with the same scores, for texts with digits, Kùzu-only stopwords, two-letter
words, repeated words; for a writer's nodes not yet in the side file (its open transaction); and the writer
syncs the file after each commit that created nodes, without ever writing an uncommitted node into it.
Real Kùzu (given node_fts here to compare with), real SQLite."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest

from kg.ingest.apply import node_params
from kg.store import _FTS_CREATE, Store, sideindex, sidelink

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph keeps its own index")

TEXTS = [
    "git push was rejected: the remote has 2 commits the branch lacks",
    "git push rejected again, pull --rebase first then push",
    "pytest failed on test_api_v2 with exit code 1 after 3 retries",
    "pytest retries retries retries: the flaky test_api_v2 fails once in 10 runs",
    "the bs4 parser ay os es ai ey oi ui gave up on the html table",
    "docker compose was unable to bind port 5432: address already in use",
    "use pnpm instead of npm for this repo; npm breaks the lock file",
    "npm install failed with ERESOLVE peer dependency conflict",
    "kubectl apply has rejected the manifest: value of replicas is likely wrong",
    "the abc123 token and abc token both expired at 03:00",
    "café naïve résumé: non-ASCII words are kept as they are",
    "数据库 连接 失败 请 检查 配置",
    "was has are able",  # only stopwords of node_fts: no document for it
]
QUERIES = [["push", "rejected"], ["pytest", "retries"], ["abc123"], ["abc"], ["bs", "os"], ["ay"], ["npm", "pnpm"],
           ["was", "likely", "value"], ["数据", "失败"], ["café"], ["port", "bind", "address"], ["test_api_v2"],
           ["retry", "retries", "retrying"]]


@contextmanager
def _open(tmp_path):
    """A graph given node_fts (as graphs before issue 22 had it: made with the schema, before any node), to
    compare with."""
    graph = tmp_path / "memory" / ".kg" / "graph.kuzu"
    graph.parent.mkdir(parents=True)
    with Store.open(graph, lock_path=graph.with_name("graph.lock"), lock_timeout=30.0) as st:
        assert not st.has_fts()  # (issue 22) a new graph has none
        st.execute(_FTS_CREATE)
        st.forget_prepared()
        yield st


def _create(st, prefix: str, texts: list[str]) -> None:
    at = datetime(2026, 1, 5, 10)
    for i, text in enumerate(texts):
        st.run("node_create", **node_params(f"{prefix}-{i:03d}", "event", text, at + timedelta(minutes=i)))


def _node_fts(st, words: list[str], k: int) -> list[tuple[str, float]]:
    rows = st.execute("CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := $k) RETURN node.id AS id, score",
                      {"q": " ".join(words), "k": k})
    return sorted(((r["id"], round(r["score"], 9)) for r in rows), key=lambda x: (-x[1], x[0]))


def _side(st, words: list[str], k: int) -> list[tuple[str, float]]:
    return sorted(((i, s) for i, _, s in sidelink.candidates(st, words, k)), key=lambda x: (-x[1], x[0]))


def test_the_side_index_answers_linking_as_node_fts_does(tmp_path):
    with _open(tmp_path) as st:
        with st.transaction():
            _create(st, "A", TEXTS)
        assert st.has_fts()
        for words in QUERIES:
            assert _side(st, words, 50) == _node_fts(st, words, 50), words


def test_a_writers_own_uncommitted_nodes_are_candidates_as_in_node_fts(tmp_path):
    with _open(tmp_path) as st:
        with st.transaction():
            _create(st, "A", TEXTS)
        sideindex.sync(st)
        side_file = sideindex.path_of(st.path)
        with st.transaction():
            _create(st, "B", TEXTS[:6])  # a batch: its own nodes count in N, df and the mean length
            for words in QUERIES:
                assert _side(st, words, 50) == _node_fts(st, words, 50), words
            # nothing uncommitted went into the file: it holds the first commit's nodes only
            with sqlite3.connect(side_file) as db:
                assert db.execute("SELECT count(*) FROM node").fetchone()[0] == len(TEXTS)


def test_without_node_fts_linking_asks_the_side_index_and_the_writer_syncs_it_after_each_commit(tmp_path):
    from kg.graph import linking
    from kg.store.rebuild import drop_fts

    with _open(tmp_path) as st:
        with st.transaction():
            _create(st, "A", TEXTS)
        expected = _node_fts(st, ["pytest", "retries"], 30)
        sideindex.sync(st)  # (a writer's close or open does)
        linking.rebuild_terms(st, linking.default_rules())  # the keyword table, as the write path keeps it
        drop_fts(st)
        assert not st.has_fts()
        side_file = sideindex.path_of(st.path)
        rules = linking.default_rules()
        doc = linking.Doc("B-000", "event", TEXTS[3])
        with st.transaction():
            _create(st, "B", [TEXTS[3]])
            found = linking.candidates(st, doc, rules)
            with sqlite3.connect(side_file) as db:  # nothing uncommitted goes into the file
                assert db.execute("SELECT count(*) FROM node").fetchone()[0] == len(TEXTS)
        assert {d.id for d in found.docs} >= {i for i, _ in expected}
        with sqlite3.connect(side_file) as db:  # the commit synced it: the next transaction's tail is empty
            assert db.execute("SELECT count(*) FROM node").fetchone()[0] == len(TEXTS) + 1
        assert not st.__dict__.get("_side_created")


def test_a_rolled_back_batch_leaves_nothing_in_the_side_index(tmp_path):
    with _open(tmp_path) as st:
        with st.transaction():
            _create(st, "A", TEXTS)
        sideindex.sync(st)
        with pytest.raises(RuntimeError), st.transaction():
            _create(st, "B", TEXTS[:3])
            raise RuntimeError("cut short")
        with st.transaction():  # the tail is read again from the graph: the rolled-back nodes are not in it
            _create(st, "C", TEXTS[3:5])
            got = _side(st, ["pytest", "retries"], 50)
        assert {i for i, _ in got} == {"A-002", "A-003", "C-000"}
        sideindex.sync(st)
        with sqlite3.connect(sideindex.path_of(st.path)) as db:
            ids = [r[0] for r in db.execute("SELECT id FROM node ORDER BY pos")]
        assert ids == [f"A-{i:03d}" for i in range(len(TEXTS))] + ["C-000", "C-001"]


@pytest.mark.parametrize("tokens, expected", [
    ("abc123 token 2fa", "abc token fa"),
    ("was has are able kubectl", "kubectl"),  # node_fts's stopwords beyond search's
    ("bs ay os ss ys es", "b ai o ss y e"),  # two-letter words as kuzu's porter stems them
    ("the 123 456", ""),
])
def test_link_text_is_what_node_fts_indexed(tokens, expected):
    assert sideindex.link_text(tokens) == expected


def test_a_query_keeps_its_stopwords_as_node_fts_asks_them():
    assert sideindex.link_text("was the abc1", query=True) == "was the abc"
