"""Review of the fourteenth landing's retirement of Kùzu's node_fts (issue 22): kills at the points of the drop
the trials in test_fault.py do not reach, a kill between a linking writer's commit and its side sync, and
linking's answers against node_fts's where the side index's tokenizer differs from Kùzu's. Real Kùzu, real
SQLite, the real CLI in a subprocess killed with SIGKILL."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import fault_trials  # noqa: E402
from test_reliability import give_legacy_fts  # noqa: E402

pytestmark = pytest.mark.embedded_only("the node_fts retirement and the side index are the embedded store's")

_ENV = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}


def _ids(root: Path) -> list[str]:
    r = fault_trials.kg(root, "list", "--limit", "100000", "--json")
    assert r.returncode == 0, r.stderr
    return [row["id"] for row in json.loads(r.stdout)]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` and its bytes (a check-only run must change none, nor add or remove one), but the
    lock files every reader takes (`graph.lock`, its `.wait` / `.xwait`: a holder's pid, a waiter's flag)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith((".lock", ".lock.wait", ".lock.xwait"))}


# -- kills in the drop of an old graph's node_fts, at the points test_fault.py's trials do not reach --------------

_KILL_SCRIPT = r"""
import os, sys
from pathlib import Path
from kg.store import rollback as R
from kg.cli.app import run
point = sys.argv[2]
_take, _discard, _fetch = R.take, R.discard, None

def take(store, what):
    done = _take(store, what)
    if point == "copy-taken" and "full-text" in what:
        os.kill(os.getpid(), 9)  # the copy and its intent written, the index not dropped yet
    return done

def discard(path):
    if point == "before-discard":
        os.kill(os.getpid(), 9)  # the drop and the mark checkpointed, the intent and copy still there
    R.intent_of(path).unlink(missing_ok=True)
    if point == "in-discard":
        os.kill(os.getpid(), 9)  # the intent gone, the copy left
    _discard(path)

R.take, R.discard = take, discard
run(["-w", sys.argv[1], "import", "trail", sys.argv[3]])
"""


@pytest.mark.parametrize("point", ["copy-taken", "before-discard", "in-discard"])
def test_an_old_graph_killed_around_its_index_drop_opens_with_everything(ws, tmp_path, point):
    before = [ws.log("learning", f"logged before the drop {i}", wait=True).id for i in range(2)]
    give_legacy_fts(ws)
    entries = [{"id": f"ERR-20250102-{i:06d}", "type": "error", "summary": f"imported failure {i}",
                "logged": f"2025-01-02T10:00:{i:02d}"} for i in range(10)]
    trail = tmp_path / "b.trail.json"
    trail.write_text(json.dumps({"entries": entries}))
    proc = subprocess.run([sys.executable, "-c", _KILL_SCRIPT, str(ws.root), point, str(trail)],
                          capture_output=True, text=True, env=_ENV)
    assert proc.returncode == -9, proc.stderr
    r = fault_trials.kg(ws.root, "list", "--limit", "5")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    again = fault_trials.kg(ws.root, "import", "trail", str(trail))
    assert again.returncode == 0, again.stderr
    ids = _ids(ws.root)
    assert set(ids) >= set(before) | {e["id"] for e in entries} and len(ids) == len(set(ids))
    assert not list(ws.kg_dir.glob("graph.kuzu.rollback*"))
    assert fault_trials.kg(ws.root, "log", "learning", "logged after the repair", "--wait").returncode == 0
    doctor = fault_trials.kg(ws.root, "doctor")
    assert doctor.returncode == 0 and "full-text index: none in the graph" in doctor.stdout, doctor.stdout
    assert "search index: search.sqlite holds all" in doctor.stdout, doctor.stdout


# -- a kill between a linking writer's Kùzu commit and its side sync ------------------------------------------------

_KILLED_SYNC = r"""
import os, sys
from kg.store import sideindex as S
from kg.cli.app import run
_safe = S.safe_sync
def safe_sync(st):
    if st.__dict__.get("_side_created") and not st._in_tx:
        os.kill(os.getpid(), 9)  # the graph committed the entry; the side file never heard of it
    return _safe(st)
S.safe_sync = safe_sync
run(["-w", sys.argv[1], "log", "error", sys.argv[2], "--wait"])
"""


def test_an_entry_committed_but_killed_before_its_side_sync_is_found_and_linked(ws):
    for i in range(3):
        ws.log("error", f"the zorblax compiler crashed on module {i}", wait=True)
    proc = subprocess.run([sys.executable, "-c", _KILLED_SYNC, str(ws.root),
                           "the zorblax compiler crashed again on the quuxfile module"],
                          capture_output=True, text=True, env=_ENV)
    assert proc.returncode == -9, proc.stderr
    with sqlite3.connect(ws.kg_dir / "search.sqlite") as db:  # killed where meant: the side file is behind
        assert not db.execute("SELECT count(*) FROM node WHERE text LIKE '%quuxfile%'").fetchone()[0]
    found = fault_trials.kg(ws.root, "search", "quuxfile", "--json")
    assert found.returncode == 0, found.stderr
    hits = [h["ref"] for h in json.loads(found.stdout) if "quuxfile" in (h.get("text") or "")]
    assert len(hits) == 1, found.stdout  # found once: the graph's commit, not a replay of the journal besides
    from kg.store import sidelink

    with ws.store() as st:  # the next writer's linking asks the side file, caught up
        assert hits[0] in [i for i, _, _ in sidelink.candidates(st, ["quuxfile", "zorblax"], 10)]
    doctor = fault_trials.kg(ws.root, "doctor", "--dry-run")
    assert "search index: search.sqlite holds all" in doctor.stdout, doctor.stdout
    assert len(_ids(ws.root)) == len(set(_ids(ws.root)))


# -- linking's answers against node_fts's -------------------------------------------------------------------------

_LONG = "abstractsingletonproxyfactorybeanconfigurationinitializationexceptionoverrides"  # 78 letters


@contextlib.contextmanager
def node_fts_store(tmp_path: Path, texts: list[str]):
    """A graph holding Kùzu's node_fts beside the side index, one event per text (ids A-0000...), to compare
    linking's answers with node_fts's."""
    from kg.ingest.apply import node_params
    from kg.store import _FTS_CREATE, Store

    graph = tmp_path / "memory" / ".kg" / "graph.kuzu"
    graph.parent.mkdir(parents=True)
    with Store.open(graph, lock_path=graph.with_name("graph.lock"), lock_timeout=30.0) as st:
        st.execute(_FTS_CREATE)
        st.forget_prepared()
        at = datetime(2026, 1, 5, 10)
        with st.transaction():
            for i, text in enumerate(texts):
                st.run("node_create", **node_params(f"A-{i:04d}", "event", text, at + timedelta(minutes=i)))
        yield st


def test_a_word_longer_than_64_bytes_is_matched_as_node_fts_matches_it(tmp_path):
    from kg.store import sidelink

    with node_fts_store(tmp_path, [f"{_LONG} crashed the build", f"{_LONG[:-1]} again in the build",
                                   "an unrelated note about the weather"]) as st:
        for word in (_LONG, _LONG[:-1]):
            rows = st.execute("CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := 10) RETURN node.id AS id, score",
                              {"q": word})
            expected = sorted((r["id"], round(r["score"], 9)) for r in rows)
            assert [i for i, _ in expected] == ["A-0000", "A-0001"]  # node_fts stems both to one word
            got = sorted((i, round(s, 9)) for i, _, s in sidelink.candidates(st, [word], 10))
            assert got == expected, word


# -- a side file damaged by hand in a way SQLite's checks do not see ----------------------------------------------

# the search table as a writer's open re-makes it when it is gone
_FTS = "CREATE VIRTUAL TABLE fts USING fts5(tokens, content='', tokenize='porter unicode61')"


@pytest.mark.parametrize("damage", ["DROP TABLE lpost", "DELETE FROM lpost", "DELETE FROM ldf", "DELETE FROM ltot",
                                    "DROP TABLE ldf", "DELETE FROM lpost WHERE pos = 2",
                                    "DELETE FROM node WHERE pos = 1", "DELETE FROM node",
                                    "DROP TABLE fts; " + _FTS])
def test_doctor_finds_and_repairs_a_side_file_whose_rows_were_deleted_by_hand(ws, damage):
    """Rows deleted by hand leave the stamp (count, last id) and SQLite's and FTS5's integrity checks as they
    were: `kg doctor` reported such a file in step and never repaired it, and linking silently found fewer or no
    candidates (a writer's open even re-creates a dropped table empty). Its cheap check now reads the tables, a
    row and a linking document per node (counts), and a sample of nodes' rows against the graph. (Version 5 of
    the side file holds linking's counts in `lpost`, `ldf`, `ltot`: the `ldl` of the p15 review is gone.)"""
    from kg.store import sidelink

    for i in range(4):
        ws.log("error", f"the zorblax compiler crashed on module {i}", wait=True)
    with ws.store() as st:
        expected = sidelink.candidates(st, ["zorblax", "compiler"], 10)
    assert len(expected) >= 4
    with sqlite3.connect(ws.kg_dir / "search.sqlite") as db:
        db.executescript(damage)
    dry = fault_trials.kg(ws.root, "doctor", "--dry-run")
    assert dry.returncode == 0 and "search index: search.sqlite holds all" not in dry.stdout, dry.stdout
    assert "run `kg doctor` to do it" in dry.stdout, dry.stdout
    fixed = fault_trials.kg(ws.root, "doctor")
    assert fixed.returncode == 0 and "search index: search.sqlite" in fixed.stdout and "rebuilt" in fixed.stdout, \
        fixed.stdout
    again = fault_trials.kg(ws.root, "doctor", "--dry-run")
    assert "search index: search.sqlite holds all" in again.stdout, again.stdout
    with ws.store() as st:
        assert sidelink.candidates(st, ["zorblax", "compiler"], 10) == expected


def test_doctor_dry_run_leaves_an_old_graphs_index_in_place(ws):
    """`kg doctor --dry-run` ("Only check; repair nothing") opened the graph as a writer, whose open copied the
    graph aside, dropped an old graph's node_fts and marked it. It now opens it read-only and says what a
    writer's open would do: the workspace is byte-identical before and after."""
    ws.log("learning", "logged before the check", wait=True)
    give_legacy_fts(ws)
    before = _files(ws.root)
    dry = fault_trials.kg(ws.root, "doctor", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "node_fts is still in the graph" in dry.stdout, dry.stdout
    assert _files(ws.root) == before
    from kg.store import Store

    with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", lock_timeout=30.0, read_only=True) as st:
        assert st.has_fts() and not st.fts_retired()
