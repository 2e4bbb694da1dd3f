"""Issue 17: what changes on a node after it is created (priority, status, pinning, reinforcement, area, action,
source) is kept in the side index (kg/store/sidestate.py), so a cold session brief reads no node by key. The kept
state follows every write path, and a reader never takes a stale one: a rolled-back write, a kill -9 between the
graph's commit and the side file's, a cycle's decay. Real Kùzu, real SQLite, real processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from kg.lifecycle import api as lifecycle
from kg.memory import search
from kg.memory.views import Direct
from kg.runtimes import hooks
from kg.store import aggregates, sideindex

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph keeps its own index")

NOW = "2026-02-01T12:00"
TOOLS = ["docker", "pytest", "git", "npm", "kubectl"]
FAILS = ["build timed out", "fixture crashed", "push was rejected", "lock file conflict", "rollout stalled"]
MESSAGE = "the docker build timed out on the cache step"
# the brief's reads of one node by key (search hits, a ready pattern's events, the pending entries, the watch list)
BY_KEY = ("search_node", "search_node_state", "agg_event_in_window", "agg_event_state", "hooks_item",
          "tly_watch_row")


def _log_many(ws, start: int, n: int) -> list[str]:
    out = []
    with ws:
        for i in range(start, start + n):
            tool, fail = TOOLS[i % 5], FAILS[(i * 3) % 5]
            day = f"2026-01-{1 + i % 28:02d}"
            e = ws.log("error" if i % 3 else "learning", f"{tool} {fail} on the cache step {i % 7}",
                       now=f"{day}T10:{i % 60:02d}", session=f"{day}-00{1 + i % 2}",
                       priority=["high", "medium", "high", "critical"][i % 4], area=["infra", "ci"][i % 2],
                       pattern_key=f"{tool}.cache" if i % 3 else None, link=False)
            out.append(e.id)
    return out


def _graph_state(ws) -> dict[str, tuple]:
    from kg.store.sidestate import STATE

    with ws.reading() as st:
        rows = st.execute("MATCH (n:Node) RETURN n.id AS id, " + ", ".join(f"n.{f} AS {f}" for f in STATE))
    return {r["id"]: tuple(r[f] for f in STATE) for r in rows}


def _kept_state(ws) -> dict[str, tuple]:
    """What a reader would take from the side index (only nodes it keeps right)."""
    from kg.store.sidefile import SideIndex
    from kg.store.sidestate import STATE

    side = SideIndex(sideindex.path_of(ws.graph_path), writable=False)
    try:
        ids = [r[0] for r in side.db.execute("SELECT id FROM node")]
        return {i: tuple(s[f] for f in STATE) for i, s in side.state(ids).items()}
    finally:
        side.close()


def _meta(ws) -> tuple[str | None, int]:
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        mark = db.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()
        return (mark[0] if mark else None), db.execute("SELECT count(*) FROM dirty").fetchone()[0]


def _right(ws) -> dict[str, tuple]:
    """Every state the side index would give equals the graph's; returns what it keeps."""
    graph, kept = _graph_state(ws), _kept_state(ws)
    assert {i: graph[i] for i in kept} == kept
    return kept


def _brief_statements(ws) -> tuple[Counter, dict]:
    """A cold session brief as the read server answers it (one held handle, the side index opened by an earlier
    read), with the statements it ran by name."""
    from kg.store import Store

    calls: Counter[str] = Counter()
    run, fetch = Store.run, Store._fetch

    def counted_run(self, name, **params):
        calls[name] += 1
        return run(self, name, **params)

    def counted_fetch(self, cypher, params):
        calls["(statements)"] += 1
        return fetch(self, cypher, params)

    Store.run, Store._fetch = counted_run, counted_fetch
    try:
        with ws.reading() as st:
            sideindex.for_reading(st)
            calls.clear()
            brief = hooks.session_start_brief(ws, now=NOW, message=MESSAGE)
    finally:
        Store.run, Store._fetch = run, fetch
    return calls, brief


def test_a_cold_brief_reads_no_node_by_key_and_runs_no_more_statements_with_more_items(ws):
    _log_many(ws, 0, 60)  # enough for each section's limit: the same lists are shown after more are logged
    small, brief = _brief_statements(ws)
    assert "docker" in brief["text"] and brief["counts"]["pending_high"] >= 10
    _log_many(ws, 60, 60)  # more pending high-priority entries, more members in each pattern, more hits
    large, brief = _brief_statements(ws)
    assert brief["counts"]["pending_high"] >= 40 and brief["counts"]["ready_to_promote"] >= 3
    assert {k: large[k] for k in BY_KEY if large[k]} == {}
    assert large["(statements)"] <= small["(statements)"], (sorted(small.items()), sorted(large.items()))


def test_the_kept_state_follows_each_write_path_and_the_answers_stay_the_graphs(ws):
    ids = _log_many(ws, 0, 30)
    assert _meta(ws) == ("ok", 0) and len(_right(ws)) == len(_graph_state(ws))

    def step(write):
        write()
        assert _meta(ws) == ("ok", 0)  # the writer's close reread what it changed
        return _right(ws)

    step(lambda: ws.resolve(ids[0], "resolved", now="2026-01-30T09:00"))  # status_set
    assert _graph_state(ws)[ids[0]][1] == "resolved" == _kept_state(ws)[ids[0]][1]
    step(lambda: lifecycle.pin(ws, ids[1], now="2026-01-30T09:00"))
    assert _kept_state(ws)[ids[1]][2] is True
    step(lambda: lifecycle.reinforce(ws, ids[2], now="2026-01-31T09:00"))
    step(lambda: ws.log("error", "docker build timed out on the cache step 9", now="2026-01-31T10:00",
                        pattern_key="docker.cache", priority="high"))  # a pattern's reinforcement
    before = _graph_state(ws)
    step(lambda: lifecycle.cycle(ws, now="2026-06-01T09:00"))  # decay, promotion: the whole table refilled
    after = _graph_state(ws)
    assert sum(before[i] != after[i] for i in before) >= 5  # the cycle changed states, and the file followed


def test_a_rolled_back_write_leaves_the_kept_state_right(ws):
    ids = _log_many(ws, 0, 12)
    with pytest.raises(RuntimeError), ws.store() as st, st.transaction():
        st.run("status_set", id=ids[0], status="wont_fix", at=datetime(2026, 2, 1, 12))
        raise RuntimeError("the write fails after its statement")
    _right(ws)
    assert _kept_state(ws)[ids[0]][1] == "pending"


CHILD = textwrap.dedent("""
    import os, signal, sys
    from datetime import datetime
    from kg.workspace import open_workspace
    ws = open_workspace(sys.argv[1])
    with ws.store() as st:
        if sys.argv[2] == "status":
            at = datetime(2026, 1, 30, 9)
            st.run("status_set", id=sys.argv[3], status="resolved", at=at)  # committed as it runs
        else:
            from kg.lifecycle.api import cycle
            cycle(ws, now="2026-06-01T09:00")
        os.kill(os.getpid(), signal.SIGKILL)  # after the graph's commit, before the side index's catch-up
""")


def _killed(ws, *args: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(ws.root), *args], capture_output=True, text=True,
                          env={**os.environ, "KG_SERVER": "0"})
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_kill_between_the_graphs_commit_and_the_side_index_never_gives_a_stale_state(ws):
    ids = _log_many(ws, 0, 30)
    pending = [i for i in ids if _graph_state(ws)[i][1] == "pending"]
    shown = [h.ref for h in search.search(ws, MESSAGE, now=NOW, limit=10, sources=["graph"])]
    target = next(i for i in shown if i in pending and i.startswith("ERR-"))  # a hit, and a pattern's member
    _killed(ws, "status", target)
    assert _graph_state(ws)[target][1] == "resolved"
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:  # the file was told before the commit
        assert db.execute("SELECT id FROM dirty").fetchall() == [(target,)]
    assert target not in _right(ws)  # a reader asks the graph for it
    with ws.reading() as st:
        side = sideindex.for_reading(st)
        assert Direct(st, side).fresh([target])[target]["status"] == "resolved"  # a search hit's state
        assert aggregates._events(st, [target])[0]["status"] == "resolved"  # a ready pattern's member
    before = _graph_state(ws)
    _killed(ws, "cycle")  # a cycle's decay and promotion, killed after their commits
    changed = {i for i, v in _graph_state(ws).items() if before.get(i) != v}
    assert len(changed) >= 5
    mark, dirty = _meta(ws)
    assert mark is None or dirty >= len(changed - set(before))  # the table stale, or those nodes named dirty
    assert not changed & set(_right(ws))  # none of them is taken from the file
    with ws.store():
        pass  # the next writer's close refills it
    assert _meta(ws) == ("ok", 0) and len(_right(ws)) == len(_graph_state(ws))


def test_doctor_finds_a_kept_state_the_graph_does_not_hold_and_rebuilds_it(ws):
    _log_many(ws, 0, 12)
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:  # a file edited behind kg's back
        db.execute("UPDATE state SET status = 'wont_fix'")
    with ws.reading() as st:
        ok, what, rebuild = sideindex.check(st)
    assert not ok and "state" in what and rebuild
    kg = str(Path(sys.executable).with_name("kg"))
    done = subprocess.run([kg, "-w", str(ws.root), "doctor", "--json"],
                          capture_output=True, text=True, env={**os.environ, "KG_SERVER": "0"})
    assert done.returncode in (0, 1), done.stderr
    json.loads(done.stdout)
    _right(ws)
    with ws.reading() as st:
        assert sideindex.check(st)[0]


def test_the_queries_named_as_changing_known_nodes_take_those_parameters(ws):
    import re

    from kg.store.sidestate import KNOWN, NOT_NODES, STATE, classify, known_texts

    with ws.reading() as st:
        queries = st._queries
    texts = known_texts(queries)
    for name, params in KNOWN.items():
        assert set(params) <= queries[name].params, name
        assert classify(queries[name].text, texts) == params
    for name in NOT_NODES:
        text = queries[name].text
        set_vars = set(re.findall(r"(\w+)\.(?:" + "|".join(STATE) + r")\s*=(?!=)", text.split("SET", 1)[1]))
        assert set_vars and not any(re.search(rf"\({v}:Node\b", text) for v in set_vars), name
        assert classify(queries[name].text, texts) == ()
    assert classify(queries["lc_decay_apply"].text, texts) is None  # the caller names its nodes
    assert classify("MATCH (n:Node) SET n.status = 'x'", texts) is None  # inline Cypher: the whole table
    assert classify("MATCH (n:Node) WHERE n.status = 'x' RETURN n.id", texts) == ()


def test_a_side_file_an_older_kg_wrote_is_not_read_for_a_state(ws):
    """An older kg changes a status without telling the side file: a file of its version is never read (and the
    next writer rebuilds it, its kept state whole)."""
    ids = _log_many(ws, 0, 6)
    older = "5:" + sideindex.version().split(":", 1)[1]  # the form before the kept state, same stopwords
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (older,))
    with ws.store() as st:
        st.__dict__["_side_hold"] = True  # its close leaves the file as the older kg left it
        st._fetch("MATCH (n:Node {id: $id}) SET n.status = 'wont_fix'", {"id": ids[1]})  # the older kg's write
    with ws.reading() as st:
        assert sideindex.current_rows(st, [ids[1]]) == {} and sideindex.for_reading(st) is None
        assert aggregates._events(st, [ids[1]])[0]["status"] == "wont_fix"
    with ws.store():
        pass
    assert _meta(ws) == ("ok", 0) and _right(ws)[ids[1]][1] == "wont_fix"


def test_a_write_the_side_file_cannot_be_told_of_is_not_made_and_is_retried(ws, monkeypatch):
    """Write-ahead: a side file locked by another process (past the wait) refuses the write before the graph
    commits it, in a transaction or not; the error is one the journal's drain keeps and retries."""
    from kg.core.errors import StoreError
    from kg.ingest.drain import operational
    from kg.store import sidestate

    ids = _log_many(ws, 0, 6)
    monkeypatch.setattr(sidestate, "LOCK_WAIT", 0.05)
    holder = sqlite3.connect(sideindex.path_of(ws.graph_path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with ws.store() as st:
            st.__dict__["_side_hold"] = True  # (its close's sync would wait for the same lock)
            with pytest.raises(StoreError) as alone:
                st.run("status_set", id=ids[0], status="wont_fix", at=datetime(2026, 2, 1, 12))
            with pytest.raises(StoreError) as joined, st.transaction():
                st.run("lc_pin", id=ids[1], pinned=True, at=datetime(2026, 2, 1, 12))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert operational(alone.value) and operational(joined.value) and "not writable" in str(alone.value)
    graph = _graph_state(ws)
    assert graph[ids[0]][1] == "pending" and graph[ids[1]][2] is False  # neither write was made
    assert _right(ws)[ids[0]] == graph[ids[0]]


def test_a_write_the_free_space_floor_refuses_tells_the_side_file_nothing(ws):
    """A disk below `store.min_free_mb` refuses a write before the graph commits (kg.core.errors.DiskFull): the
    refusal comes before the side file is told, so it names no node dirty and keeps no state the graph lacks:
    a write alone (in its own transaction, or a statement that commits as it runs), one in a transaction, or one
    whose disk fills inside the transaction after its statement noted the change."""
    from kg.core.errors import DiskFull

    ids = _log_many(ws, 0, 6)
    at = datetime(2026, 2, 1, 12)
    with ws.store() as st:
        st.__dict__["_side_hold"] = True  # its close leaves the file as the refusals left it
        st.min_free_mb = 1 << 40  # a floor no disk meets (the real statvfs answers)
        with pytest.raises(DiskFull):
            st.run("status_set", id=ids[0], status="wont_fix", at=at)
        with pytest.raises(DiskFull):  # a statement that commits on its own (no aggregate follows a pin)
            st.run("lc_pin", id=ids[1], pinned=True, at=at)
        with pytest.raises(DiskFull), st.transaction():
            st.run("lc_pin", id=ids[1], pinned=True, at=at)
        st.min_free_mb = 0
        with pytest.raises(DiskFull), st.transaction():
            st.run("lc_reinforce", id=ids[2], at=at, priority="critical", status="in_progress")
            st.min_free_mb = 1 << 40  # the disk filled after the statement, before the commit
    assert _meta(ws) == ("ok", 0)  # the side file was told of none of the three
    # (the next write in a graph opened again: in the same connection, kuzu 0.11.3 may answer a write after a
    # rolled-back one with "Write-write conflict of updating the same row", side index or not)
    with ws.store() as st:
        st.__dict__["_side_hold"] = True
        st.run("status_set", id=ids[3], status="resolved", at=at)  # the next write names its own node only
        with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
            assert db.execute("SELECT id FROM dirty").fetchall() == [(ids[3],)]
    graph = _graph_state(ws)
    assert [graph[i][:3] for i in ids[:3]] == [_kept_state(ws)[i][:3] for i in ids[:3]]
    assert graph[ids[0]][1] == "pending" and graph[ids[1]][2] is False and graph[ids[2]][0] != "critical"
    with ws.store():
        pass
    assert _meta(ws) == ("ok", 0) and _right(ws)[ids[3]][1] == "resolved"


@pytest.mark.embedded_only("the side index is the embedded graph's")
def test_a_long_refill_of_the_kept_state_says_so_to_the_commands_it_shuts_out(ws, monkeypatch, tmp_path):
    """A refill of the whole state table (the first writer after the upgrade to side file version 6: about a
    minute at 1M entries, the graph held) was not under the progress marker the node index's rebuild writes, so a
    command that waited for the graph meanwhile failed after its lock budget instead of waiting and saying so.
    At MARKED_ROWS nodes or more it is marked (lowered here for a small real graph); below, it says nothing."""
    from kg.serve import progress
    from kg.store import sidestate

    for text in ("docker permission denied", "git push rejected", "pnpm, not npm"):
        ws.log("error", text)
    seen = []
    stream = sidestate._stream

    def streaming(st):
        for rows in stream(st):
            seen.append(progress.current(ws.kg_dir))  # asked as a waiter asks, while the rows go in
            yield rows

    monkeypatch.setattr(sidestate, "_stream", streaming)
    trace = tmp_path / "trace"
    monkeypatch.setenv("KG_SERVE_TRACE", str(trace))
    for threshold, marked in ((10_000, False), (3, True)):
        monkeypatch.setattr(sideindex, "MARKED_ROWS", threshold)
        seen.clear()
        trace.unlink(missing_ok=True)
        with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
            db.execute("DELETE FROM meta WHERE key = 'state'")  # as the upgrade to version 6 leaves it: not whole
        with ws.store():
            pass  # the writer's close refills it
        assert _meta(ws) == ("ok", 0)
        phases = [line.split(" ", 2)[2] for line in trace.read_text().splitlines()] if trace.exists() else []
        if not marked:
            assert seen == [None] and not [p for p in phases if p.startswith("migration")]
            continue
        assert len(seen) == 1 and seen[0] is not None, seen  # (before: None, no marker)
        assert (seen[0]["what"], seen[0]["doing"]) == (f"refill the kept state of {len(_graph_state(ws))} entries",
                                                       sidestate.DOING)
        assert [p for p in phases if p.startswith("migration")] == [
            f"migration step 1 of 1: refill the kept state of {len(_graph_state(ws))} entries", "migration done"]
    assert progress.current(ws.kg_dir) is None and not (ws.kg_dir / progress.FILE).exists()
