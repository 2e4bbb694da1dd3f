"""A graph with neither Kùzu's own full-text index (node_fts) nor the mark of its retirement (kg/store/retire.py,
issue 22): a writer's open decides from what the graph says and builds no index to find out (at a million
nodes that build failed in the default 1 GiB pool and was tried again at every open). Real Kùzu."""

from __future__ import annotations

import pytest

from kg.store import FTS_RETIRED, Store, retire

pytestmark = pytest.mark.embedded_only("node_fts and its mark are the embedded graph's")


def _unmark(ws) -> None:
    with ws.store() as st:
        st.execute("MATCH (m:Meta {key: $key}) DELETE m", {"key": FTS_RETIRED})
        assert not st.fts_retired() and not st.has_fts()


def test_an_unmarked_graph_is_marked_from_what_it_says_without_building_an_index(ws, monkeypatch):
    logged = [ws.log("learning", f"logged before the mark went {i}", wait=True).id for i in range(3)]
    _unmark(ws)
    asked: list[str] = []
    fetch = Store._fetch
    monkeypatch.setattr(Store, "_fetch", lambda self, cypher, params: (asked.append(cypher),
                                                                        fetch(self, cypher, params))[1])
    with ws.store() as st:  # a writer's open
        assert st.fts_retired() and not st.has_fts()
        assert {r["id"] for r in st.execute("MATCH (n:Node) RETURN n.id AS id")} >= set(logged)
    assert [c for c in asked if "CREATE_FTS_INDEX" in c.upper()] == [retire.PROBE]  # never over the tokens
    asked.clear()
    with ws.store():  # marked: the next open checks nothing
        pass
    assert not [c for c in asked if "CHECKPOINT" in c.upper() or "table_info" in c]
