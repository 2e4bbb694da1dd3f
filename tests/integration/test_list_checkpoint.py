"""A checkpoint must not change a row's lists, in any table where kg writes lists again (kg/store/remake.py).

kuzu 0.11.3's CHECKPOINT of a list SET in place on a committed row, with a row made in the same checkpoint's span,
gave the new row other rows' items (as it did to PatternOcc: tests/integration/test_aggregate_checkpoint.py). kg
SET the change table's evidence (a verification, a revert, a pause, a human's confirmation) and Meta's skill
triggers, tools and topic keywords in place; it now makes such a row anew. The history below is a random one
(bench/list_tears.py's kind) that tore a change's evidence, cut down to the statements it needs.

Real Kùzu files, kg's own schema and named queries; Kùzu's own `Database` only where a probe shows what it does."""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path

import pytest

from kg.store import Store, _named_queries

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import list_tears  # noqa: E402 - the bench's plain-Kùzu session, shared

pytestmark = pytest.mark.embedded_only("the write-ahead log and its CHECKPOINT are Kùzu's")

NEW = "CREATE (:Change {id: $id, status: 'applied', evidence: $ev})"
SET_IN_PLACE = "MATCH (c:Change {id: $id}) SET c.evidence = $ev"  # kg's form before (lc_change_pause and others)
AT = datetime(2026, 11, 1, 10)

# (checkpoint at the session's end, [(made or written again, change, its evidence)]), sessions in order
HISTORY = [
    (False, [
        ('new', '01', []),
        ('new', '02', []),
        ('new', '03', []),
        ('set', '02', ['w241229', 'w12870w12870w12870']),
        ('new', '04', ['w59257w59257w59257', 'w99', 'w42']),
        ('new', '05', []),
        ('new', '06', []),
        ('new', '07', ['w1861', 'w52668', 'w19991', 'w71w71w71', 'w19464']),
        ('set', '03', ['w7w7w7', 'w8', 'w44170']),
        ('new', '08', ['w7', 'w7374', 'w7227538w7227538w7227538',
         'w9064151w9064151w9064151', 'w2w2w2', 'w306', 'w7050782']),
    ]),
    (True, [
        ('set', '06', ['w492w492w492', 'w529', 'w1', 'w2263326', 'w92616w92616w92616', 'w250226']),
        ('new', '10', ['w96', 'w89', 'w769']),
        ('new', '11', []),
        ('set', '11', ['w61w61w61', 'w637', 'w3793132']),
        ('set', '01', ['w36', 'w6171280', 'w4453384w4453384w4453384', 'w59w59w59', 'w0']),
        ('new', '12', ['w73', 'w3952481', 'w797']),
    ]),
    (True, [
        ('set', '03', ['w284891w284891w284891', 'w731189', 'w7', 'w23501', 'w7', 'w0']),
        ('new', '15', ['w43w43w43']),
        ('new', '16', ['w872']),
        ('new', '17', ['w5641', 'w69451w69451w69451', 'w771747', 'w5213', 'w6968']),
        ('new', '18', []),
        ('set', '18', ['w10012', 'w5', 'w886240', 'w967', 'w75061w75061w75061', 'w3220850']),
        ('set', '05', ['w5w5w5', 'w17420']),
    ]),
    (True, [
        ('set', '05', ['w56', 'w8761311w8761311w8761311']),
        ('new', '19', []),
        ('new', '20', ['w36', 'w7266069', 'w665096', 'w3w3w3', 'w83']),
        ('set', '19', ['w697560', 'w76696', 'w444w444w444',
         'w47w47w47', 'w7267489', 'w85640w85640w85640', 'w6463633']),
        ('new', '21', ['w4170', 'w653', 'w3w3w3', 'w5915', 'w3258w3258w3258', 'w1669263w1669263w1669263']),
    ]),
    (False, [
        ('set', '06', []),
        ('new', '23', ['w4513w4513w4513']),
    ]),
]


def _fresh(tmp_path: Path) -> Path:
    folder = tmp_path / "memory" / ".kg"
    folder.mkdir(parents=True)
    return list_tears.fresh(folder)


def _kuzu(path: Path, statements: list[tuple[str, dict]], checkpoint: bool) -> list:
    """Plain Kùzu, closed without a checkpoint as kg closes (unless asked); returns every change's evidence."""
    return list_tears.session(path, statements, checkpoint, "MATCH (c:Change) RETURN c.id, c.evidence")


def _want() -> dict[str, list[str]]:
    return {f"chg-{k}": items for _, steps in HISTORY for _, k, items in steps}


def test_kuzu_tears_a_change_s_evidence_set_in_place(tmp_path):
    """The probe: the history in kg's form before tears (a change made in the last span reads another's items);
    when kuzu no longer does, this fails and the remaking may go."""
    path = _fresh(tmp_path)
    for checkpoint, steps in HISTORY:
        _kuzu(path, [(NEW if op == "new" else SET_IN_PLACE, {"id": f"chg-{k}", "ev": items})
                     for op, k, items in steps], checkpoint)
    got = dict(_kuzu(path, [], checkpoint=True))
    assert got["chg-23"] != _want()["chg-23"]


def test_kg_s_writes_of_a_change_s_evidence_survive_the_checkpoint(tmp_path):
    """The same history through kg's store: a change written again by its named write (`lc_change_pause`, as a
    withdrawal by hand writes it), each session a writer that closes without a checkpoint, as kg's do."""
    path = _fresh(tmp_path)
    for checkpoint, steps in HISTORY:
        with Store.open(path, lock_path=path.with_name("graph.lock"), lock_timeout=10) as st:
            for op, k, items in steps:
                if op == "new":
                    st.execute(NEW, {"id": f"chg-{k}", "ev": items})
                else:
                    st.run("lc_change_pause", rows=[{"id": f"chg-{k}", "evidence": items, "next_check": AT}])
            if checkpoint:
                st.execute("CHECKPOINT")
    assert dict(_kuzu(path, [], checkpoint=True)) == _want()


def _row(st: Store, q: str, params: dict) -> dict:
    return {k: v for k, v in st.execute(q, params)[0]["n"].items() if k != "_label"}


def _edges(st: Store, q: str, params: dict) -> list:
    return sorted((r["other"], r["t"], r["props"]) for r in st.execute(q, params))


def test_a_row_made_anew_keeps_its_columns_and_edges(tmp_path):
    """A change with every edge a change has, a skill with its sources, a topic with more edges than are made one
    by one: each written again with other lists holds the same columns and edges (only its lists differ, and its
    place in the table); written again with the lists it has, it is left alone."""
    path = _fresh(tmp_path)
    with Store.open(path, lock_path=path.with_name("graph.lock"), lock_timeout=10) as st:
        for i in range(40):
            st.execute("CREATE (:Node {id: $id, kind: 'event', text: 'x'})", {"id": f"E{i}"})
        st.run("lc_change_create", id="chg-1", kind="promotion", target="TOOLS.md", block="kaizen-kg",
               target_kind="tool", text="use ssh", hypothesis="h", prior_block=None, prior_exists=False,
               post_block="- use ssh\\n", pattern_key="git.push", at=AT, next_check=AT, evidence=["applied"],
               proposal=3, source="auto")
        for rel, node in (("change_applies", "E0"), ("change_pattern", "E1")):
            st.execute(f"MATCH (c:Change {{id: 'chg-1'}}), (n:Node {{id: $n}}) "
                       f"CREATE (c)-[:{rel} {{created_at: $at}}]->(n)", {"n": node, "at": AT})
        st.execute("CREATE (:Meta {key: 'proposal:p1', kind: 'proposal', id: 'p1', status: 'pending'})")
        st.execute("MATCH (q:Meta {key: 'proposal:p1'}), (c:Change {id: 'chg-1'}) "
                   "CREATE (q)-[:proposal_change {created_at: $at}]->(c)", {"at": AT})
        skill = {"key": "skill:deploy", "slug": "deploy", "skill_name": "Deploy", "description": "d", "created": AT,
                 "updated": AT, "source": "manual", "path": "memory/skills/deploy.md", "session": "s1"}
        st.run("memory_skill_upsert", **skill, triggers=["deploy"], tools=["make"])
        st.run("memory_skill_link", key="skill:deploy", ids=["E2", "E3"], at=AT)
        st.run("memory_topic_upsert", rows=[{"name": "infra", "keywords": ["dns"]}], at=AT)
        st.run("memory_topic_links", rows=[{"id": f"E{i}", "topic": "infra", "score": i / 7} for i in range(40)], at=AT)

        change = "MATCH (n:Change {id: $k}) RETURN n"
        change_edges = ("MATCH (n:Change {id: $k})-[r]-(m) RETURN coalesce(m.id, m.key) AS other, label(r) AS t, "
                        "r.created_at AS props")
        meta = "MATCH (n:Meta {key: $k}) RETURN n"
        meta_edges = ("MATCH (n:Meta {key: $k})-[r]-(m:Node) RETURN m.id AS other, label(r) AS t, "
                      "CAST(r.created_at AS STRING) + ' ' + CAST(coalesce(r.score, -1.0) AS STRING) AS props")
        before = [(_row(st, change, {"k": "chg-1"}), _edges(st, change_edges, {"k": "chg-1"})),
                  (_row(st, meta, {"k": "skill:deploy"}), _edges(st, meta_edges, {"k": "skill:deploy"})),
                  (_row(st, meta, {"k": "topic:infra"}), _edges(st, meta_edges, {"k": "topic:infra"}))]
        assert len(before[0][1]) == 3 and len(before[1][1]) == 2 and len(before[2][1]) == 40

        st.run("lc_change_pause", rows=[{"id": "chg-1", "evidence": ["applied", "paused"], "next_check": AT}])
        st.run("memory_skill_upsert", **{**skill, "updated": AT}, triggers=["deploy", "ship"], tools=["make"])
        st.run("memory_topic_upsert", rows=[{"name": "infra", "keywords": ["dns", "vpn"]}], at=AT)
        after = [(_row(st, change, {"k": "chg-1"}), _edges(st, change_edges, {"k": "chg-1"})),
                 (_row(st, meta, {"k": "skill:deploy"}), _edges(st, meta_edges, {"k": "skill:deploy"})),
                 (_row(st, meta, {"k": "topic:infra"}), _edges(st, meta_edges, {"k": "topic:infra"}))]
        lists = [{"evidence": ["applied", "paused"]}, {"triggers": ["deploy", "ship"], "revisions": 2},
                 {"keywords": ["dns", "vpn"]}]
        for (row, edges), (row2, edges2), changed in zip(before, after, lists, strict=True):
            assert row2["_id"] != row["_id"]  # made anew
            assert {k: v for k, v in row2.items() if k != "_id"} == {**{k: v for k, v in row.items() if k != "_id"},
                                                                      **changed}
            assert edges2 == edges

        st.run("memory_topic_upsert", rows=[{"name": "infra", "keywords": ["dns", "vpn"]}], at=AT)
        assert _row(st, meta, {"k": "topic:infra"})["_id"] == after[2][0]["_id"]  # the same lists: untouched


def test_no_embedded_write_sets_a_list_in_place():
    """Every named query kg runs on Kùzu that SETs a column of a list type is refused here: such a write goes
    through kg/store/remake.py (a query returning `lst_` columns) or makes its row whole."""
    path_types = {}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.kuzu"
        with Store.open(path, lock_path=Path(tmp) / "graph.lock", lock_timeout=10) as st:
            for t in st.execute("CALL show_tables() RETURN name, type"):
                if t["type"] == "NODE":
                    info = st.execute(f"CALL table_info('{t['name']}') RETURN *")
                    path_types[t["name"]] = {r["name"] for r in info if r["type"].endswith("]")}
    assert path_types["Change"] == {"evidence"} and {"keywords", "triggers", "tools"} <= path_types["Meta"]
    offenders = []
    for name, q in _named_queries(None).items():
        if "@" in name:
            continue  # another backend's variant
        labels = dict(re.findall(r"\((\w+):(\w+)", q.text))
        for clause in re.findall(r"\bSET\b(.*?)(?=\b(?:MATCH|WITH|RETURN|UNWIND|MERGE|CREATE|WHERE|ON|DELETE)\b|$)",
                                 q.text, re.S):
            for var, col in re.findall(r"\b(\w+)\.(\w+)\s*=(?!=)", clause):
                if col in path_types.get(labels.get(var, ""), ()):
                    offenders.append(f"{name}: {var}.{col}")
    assert offenders == []


def test_kuzu_looks_up_a_list_of_keys_wrongly_for_a_row_made_in_the_transaction(tmp_path):
    """Why the changes' and proposals' lookups by many keys go by UNWIND (`lc_change_due_clear`,
    `lc_proposals_obsolete`, `lc_verification_open`): in kuzu 0.11.3 `WHERE c.id IN $ids` finds a row made in the
    open transaction (as a change made anew is) at the row before it. When kuzu no longer does, this fails."""
    path = _fresh(tmp_path)
    made = [(NEW, {"id": f"chg-{i}", "ev": ["x"]}) for i in range(3)]
    _kuzu(path, made, checkpoint=False)
    _kuzu(path, [("BEGIN TRANSACTION", {}), (NEW, {"id": "chg-new", "ev": ["x"]}),
                 ("MATCH (c:Change) WHERE c.id IN $ids SET c.status = 'hit'", {"ids": ["chg-new"]}),
                 ("COMMIT", {})], checkpoint=False)
    import kuzu

    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    try:
        result = conn.execute("MATCH (c:Change) WHERE c.status = 'hit' RETURN c.id")
        hit = [result.get_next()[0] for _ in range(result.get_num_tuples())]
    finally:
        conn.close()
        db.close()
    # kuzu 0.11.3 finds the row before it (chg-2) in nearly every run; one CI run (ci62) found chg-new: the bug
    # does not show every time, so the probe allows both, and kg's own lookups below must be right either way
    assert hit in (["chg-2"], ["chg-new"])
    with Store.open(path, lock_path=path.with_name("graph.lock"), lock_timeout=10) as st, st.transaction():
        st.run("lc_change_pause", rows=[{"id": "chg-1", "evidence": ["x", "paused"], "next_check": AT}])
        st.run("lc_change_due_set", rows=[{"id": "chg-0", "due_since": AT}, {"id": "chg-1", "due_since": AT}])
        st.run("lc_change_due_clear", ids=["chg-1"])
    with Store.open(path, lock_path=path.with_name("graph.lock"), lock_timeout=10) as st:
        due = {r["id"]: r["due"] for r in st.execute("MATCH (c:Change) RETURN c.id AS id, c.due_since AS due")}
    assert due["chg-1"] is None and due["chg-0"] == AT


def _kg(root: Path, *args: str, code: int = 0) -> str:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_NOW", "KG_SESSION")}
    done = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(root), *args], capture_output=True,
                          text=True, timeout=300, env={**env, "KG_SERVER": "0"})
    assert done.returncode == code, done.stdout + done.stderr
    return done.stdout


def test_doctor_tells_a_torn_row_and_clears_what_it_can(tmp_path):
    """What such a checkpoint left (written here by plain Kùzu, as the tear writes it): a tally row holding a
    topic's keywords, a change's evidence holding a line of months before it. `kg doctor --dry-run` names both;
    `kg doctor` clears the tally's list and says the change's trail is not its own and what to do."""
    import kg

    root = tmp_path / "ws"
    kg.init_workspace(root)
    _kg(root, "log", "error", "npm failed", "--now", "2026-11-02T10:00:00", "--wait")
    graph = root / "memory" / ".kg" / "graph.kuzu"
    assert "lists: no small-table row holds another kind's list" in _kg(root, "doctor", "--dry-run")
    _kuzu(graph, [("MATCH (m:Meta) WHERE m.kind = 'tally' WITH m LIMIT 1 SET m.keywords = ['dns', 'vpn']", {}),
                  ("CREATE (:Change {id: 'chg-1', applied_at: $at, evidence: ['2026-11-01 applied (auto)', "
                   "'2026-09-03 confirmed: ratio 0.2']})", {"at": AT})], checkpoint=True)
    looked = _kg(root, "doctor", "--dry-run", code=1)  # (an error found: exit 1)
    assert "1 small-table row(s) (tally:" in looked and "run `kg doctor` to clear them" in looked
    assert "1 change(s) (chg-1) hold evidence dated before they were applied" in looked
    repaired = _kg(root, "doctor", code=1)
    assert "cleared 1" in repaired and "1 change(s) (chg-1)" in repaired
    again = _kg(root, "doctor", "--dry-run", code=1)
    assert "small-table row(s)" not in again and "1 change(s) (chg-1)" in again
