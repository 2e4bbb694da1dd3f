"""Issues 17 and 22: the agent's reads (search, inject, the session brief) read less of the graph, and answer
exactly as before. Each test runs the read twice on one real graph, through the old way of reading (kept here
as the reference) and the new, and compares the whole answer; the statements each way runs are counted, so a
test also fails when the new way stops being taken. Real Kùzu, real SQLite side index."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict

import pytest

from kg.lifecycle import api as lifecycle
from kg.memory import inject, search
from kg.memory.views import Direct
from kg.runtimes import hooks
from kg.store import aggregates, sideindex

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph keeps its own index")

NOW = "2026-02-01T12:00"
TOOLS = ["docker", "pytest", "git", "npm", "kubectl"]
FAILS = ["build timed out", "fixture crashed", "push was rejected", "lock file conflict", "rollout stalled"]


def _old_fresh(self, ids):
    """The read before issue 17's change: every column of each node, by key."""
    out = {}
    for i in ids:
        for r in self.st.run("search_node", id=i):
            out[r["id"]] = r
    return out


def _old_events(st, ids):
    """The read before: every column of each pattern member, by key."""
    return [e for i in ids for e in st.run("agg_event_in_window", id=i)]


def _old_ways(monkeypatch):
    monkeypatch.setattr(Direct, "fresh", _old_fresh)
    monkeypatch.setattr(aggregates, "_events", _old_events)
    status = lifecycle.lifecycle_status
    monkeypatch.setattr(lifecycle, "lifecycle_status", lambda ws, now=None, limit=10, ready_limit=None:
                        status(ws, now, limit))  # every list filled to `limit`


@pytest.fixture
def graph(ws):
    """Entries whose priority, status, pinning and reinforcement changed after they were logged (what the
    side index holds as created), a few recurring (patterns), spread over sessions."""
    logged = []
    with ws:
        for i in range(60):
            tool, fail = TOOLS[i % 5], FAILS[(i * 3) % 5]
            kind = "error" if i % 3 else "learning"
            e = ws.log(kind, f"{tool} {fail} on the cache step {i % 7}",
                       now=f"2026-01-{1 + i % 28:02d}T10:{i % 60:02d}",
                       session=f"2026-01-{1 + i % 28:02d}-00{1 + i % 2}", priority=["low", "medium", "high"][i % 3],
                       area=["infra", "ci"][i % 2], pattern_key=f"{tool}.cache" if i % 3 else None,
                       action=f"check the {tool} cache first" if i % 4 == 1 else None)
            logged.append(e.id)
    for i in logged[::4]:
        ws.resolve(i, "resolved", now="2026-01-30T09:00")
    for i in logged[1::9]:
        lifecycle.pin(ws, i, now="2026-01-30T09:00")
    for i in logged[2::7]:
        lifecycle.reinforce(ws, i, now="2026-01-31T09:00")
    return ws


def _counting(monkeypatch):
    from kg.store import Store

    calls: Counter[str] = Counter()
    run = Store.run

    def counted(self, name, **params):
        calls[name] += 1
        return run(self, name, **params)

    monkeypatch.setattr(Store, "run", counted)
    return calls


QUERIES = ["docker build timed out", "pytest fixture crashed on the cache", "git push rejected", "lock file"]


def test_search_reads_only_what_changes_and_answers_as_before(graph, monkeypatch):
    calls = _counting(monkeypatch)
    new = {q: [asdict(h) for h in search.search(graph, q, now=NOW, limit=8)] for q in QUERIES}
    assert calls["search_node_state"] == calls["search_node"] == 0  # issue 17: the state kept in the side index
    import sqlite3

    with sqlite3.connect(sideindex.path_of(graph.graph_path)) as db:  # a kept state not known to be whole
        db.execute("DELETE FROM meta WHERE key = 'state'")
    calls.clear()
    stale = {q: [asdict(h) for h in search.search(graph, q, now=NOW, limit=8)] for q in QUERIES}
    assert calls["search_node_state"] > 0 and calls["search_node"] == 0  # four columns by key, as before
    monkeypatch.setattr(Direct, "fresh", _old_fresh)
    calls.clear()
    old = {q: [asdict(h) for h in search.search(graph, q, now=NOW, limit=8)] for q in QUERIES}
    assert calls["search_node"] > 0
    assert new == old == stale
    assert any(h["parts"]["importance"] == 1.0 for hits in new.values() for h in hits)  # a pin was read


def test_inject_and_the_session_brief_answer_as_before(graph, monkeypatch):
    """As the read server runs them: one held handle, the side index opened by an earlier read."""
    calls = _counting(monkeypatch)
    message = "the docker build timed out on the cache step"

    def answers():
        with graph.reading() as st:
            sideindex.for_reading(st)
            return (inject.inject(graph, message, now=NOW)["block"],
                    hooks.session_start_brief(graph, now=NOW, message=message)["text"],
                    lifecycle.lifecycle_status(graph, NOW, limit=10))

    new = answers()
    assert calls["agg_event_state"] == calls["agg_event_in_window"] == 0  # issue 17: kept in the side index
    _old_ways(monkeypatch)
    calls.clear()
    old = answers()
    assert calls["agg_event_in_window"] > calls["agg_event_state"] == 0
    assert new == old
    assert "docker" in new[0] and "Patterns Ready for Promotion" in new[1] and len(new[2]["ready_to_promote"]) >= 3


def test_a_read_can_ask_the_server_for_no_kept_answers(ws):
    """KG_READ_CACHE=0 in a read's environment: the server answers it as the first read after a write (what
    bench/scale.py's cold rows measure), and the same."""
    import kg.cli.common as common

    from kg.serve.cache import ReadCache
    from kg.serve.server import Server, _stamp

    ws.log("error", "docker permission denied on the socket", now=NOW, priority="high")
    with ws.store(apply_journal=False) as held:
        cache = ReadCache(held).install()
        common._served[:] = [ws]
        try:
            server = Server(ws, 600.0, _stamp(ws), cache=cache)
            server.baseline = set(ws.__dict__)
            request = {"argv": ["hook", "session-start"], "env": {"KG_NOW": NOW}, "cwd": str(ws.root)}
            first = server.run(request)
            asked = cache.misses
            warm = server.run(request)
            again = cache.misses - asked
            cold = server.run({**request, "env": {"KG_NOW": NOW, "KG_READ_CACHE": "0"}})
            assert cache.misses - asked - again > again
            assert first == warm == cold and first["code"] == 0
        finally:
            common._served.clear()
            cache.uninstall()


def test_list_reads_the_newest_from_the_side_index_as_the_graph_gave_them(graph, monkeypatch):
    """`kg list` with no filter: the newest ids by the side index's time index, as the graph's scan of every
    node's time gave them (ties by id, a `--since` floor, a limit past the graph's size)."""
    from datetime import datetime

    import kg.store.sideindex as side_mod
    from kg.graph import reads

    none = {"kind": None, "entry_type": None, "status": None, "priority": None, "area": None}
    asks = [(1, None), (7, None), (40, None), (500, None), (10, "2026-01-20T10:30"), (500, "2026-01-27T00:00")]
    calls = _counting(monkeypatch)
    with graph.reading() as st:
        new = [reads.newest_in_windows(st, none, since=datetime.fromisoformat(s) if s else None, limit=n)
               for n, s in asks]
        assert calls["nodes_newest_any"] == 0
        with monkeypatch.context() as m:
            m.setattr(side_mod, "open_reader", lambda st, open_it=False: None)
            old = [reads.newest_in_windows(st, none, since=datetime.fromisoformat(s) if s else None, limit=n)
                   for n, s in asks]
        assert calls["nodes_newest_any"] > 0
    assert new == old
    assert [len(x) for x in new][:3] == [1, 7, 40] and len(new[3]) > 40 and all(new)


def test_status_reads_the_text_of_only_the_ready_patterns_it_shows(graph, monkeypatch):
    """Issue 22: `kg status` and the session brief count and rank every ready pattern from its figures, and read
    the key, text and area of only the few they show (at 100k entries 4,899 were ready: their text cost ~0.13 s
    and ~20 MB of the read server's peak). The answer equals the one filled from every row's fields."""
    from kg.lifecycle import promoting
    from kg.store import Store, spans

    texts: Counter[str] = Counter()
    fetch = Store._fetch

    def counted(self, cypher, params):
        columns, rows = fetch(self, cypher, params)
        if "text" in columns:
            texts["cells"] += len(rows)
        return columns, rows

    monkeypatch.setattr(Store, "_fetch", counted)
    new = lifecycle.lifecycle_status(graph, NOW, limit=2)
    assert new["ready_to_promote_total"] >= 4 and len(new["ready_to_promote"]) == 2
    assert texts["cells"] <= 2
    every = promoting.ready_rows
    monkeypatch.setattr(promoting, "ready_rows", lambda lc, shown=None: every(lc))  # every row with its text
    monkeypatch.setattr(spans, "ready_top", lambda *a, **k: None)  # (not from the kept spans)
    texts.clear()
    assert lifecycle.lifecycle_status(graph, NOW, limit=2) == new
    assert texts["cells"] >= new["ready_to_promote_total"]


def test_status_takes_no_list_of_times_for_every_ready_pattern(graph, monkeypatch):
    """Issue 22: kuzu 0.11.3's Python binding never frees the items of a TIMESTAMP[] it returns, so a read
    server that read every ready pattern's member times grew with each `kg status` (~15 MB per status and brief
    at 100k entries). The window's times now come as one text per pattern; the lists a status still takes are
    the members of the few patterns it shows."""
    from datetime import datetime

    from kg.store import Store

    items: Counter[str] = Counter()
    fetch = Store._fetch

    def counted(self, cypher, params):
        columns, rows = fetch(self, cypher, params)
        items["times"] += sum(len(v) for row in rows for v in row
                              if isinstance(v, list) and any(isinstance(x, datetime) for x in v))
        return columns, rows

    monkeypatch.setattr(Store, "_fetch", counted)
    shown = lifecycle.lifecycle_status(graph, NOW, limit=1)
    monkeypatch.undo()
    with graph.store() as st:
        members = {r["id"]: len(r["at"] or ()) for r in st.run("agg_occ_all")}
    assert shown["ready_to_promote_total"] >= 4
    assert items["times"] <= members[shown["ready_to_promote"][0]["pattern"]] < sum(members.values()) // 2


def test_a_nodes_neighbours_come_from_the_side_index_as_the_graph_gives_them(graph, monkeypatch):
    """Issue 17: the edges and ids by key, each neighbour's row from the side index with its kept state."""
    calls = _counting(monkeypatch)
    with graph.reading() as st:
        side = sideindex.for_reading(st)
        view = Direct(st, side)
        linked = 0
        for r in st.execute("MATCH (n:Node) RETURN n.id AS id"):
            old = st.run("memory_neighbours_of", id=r["id"], limit=8)
            assert view._neighbours_of(r["id"], 8) == old
            linked += bool(old)
        nodes = len(st.execute("MATCH (n:Node) RETURN n.id AS id"))
    assert linked >= 10
    assert calls["memory_neighbours_of"] == nodes == calls["memory_neighbour_ids_of"]  # only the reference's own
