"""The read server's kept answers (kg/serve/cache.py) on a real Kùzu graph: a state read is asked once per
generation of the graph, any write starts a new generation, and reads that depend on the moment or on the
caller's words are always asked."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

import kg
from kg.serve.cache import ReadCache, _copy, may_write

NOW = datetime(2026, 6, 1, 12, 0)


@pytest.fixture
def ws(tmp_path: Path):
    ws = kg.init_workspace(tmp_path / "ws")
    ws.log("error", "docker permission denied on the socket", now=NOW, priority="high")
    return ws


def sessions(st) -> int:
    return st.run("count_sessions")[0]["n"]


def test_a_state_read_is_asked_once_until_a_write(ws):
    with ws.store() as st:
        cache = ReadCache(st).install()
        try:
            first = st.run("hooks_counts")  # answered from the tallies: it may ask the tally reads in turn
            asked = cache.misses
            assert asked >= 1 and cache.hits == 0
            assert st.run("hooks_counts") == first and (cache.hits, cache.misses) == (1, asked)
            rows = st.run("hooks_pending_high_ids", priorities=["high"], limit=5)
            rows[0]["id"] = "changed by the caller"  # a caller's change does not reach the kept rows
            assert st.run("hooks_pending_high_ids", priorities=["high"], limit=5)[0]["id"] != rows[0]["id"]
            before = sessions(st)
            from kg.memory import sessions as sess

            sess.start(ws, NOW)  # a write through the same handle: a new generation
            assert sessions(st) == before + 1
            misses = cache.misses
            assert st.run("hooks_counts") == first  # no node was added; asked again all the same
            assert cache.misses == misses + asked
        finally:
            cache.uninstall()
        assert "run" not in st.__dict__ and "_fetch" not in st.__dict__


def test_reads_of_the_moment_or_of_the_callers_words_are_always_asked(ws):
    with ws.store() as st:
        cache = ReadCache(st).install()
        try:
            for _ in range(2):
                st.run("hooks_watch", statuses=["applied"], now=NOW, limit=5)  # a moment
                st.run("link_terms_df_many", terms=["docker", "permission"])  # the caller's words (node_fts is retired)
                st.execute("MATCH (n:Node) RETURN count(n) AS n")  # inline Cypher
            assert (cache.hits, cache.misses) == (0, 0)
        finally:
            cache.uninstall()


def test_a_full_cache_keeps_what_it_holds(ws, monkeypatch):
    """Past its cap of distinct reads it keeps no more, and what it holds is still answered (it used to clear
    itself, so a read of more keys than the cap found nothing kept however often it was asked)."""
    from kg.serve import cache as cache_mod

    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 3)
    with ws.store() as st:
        cache = ReadCache(st).install()
        try:
            keys = [f"ERR-20260601-{i:03d}" for i in range(1, 6)]
            for _ in range(2):
                for i in keys:
                    st.run("search_node", id=i)
            assert (cache.hits, cache.misses) == (3, 7)
        finally:
            cache.uninstall()


def test_nothing_is_kept_inside_a_transaction(ws):
    with ws.store() as st:
        cache = ReadCache(st).install()
        try:
            with st.transaction():
                st.run("count_sessions")
                st.run("count_sessions")
            assert cache.hits == 0
        finally:
            cache.uninstall()


@pytest.mark.parametrize("cypher, writes", [
    ("MATCH (n:Node) RETURN count(n)", False),
    ("CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := $k) RETURN node.id", False),
    ("MATCH (n:Node {id: $id}) SET n.status = 'resolved'", True),
    ("match (n) detach delete n", True),
    ("CALL CREATE_FTS_INDEX('Node', 'node_fts', ['tokens'])", True),
    ("CALL DROP_FTS_INDEX('Node', 'node_fts')", True),
    ("COPY Node FROM 'x.json'", True),
    ("MERGE (t:Topic {name: $n})", True),
    ("ROLLBACK", True),
])
def test_which_statements_may_write(cypher, writes):
    assert may_write(cypher) is writes



def test_kept_rows_are_copied_at_every_depth():
    """A caller that changes a list or a dict inside the rows it was given does not change the kept rows (nor
    the reverse); the values themselves (a moment, a name) are equal and need no copy."""
    rows = [{"id": "ERR-1", "at": [NOW], "sess": ["s1", "s2"], "props": {"k": [1, 2]}, "n": 3}]
    kept = _copy(rows)
    assert kept == rows and kept is not rows and kept[0] is not rows[0]
    assert kept[0]["sess"] is not rows[0]["sess"] and kept[0]["props"]["k"] is not rows[0]["props"]["k"]
    rows[0]["sess"].append("s3")
    rows[0]["props"]["k"].clear()
    assert kept == [{"id": "ERR-1", "at": [NOW], "sess": ["s1", "s2"], "props": {"k": [1, 2]}, "n": 3}]
