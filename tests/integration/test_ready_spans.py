"""Issue 22: `kg status` and the session brief read the patterns ready to promote from the kept spans of their
readiness (kg/store/spans.py, migration 0010): the same answer as the full query at every moment, after the
writes that change it (logs, statuses, a cycle's promotions and proposals), at a cost that follows the rows
shown, not the number of ready patterns; a first writer killed in the migration or its rebuild leaves a
workspace that opens and answers the same."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import kg
from kg.ingest.trail import import_trail
from kg.lifecycle import promoting
from kg.lifecycle.api import cycle, holding, lifecycle_status
from kg.lifecycle.cycle import Lifecycle
from kg.store import Store, aggregates, spans
from tests.conftest import baseline_wait_off

pytestmark = pytest.mark.embedded_only("the ready spans are the embedded store's (a team graph asks the query)")

T0 = datetime(2026, 3, 1, 9, 0)


def _moments(start: datetime, days: int, step_hours: int) -> list[datetime]:
    return [start + timedelta(hours=h, minutes=h % 17) for h in range(0, 24 * days, step_hours)]


def _same_everywhere(ws, moments) -> int:
    """Compare `ready_top` with the full query's rows at each moment; returns how many moments had ready rows."""
    seen = 0
    with holding(ws) as st:
        for at in moments:
            lc = Lifecycle(ws, st, at)
            full = lc.ready_rows(5)
            top, total = promoting.ready_top(lc, 5)
            want = [(r["id"], r["recurrence"], r["sessions"], r["last_seen"], r.get("text")) for r in full[:5]]
            got = [(r["id"], r["recurrence"], r["sessions"], r["last_seen"], r.get("text")) for r in top]
            assert (got, total) == (want, len(full)), at
            assert spans.ready_top(st, statuses=["active"], now=at, window_days=30, min_recurrence=3, min_sessions=2,
                                   ignore=["wont_fix"], high_n=lc.lp.proposals.high_impact_recurrence,
                                   high_p=lc.lp.proposals.high_impact_priorities, limit=5) is not None
            seen += bool(full)
    return seen


def test_the_kept_spans_answer_as_the_full_query_after_every_kind_of_write(ws):
    rng = random.Random(5)
    logged = []
    for i in range(60):
        at = T0 + timedelta(hours=rng.randrange(0, 24 * 50))
        r = ws.log("error", f"the {rng.choice(['cache', 'socket', 'queue'])} broke again {i}", now=at,
                   session=f"s{rng.randrange(4)}", pattern_key=f"tool.part.{rng.randrange(9)}", link=False,
                   priority=rng.choice(["low", "medium", "high"]))
        logged.append(r.id)
    moments = _moments(T0, 85, 29)
    assert _same_everywhere(ws, moments) > 10
    for eid in logged[::7]:  # statuses that count and one that does not
        ws.resolve(eid, status=rng.choice(["resolved", "wont_fix"]))
    cycle(ws, now=T0 + timedelta(days=40))  # promotions (pattern statuses) and proposals
    assert _same_everywhere(ws, moments) > 10
    with ws.store() as st:
        assert aggregates.differences(st) == []


def test_status_answers_the_same_with_and_without_the_spans(ws, monkeypatch):
    for i in range(40):
        ws.log("error", f"pytest fixture crashed {i}", now=T0 + timedelta(hours=7 * i), session=f"s{i % 4}",
               pattern_key=f"pytest.fixture.{i % 6}", link=False, priority="high" if i % 5 == 0 else "medium")
    at = T0 + timedelta(days=12)
    with_spans = lifecycle_status(ws, at, limit=10)
    monkeypatch.setattr(spans, "ready_top", lambda *a, **k: None)
    assert lifecycle_status(ws, at, limit=10) == with_spans
    assert with_spans["ready_to_promote_total"] == 6 and len(with_spans["ready_to_promote"]) == 6


# -- the cost follows the rows shown ----------------------------------------------------------------------------
def _trail(ready: int) -> dict:
    """`ready` patterns of three events in two sessions inside the window before T0, and as many entries apart."""
    out = []
    for p in range(ready):
        for j in range(3):
            at = T0 - timedelta(days=20, hours=-p, minutes=-j)
            out.append({"id": f"ERR-{at:%Y%m%d}-{p:05d}{j}", "type": "error", "summary": f"tool {p} broke {j}",
                        "logged": at.isoformat(), "pattern_key": f"tool.p{p}", "session": f"s{j % 2}",
                        "priority": "medium", "status": "pending"})
    return {"version": 3, "entries": out, "graph": {"nodes": [], "edges": []}}


def _rows_read(root: Path, monkeypatch) -> int:
    """Rows Kùzu returns to Python for `kg status`'s lifecycle sections at T0."""
    from kg.workspace import open_workspace

    count = [0]
    fetch = Store._fetch

    def counted(self, cypher, params):
        columns, rows = fetch(self, cypher, params)
        count[0] += len(rows)
        return columns, rows

    monkeypatch.setattr(Store, "_fetch", counted)
    try:
        data = lifecycle_status(open_workspace(root), T0, limit=5)
    finally:
        monkeypatch.setattr(Store, "_fetch", fetch)
    assert len(data["ready_to_promote"]) == 5
    return count[0], data["ready_to_promote_total"]


def test_status_reads_as_many_rows_with_ten_times_the_ready_patterns(tmp_path, monkeypatch):
    """On 3ac3c2d the ready patterns' figures came to Python one row each: 24 and 240 ready patterns read
    85 and 301 rows."""
    monkeypatch.setenv("KG_SERVER", "0")
    read = {}
    for ready in (24, 240):
        root = tmp_path / f"w{ready}"
        ws = kg.init_workspace(root)
        baseline_wait_off(root)  # the rows of the ready patterns' figures, not the wait's (no event in the last weeks)
        trail = root / "t.json"
        trail.write_text(json.dumps(_trail(ready)), encoding="utf-8")
        import_trail(ws, [trail], now=T0)
        ws.log("error", "one more", now=T0 - timedelta(hours=1), link=False)  # a writer's open after the import
        read[ready] = _rows_read(root, monkeypatch)
    assert read[24][1] == 24 and read[240][1] == 240
    assert read[240][0] <= read[24][0] + 5, read


# -- the migration, killed --------------------------------------------------------------------------------------
_DOWNGRADE = ("import kuzu, sys; db = kuzu.Database(sys.argv[1]); c = kuzu.Connection(db); "
              "c.execute('DROP TABLE ready_span'); "
              "c.execute(\"MATCH (m:Meta) WHERE m.key IN ['migration:0010_ready_spans', 'aggregate:ready_spans'] "
              "DELETE m\"); c.execute('CHECKPOINT'); c.close(); db.close()")

_KILLED_WRITER = """
import os, sys
import kg.store as S
from kg.cli.app import run
after, seen, fetch = int(sys.argv[2]), [], S.Store._fetch
def killing(self, cypher, params):
    out = fetch(self, cypher, params)
    if seen or "ready_span" in cypher:
        if len(seen) == after:
            os.kill(os.getpid(), 9)
        seen.append(cypher)
    return out
S.Store._fetch = killing
run(["-w", sys.argv[1], "log", "error", "logged by the killed writer", "--pattern-key", "tool.p1", "--wait"])
"""


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("KG_")}, "KG_SERVER": "0",
            "KG_NOW": T0.isoformat()}


def _kg(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "kg"), "-w", str(root), *args], capture_output=True,
                          text=True, env=_env())


@pytest.mark.parametrize("after", [0, 1, 3, 6])
def test_a_first_writer_killed_in_the_migration_leaves_a_graph_that_answers_the_same(tmp_path, monkeypatch, after):
    """An existing workspace (the graph without migration 0010) meets its first writer, killed -9 inside the
    migration (after=0: its DDL, uncommitted) or in the rebuild it asks for (the spans' COPY, the rule's mark,
    the flag): the next command opens, finishes the upgrade once, and every answer is the one before it."""
    monkeypatch.setenv("KG_SERVER", "0")
    root = tmp_path / "ws"
    ws = kg.init_workspace(root)
    trail = root / "t.json"
    trail.write_text(json.dumps(_trail(12)), encoding="utf-8")
    import_trail(ws, [trail], now=T0)
    before = _kg(root, "status", "--json")
    assert before.returncode == 0, before.stderr
    subprocess.run([sys.executable, "-c", _DOWNGRADE, str(ws.graph_path)], check=True, env=_env())
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(root), str(after)], capture_output=True,
                            text=True, env=_env())
    assert killed.returncode == -9, killed.stderr
    again = _kg(root, "status", "--json")
    assert again.returncode == 0, again.stderr
    lc_before, lc_after = json.loads(before.stdout)["lifecycle"], json.loads(again.stdout)["lifecycle"]
    assert lc_after["ready_to_promote_total"] == lc_before["ready_to_promote_total"] == 12
    logged = _kg(root, "log", "error", "logged after the kill", "--wait")
    assert logged.returncode == 0, logged.stderr
    doctor = _kg(root, "doctor")
    assert doctor.returncode == 0 and "aggregate: the pattern-occurrence table equals" in doctor.stdout, doctor.stdout
    with ws.store() as st:
        assert spans.current(st) and aggregates.differences(st) == []
        assert "0010_ready_spans" in st.applied_migrations()  # (the downgrade left the later ones applied)


def test_a_pattern_whose_own_status_is_set_leaves_the_ready_spans_at_once(ws):
    """The spans carry their pattern's status: a status set on the pattern itself (not on a member: the named
    write `status_set`, as any node's) is copied in the same write, so the count follows without a rebuild."""
    for i in range(4):
        ws.log("error", f"npm lock file conflict {i}", now=T0 + timedelta(hours=i), session=f"s{i % 2}",
               pattern_key="npm.lock", link=False)
    at = T0 + timedelta(days=1)
    assert lifecycle_status(ws, at)["ready_to_promote_total"] == 1
    with ws.store() as st:
        pid = st.run("patterns_by_key", keys=["npm.lock"])[0]["id"]
        st.run("status_set", id=pid, status="resolved", at=at)
    assert lifecycle_status(ws, at)["ready_to_promote_total"] == 0
    with ws.store() as st:
        assert aggregates.ready(st) and aggregates.differences(st) == []
        assert {r["status"] for r in st.run("spn_all")} == {"resolved"}
