"""Bulk logging keeps the maintained aggregates itself, once per batch (kg/ingest/upkeep.py): after any mix of
bulk logs (pattern keys, near-duplicates that make patterns, high priorities, threads, auto-links) the tallies,
the pending high-priority table and the pattern occurrences equal a full recount, and the graph is the one
the per-statement upkeep leaves."""

from __future__ import annotations

import random
from contextlib import contextmanager

import pytest

import kg
from kg.ingest import upkeep
from kg.ingest.journal import check_record
from kg.store import aggregates

WORDS = ["git", "push", "rejected", "docker", "permission", "denied", "socket", "pytest", "fixture", "timeout",
         "lake", "hiking", "dog", "painting", "token", "branch", "upstream", "migration", "cache", "schema"]


def _items(rng: random.Random, n: int, day: int) -> list[dict]:
    out = []
    for i in range(n):
        item = {"kind": rng.choice(["error", "learning", "feature"]),
                "summary": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))),
                "at": f"2026-03-{day:02d}T10:{i // 60:02d}:{i % 60:02d}",
                "priority": rng.choice(["low", "medium", "high", "critical"]),
                "area": rng.choice(["backend", "tooling"])}
        if rng.random() < 0.3:
            item["pattern_key"] = f"k.{rng.choice(WORDS[:4])}"
        if rng.random() < 0.2:  # a repeat, so near-duplicate matching makes and joins patterns
            item["summary"] = out[-1]["summary"] if out else item["summary"]
        out.append(item)
    return out


def _graph(ws) -> tuple[list, list]:
    with ws.store() as st:
        edges = st.execute("MATCH (a:Node)-[r]->(b:Node) RETURN a.id AS src, label(r) AS t, b.id AS dst, "
                           "r.manual AS m, r.score AS s ORDER BY src, t, dst")
        tally = st.execute("MATCH (t:Meta) WHERE t.kind = 'tally' AND t.n <> 0 RETURN t.id AS k, t.n AS n ORDER BY k")
    return edges, tally


@contextmanager
def _per_statement(st):
    yield upkeep.Upkeep()  # never written: every watched write keeps its own upkeep, as before batches did


@pytest.mark.parametrize("seed", [1, 2])
def test_bulk_logs_leave_the_aggregates_equal_to_a_recount(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    batches = [(_items(rng, rng.randint(5, 30), day), f"s{day}") for day in range(1, 5)]
    bulk, per_statement = kg.init_workspace(tmp_path / "bulk"), kg.init_workspace(tmp_path / "plain")
    for items, sid in batches:
        out = bulk.log_many(items, session=sid, thread=True)
        assert out.applied and out.threaded == len(items) - 1
    with bulk.store() as st:
        assert aggregates.ready(st)
        assert aggregates.differences(st) == []  # tallies, pending high, occurrences and ranks: exact
    # The same logs with the per-statement upkeep: the same graph and counts.
    monkeypatch.setattr(upkeep, "kept", _per_statement)
    for items, sid in batches:
        per_statement.log_many(items, session=sid, thread=True)
    monkeypatch.undo()
    assert _graph(bulk) == _graph(per_statement)
    edges, tally = _graph(bulk)
    assert any(e["t"] == "derived_from" for e in edges) and any(e["t"] == "led_to" and e["m"] for e in edges)
    assert any('"pending"' in t["k"] for t in tally)


def test_a_failed_batch_writes_no_counts(ws):
    with ws.store() as st:
        before = st.execute("MATCH (t:Meta) WHERE t.kind = 'tally' RETURN t.id AS k, t.n AS n ORDER BY k")
        with pytest.raises(RuntimeError), st.transaction(), upkeep.kept(st) as keep:
            keep.node("ERR-x", "event", "error", "pending", "high", None)
            raise RuntimeError("the batch failed")
        assert st.upkeep_by_caller == frozenset()  # the store's own upkeep is back
        assert st.execute("MATCH (t:Meta) WHERE t.kind = 'tally' RETURN t.id AS k, t.n AS n ORDER BY k") == before


@pytest.mark.parametrize("after, why", [(5, "bad 'after' id '5'"), ("no such id!", "bad 'after' id")])
def test_a_thread_naming_a_bad_id_is_quarantined(after, why):
    rec = {"op": "log", "id": "LRN-20260301-001", "after": after,
           "fields": {"entry_type": "learning", "text": "t", "priority": "low", "status": "pending",
                      "created_at": "2026-03-01T10:00:00", "tokens": "t"}}
    assert check_record(rec, ["learning"]).startswith(why)
    rec["after"] = "LRN-20260301-000"
    assert check_record(rec, ["learning"]) is None


def test_a_thread_is_journaled_with_its_turn_and_made_by_a_later_drain(tmp_path):
    ws = kg.init_workspace(tmp_path / "ws")
    items = [{"kind": "learning", "summary": f"turn {w} about the lake", "at": f"2026-03-01T10:00:0{i}"}
             for i, w in enumerate(["one", "two", "three"])]
    out = ws.log_many(items, session="conv", thread=True, apply=False)
    assert (out.applied, out.threaded) == (False, 2)
    again = kg.open_workspace(tmp_path / "ws")  # another holder drains the journal
    with again.store() as st:
        rows = st.execute("MATCH (a:Node)-[r:led_to]->(b:Node) WHERE r.manual RETURN a.id AS src, b.id AS dst "
                          "ORDER BY src")
        assert [(r["src"], r["dst"]) for r in rows] == list(zip(out.ids, out.ids[1:], strict=False))
        assert aggregates.differences(st) == []
