"""A topic index build keeps the `about` tally itself, once per build (kg/ingest/upkeep.py): the statements it
runs do not grow with the nodes it links (per-row upkeep read 4 queries a row: 76 s of a 10k workspace's first
`kg recall`), and the tallies still equal a full recount, build after build."""

from __future__ import annotations

import kg
from kg.memory import topics
from kg.store import Store, aggregates


def _workspace(tmp_path, name: str, n: int):
    ws = kg.init_workspace(tmp_path / name)
    rules = topics.topic_rules(ws)
    words = [k for ks in rules.topics.values() for k in ks][:12]
    items = [{"kind": "learning", "summary": f"note {i}: {words[i % len(words)]} and {words[(i * 7) % len(words)]}",
              "at": f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}"} for i in range(n)]
    ws.log_many(items, session="s1")
    return ws


def _statements_of_a_build(ws, monkeypatch) -> tuple[int, int]:
    ran = []
    real = Store._execute_raw

    def counted(self, cypher, params):  # counts, then runs the real statement
        ran.append(cypher)
        return real(self, cypher, params)

    monkeypatch.setattr(Store, "_execute_raw", counted)
    out = topics.build(ws, now="2026-03-02T10:00:00")
    monkeypatch.undo()
    return len(ran), out["nodes_linked"]


def test_a_build_pays_one_upkeep_and_leaves_exact_tallies(tmp_path, monkeypatch):
    small, large = _workspace(tmp_path, "small", 8), _workspace(tmp_path, "large", 80)
    few, linked_few = _statements_of_a_build(small, monkeypatch)
    many, linked_many = _statements_of_a_build(large, monkeypatch)
    assert linked_many > linked_few > 0
    assert many == few, (few, many)  # per-row upkeep: several statements more per linked node
    again, _ = _statements_of_a_build(large, monkeypatch)  # a rebuild replaces every link
    assert again <= many + 1  # plus the reset's one tally change, not one per link
    with large.store() as st:
        assert aggregates.differences(st) == []
        about = st.execute("MATCH (:Node)-[r:about]->(:Meta) RETURN count(r) AS n")[0]["n"]
        tally = st.execute("MATCH (t:Meta) WHERE t.kind = 'tally' AND t.id CONTAINS 'about' RETURN t.id AS k, t.n AS n")
    assert about == linked_many and [t["n"] for t in tally] == [about], tally
