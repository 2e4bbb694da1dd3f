"""A checkpoint must not change the pattern-occurrence table (kg/store/aggregates.py).

QA: `kg serve stop` (the server CHECKPOINTs as it closes the graph) changed PatternOcc rows, and `kg cycle` then
skipped a promotion that was due: a pattern's `at` and `sess` lists held another pattern's items. Kùzu 0.11.3
does it alone (the reduction below): a SET of a row's lists, then a row made, both since the last checkpoint, and
the CHECKPOINT writes the new row's list items from another row's (a replay of the log first, or none, alike).
kg now never updates a row in place: a row written again is deleted and made anew.

Real processes and a real Kùzu: the logs, the server's stop and the doctor are `kg` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import kg
from kg.store import _named_queries

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import list_tears  # noqa: E402 - the bench's plain-Kùzu session, shared

from tests.conftest import baseline_wait_off

pytestmark = pytest.mark.embedded_only("the write-ahead log and its CHECKPOINT are Kùzu's")

KG = str(Path(sys.executable).with_name("kg"))
NEW = _named_queries(None)["agg_occ_new"].text

# kg's write of a row's lists in place, as it was before (`agg_occ_set`)
SET_IN_PLACE = ("MATCH (a:PatternOcc {id: $id}) SET a.first = $first, a.last = $last, a.at = $at, a.sess = $sess, "
                "a.st = $st, a.ev = $ev, a.xev = $xev")


def _env(server: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_NOW", "KG_SESSION")}
    return {**env, "KG_SERVER": server}


def _kg(root: Path, *args: str, server: str = "0") -> subprocess.CompletedProcess:
    """A kg command; the graph opened by the command itself unless `server` is "1"."""
    done = subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env=_env(server))
    assert done.returncode == 0, done.stderr
    return done


def _serve_cycle(root: Path) -> None:
    """A read server started and stopped: it folds the write-ahead log into the graph (a CHECKPOINT) as it closes."""
    _kg(root, "serve", "start", server="1")
    _kg(root, "serve", "stop", server="1")
    wal = root / "memory" / ".kg" / "graph.kuzu.wal"
    assert not wal.exists() or wal.stat().st_size == 0  # the stop checkpointed


def _log(root: Path, key: str, day: int) -> None:
    _kg(root, "log", "error", f"{key} failed again", "--pattern-key", key, "--session", f"s{day}",
        "--now", f"2026-11-{day:02d}T10:00:00", "--wait")


def test_a_checkpoint_keeps_the_rows_kg_wrote(tmp_path):
    """The shortest history found through kg's own writes: a pattern seen five times, the server's stop, once
    more, then a new pattern, and the server's stop again. Before, the new pattern's row read the first
    pattern's first time after the second stop, and `kg doctor` found the row differing from a recomputation."""
    root = tmp_path / "ws"
    kg.init_workspace(root)
    for day in range(1, 6):
        _log(root, "alpha", day)
    _serve_cycle(root)
    _log(root, "alpha", 6)
    _log(root, "beta", 7)  # (once: seen twice before the stop, its row came out right)
    _serve_cycle(root)
    doctor = _kg(root, "doctor", "--dry-run")
    assert "aggregate: the pattern-occurrence table equals a full recomputation" in doctor.stdout
    status = json.loads(_kg(root, "status", "--json", "--now", "2026-11-08T00:00:00").stdout)
    seen = {p["key"]: (p["recurrence"], p["first_seen"], p["last_seen"]) for p in status["patterns"]}
    assert seen["alpha"] == (6, "2026-11-01T10:00:00", "2026-11-06T10:00:00")


def _row(pid: str, times: list[datetime]) -> dict:
    return {"id": pid, "first": times[0], "last": times[-1], "at": times, "sess": [f"s{t.day}" for t in times],
            "st": ["pending"] * len(times), "ev": [f"E{t.day}" for t in times], "xev": []}


def _history(path: Path, rewrite) -> tuple[list, list]:
    """The reduction on kg's schema (migrations 0005-0010): row A made with one time and rewritten four times (one
    more each), CHECKPOINT; A rewritten once more and row B made; the writer closes without a checkpoint (as kg
    does); then the rows before and after a CHECKPOINT."""
    path.parent.mkdir()
    list_tears.fresh(path.parent)  # kg's schema, checkpointed on close by nothing: Kùzu replays it below
    times = [datetime(2026, 11, 1, 10) + timedelta(days=d) for d in range(7)]

    def session(statements, checkpoint: bool) -> list:
        return list_tears.session(path, statements, checkpoint,
                                  "MATCH (a:PatternOcc) RETURN a.id, a.first, a.at, a.sess ORDER BY a.id")

    session([(NEW, _row("A", times[:1]))] + [s for n in range(2, 6) for s in rewrite(_row("A", times[:n]))],
            checkpoint=True)
    session([*rewrite(_row("A", times[:6])), (NEW, _row("B", times[6:]))], checkpoint=False)
    before = session([], checkpoint=False)  # the log replayed
    return before, session([], checkpoint=True)


def test_kuzu_moves_a_new_rows_lists_when_a_set_is_checkpointed(tmp_path):
    """The reduction of QA's graph (kuzu 0.11.3): the SET form moves B's list items at the checkpoint (B's `at`
    reads A's first time); when kuzu no longer does, this fails and the delete-and-make form may go. kg's form
    keeps every row."""
    in_place = _history(tmp_path / "a" / "graph.kuzu", lambda r: [(SET_IN_PLACE, r)])
    b_before, b_after = in_place[0][1], in_place[1][1]
    assert b_before[2] == [datetime(2026, 11, 7, 10)] and b_after[2] == [datetime(2026, 11, 1, 10)]
    anew = _history(tmp_path / "b" / "graph.kuzu",
                    lambda r: [("MATCH (a:PatternOcc {id: $id}) DETACH DELETE a", {"id": r["id"]}),
                               (NEW, r)])
    assert anew[0] == anew[1]
    assert anew[1][1][2] == [datetime(2026, 11, 7, 10)]


def _tear(graph: Path, key: str, times: list[datetime]) -> None:
    """What such a checkpoint left in QA's graph (another process, plain Kùzu): the pattern's row holds other
    times and sessions in its lists, its own `first` and `last` kept."""
    code = ("import kuzu, sys, json; from datetime import datetime; db = kuzu.Database(sys.argv[1]); "
            "c = kuzu.Connection(db); at = [datetime.fromisoformat(t) for t in json.loads(sys.argv[3])]; "
            "c.execute('MATCH (p:Node {pattern_key: $k}), (a:PatternOcc {id: p.id}) SET a.at = $at, a.sess = $s', "
            "{'k': sys.argv[2], 'at': at, 's': [f'old-{i}' for i in range(len(at))]}); "
            "c.execute('CHECKPOINT'); c.close(); db.close()")
    subprocess.run([sys.executable, "-c", code, str(graph), key, json.dumps([t.isoformat() for t in times])],
                   check=True, env=_env("0"))


def test_a_torn_table_is_not_acted_on(tmp_path):
    """QA's second workspace: a pattern ready to promote (three events, three sessions, today) whose row a
    checkpoint had given October's times. `kg status` ranked it by them and `kg cycle` said "nothing to do";
    now a read answers from the graph and the cycle's open rebuilds the table (saying so), then promotes."""
    root = tmp_path / "ws"
    kg.init_workspace(root)
    baseline_wait_off(root)  # the test is about a torn table, not the wait for a baseline
    for hour in (11, 12, 13):
        _kg(root, "log", "error", "npm install failed: ERESOLVE peer dep", "--pattern-key", "npm.eresolve",
            "--action", "use npm install --legacy-peer-deps", "--priority", "high", "--session", f"s{hour}",
            "--now", f"2026-11-26T{hour}:00:00", "--wait")
    _tear(root / "memory" / ".kg" / "graph.kuzu", "npm.eresolve", [datetime(2026, 10, d, 10) for d in (3, 5, 7)])
    doctor = _kg(root, "doctor", "--dry-run")
    assert "1 pattern row(s) differ" in doctor.stdout  # the tear is there
    status = json.loads(_kg(root, "status", "--json", "--now", "2026-11-26T23:00:00").stdout)
    assert [(p["key"], p["last_seen"]) for p in status["patterns"]] == [("npm.eresolve", "2026-11-26T13:00:00")]
    cycle = _kg(root, "cycle", "--now", "2026-11-26T23:00:00")
    assert "promoted 'npm.eresolve' to TOOLS.md" in cycle.stdout
    assert "rebuilt the pattern-occurrence table: 1 row(s) held times that were not their own" in cycle.stderr
    assert "use npm install --legacy-peer-deps" in (root / "TOOLS.md").read_text(encoding="utf-8")
    assert "aggregate: the pattern-occurrence table equals" in _kg(root, "doctor", "--dry-run").stdout
