"""Migration 0011 (issue 17): Tally, ManagedBlock, Preference, Score, Topic, Skill, Decision and Proposal become
kinds of Meta row, so the graph opens with eight node tables fewer; the edges that started or ended at them move
with them. The graph here is built as kg before it built them: migrations 0001-0010 replayed in another process,
rows written by the statements that kg wrote them with, then opened by this kg."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from kg.cli.app import run

import kg
import kg.analysis as ka
from kg.store import spans
from kg.store.schema import MERGED_KINDS, merged_problems, migrations

NOW = "2026-12-20T10:00:00"
KUZU = pytest.mark.embedded_only("builds and kills the embedded Kùzu file of an old graph")
OLD_TABLES = ("Decision", "ManagedBlock", "Preference", "Proposal", "Score", "Skill", "Tally", "Topic")

# How kg wrote the four tables before migration 0011 (main's rules/queries and kg/store/tallies.cypher).
_OLD_WRITES = [
    ("MERGE (t:Tally {key: $key}) ON CREATE SET t.n = $d ON MATCH SET t.n = t.n + $d",
     [{"key": "node|event|error|pending", "d": 3}, {"key": "node|event|learning|pending", "d": 1},
      {"key": "edge|derived_from", "d": 2}, {"key": "node|event|error|pending", "d": -1}]),
    ("UNWIND $rows AS r MERGE (b:ManagedBlock {id: r.id}) SET b.path = r.path, b.name = r.name, b.hash = r.hash, "
     "b.glue = r.glue, b.created_file = r.created_file, b.flag = r.flag, b.updated_at = timestamp(r.at)",
     [{"rows": [{"id": "AGENTS.md#rules", "path": "AGENTS.md", "name": "rules", "hash": "ab12", "glue": "\n\n",
                 "created_file": True, "flag": "", "at": "2026-12-01 10:00:00"},
                {"id": "USER.md#preferences", "path": "USER.md", "name": "preferences", "hash": "cd34", "glue": "",
                 "created_file": False, "flag": "edited", "at": "2026-12-02 11:00:00"}]}]),
    ("CREATE (p:Preference {id: $id, key: $key, value: $value, previous: $previous, action: $action, "
     "at: timestamp($at), source: $source, session: $session})",
     [{"id": "PREF-20261201-001", "key": "editor", "value": "\"vim\"", "previous": None, "action": "set",
       "at": "2026-12-01 09:00:00", "source": "cli", "session": "2026-12-01-001"},
      {"id": "PREF-20261202-001", "key": "editor", "value": "\"helix\"", "previous": "\"vim\"", "action": "set",
       "at": "2026-12-02 09:00:00", "source": "cli", "session": None},
      {"id": "PREF-20261202-002", "key": "tone", "value": "\"terse\"", "previous": None, "action": "set",
       "at": "2026-12-02 09:30:00", "source": "hand-edit", "session": None}]),
    ("CREATE (s:Score {id: $id, at: timestamp($at), accuracy: $a, usefulness: $u, efficiency: $e, tone: $t, "
     "proactiveness: $p, average: $avg, notes: $notes, session: $session})",
     [{"id": "SCORE-20261201-001", "at": "2026-12-01 18:00:00", "a": 7, "u": 8, "e": 6, "t": 9, "p": 5,
       "avg": 7.0, "notes": "good", "session": "2026-12-01-001"},
      {"id": "SCORE-20261202-001", "at": "2026-12-02 18:00:00", "a": 8, "u": 8, "e": 8, "t": 8, "p": 8,
       "avg": 8.0, "notes": None, "session": None}]),
    ("MERGE (m:Meta {key: $key}) SET m.value = $value", [{"key": "kg:probe", "value": "x"}]),
    ("CREATE (:Node {id: $id, kind: 'event', entry_type: 'error', text: $text, status: 'pending', "
     "priority: 'high', created_at: timestamp($at)})",
     [{"id": "ERR-20261201-001", "text": "the docs deploy failed", "at": "2026-12-01 10:00:00"},
      {"id": "ERR-20261201-002", "text": "the test database was down", "at": "2026-12-01 11:00:00"}]),
    ("MERGE (t:Topic {name: $name}) SET t.keywords = $keywords, t.built_at = timestamp($at)",
     [{"name": "docs", "keywords": ["docs", "deploy"], "at": "2026-12-02 08:00:00"},
      {"name": "testing", "keywords": ["test", "pytest"], "at": "2026-12-02 08:00:00"}]),
    ("MATCH (n:Node {id: $id}), (t:Topic {name: $topic}) "
     "CREATE (n)-[:about {score: $score, created_at: timestamp($at)}]->(t)",
     [{"id": "ERR-20261201-001", "topic": "docs", "score": 2.0, "at": "2026-12-02 08:00:00"},
      {"id": "ERR-20261201-002", "topic": "testing", "score": 1.0, "at": "2026-12-02 08:00:00"}]),
    ("MERGE (k:Skill {slug: $slug}) ON CREATE SET k.created = timestamp($at), k.revisions = 0 "
     "SET k.name = $name, k.description = $description, k.updated = timestamp($at), k.source = 'cli', "
     "k.triggers = $triggers, k.tools = $tools, k.path = $path, k.session = $session, k.revisions = k.revisions + 1",
     [{"slug": "deploy-docs", "name": "Deploy docs", "description": "Deploy the docs site", "at": "2026-12-02 09:00:00",
       "triggers": ["deploy docs"], "tools": ["mkdocs"], "path": "memory/skills/deploy-docs.md", "session": None}]),
    ("MATCH (k:Skill {slug: $slug}), (n:Node {id: $id}) MERGE (k)-[r:learned_from]->(n) "
     "ON CREATE SET r.created_at = timestamp($at)",
     [{"slug": "deploy-docs", "id": "ERR-20261201-001", "at": "2026-12-02 09:00:00"}]),
    # main's lc_decision_upsert
    ("UNWIND $rows AS r MERGE (d:Decision {id: r.id}) ON CREATE SET d.created_at = timestamp(r.at), d.a = r.a, "
     "d.b = r.b, d.override = false SET d.score_a = r.score_a, d.score_b = r.score_b, d.parts_a = r.parts_a, "
     "d.parts_b = r.parts_b, d.winner = r.winner, d.status = r.status, d.reason = r.reason, "
     "d.decided_at = timestamp(r.at) WITH d, r MATCH (a:Node {id: r.a}), (b:Node {id: r.b}) "
     "MERGE (d)-[x:decision_about]->(a) ON CREATE SET x.created_at = timestamp(r.at) "
     "MERGE (d)-[y:decision_about]->(b) ON CREATE SET y.created_at = timestamp(r.at)",
     [{"rows": [{"id": "dec-20261202-001", "a": "ERR-20261201-001", "b": "ERR-20261201-002", "score_a": 140,
                 "score_b": 60, "parts_a": '{"priority": 100}', "parts_b": "{}", "winner": "ERR-20261201-001",
                 "status": "decided", "reason": "score", "at": "2026-12-02 10:00:00"}]}]),
    # main's lc_change_create (in short), lc_proposal_create, lc_proposal_about and lc_proposal_for_change
    ("CREATE (c:Change {id: $id, kind: 'verification', target: 'AGENTS.md', status: 'live', evidence: []})",
     [{"id": "chg-20261202-001"}]),
    ("CREATE (q:Proposal {id: $id, number: $number, type: $type, target: $target, target_kind: $target_kind, "
     "change: $change, text: $text, hypothesis: $hypothesis, priority: $priority, area: $area, category: $category, "
     "motivation: $motivation, evidence: $evidence, risk: $risk, effort: $effort, impact: $impact, "
     "status: 'pending', reason: '', created_at: timestamp($at)})",
     [{"id": f"prop-000{i}", "number": i, "type": t, "target": "AGENTS.md", "target_kind": "agents", "change": "c",
       "text": f"rule {i}", "hypothesis": "h", "priority": "high", "area": "docs", "category": "ops",
       "motivation": "m", "evidence": ["ERR-20261201-001"], "risk": "low", "effort": "low", "impact": "high",
       "at": "2026-12-02 12:00:00"} for i, t in ((1, "promotion"), (2, "verification"))]),
    ("MATCH (q:Proposal {id: $id}), (n:Node {id: $node}) "
     "CREATE (q)-[:proposal_about {created_at: timestamp($at)}]->(n)",
     [{"id": "prop-0001", "node": "ERR-20261201-001", "at": "2026-12-02 12:00:00"}]),
    ("MATCH (q:Proposal {id: $id}), (c:Change {id: $change}) "
     "CREATE (q)-[:proposal_change {created_at: timestamp($at)}]->(c)",
     [{"id": "prop-0002", "change": "chg-20261202-001", "at": "2026-12-02 12:00:00"}]),
]

# Builds the graph in a process of its own (one Kùzu database per path and process): 0001-0010, their marks,
# the old rows, and a checkpoint, as kg before 0011 left a graph on disk.
_BUILD_OLD = """
import json, sys, kuzu
from kg.store.schema import META_DDL
db = kuzu.Database(sys.argv[1]); c = kuzu.Connection(db)
c.execute(META_DDL)
for name, statements in json.loads(sys.argv[2]):
    for s in statements:
        if not s.lstrip().upper().startswith("CALL CREATE_FTS_INDEX"):
            c.execute(s)
    c.execute("CREATE (:Meta {key: $k, value: '2026-11-01T00:00:00'})", {"k": "migration:" + name})
c.execute("MERGE (t:Term {term: '#docs'}) ON CREATE SET t.df = 0")
c.execute("MERGE (m:Meta {key: 'fts:retired'}) SET m.value = '1'")
for cypher, params in json.loads(sys.argv[3]):
    for p in params:
        c.execute(cypher, p)
c.execute("CHECKPOINT"); c.close(); db.close()
"""

_READ_OLD = """
import json, sys, kuzu
db = kuzu.Database(sys.argv[1]); c = kuzu.Connection(db)
out = {"tables": sorted(r[0] for r in c.execute("CALL show_tables() RETURN name").get_all())}
for table in (t for t in json.loads(sys.argv[2]) if t in out["tables"]):
    names = [r[1] for r in c.execute(f"CALL table_info('{table}') RETURN *").get_all()]
    rows = c.execute(f"MATCH (x:{table}) RETURN " + ", ".join(f"x.{n}" for n in names)).get_all()
    out[table] = [dict(zip(names, r)) for r in rows]
# the edges to topics and from skills, as the analyst reads an edge (its ends' tables and keys, its properties)
ends = {"Node": "id", "Topic": "name", "Skill": "slug", "Decision": "id", "Proposal": "id", "Change": "id"}
for rel in ("about", "learned_from", "decision_about", "proposal_about", "proposal_change"):
    src, dst, props = json.loads(sys.argv[3])[rel]
    if src in out["tables"] and dst in out["tables"]:
        rows = c.execute(f"MATCH (a:{src})-[r:{rel}]->(b:{dst}) RETURN a.{ends[src]}, b.{ends[dst]}, "
                         + ", ".join(f"r.{p}" for p in props)).get_all()
        out[rel] = [{"src_table": src, "src": r[0], "dst_table": dst, "dst": r[1], **dict(zip(props, r[2:]))}
                    for r in rows]
print(json.dumps(out, default=str))
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KG_")}


def _py(script: str, *args: str) -> str:
    res = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=_env())
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture
def old_ws(tmp_path: Path) -> Path:
    """A workspace whose graph is as kg before migration 0011 left it (migrations 0001-0010, the old tables)."""
    root = tmp_path / "ws"
    kg.init_workspace(root)
    graph = kg.open_workspace(root).graph_path
    for leftover in graph.parent.glob(graph.name + "*"):  # the new graph init made: the old one replaces it
        leftover.unlink()
    old = [(name, list(statements)) for name, statements in migrations() if name < "0011"]
    assert [name for name, _ in old][-1].startswith("0010") and len(old) == 10
    # the aggregates complete, as a graph kg wrote has them (an open then rebuilds none, so the rows stay as made)
    flags = ("MERGE (m:Meta {key: $key}) SET m.value = $value",
             [{"key": "aggregate:occurrences", "value": "1"},
              {"key": "aggregate:ready_spans", "value": spans._packaged_fingerprint()}])
    _py(_BUILD_OLD, str(graph), json.dumps(old), json.dumps([*_OLD_WRITES, flags]))
    return root


def _read_old(root: Path) -> dict:
    graph = kg.open_workspace(root).graph_path
    return _sorted_rels(_read_old_raw(graph))


def _sorted_rels(out: dict) -> dict:
    return {k: _sorted(json.loads(json.dumps(v, default=str))) if k in RELS else v for k, v in out.items()}


def _read_old_raw(graph: Path) -> dict:
    rels = {"about": ("Node", "Topic", ["score", "created_at"]), "learned_from": ("Skill", "Node", ["created_at"]),
            "decision_about": ("Decision", "Node", ["created_at"]),
            "proposal_about": ("Proposal", "Node", ["created_at"]),
            "proposal_change": ("Proposal", "Change", ["created_at"])}
    return json.loads(_py(_READ_OLD, str(graph), json.dumps(OLD_TABLES), json.dumps(rels)))


def _analyst_tables(root: Path) -> dict:
    with ka.load(kg.open_workspace(root)) as a:
        tables = {name: a.data.table(name) for name in OLD_TABLES}
        # (an edge table is read in Kùzu's storage order, which no query asks for: compared as a set)
        return json.loads(json.dumps({**tables, **{r: _sorted(a.data.relations[r]) for r in RELS}}, default=str))


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


RELS = ("about", "learned_from", "decision_about", "proposal_about", "proposal_change")


def _cli(root: Path, *argv: str, capsys) -> tuple[int, str]:
    code = run(["-w", str(root), "--now", NOW, *argv])
    return code, capsys.readouterr().out


@KUZU
def test_the_migration_moves_every_row_and_the_graph_reads_as_before(old_ws, capsys):
    before = _read_old(old_ws)
    assert set(OLD_TABLES) <= set(before["tables"])  # the fixture is the old shape
    assert sum(len(before[t]) for t in (*OLD_TABLES, *RELS)) == 1 + 2 + 3 + 2 + 2 + 1 + 3 + 2 + 2 + 1 + 2 + 1 + 1
    with kg.open_workspace(old_ws).store() as st:  # a writer's open migrates
        assert any(name.startswith("0011") for name in st.applied_migrations())
    after = _read_old(old_ws)
    assert not set(OLD_TABLES) & set(after["tables"])  # eight node tables fewer
    # (and migration 0013 drops the decay's staging table, made again only while a pass uses it)
    assert len(after["tables"]) == len(before["tables"]) - 8 - 1 and set(RELS) <= set(after["tables"])
    assert "LcStage" in before["tables"] and "LcStage" not in after["tables"]
    # the analyst sees the eight tables as they were, row for row and column for column, and the edges' ends
    assert _analyst_tables(old_ws) == {t: before[t] for t in (*OLD_TABLES, *RELS)}
    # and the commands read the moved rows
    code, out = _cli(old_ws, "pref", "history", "--json", capsys=capsys)
    assert code == 0 and [(p["key"], p["value"]) for p in json.loads(out)] == [
        ("editor", "vim"), ("editor", "helix"), ("tone", "terse")]
    with kg.open_workspace(old_ws).store() as st:
        assert {r["key"]: r["n"] for r in st.run("tly_all")} == {t["key"]: t["n"] for t in before["Tally"]}
        assert [r["id"] for r in st.run("lc_blocks")] == ["AGENTS.md#rules", "USER.md#preferences"]
        assert [r["average"] for r in st.run("memory_scores_since", since=_t("2026-11-01"),
                                             until=_t("2026-12-31"))] == [7.0, 8.0]
        assert st.run("meta_get", key="kg:probe") == [{"value": "x"}]
        assert [r["id"] for r in st.run("memory_topic_nodes", key="topic:docs", limit=5)] == ["ERR-20261201-001"]
        assert st.run("memory_session_skills", id="none") == []
        (d,) = st.run("lc_decisions")
        assert (d["id"], d["winner"], d["override"]) == ("dec-20261202-001", "ERR-20261201-001", False)
        assert st.run("tly_count_decision_about") == [{"n": 2}]
        assert [(q["number"], q["node"], q["change_id"]) for q in st.run("lc_proposals", statuses=["pending"])] == [
            (1, "ERR-20261201-001", None), (2, None, "chg-20261202-001")]
        assert st.run("lc_pending_count", type="promotion") == [{"n": 1}]
        assert st.run("tly_count_proposal_about") == [{"n": 1}] and st.run("tly_count_proposal_change") == [{"n": 1}]
        # a lookup by key is a primary-key lookup: the kind is in the key
        assert st.execute("MATCH (m:Meta {key: 'tally:edge|derived_from'}) RETURN m.n AS n") == [{"n": 2}]
    code, out = _cli(old_ws, "doctor", "--json", capsys=capsys)  # (it recounts the tallies: the fixture's are made up)
    assert code == 0, out
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["tables"]["status"] == "ok", checks["tables"]


def _t(day: str):
    from datetime import datetime
    return datetime.fromisoformat(day)


@KUZU
def test_new_rows_after_the_migration_are_written_as_kinds_of_meta_row(old_ws, capsys):
    assert _cli(old_ws, "pref", "set", "theme", "dark", capsys=capsys)[0] == 0
    assert _cli(old_ws, "score", "6", "6", "6", "6", "6", capsys=capsys)[0] == 0
    assert _cli(old_ws, "log", "error", "the build broke again", capsys=capsys)[0] == 0
    tables = _analyst_tables(old_ws)
    # (the fixture's memory/preferences.json lacks its rows' keys: kg records that hand edit too, before theme)
    assert [p["key"] for p in tables["Preference"]][:3] == ["editor", "editor", "tone"]
    assert (tables["Preference"][-1]["key"], tables["Preference"][-1]["value"]) == ("theme", '"dark"')
    assert [s["average"] for s in tables["Score"]] == [7.0, 8.0, 6.0]
    with kg.open_workspace(old_ws).store() as st:  # an upsert finds a block the migration moved, by its key
        st.run("lc_block_upsert", rows=[{"id": "AGENTS.md#rules", "path": "AGENTS.md", "name": "rules", "hash": "ef56",
                                         "glue": "", "created_file": True, "flag": "", "at": datetime(2026, 12, 3)}])
        assert [(b["id"], b["hash"]) for b in st.run("lc_blocks")] == [("AGENTS.md#rules", "ef56"),
                                                                      ("USER.md#preferences", "cd34")]
    code, out = _cli(old_ws, "doctor", "--json", capsys=capsys)
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["tables"]["status"] == "ok" and checks.get("tallies", {"status": "ok"})["status"] == "ok"


# kg opening the old graph, SIGKILLed after the `after`-th statement of migration 0011 (in its transaction).
_KILLED = """
import os, sys
import kg.store as S
from kg.cli.app import run
after, seen, fetch = int(sys.argv[2]), [], S.Store._fetch
def killing(self, cypher, params):
    if seen or cypher.startswith("ALTER TABLE Meta ADD kind"):
        if len(seen) == after:
            os.kill(os.getpid(), 9)
        seen.append(cypher)
    return fetch(self, cypher, params)
S.Store._fetch = killing
run(["-w", sys.argv[1], "status"])
"""


def _point(start: str) -> int:
    statements = dict(migrations())[next(n for n, _ in migrations() if n.startswith("0011"))]
    if start == "mark":  # after its statements, in the same transaction: its mark, then the COMMIT
        return len(statements)
    if start == "COMMIT":
        return len(statements) + 1
    return next(i for i, s in enumerate(statements) if s.startswith(start))


# (issue 17) The side index as a kg before 0011 left it: its sync over the old graph, in a process of its own.
_SIDE_BEFORE = """
import sys, kuzu
from pathlib import Path
from kg.store import Store, _named_queries, sideindex
db = kuzu.Database(sys.argv[1]); c = kuzu.Connection(db)
print(sideindex.sync(Store(db, c, Path(sys.argv[1]), _named_queries(None)), rebuild=True))
c.close(); db.close()
"""


@KUZU
def test_the_side_indexs_kept_state_stays_whole_and_right_across_the_migration(old_ws):
    """The side index keeps each node's current state (kg/store/sidestate.py). The migration moves no node, so a
    file kept whole before it stays whole and right; after it, a proposal's decision (a Meta row's status now)
    names no node, and a node's status change names only that node."""
    from kg.store import sideindex
    from kg.store.schema import meta_key
    from kg.store.sidefile import SideIndex

    ws = kg.open_workspace(old_ws)
    side_path = sideindex.path_of(ws.graph_path)
    assert _py(_SIDE_BEFORE, str(ws.graph_path)).startswith("rebuilt 2")  # nodes and kept state built whole
    ids = ["ERR-20261201-001", "ERR-20261201-002"]

    def meta() -> tuple:
        with sqlite3.connect(side_path) as db:
            mark = db.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()
            return (mark[0] if mark else None), [r[0] for r in db.execute("SELECT id FROM dirty")]

    def kept_and_graph() -> tuple[dict, dict]:
        side = SideIndex(side_path, writable=False)
        try:
            kept = {i: (s["status"], s["priority"]) for i, s in side.state(ids).items()}
        finally:
            side.close()
        with ws.reading() as st:
            rows = st.execute("MATCH (n:Node) RETURN n.id AS id, n.status AS status, n.priority AS priority")
            graph = {r["id"]: (r["status"], r["priority"]) for r in rows}
        return kept, graph

    assert meta() == ("ok", [])
    at = datetime(2026, 12, 20, 10)
    with ws.store() as st:  # a writer's open migrates
        assert any(name.startswith("0011") for name in st.applied_migrations())
        assert meta() == ("ok", [])  # the migration changed no node's state
        st.__dict__["_side_hold"] = True  # (the close leaves the file as the writes left it)
        st.run("lc_proposal_decide", key=meta_key("Proposal", "prop-0001"), status="skipped", reason="not now", at=at)
        assert meta() == ("ok", [])  # a Meta row's status is not a node's
        st.run("status_set", id=ids[0], status="resolved", at=at)
        assert meta() == ("ok", [ids[0]])
    kept, graph = kept_and_graph()
    assert kept == {ids[1]: ("pending", "high")} and graph[ids[0]][0] == "resolved"  # the dirty one asks the graph
    with ws.store() as st:
        pass  # the next writer's close rereads it
    kept, graph = kept_and_graph()
    assert meta() == ("ok", []) and kept == graph == {ids[0]: ("resolved", "high"), ids[1]: ("pending", "high")}
    with ws.reading() as st:
        assert sideindex.check(st)[0]


# killed before: the first ALTER, a copy, an edge copy, the first drop, a table's drop, a rename, the mark, the COMMIT
@KUZU
@pytest.mark.parametrize("start", ["ALTER TABLE Meta ADD kind", "MATCH (b:ManagedBlock)", "MATCH (n:Node)-[a:about]",
                                   "DROP TABLE about", "DROP TABLE Score", "ALTER TABLE about_moved", "mark", "COMMIT"])
def test_a_migration_killed_midway_leaves_the_old_graph_and_runs_whole_next_time(old_ws, start, capsys):
    after = _point(start)
    before = _read_old(old_ws)
    res = subprocess.run([sys.executable, "-c", _KILLED, str(old_ws), str(after)], capture_output=True, text=True,
                         env=_env())
    assert res.returncode == -9, res.stderr  # killed inside the migration, not finished nor failed
    assert _read_old(old_ws) == before  # nothing of it is left: the old graph as it was
    with kg.open_workspace(old_ws).store() as st:  # the next open migrates, from the start
        assert any(name.startswith("0011") for name in st.applied_migrations())
    assert _analyst_tables(old_ws) == {t: before[t] for t in (*OLD_TABLES, *RELS)}  # every row once, none twice


@pytest.mark.parametrize(("tables", "meta", "problem"), [
    ({"Node": "NODE"}, [{"key": "tally:a", "kind": "tally", "id": "a"}, {"key": "migration:x", "kind": "meta"}],
     None),
    ({"Tally": "NODE"}, [], "the table Tally is still in the graph"),
    ({}, [{"key": "tally:a", "kind": "tally", "id": "b"}], "'tally:a' of kind 'tally' is not keyed"),
    ({}, [{"key": "score:1", "kind": "meta", "id": None}], "keyed as a 'score' row but is of kind 'meta'"),
    ({}, [{"key": "block:ws/a", "kind": "block", "id": "ws/a"}], None),
])
def test_doctor_names_a_shape_the_migration_would_not_leave(tables, meta, problem):
    found = merged_problems(tables, meta)
    assert (found[0] if found else None) == problem or (problem and problem in found[0])


def test_a_team_graph_moves_the_same_rows_and_keeps_each_blocks_workspace():
    """FalkorDB has no tables to drop: the migration's data statements copy the rows, then delete the old
    labels' nodes; a team block also carries its workspace and block name. Its catalogue no longer lists them."""
    from kg.store import falkor_dialect as fd

    name = next(n for n, _ in migrations() if n.startswith("0011"))
    out = fd.data_statements(name)
    for table in OLD_TABLES:
        assert f"MATCH (n:{table}) DETACH DELETE n" in out
        assert table not in fd.schema().columns and table not in fd.schema().keys
    copy = next(i for i, s in enumerate(out) if s.startswith("MATCH (b:ManagedBlock) CREATE (:Meta"))
    assert "m.workspace = b.workspace" in out[copy + 1]
    assert out.index("MATCH (n:ManagedBlock) DETACH DELETE n") > copy + 1
    assert {"kind", "id", "pkey", "n", "accuracy", "keywords", "revisions"} <= set(fd.schema().columns["Meta"])
    # the edges to topics and from skills are copied under their own names at once (no table to rename)
    assert not any("_moved" in s or s.startswith(("DROP", "ALTER")) for s in out)
    assert any(s.startswith("MATCH (n:Node)-[a:about]->(t:Topic)") and "[:about {" in s for s in out)
    assert fd.schema().rels["about"][:2] == ("Node", "Meta")
    assert fd.schema().rels["learned_from"][:2] == ("Meta", "Node")
    assert set(MERGED_KINDS) == set(OLD_TABLES)


# Every query that finds one row of a merged kind by its key: each must stay a primary-key lookup. In kuzu 0.11.3
# a key built in the pattern (`{key: 'tally:' + $key}`) is not: it scans the whole table.
_BY_KEY = {
    "tly_add": {"key": "tally:node|event|error|pending", "id": "node|event|error|pending", "d": 1},
    "meta_get": {"key": "tally:node|event|error|pending"},
    "meta_set": {"key": "kg:probe", "value": "1"},
    "lc_decision_override": {"key": "decision:dec-1", "winner": "a", "reason": "r", "at": datetime(2026, 12, 1)},
    "memory_topic_nodes": {"key": "topic:docs", "limit": 5},
    "lc_proposal_decide": {"key": "proposal:prop-0001", "status": "skipped", "reason": "r",
                           "at": datetime(2026, 12, 1)},
    "agg_proposal_links": {"key": "proposal:prop-0001"},
}


@KUZU
@pytest.mark.parametrize("name", sorted(_BY_KEY))
def test_a_merged_kinds_row_is_found_by_its_key_without_a_scan(tmp_path, name):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    with kg.open_workspace(root).store() as st:
        st.execute("UNWIND range(1, 3000) AS i CREATE (:Meta {key: 'pref:P' + CAST(i AS STRING), kind: 'pref'})")
        plan = st._execute_raw("PROFILE " + st.query(name).text, _BY_KEY[name])[0]
        text = next(iter(plan.values()))
    # a lookup reads one row (the plan's scan of a looked-up key outputs it); a scan would read all 3,000
    assert max(int(n) for n in re.findall(r"NumOutputTuples: (\d+)", text)) <= 1, text


@pytest.mark.falkordb
def test_a_team_graph_made_before_the_migration_reads_the_same_after_it(tmp_path, monkeypatch, request):
    """A team graph on FalkorDB made by migrations 0001-0010 with rows under the old labels: after 0011 the same
    reads answer the same, this workspace's block is still its own, and no node keeps an old label."""
    import kg.store.falkor as falkor_mod
    from kg.store import Store
    from kg.store.backend import parse_url

    url = parse_url(request.getfixturevalue("falkordb_url"))
    origin = {"origin_workspace": "alpha#1", "origin_agent": "tester"}

    def opened():
        return Store.open(tmp_path / "unused", lock_path=tmp_path / "graph.lock", lock_timeout=5, url=url,
                          origin=origin)

    real = falkor_mod.migrations()
    monkeypatch.setattr(falkor_mod, "migrations", lambda: tuple(m for m in real if m[0] < "0011"))
    with opened() as st:
        assert not any(n.startswith("0011") for n in st.applied_migrations())
        for cypher in (
            "CREATE (:Tally {key: 'edge|about', n: 1})",
            "CREATE (:ManagedBlock {id: 'alpha#1/AGENTS.md#rules', workspace: 'alpha#1', block: 'AGENTS.md#rules', "
            "path: 'AGENTS.md', name: 'rules', hash: 'ab12', glue: '', created_file: true, flag: ''})",
            "CREATE (:ManagedBlock {id: 'beta#2/AGENTS.md#rules', workspace: 'beta#2', block: 'AGENTS.md#rules', "
            "path: 'AGENTS.md', name: 'rules', hash: 'ff00', glue: '', created_file: false, flag: ''})",
            "CREATE (:Node {id: 'ERR-1', kind: 'event', text: 'the docs deploy failed', status: 'pending'})",
            "CREATE (:Topic {name: 'docs', keywords: ['docs']})",
            "MATCH (n:Node {id: 'ERR-1'}), (t:Topic {name: 'docs'}) CREATE (n)-[:about {score: 2.0}]->(t)",
            "CREATE (:Skill {slug: 'deploy-docs', name: 'Deploy docs', session: 's1', revisions: 1})",
            "MATCH (k:Skill {slug: 'deploy-docs'}), (n:Node {id: 'ERR-1'}) CREATE (k)-[:learned_from]->(n)",
            "CREATE (:Score {id: 'SCORE-1', average: 7.5})",
            "CREATE (:Preference {id: 'PREF-1', key: 'editor', value: '\"vim\"', action: 'set', session: 's1'})",
            "CREATE (:Decision {id: 'dec-1', a: 'ERR-1', b: 'ERR-1', winner: '', status: 'tie'})",
            "MATCH (d:Decision {id: 'dec-1'}), (n:Node {id: 'ERR-1'}) CREATE (d)-[:decision_about]->(n)",
            "CREATE (:Proposal {id: 'prop-0001', number: 1, type: 'promotion', status: 'pending', text: 'r'})",
            "MATCH (q:Proposal {id: 'prop-0001'}), (n:Node {id: 'ERR-1'}) CREATE (q)-[:proposal_about]->(n)",
        ):
            st._execute_raw(cypher, {})
    monkeypatch.setattr(falkor_mod, "migrations", lambda: real)
    with opened() as st:  # migrates
        assert any(n.startswith("0011") for n in st.applied_migrations())
        (block,) = st.run("lc_blocks")
        assert (block["id"], block["hash"]) == ("AGENTS.md#rules", "ab12")  # this workspace's, not beta's
        st.run("lc_block_upsert", rows=[{"id": "AGENTS.md#rules", "path": "AGENTS.md", "name": "rules", "hash": "cd34",
                                         "glue": "", "created_file": True, "flag": "", "at": datetime(2026, 12, 3)}])
        assert [(b["id"], b["hash"]) for b in st.run("lc_blocks")] == [("AGENTS.md#rules", "cd34")]  # the same row
        assert {r["key"]: r["n"] for r in st.run("tly_all")} == {"edge|about": 1}
        assert [r["id"] for r in st.run("memory_topic_nodes", key="topic:docs", limit=5)] == ["ERR-1"]
        assert [r["slug"] for r in st.run("memory_session_skills", id="s1")] == ["deploy-docs"]
        assert [r["key"] for r in st.run("memory_session_prefs", id="s1")] == ["editor"]
        assert st.run("tly_count_learned_from") == [{"n": 1}] and st.run("tly_count_decision_about") == [{"n": 1}]
        assert [d["status"] for d in st.run("lc_decisions")] == ["tie"]
        assert [(q["number"], q["node"]) for q in st.run("lc_proposals", statuses=["pending"])] == [(1, "ERR-1")]
        for label in OLD_TABLES:
            assert st._execute_raw(f"MATCH (n:{label}) RETURN count(n) AS n", {}) == [{"n": 0}]
        assert st._execute_raw("MATCH ()-[r:about_moved]->() RETURN count(r) AS n", {}) == [{"n": 0}]


class _Killed(BaseException):
    """The process dying at a statement: on a team graph every statement before it stays written (no transaction)."""


@pytest.mark.falkordb
@pytest.mark.parametrize("start", ["MATCH (b:ManagedBlock) MATCH", "MATCH (n:Node)-[a:about]",
                                   "MATCH (n:Tally) DETACH", "MATCH (n:Topic) DETACH", "MATCH (n:Proposal) DETACH"])
def test_a_team_graph_migration_cut_short_runs_again_without_twins(tmp_path, monkeypatch, request, start):
    """FalkorDB has no multi-statement transaction: a migration cut short (kill -9, the server gone) leaves the
    statements before the cut written, and the next open runs the migration again from its first statement. Each
    row and edge must still be there once: a twin block row makes the export write the block twice, a twin
    `about` edge counts a node twice in its topic."""
    import kg.store.falkor as falkor_mod
    from kg.store import Store
    from kg.store import falkor_dialect as fd
    from kg.store.backend import parse_url

    url = parse_url(request.getfixturevalue("falkordb_url"))

    def opened():
        return Store.open(tmp_path / "unused", lock_path=tmp_path / "graph.lock", lock_timeout=5, url=url,
                          origin={"origin_workspace": "alpha#1", "origin_agent": "tester"})

    real = falkor_mod.migrations()
    monkeypatch.setattr(falkor_mod, "migrations", lambda: tuple(m for m in real if m[0] < "0011"))
    with opened() as st:
        for cypher in (
            "CREATE (:Tally {key: 'edge|about', n: 1})",
            "CREATE (:ManagedBlock {id: 'alpha#1/AGENTS.md#rules', workspace: 'alpha#1', block: 'AGENTS.md#rules', "
            "path: 'AGENTS.md', name: 'rules', hash: 'ab12', glue: '', created_file: true, flag: ''})",
            "CREATE (:Node {id: 'ERR-1', kind: 'event', text: 'the docs deploy failed', status: 'pending'})",
            "CREATE (:Topic {name: 'docs', keywords: ['docs']})",
            "MATCH (n:Node {id: 'ERR-1'}), (t:Topic {name: 'docs'}) CREATE (n)-[:about {score: 2.0}]->(t)",
            "CREATE (:Proposal {id: 'prop-0001', number: 1, type: 'promotion', status: 'pending', text: 'r'})",
            "MATCH (q:Proposal {id: 'prop-0001'}), (n:Node {id: 'ERR-1'}) CREATE (q)-[:proposal_about]->(n)",
        ):
            st._execute_raw(cypher, {})
    monkeypatch.setattr(falkor_mod, "migrations", lambda: real)
    cut = next(s for s in fd.data_statements("0011_small_tables") if s.startswith(start))  # killed before it
    raw = falkor_mod.FalkorStore._execute_raw

    def dying(self, cypher, params):
        if cypher == cut:
            raise _Killed()
        return raw(self, cypher, params)

    monkeypatch.setattr(falkor_mod.FalkorStore, "_execute_raw", dying)
    with pytest.raises(_Killed):
        with opened():
            pass
    monkeypatch.setattr(falkor_mod.FalkorStore, "_execute_raw", raw)
    with opened() as st:  # migrates again, from its first statement
        assert any(n.startswith("0011") for n in st.applied_migrations())
        keys = [r["key"] for r in st._execute_raw("MATCH (m:Meta) WHERE m.kind <> 'meta' RETURN m.key AS key", {})]
        assert sorted(keys) == ["block:alpha#1/AGENTS.md#rules", "proposal:prop-0001", "tally:edge|about",
                                "topic:docs"]
        assert [(b["id"], b["hash"]) for b in st.run("lc_blocks")] == [("AGENTS.md#rules", "ab12")]
        assert st._execute_raw("MATCH ()-[r:about]->() RETURN count(r) AS n", {}) == [{"n": 1}]
        assert st._execute_raw("MATCH ()-[r:proposal_about]->() RETURN count(r) AS n", {}) == [{"n": 1}]
