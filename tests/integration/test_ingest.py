"""Bulk logging (`ws.log_many`, `kg ingest`) against a real Kùzu workspace: the same graph as single logs,
in one pass."""

import json

import pytest

from kg.core.errors import UsageError
from kg.graph import linking

TURNS = ["Alice: I went hiking with my dog near the lake on Sunday",
         "Bob: which lake? the one north of the city with the hiking trail?",
         "Alice: yes, the dog loved the lake and the hiking trail",
         "Bob: my token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB by the way",
         "Alice: painting classes start next week, I signed up for watercolour"]


def _items(session="conv-1"):
    return [{"kind": "learning", "summary": t, "at": f"2023-05-01T10:00:{i:02d}", "session": session,
             "tags": [f"D1:{i + 1}"], "source": "conversation"} for i, t in enumerate(TURNS)]


def _graph(ws):
    with ws.store() as st:
        edges = st.execute("MATCH (a:Node)-[r]->(b:Node) WHERE label(r) <> 'derived_from' "
                           "RETURN a.text AS src, label(r) AS t, b.text AS dst, r.manual AS manual "
                           "ORDER BY src, t, dst")
        terms = st.execute("MATCH (x:Term) RETURN x.term AS term, x.df AS df ORDER BY term")
        texts = st.execute("MATCH (n:Node) WHERE n.kind = 'event' RETURN n.text AS text ORDER BY text")
    return edges, terms, texts


def test_log_many_matches_single_logs_and_threads(tmp_path):
    import kg

    single, bulk = kg.init_workspace(tmp_path / "single"), kg.init_workspace(tmp_path / "bulk")
    for item in _items():
        item = dict(item)
        single.log(item.pop("kind"), item.pop("summary"), now=item.pop("at"), **item)
    out = bulk.log_many(_items(), thread=True)
    assert out.applied and len(out.ids) == 5 and out.threaded == 4
    assert list(out.redacted.values()) == [["github_token"]]
    s_edges, s_terms, s_texts = _graph(single)
    b_edges, b_terms, b_texts = _graph(bulk)
    assert b_texts == s_texts and "ghp_" not in json.dumps(b_texts)
    assert b_terms == s_terms  # the keyword counts: as single logs leave them
    auto = [e for e in b_edges if not e["manual"]]
    assert auto == s_edges  # auto-links: the same as single logs make
    thread = [e for e in b_edges if e["manual"]]
    assert len(thread) == 4 and {e["t"] for e in thread} == {"led_to"}
    with bulk.store() as st:  # the counts equal a recount from the nodes
        linking.rebuild_terms(st, linking.rules_of(bulk.rules))
    assert _graph(bulk)[1] == b_terms
    daily = (bulk.memory / "2023-05-01.md").read_text(encoding="utf-8")
    assert daily.count("### ") == 5 and "Alice: painting classes" in daily


def test_log_many_checks_every_item_before_writing(ws):
    items = _items()
    items[3]["kind"] = "bogus"
    with pytest.raises(UsageError, match="^entry 4: unknown entry kind 'bogus'"):
        ws.log_many(items)
    assert not list(ws.memory.glob("2023-*.md"))
    with ws.store() as st:
        assert st.execute("MATCH (n:Node) RETURN count(n) AS n")[0]["n"] == 0
    items = _items()
    items[1]["summary"] = 5  # JSON's number where text belongs: bad input, not a crash
    with pytest.raises(UsageError, match="^entry 2: a field has the wrong type"):
        ws.log_many(items)


def test_kg_ingest_cli(run_kg, ws, tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in _items()) + "\n", encoding="utf-8")
    r = run_kg(f"ingest {path} --thread")
    assert (r.exit_code, r.stdout) == (0, "Logged 5 entries, 4 joined by led_to\n")
    assert r.stderr == "Redacted before storing, in 1 entries\n"
    r = run_kg("search 'hiking lake' --json")
    assert r.exit_code == 0 and r.json[0]["text"].startswith("Alice: I went hiking")
    (tmp_path / "bad.jsonl").write_text('{"summary": "ok"}\nnot json\n', encoding="utf-8")
    r = run_kg(f"ingest {tmp_path / 'bad.jsonl'}")
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {tmp_path / 'bad.jsonl'}:2: not JSON")
