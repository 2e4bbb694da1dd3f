"""Bulk logging reads what it needs once (issue 17 item 5): a writer remembers its candidates' rows across
batches (kg/graph/linking.py `remembering`) and the side index's count, stamp and tail for a batch
(kg/store/sidelink.py `batch`), and leaves the same graph as a writer that remembers nothing. Real Kùzu, real
SQLite, the real write path."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime

import pytest

import kg
from kg.graph import linking, patterns
from kg.ingest.apply import node_params
from kg.store import Store, sideindex

pytestmark = pytest.mark.embedded_only("the side index and its batch memo are the embedded store's")

WORDS = ["docker", "permission", "socket", "denied", "group", "daemon", "restart", "volume", "mount", "port",
         "nginx", "config", "reload", "certificate", "expired", "renew", "cron", "backup", "disk", "quota",
         "python", "venv", "wheel", "compiler", "missing", "header", "cache", "stale", "token", "refresh"]


def _session(n: int, start: int) -> list[dict]:
    """Turns that share a word or two with their neighbours (linked), none a near-duplicate of another."""
    pick = random.Random(start)
    return [{"kind": "learning", "summary": " ".join(pick.sample(WORDS, 6)),
             "at": f"2026-01-05T10:{start % 60:02d}:{i:02d}"} for i in range(n)]


@pytest.fixture
def counted(monkeypatch):
    """How many times each statement ran (by its text), on every store of the test."""
    seen: Counter[str] = Counter()
    fetch = Store._fetch

    def _fetch(self, cypher, params):
        seen[cypher] += 1
        return fetch(self, cypher, params)

    monkeypatch.setattr(Store, "_fetch", _fetch)
    return seen


def test_a_held_writer_reads_no_candidate_row_back_and_counts_the_nodes_once_a_batch(tmp_path, counted):
    ws = kg.init_workspace(tmp_path / "ws")
    sessions = 4
    with ws:  # one graph open for the whole load, as an importer holds it
        with ws.store() as st:
            link_node = st.query("link_node").text
        counted.clear()
        for s in range(sessions):
            out = ws.log_many(_session(12, 10 * s), session=f"s-{s}", thread=True)
            assert out.applied
    with ws.store() as st:
        edges = st.execute("MATCH (:Node)-[r:related_to]->(:Node) RETURN count(r) AS n")[0]["n"]
    assert edges > 20  # the entries were linked (their candidates were asked for)
    # every candidate was created by this writer: its row is remembered from its creation, never read back
    # (before: one read per candidate per entry, ~10 an entry here)
    assert counted[link_node] == 0
    # the node count (a scan) and the side file's position checks a few times a batch (the syncs around its
    # transaction, its first candidates), not once or twice an entry (before: 60 counts and 98 checks here); these
    # turns are older than when kg learns them, so each is created reinforced then (kg.ingest.batch learned_field,
    # in its node_create: a second statement setting it cost one count more here, 21 where it was at most 20)
    assert counted[sideindex._COUNT] <= 6 * sessions
    # (the sync's lookup of the side index's newest node also answers whether the graph lost it, QA5 #1: a graph that
    # lost its write-ahead log must not have the side index, the last copy of those entries, rebuilt to match)
    assert counted[sideindex._POS] <= 9 * sessions


def _graph(ws) -> list:
    with ws.store() as st:
        return sorted((r["a"], r["t"], r["b"], r["m"], r["why"]) for r in st.execute(
            "MATCH (a:Node)-[r]->(b:Node) RETURN a.id AS a, label(r) AS t, b.id AS b, r.manual AS m, "
            "r.reason AS why"))


def _steps(ws):
    """Two patterns' events, the second pattern merged into the first by hand, then more events of the first:
    a new event of a pattern is not linked to its own pattern's members (their key says which they are)."""
    a = [{"kind": "error", "summary": f"git push rejected by the remote {w}", "pattern_key": "git.push.a",
          "area": "git", "at": f"2026-01-05T10:00:{i:02d}"} for i, w in enumerate(["today", "again"])]
    b = [{"kind": "error", "summary": f"git push rejected by the remote: {w}", "pattern_key": "git.push.b",
          "area": "git", "at": f"2026-01-05T10:01:{i:02d}"} for i, w in enumerate(["pull first", "fetch first"])]
    yield lambda: ws.log_many(a + b, session="s-1")
    yield lambda: patterns.merge(ws, "git.push.a", "git.push.b", now="2026-01-05T11:00:00")
    yield lambda: ws.log_many([{"kind": "error", "summary": "git push rejected by the remote: pull first again",
                                "pattern_key": "git.push.a", "area": "git", "at": "2026-01-05T12:00:00"}],
                              session="s-2")


def test_a_pattern_merged_between_two_bulk_logs_of_one_writer_links_as_a_fresh_writer(tmp_path):
    held, fresh = kg.init_workspace(tmp_path / "held"), kg.init_workspace(tmp_path / "fresh")
    with held:  # one writer throughout: the rows it remembers must follow the merge's new keys
        for step in _steps(held):
            step()
    for step in _steps(fresh):  # each step its own open: nothing remembered
        step()
    got = _graph(held)
    assert got == _graph(fresh)
    # the last event is linked to none of its pattern's members, the merged ones included (a row remembered
    # with the old key would have linked it to those)
    assert [e for e in got if "ERR-20260105-005" in (e[0], e[2])] == [
        ("pat-20260105-001", "derived_from", "ERR-20260105-005", False, "same pattern key")]


def _store(tmp_path):
    graph = tmp_path / "memory" / ".kg" / "graph.kuzu"
    graph.parent.mkdir(parents=True)
    return Store.open(graph, lock_path=graph.with_name("graph.lock"), lock_timeout=30.0)


def test_rows_remembered_in_a_batch_are_kept_only_once_it_commits(tmp_path):
    at = datetime(2026, 1, 5, 10)
    with _store(tmp_path) as st:
        with pytest.raises(RuntimeError), linking.remembering(st), st.transaction():
            params = node_params("E-1", "event", "docker socket permission denied", at, pattern_key="k")
            st.run("node_create", **params)
            linking.remember_created(st, params)
            raise RuntimeError("cut short")
        assert st.__dict__["_link_rows"].kept == {}  # rolled back: nothing kept
        with linking.remembering(st), st.transaction():
            params = node_params("E-2", "event", "docker socket permission denied", at, pattern_key="k")
            st.run("node_create", **params)
            linking.remember_created(st, params)
        kept = st.__dict__["_link_rows"].kept
        assert kept["E-2"] == st.run("link_node", id="E-2")[0]  # what the graph says, field for field
        with st.transaction(), linking.remembering(st):  # inside a caller's transaction: for the batch only
            params = node_params("E-3", "event", "docker daemon restart", at)
            st.run("node_create", **params)
            linking.remember_created(st, params)
        assert "E-3" not in kept
        with st.transaction():
            linking.set_event_key(st, "E-2", "other", at)  # the one writer of a key: forgets the row
        assert "E-2" not in kept


def test_only_set_event_key_writes_an_events_pattern_key():
    """The remembered rows rely on it: any other writer of `pattern_event_set_key` would leave them stale."""
    from pathlib import Path

    root = Path(kg.__file__).parent
    users = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if "pattern_event_set_key" in p.read_text(encoding="utf-8"))
    # (the team graph's batch: no memo there; the side file's kept state names the event the statement changes,
    # to read its key again after the commit: no writer)
    assert users == ["graph/linking.py", "store/falkor_batch.py", "store/sidestate.py"]


def test_a_batchs_keyword_counts_go_in_one_statement_while_the_table_is_small(tmp_path, counted):
    ws = kg.init_workspace(tmp_path / "ws")
    with ws:
        with ws.store() as st:
            one, many = st.query("link_terms_set").text, st.query("link_terms_set_many").text
        ws.log_many(_session(12, 0), session="s-0")
        counted.clear()
        ws.log_many(_session(12, 10), session="s-1")  # its keywords are known already: counts written
        assert counted[many] == 1 and counted[one] == 0  # (before: one statement per keyword, ~30 here)
        with ws.store() as st:
            written = {r["term"]: r["df"] for r in st.execute("MATCH (x:Term) RETURN x.term AS term, x.df AS df")}
            linking.rebuild_terms(st, linking.rules_of(ws.rules))  # a recount from the nodes: the same counts
            assert {r["term"]: r["df"] for r in st.execute(
                "MATCH (x:Term) RETURN x.term AS term, x.df AS df")} == written
            # a table far bigger than the writes: by key, each a lookup (one statement would scan it)
            linking.write_terms(st, {**written, **{f"filler{i}": 1 for i in range(100 * len(written))}})
        counted.clear()
        ws.log_many(_session(12, 20), session="s-2")
        assert counted[many] == 0 and counted[one] > 16


def test_a_new_nodes_related_to_edges_go_in_one_statement_in_a_batch(tmp_path, counted):
    ws = kg.init_workspace(tmp_path / "ws")
    with ws:
        with ws.store() as st:
            names = [f"link_add_{t}" for t in ("related_to", "supports", "caused_by", "led_to", "contradicts")]
            names += [f"link_add_related_to_{k}" for k in range(2, linking.MANY_MAX + 1)]
            texts = {st.query(n).text for n in names}
        counted.clear()
        for s in range(3):
            ws.log_many(_session(12, 10 * s), session=f"s-{s}")
    statements = sum(n for text, n in counted.items() if text in texts)
    with ws.store() as st:
        edges = st.execute("MATCH (:Node)-[r]->(:Node) WHERE r.manual = false AND label(r) <> 'derived_from' "
                           "RETURN count(r) AS n")[0]["n"]
    assert edges >= 2 * 36  # two or more auto-links an entry ...
    assert statements <= 36 + counted[st.query("link_add_contradicts").text]  # ... their related_to in one statement
