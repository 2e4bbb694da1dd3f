"""The write path against a real Kùzu database: durability, idempotent replay, safety of the query runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import datetime

import pytest

import kg
from kg.core.errors import NotFound, QueryParameterError, SchemaError, StoreBusy, StoreError, UsageError
from kg.store import Store
from kg.store.lock import FileLock

NOW = datetime(2026, 11, 30, 10, 35)


def test_log_is_durable_and_derives_recurrence(ws):
    a = ws.log("error", "git push failed", now=NOW, session="s1", pattern_key="git.push.auth", area="tooling")
    b = ws.log("error", "git push rejected", now=NOW.replace(hour=11), session="s2", pattern_key="git.push.auth")
    c = ws.log("error", "push failed again", now=NOW.replace(day=29), session="s2", pattern_key="git.push.auth")
    assert [a.id, b.id] == ["ERR-20261130-001", "ERR-20261130-002"] and c.id == "ERR-20261129-001"
    assert c.applied and c.pattern["recurrence"] == 3 and c.pattern["sessions"] == 2
    assert c.pattern["first_seen"] == "2026-11-29T10:35:00" and c.pattern["last_seen"] == "2026-11-30T11:35:00"
    shown = ws.show(c.pattern["id"])
    assert shown["node"]["recurrence"]["recurrence"] == 3
    assert {e["other"] for e in shown["edges"]} == {a.id, b.id, c.id}


def _edges(ws) -> list[tuple[str, str, str]]:
    with ws.store() as st:
        rows = st.execute("MATCH (a:Node)-[r]->(b:Node) RETURN a.id AS a, label(r) AS t, b.id AS b")
    return sorted((r["a"], r["t"], r["b"]) for r in rows)


def test_a_drained_batch_is_the_same_graph_as_logs_applied_one_by_one(tmp_path):
    """Journaled entries applied together (a burst drained by one process) link and group exactly as the same
    logs applied one at a time: none sees a later one among its candidates."""
    texts = [f"git push failed: no upstream for branch feature-{i}" for i in range(10)]
    graphs = []
    for mode in ("one by one", "batch"):
        ws = kg.init_workspace(tmp_path / mode.replace(" ", "-"))
        for i, text in enumerate(texts):
            ws.log("error", text, area="tooling", pattern_key="git.push" if i % 2 else None,
                   now=f"2026-11-{1 + i:02d}T10:00:00", apply=mode == "one by one")
        ws.drain()
        graphs.append((_edges(ws), {p["key"]: p["recurrence"] for p in ws.status()["patterns"]}))
    assert graphs[0] == graphs[1]
    assert any(t == "related_to" for _, t, _ in graphs[0][0])


def test_daily_log_line_in_seed_format(ws):
    ws.log("error", "git push failed", now=NOW)
    ws.log("learning", "use read not exec for files", now=NOW.replace(minute=40))
    ws.log("learning", "用户喜欢直接回答", now=NOW.replace(minute=45), category="preference")
    text = (ws.memory / "2026-11-30.md").read_text(encoding="utf-8")
    assert text == ("# 2026-11-30\n\n### ❌ 10:35 - Error: git push failed\n"
                    "### 💡 10:40 - Insight: use read not exec for files\n"
                    "### 📌 10:45 - User preference: 用户喜欢直接回答\n")


def test_learnings_copy_when_folder_exists(ws):
    (ws.root / ".learnings").mkdir()
    r = ws.log("error", "npm install timed out", now=NOW, error_text="ETIMEDOUT", context="npm install",
               reproducible="yes", area="infra")
    text = (ws.root / ".learnings" / "ERRORS.md").read_text(encoding="utf-8")
    assert f"## [{r.id}] error:npm_install_timed_out" in text
    assert "### Error\nETIMEDOUT" in text and "- Reproducible: yes" in text


def test_cypher_text_is_stored_verbatim_and_harmless(ws):
    ws.log("learning", "keep me", now=NOW)
    evil = "'}) MATCH (n) DETACH DELETE n //"
    r = ws.log("learning", evil, now=NOW, details='"; DROP TABLE Node; --')
    assert ws.show(r.id)["node"]["text"] == evil
    assert len(ws.list(type="learning")) == 2


def test_runner_refuses_unbound_parameters_and_nothing_is_deleted(ws):
    ws.log("learning", "survivor", now=NOW)
    with ws.store() as st:
        with pytest.raises(QueryParameterError, match=r"missing \$id"):
            st.execute("MATCH (n:Node) WHERE n.id = $id DETACH DELETE n")
        with pytest.raises(QueryParameterError, match="unknown extra"):
            st.run("node_get", id="x", extra=1)
    assert len(ws.list()) == 1


@pytest.mark.embedded_only("a second Kùzu handle on one file in one process")
def test_second_handle_in_one_process_is_refused(ws):
    with ws.store():
        with pytest.raises(StoreError, match="already open in this process"):
            with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", lock_timeout=0.1):
                pass


def test_nested_use_shares_the_handle(ws):
    with ws:
        ws.log("learning", "one", now=NOW)
        ws.log("learning", "two", now=NOW)
        assert len(ws.list()) == 2


@pytest.mark.embedded_only("holds the Kùzu file lock (a team graph's readers take no lock)")
def test_graph_held_past_budget_fails_reads_clearly_but_logs_are_journaled(ws, monkeypatch):
    monkeypatch.setenv("KG_LOCK_TIMEOUT", "0.2")
    other = kg.open_workspace(ws.root)
    holder = FileLock(ws.kg_dir / "graph.lock", timeout=1)
    holder.acquire()
    try:
        r = other.log("error", "written while the graph is busy", now=NOW)
        assert not r.applied and "next kg command applies it" in r.note
        with pytest.raises(StoreBusy, match="held by another process .* longer than the 0.2 s retry budget"):
            other.list()
    finally:
        holder.release()
    assert [row["id"] for row in other.list()] == [r.id]


def test_crashed_drain_replays_exactly_once(ws):
    r = ws.log("error", "first", now=NOW, apply=False)
    ws.journal.take()  # a drainer took the records and died before applying them
    assert ws.journal.draining_files()
    assert ws.drain().applied == 1
    # replaying a file whose records are already in the graph changes nothing
    replay = json.dumps({"op": "log", "id": r.id, "fields": {}}) + "\n"
    ws.journal.draining_path("00000000000000000001-1").write_text(replay)
    assert ws.drain().applied == 0
    assert len(ws.list()) == 1


def test_torn_journal_line_is_skipped_and_next_record_survives(ws):
    ws.log("error", "before crash", now=NOW, apply=False)
    with open(ws.journal.path, "ab") as fh:
        fh.write(b'{"op": "log", "id": "ERR-2026')  # a crash mid-write: never acknowledged
    r = ws.log("error", "after crash", now=NOW)
    report = ws.drain()
    assert report.torn == 0  # the torn line was already handled in the drain done by log()
    ids = {row["id"] for row in ws.list()}
    assert r.id in ids and len(ids) == 2


def test_newer_schema_is_refused_with_upgrade_advice(ws):
    with ws.store() as st:
        st.execute("CREATE (:Meta {key: 'migration:9999_future', value: 'x'})")
    with pytest.raises(SchemaError, match="written by a newer kg .* upgrade kg"):
        ws.list()


def test_doctor_says_a_newer_graph_is_an_error_it_cannot_fix(ws, run_kg):
    """(QA #9) --dry-run said "... upgrade kg with `pip install -U kaizen-kg` (`kg doctor` does it)" with exit 0:
    doctor cannot upgrade kg, and the graph is refused by every other command."""
    with ws.store() as st:
        st.execute("CREATE (:Meta {key: 'migration:9999_future', value: 'x'})")
    for check_only in (["--dry-run"], []):
        r = run_kg(["doctor", *check_only, "--json"])
        graph = next(c for c in r.json["checks"] if c["name"] == "graph")
        assert r.exit_code == 1 and graph["status"] == "error", (check_only, graph)
        assert "written by a newer kg" in graph["detail"] and "kg doctor" not in graph["detail"], graph


def test_unknown_ids_and_types(ws):
    with pytest.raises(NotFound, match="no node 'nope'"):
        ws.show("nope")
    with pytest.raises(UsageError, match="unknown edge type 'causes'"):
        ws.edge_add("a", "b", "causes")
    with pytest.raises(UsageError, match="unknown node type 'idea'"):
        ws.node_add("idea", "x")
    les = ws.node_add("lesson", "check auth first", now=NOW)
    with pytest.raises(NotFound, match="no node 'ERR-1'"):
        ws.edge_add(les["id"], "ERR-1", "caused_by")
    with pytest.raises(UsageError, match="two different nodes"):
        ws.edge_add(les["id"], les["id"], "related_to")


def test_node_ids_and_manual_edges(ws):
    e = ws.log("error", "timeout calling API", now=NOW)
    les = ws.node_add("lesson", "retry with backoff", now=NOW)
    pri = ws.node_add("principle", "assume networks fail", now=NOW)
    assert les["id"] == "les-20261130-001" and pri["id"] == "pri-20261130-001"
    ws.edge_add(les["id"], e.id, "caused_by", now=NOW)
    ws.edge_add(les["id"], pri["id"], "led_to", now=NOW)
    with pytest.raises(UsageError, match="exists already"):
        ws.edge_add(les["id"], pri["id"], "led_to", now=NOW)
    edges = ws.show(les["id"])["edges"]
    assert [(x["direction"], x["type"], x["other"], x["manual"]) for x in edges] == [
        ("out", "caused_by", e.id, True), ("out", "led_to", pri["id"], True)]


def test_resolve_and_filters(ws):
    a = ws.log("error", "disk full", now=NOW, priority="critical", area="infra")
    ws.log("feature", "export csv", now=NOW.replace(day=1))
    ws.resolve(a.id, "in_progress", now=NOW)
    assert [r["id"] for r in ws.list(status="in_progress")] == [a.id]
    assert [r["entry_type"] for r in ws.list(since="7d", now=NOW)] == ["error"]
    assert ws.list(type="feature")[0]["text"] == "export csv"
    with pytest.raises(UsageError, match="unknown status 'closed'"):
        ws.resolve(a.id, "closed")
    les = ws.node_add("lesson", "x", now=NOW)
    with pytest.raises(UsageError, match="only logged entries"):
        ws.resolve(les["id"], "resolved")


def test_status_counts_and_pending_high(ws):
    ws.log("error", "a", now=NOW, session="s1")
    ws.log("learning", "b", now=NOW, priority="low")
    s = ws.status(now=NOW)
    assert s["entries"] == {"error": 1, "learning": 1} and s["sessions"] == 1
    assert [r["text"] for r in s["pending_high"]] == ["a"]


def test_unwritable_workspace_fails_clearly():
    """A workspace the process may read but not write. Tests run as root here (CI too), so the child drops
    to 'nobody'; as an ordinary user the folder is simply made read-only."""
    import shutil
    import tempfile

    base = tempfile.mkdtemp(prefix="kg-ro-")
    os.chmod(base, 0o755)
    ws_dir = os.path.join(base, "ws")
    kg.init_workspace(ws_dir)
    if os.geteuid() != 0:
        for folder, _, _ in os.walk(ws_dir):
            os.chmod(folder, 0o555)
    script = textwrap.dedent(f"""
        import os, kg, kuzu
        ws = kg.open_workspace({str(ws_dir)!r})
        ws.policy, ws.rules.redactor, ws.store_url  # rules and store modules loaded before root's access goes
        if ws.store_url is not None:  # (a KG_STORE override: `log` reads that store's zone first)
            import kg.store.falkor
        if os.geteuid() == 0:
            os.setgid(65534); os.setuid(65534)
        try:
            ws.log("error", "x")
        except kg.KgError as exc:
            print(type(exc).__name__, exc.exit_code, exc)
    """)
    try:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    finally:
        for folder, _, _ in os.walk(base):
            os.chmod(folder, 0o755)
        shutil.rmtree(base, ignore_errors=True)
    assert out.stdout.startswith("StoreError 1 cannot "), out.stdout + out.stderr
    assert "Permission denied" in out.stdout and "writable" in out.stdout


def test_nested_holds_and_stores_share_one_handle(ws):
    with ws:
        with ws:
            ws.log("learning", "inner", now=NOW)
        assert ws.is_held  # the inner `with` did not release the outer hold
        with ws.store() as a, ws.store() as b:
            assert a is b
    assert not ws.is_held
    with ws.store() as a:
        with ws.store() as b:  # nested without `with ws:` reuses the open handle too
            assert a is b
    assert [r["text"] for r in ws.list()] == ["inner"]
