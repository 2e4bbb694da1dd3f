"""Memory search's side index (kg/store/sideindex.py): kept in step with the graph at every write, caught up
when it is behind, bounded for common words, and leaving no removed text in its file. Real Kùzu, real SQLite."""

from __future__ import annotations

import sqlite3

import pytest

from kg.memory import search
from kg.memory.query import FtsRules
from kg.store import sideindex

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph keeps its own index")


def _side_ids(ws) -> list[str]:
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        return [r[0] for r in db.execute("SELECT id FROM node ORDER BY pos")]


def _graph_ids(ws) -> list[str]:
    with ws.reading() as st:
        rows = st.execute("MATCH (n:Node) RETURN n.id AS id, offset(ID(n)) AS pos ORDER BY pos")
    return [r["id"] for r in rows]


def test_every_node_a_write_creates_is_in_the_side_index(ws):
    a = ws.log("error", "docker build failed: permission denied on the socket", now="2026-01-05T10:00")
    ws.log("error", "docker build failed: permission denied on the socket", now="2026-01-06T10:00")  # a pattern
    with ws:  # a held batch: synced when it closes
        ws.log("learning", "the invoice service retries three times", now="2026-01-07T10:00")
    assert _side_ids(ws) == _graph_ids(ws) and a.id in _side_ids(ws)
    assert any(i.startswith("pat-") for i in _side_ids(ws))  # patterns too: they are nodes search returns
    with ws.reading() as st:
        assert sideindex.status(st)[0]


def test_a_side_index_behind_or_missing_is_caught_up_or_rebuilt(ws):
    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    ws.log("learning", "the invoice service retries three times", now="2026-01-06T10:00")
    path = sideindex.path_of(ws.graph_path)
    with sqlite3.connect(path) as db:  # as after a crash between the graph's commit and this file's
        db.execute("DELETE FROM node WHERE pos = 1")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'count'")
        db.execute("UPDATE meta SET value = (SELECT id FROM node WHERE pos = 0) WHERE key = 'last_id'")
    with ws.reading() as st:
        assert not sideindex.status(st)[0]
    hits = search.search(ws, "invoice retries", now="2026-01-10", sources=["graph"])
    assert hits[0].text == "the invoice service retries three times"
    assert _side_ids(ws) == _graph_ids(ws)
    path.unlink()
    for extra in ("-wal", "-shm"):
        path.with_name(path.name + extra).unlink(missing_ok=True)
    hits = search.search(ws, "kubernetes canary", now="2026-01-10", sources=["graph"])
    assert hits[0].text.startswith("kubernetes rollout")  # the graph's own index: a reader does not rebuild
    ws.log("learning", "the canary flag is set per region", now="2026-01-11T10:00")  # a writer does
    assert _side_ids(ws) == _graph_ids(ws)


def test_a_stamp_that_names_another_graph_rebuilds(ws):
    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        db.execute("UPDATE node SET id = 'LRN-other' WHERE pos = 0")
        db.execute("UPDATE meta SET value = 'LRN-other' WHERE key = 'last_id'")
    with ws.store() as st:
        assert sideindex.sync(st).startswith("rebuilt")
    assert _side_ids(ws) == _graph_ids(ws)


def test_common_words_ask_the_newest_entries_holding_the_two_rarest(ws):
    with ws:
        for i in range(30):
            ws.log("error", f"docker build failed on step {i}", now=f"2026-01-05T10:{i:02d}", link=False)
        for i in range(5):
            ws.log("error", f"docker permission denied on the socket {i}", now=f"2026-01-06T10:{i:02d}", link=False)
    ws.__dict__.setdefault("_memory_rules", {})["fts"] = FtsRules(postings_max=10, bounded_candidates=3,
                                                                  relax_below=1)
    hits = search.search(ws, "docker permission", now="2026-01-10", sources=["graph"], limit=3)
    assert [h.fts for h in hits] == ["bounded"] * 3
    assert all("permission" in h.text for h in hits)
    assert "the newest entries holding the rarest" in search.render([h.as_dict() for h in hits], "q")
    ws.__dict__["_memory_rules"]["fts"] = FtsRules(postings_max=10, bounded_candidates=3, relax_below=10)
    relaxed = search.search(ws, "docker permission", now="2026-01-10", sources=["graph"], limit=3)
    assert relaxed[0].fts == "relaxed" and "permission" in relaxed[0].text
    ws.__dict__["_memory_rules"]["fts"] = FtsRules(postings_max=0)
    ranked = search.search(ws, "docker permission", now="2026-01-10", sources=["graph"], limit=3)
    assert ranked[0].fts == "" and "permission" in ranked[0].text


def test_the_side_index_answers_as_the_graph_did(ws):
    """Session members, date windows and the newest entries read from the side index by index range give the
    rows the graph's own queries give."""
    from kg.memory.views import Direct

    for i in range(6):
        ws.log("learning", f"note number {i} about the release", now=f"2026-01-0{1 + i % 3}T10:0{i}",
               session=f"s{i % 2}")
    with ws.reading() as st:
        side = sideindex.for_reading(st)
        assert side is not None
        fast, slow = Direct(st, side), Direct(st, None)
        assert fast.session_members(["s0", "s1"], 100) == slow.session_members(["s0", "s1"], 100)
        from datetime import datetime

        a, b = datetime(2026, 1, 2), datetime(2026, 1, 3)
        assert [r["id"] for r in fast.between(a, b, 10)] == [r["id"] for r in slow.between(a, b, 10)]
        assert [r["id"] for r in fast.recent(4)] == [r["id"] for r in slow.recent(4)]
        ids = [r["id"] for r in slow.recent(10)]
        keys = ("text", "kind", "entry_type", "session", "created_at", "tags", "details")
        assert ({i: {k: r[k] for k in keys} for i, r in fast.by_id(ids).items()}
                == {i: {k: r[k] for k in keys} for i, r in slow.by_id(ids).items()})


def test_removed_text_leaves_no_bytes_in_the_file(ws):
    secret = "zebracorn4471 quokkafjord9923"
    gone = ws.log("learning", f"the vault phrase is {secret}", now="2026-01-05T10:00")
    ws.log("learning", "the invoice service retries three times", now="2026-01-06T10:00")
    path = sideindex.path_of(ws.graph_path)

    def file_bytes() -> bytes:
        return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))

    assert b"zebracorn4471" in file_bytes()  # the check can fail: the text is there before
    with ws.store() as st:
        assert sideindex.forget(st, [gone.id]) == 1
    data = file_bytes()
    assert b"zebracorn4471" not in data and b"quokkafjord9923" not in data and b"vault" not in data
    assert b"invoice" in data



def test_doctor_reports_a_damaged_side_index_and_rebuilds_it(ws):
    from kg.doctor import doctor

    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    path = sideindex.path_of(ws.graph_path)
    for extra in ("-wal", "-shm"):
        path.with_name(path.name + extra).unlink(missing_ok=True)
    path.write_bytes(b"not a database at all" * 100)
    dry = {c.name: c for c in doctor(ws, dry_run=True).checks}["search index"]
    assert dry.status == "warning" and "cannot be read" in dry.detail
    assert path.read_bytes().startswith(b"not a database")  # a dry run changes nothing
    fixed = {c.name: c for c in doctor(ws).checks}["search index"]
    assert fixed.status == "repaired" and "rebuilt" in fixed.detail
    assert {c.name: c for c in doctor(ws).checks}["search index"].status == "ok"
    assert _side_ids(ws) == _graph_ids(ws)


def test_a_word_in_most_entries_still_counts_and_stopwords_are_not_indexed(tmp_path):
    """FTS5's bm25() gives a word in more than half the documents an idf of 1e-6; the side index scores as
    Kùzu's index did, so such a word (a speaker's name) still ranks the entries holding it."""
    side = sideindex.SideIndex(tmp_path / "s.sqlite", writable=True)
    docs = ["melanie painted a sunset", "melanie went running", "melanie likes pottery", "caroline paints",
            "melanie and the kids"]
    side._add(0, [{"id": f"n{i}", "kind": "event", "tokens": t, "text": t} for i, t in enumerate(docs)])
    side._set_stamp(len(docs), "n4")
    scored = dict(side.ranked(["melanie", "pottery"], 10))
    assert set(scored) == {0, 1, 2, 4}
    assert scored[2] == max(scored.values()) and min(scored.values()) > 0.1
    assert side.ranked(["the"], 10) == [] and side.df("and") == 0  # stopwords (rules/search_stopwords.toml)
    assert [p for p, _ in side.newest(["melanie"], 2)] == [4, 2]  # newest first, at most k
    side.close()
