"""The side index's failures (kg/store/sideindex.py): a one-off reader never rebuilds it, `kg doctor` finds a
damaged or unopenable file and repairs it or says how, a damaged index falls back to the graph's own, and the
fields a side row keeps as created are read again for every entry that could reach the top. Real Kùzu, real
SQLite files, the real CLI."""

from __future__ import annotations

import sqlite3

import pytest

from kg.doctor import doctor
from kg.lifecycle.api import pin
from kg.memory import search
from kg.store import sideindex

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph keeps its own index")


def _meta(ws, key: str) -> str | None:
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _check(ws, dry_run: bool = False):
    return {c.name: c for c in doctor(ws, dry_run=dry_run).checks}["search index"]


@pytest.mark.parametrize("damage", ["version", "other graph"])
def test_a_read_only_reader_leaves_a_rebuild_to_a_writer(ws, damage):
    """A file of another version is 0 nodes behind, one naming another graph 1: the catch-up cap alone let a
    one-off `kg search` rebuild every row (minutes at 1M)."""
    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    ws.log("learning", "the invoice service retries three times", now="2026-01-06T10:00")
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        if damage == "version":
            db.execute("UPDATE meta SET value = 'old' WHERE key = 'version'")
        else:
            db.execute("DELETE FROM node WHERE pos = 1")  # 1 behind, and its last node is not the graph's first
            db.execute("UPDATE node SET id = 'LRN-other' WHERE pos = 0")
            db.execute("UPDATE meta SET value = 'LRN-other' WHERE key = 'last_id'")
            db.execute("UPDATE meta SET value = '1' WHERE key = 'count'")
    marker = _meta(ws, "version" if damage == "version" else "last_id")
    with ws.reading() as st:
        assert st.read_only
        assert sideindex.for_reading(st) is None  # a scan of the graph answers (issue 22: no node_fts), said so
    hits = search.search(ws, "invoice retries", now="2026-01-10", sources=["graph"])
    assert hits[0].text == "the invoice service retries three times" and hits[0].fts == "scan"
    assert "every entry's words were scanned" in search.render([h.as_dict() for h in hits], "invoice retries")
    assert _meta(ws, "version" if damage == "version" else "last_id") == marker  # not rebuilt by a reader
    dry = _check(ws, dry_run=True)
    assert dry.status == "warning" and "rebuilt" in dry.detail
    fixed = _check(ws)
    assert fixed.status == "repaired" and "rebuilt 2" in fixed.detail
    with ws.reading() as st:
        assert sideindex.for_reading(st) is not None


def test_zeroed_index_pages_are_found_and_rebuilt_by_doctor(ws):
    with ws:
        for i in range(300):
            ws.log("learning", f"docker permission note {i} about socket{i}", now=f"2026-01-05T10:{i % 60:02d}",
                   link=False)
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        assert db.execute("SELECT count(*) FROM fts_data WHERE id > 10").fetchone()[0] > 0
        db.execute("UPDATE fts_data SET block = zeroblob(length(block)) WHERE id > 10")
    dry = _check(ws, dry_run=True)
    assert dry.status == "warning" and "damaged" in dry.detail
    fixed = _check(ws)
    assert fixed.status == "repaired" and "rebuilt 300" in fixed.detail
    assert _check(ws).status == "ok"
    hits = search.search(ws, "socket17", now="2026-01-10", sources=["graph"])
    assert hits[0].text == "docker permission note 17 about socket17" and hits[0].match == "terms"


def test_a_search_whose_index_query_fails_asks_the_graph(ws):
    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    ws.log("learning", "the invoice service retries three times", now="2026-01-06T10:00")
    path = sideindex.path_of(ws.graph_path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'fts_data'").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    with open(path, "r+b") as f:  # the FTS5 data's b-tree page overwritten
        f.seek((root - 1) * size)
        f.write(b"\xff" * size)
    with sqlite3.connect(path) as db, pytest.raises(sqlite3.DatabaseError):
        db.execute("SELECT rowid FROM fts WHERE fts MATCH 'invoice'").fetchall()  # the damage is real
    with ws.reading() as st:
        assert sideindex.for_reading(st) is not None  # its stamp still reads as in step
    hits = search.search(ws, "invoice retries", now="2026-01-10", sources=["graph"])
    assert hits[0].text == "the invoice service retries three times" and hits[0].match == "terms"


def test_doctor_names_a_side_file_it_cannot_open_and_goes_on(ws, run_kg):
    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    path = sideindex.path_of(ws.graph_path)
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        p.unlink(missing_ok=True)
    path.mkdir()
    res = run_kg("doctor --json")
    assert "unexpected failure" not in res.stderr + res.stdout
    checks = {c["name"]: c for c in res.json["checks"]}
    side = checks["search index"]
    assert side["status"] == "error" and "search.sqlite" in side["detail"] and "remove or rename" in side["detail"]
    assert {"graph", "journal", "blocks"} <= set(checks)  # the checks after it ran
    path.rmdir()
    assert run_kg("doctor --json").json["checks"]  # and once it is gone, doctor rebuilds it
    assert _check(ws).status == "ok"


def test_a_pinned_entry_just_outside_the_top_is_read_again(ws):
    """Side rows keep pinning as created: only the top `limit` were read again, so a pinned entry ranked
    just below them by its stale fields never got in."""
    old = ws.log("learning", "canary rollout notes alpha", now="2026-01-01T10:00", link=False)
    ws.log("learning", "canary rollout notes beta", now="2026-01-02T10:00", link=False)
    ws.log("learning", "canary rollout notes gamma", now="2026-01-03T10:00", link=False)

    def top() -> list[str]:
        return [h.ref for h in search.search(ws, "canary rollout notes", now="2026-01-10", sources=["graph"],
                                             limit=2)]

    assert old.id not in top()  # the check can fail: unpinned, the oldest is third
    pin(ws, old.id, now="2026-01-04T10:00")
    with ws.reading() as st:
        assert sideindex.for_reading(st).rows_by_id([old.id])[old.id]["pinned"] is False  # as created
    assert top()[0] == old.id
