"""Issue 20: a read never writes the side index (kg/store/sidetail.py). Behind the graph by a tail, it answers
exactly as the synced index answers, and leaves the file as it was; the read server syncs after its answer.
Real Kùzu, real SQLite, the real read server's request path."""

from __future__ import annotations

import base64
import os
import shutil
import sqlite3
from contextlib import ExitStack

import pytest

from kg.memory import search
from kg.memory.query import FtsRules
from kg.store import sideindex

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph keeps its own index")

QUERIES = ["docker permission", "deploy staging failed", "canary rollout region", "what failed on 2026-01-06"]


def _files(ws):
    path = sideindex.path_of(ws.graph_path)
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _save(ws, to):
    """A consistent copy of the side file as it is now (SQLite's backup: the WAL folded in)."""
    with sqlite3.connect(_files(ws)[0]) as src, sqlite3.connect(to) as dst:
        src.backup(dst)


def _restore(ws, saved):
    for p in _files(ws):
        p.unlink(missing_ok=True)
    shutil.copyfile(saved, _files(ws)[0])


def _stamp(ws):
    with sqlite3.connect(_files(ws)[0]) as db:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())


def _log_many(ws, start_day: int, n: int):
    """Entries in sessions and patterns (repeated texts), linked as usual; one held batch."""
    texts = ["docker permission denied on the socket {i}", "deploy step {i} failed on staging",
             "the invoice service retries {i} times", "canary rollout for region {i} needs the flag",
             "git push rejected: no upstream for branch {i}"]
    with ws:
        for i in range(n):
            _one(ws, texts, start_day, i)


def _one(ws, texts, start_day, i):
    ws.log("error" if i % 2 else "learning", texts[i % len(texts)].format(i=i),
           now=f"2026-01-{start_day + i // 12:02d}T10:{i % 60:02d}", session=f"s-{start_day}-{i // 7}")


def _answers(ws, fts=None):
    if fts is not None:
        ws.__dict__.setdefault("_memory_rules", {})["fts"] = fts
    return {q: [h.as_dict() for h in search.search(ws, q, now="2026-01-20", sources=["graph"], limit=8)]
            for q in QUERIES}


@pytest.mark.parametrize("fts", [None, FtsRules(postings_max=6, bounded_candidates=5, relax_below=3)],
                         ids=["ranked", "bounded"])
def test_a_read_behind_answers_as_the_synced_index_and_writes_nothing(ws, tmp_path, fts):
    _log_many(ws, 5, 20)
    saved = tmp_path / "behind.sqlite"
    _save(ws, saved)
    _log_many(ws, 6, 10)  # the tail: 10 entries and the patterns they make, past the saved stamp
    with ws.reading() as st:
        graph_count = sideindex._count(st)

    _restore(ws, saved)
    behind = _stamp(ws)
    assert int(behind["count"]) < graph_count
    read = _answers(ws, fts)
    assert _stamp(ws) == behind  # the read left the file as it was: syncing is a writer's
    with ws.store() as st:  # the same file caught up by a writer
        assert sideindex.sync(st).startswith("caught up")
    assert int(_stamp(ws)["count"]) == graph_count
    assert read == _answers(ws, fts)


def test_the_read_server_answers_past_the_side_index_and_syncs_after(ws):
    """The server's read drains what agents logged, answers from the side file plus that tail (no sync inside
    the read), and brings the file in step once the answer is out (`Server.settle`)."""
    import kg.cli.common as common
    from kg.serve import client
    from kg.serve.cache import ReadCache
    from kg.serve.server import Server, _side_last, _stamp as kg_toml_stamp
    from kg.store import sidetail

    _log_many(ws, 5, 8)
    with ExitStack() as stack:
        held = stack.enter_context(ws.store(budget=30.0, apply_journal=False))
        sidetail.defer(held)
        stack.callback(_side_last, held)
        stack.callback(ReadCache(held).install().uninstall)
        server = Server(ws, 60.0, kg_toml_stamp(ws))
        server.baseline = set(ws.__dict__)
        common._served[:] = [ws]
        stack.callback(common._served.clear)
        before = _stamp(ws)
        ws.log("learning", "the zeppelin hangar door sticks in frost", now="2026-01-07T09:00", apply=False)
        request = {"op": "run", "argv": ["-w", str(ws.root), "search", "zeppelin hangar", "--json"],
                   "env": {**os.environ, "KG_NOW": "2026-01-08T00:00:00"}, "cwd": str(ws.root),
                   **client.identity()}
        answer, stop = server.handle(request)
        assert stop == "" and answer["code"] == 0
        out = b"".join(base64.b64decode(d) for fd, d in answer["chunks"] if fd == 1).decode()
        assert "zeppelin hangar door" in out  # the entry the read drained, found through the tail
        assert _stamp(ws) == before  # nothing synced inside the read
        server.settle()
        after = _stamp(ws)
        assert int(after["count"]) > int(before["count"])
        with sqlite3.connect(_files(ws)[0]) as db:
            assert db.execute("SELECT count(*) FROM node WHERE text LIKE '%zeppelin%'").fetchone()[0] == 1
