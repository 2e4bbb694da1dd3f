"""A checkpoint must not change a row's strings: kuzu 0.11.3 tears a STRING column (kg/store/strings.py).

The probes (plain Kùzu, a table shaped like Meta, then one shaped like Node): a committed row's string SET in place
and checkpointed, then a row made with that column NULL and checkpointed, and the other rows read other strings
(shifted, run together). An empty string, a NULL committed in the column before the SET (not one SET over
since), no CHECKPOINT between the SET and the making, or the NULL set to '' in the making's own
transaction: nothing torn. kg hit it in Meta's `value`: the spans' fingerprint SET in place, then a tally made.

Real Kùzu files, kg's own schema and named queries; Kùzu's own `Database` where a probe shows what it does. Row
counts are ones where kuzu tears deterministically (5, 6, 40 and 200 rows; 100 rows crashes the reader, so no
probe uses it: a crash would take the test run with it)."""

from __future__ import annotations

import sys
from pathlib import Path

import kuzu
import pytest

from kg.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import list_tears  # noqa: E402 - the bench's fresh graph with kg's schema

pytestmark = pytest.mark.embedded_only("the write-ahead log and its CHECKPOINT are Kùzu's")

NODE_STRINGS = ("kind", "entry_type", "text", "details", "action", "category", "priority", "status", "area",
                "source", "pattern_key", "session")


def _pairs(path: Path, query: str) -> dict:
    """A read-only query's two columns as a dict, read after the store was closed (its CHECKPOINT done)."""
    db = kuzu.Database(str(path), read_only=True)
    result = kuzu.Connection(db).execute(query)
    got = {}
    while result.has_next():
        key, value = result.get_next()
        got[key] = value
    db.close()
    return got


def _probe(path: Path, ddl: str, rows: list[dict], steps: list[tuple[str, dict]], read: str) -> dict:
    """Plain Kùzu: the rows made and checkpointed, then each step (a CHECKPOINT between steps), then a
    CHECKPOINT; the rows of `read` (key, then one column) as the reopened file holds them."""
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    conn.execute("CALL force_checkpoint_on_close=false")
    conn.execute(ddl)
    for row in rows:
        conn.execute("CREATE (:T {" + ", ".join(f"{c}: ${c}" for c in row) + "})", row)
    for statement, params in steps:
        conn.execute("CHECKPOINT")
        for one in statement.split(";"):
            conn.execute(one, params)
    conn.execute("CHECKPOINT")
    conn.close()
    db.close()
    return _pairs(path, read)


META = "CREATE NODE TABLE T(key STRING PRIMARY KEY, value STRING, kind STRING DEFAULT 'meta', n INT64)"
SET = ("MATCH (m:T {key: 'm01'}) SET m.value = 'Etc/UTC'", {})


def _meta_rows(n: int) -> list[dict]:
    return [{"key": f"m{i:02d}", "value": f"2026-12-05T16:22:{i:02d}"} for i in range(n)]


def _torn(got: dict, rows: list[dict]) -> list[str]:
    want = {r["key"]: r["value"] for r in rows} | {"m01": "Etc/UTC"}
    return [k for k, v in want.items() if got.get(k) != v]


@pytest.mark.parametrize("n", [5, 6, 40, 200])
def test_kuzu_tears_the_strings_after_a_set_when_a_row_is_made_with_a_null(tmp_path, n):
    """The probe: when kuzu no longer tears, this fails and kg/store/strings.py's FILL may go."""
    rows = _meta_rows(n)
    got = _probe(tmp_path / "g.kuzu", META, rows, [SET, ("CREATE (:T {key: 'new', kind: 'tally', n: 3})", {})],
                 "MATCH (t:T) RETURN t.key, t.value")
    assert len(_torn(got, rows)) >= n - 1


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_kuzu_keeps_the_strings_at_other_row_counts(tmp_path, n):
    rows = _meta_rows(n)
    got = _probe(tmp_path / "g.kuzu", META, rows, [SET, ("CREATE (:T {key: 'new', kind: 'tally', n: 3})", {})],
                 "MATCH (t:T) RETURN t.key, t.value")
    assert _torn(got, rows) == []


@pytest.mark.parametrize(("case", "steps"), [
    ("an empty string", [SET, ("CREATE (:T {key: 'new', value: '', n: 3})", {})]),
    ("a longer string", [SET, ("CREATE (:T {key: 'new', value: $v, n: 3})", {"v": "y" * 100})]),
    ("no checkpoint between", [("MATCH (m:T {key: 'm01'}) SET m.value = 'Etc/UTC';"
                                "CREATE (:T {key: 'new', n: 3})", {})]),
    ("a NULL committed first", [("CREATE (:T {key: 'old', n: 1})", {}), SET, ("CREATE (:T {key: 'new', n: 3})", {})]),
    ("the NULL filled in its transaction", [SET, (
        "BEGIN TRANSACTION;CREATE (:T {key: 'new', n: 3});MATCH (m:T) WHERE m.value IS NULL SET m.value = '';"
        "COMMIT", {})]),
])
def test_kuzu_keeps_the_strings_otherwise(tmp_path, case, steps):
    rows = _meta_rows(40)
    got = _probe(tmp_path / "g.kuzu", META, rows, steps, "MATCH (t:T) RETURN t.key, t.value")
    assert _torn(got, rows) == [], case


@pytest.mark.parametrize(("set_col", "null_col", "null_before", "torn"), [
    ("status", "status", False, True),  # the column SET in place is the one the new node leaves NULL
    ("details", "details", False, True),
    ("status", "details", False, False),  # another column left NULL: nothing torn
    ("details", "details", True, False),  # a node with no details committed before: nothing torn
])
def test_a_table_shaped_like_node_is_exposed_only_in_a_column_set_and_then_left_null(
        tmp_path, set_col, null_col, null_before, torn):
    """Node's strings, 40 nodes (3000 tear the same): what a `kg` write could do to it."""
    ddl = ("CREATE NODE TABLE T(key STRING PRIMARY KEY, " + ", ".join(f"{c} STRING" for c in NODE_STRINGS)
           + ", tags STRING[], pinned BOOLEAN)")
    rows = [{"key": f"n{i:02d}"} | {c: f"{c}-{i}-" + "z" * (i % 7) for c in NODE_STRINGS} for i in range(40)]
    if null_before:
        rows[0][null_col] = None
    new = {"key": "new"} | {c: f"new-{c}" for c in NODE_STRINGS if c != null_col}
    steps = [(f"MATCH (n:T {{key: 'n01'}}) SET n.{set_col} = 'resolved'", {}),
             ("CREATE (:T {" + ", ".join(f"{c}: ${c}" for c in new) + "})", new)]
    got = _probe(tmp_path / "g.kuzu", ddl, rows, steps, f"MATCH (n:T) RETURN n.key, n.{set_col}")
    want = {r["key"]: r[set_col] for r in rows} | {"n01": "resolved"}
    assert ([k for k, v in want.items() if got.get(k) != v] != []) is torn


def _meta_values(path: Path) -> dict:
    return _pairs(path, "MATCH (m:Meta) WHERE m.kind = 'meta' RETURN m.key, m.value")


def _kg_graph(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh graph made by kg's migrations, as `kg init` makes it: (its folder, its path)."""
    folder = tmp_path / "memory" / ".kg"
    folder.mkdir(parents=True)
    return folder, list_tears.fresh(folder)


@pytest.mark.parametrize("made", ["tally", "bulk load"])
@pytest.mark.parametrize("extra", [2, 3, 27])  # Meta rows where kuzu tears (0 or 1 more: it does not)
def test_kg_s_meta_values_survive_a_row_made_after_the_spans_fingerprint(tmp_path, extra, made):
    """kg's own writes in the order that tore Meta's `value` on `kg import`: the spans' fingerprint SET in place
    and checkpointed, then a Meta row made with no value and checkpointed: a tally, or a trail import's proposals,
    decisions and blocks loaded with one COPY (kg/ingest/trail_lifecycle.py). A few more flags vary Meta's rows."""
    from kg.store import bulk

    folder, path = _kg_graph(tmp_path)
    with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
        for i in range(extra):
            st.execute("MERGE (m:Meta {key: $k}) SET m.value = $v", {"k": f"probe:{i}", "v": f"v{i:03d}"})
        st.run("spn_fingerprint_set", value="a")
        st.execute("CHECKPOINT")
        st.run("spn_fingerprint_set", value="2026-12-05T16:22:28.123456+00:00|" + "f" * 40)
        want = {r["key"]: r["value"] for r in st.execute("MATCH (m:Meta) WHERE m.kind = 'meta' "
                                                         "RETURN m.key AS key, m.value AS value")}
        st.execute("CHECKPOINT")
        if made == "tally":
            st.run("tly_add", key="tally:probe", id="probe", d=1)
        else:
            bulk.copy_rows(st, "Meta", [{"key": "decision:1", "kind": "decision", "id": "1"}], scratch=folder,
                           columns=["key", "kind", "id"])
        st.execute("CHECKPOINT")
    assert _meta_values(path) == want


@pytest.mark.parametrize("n", [5, 40])
def test_kuzu_tears_a_column_made_null_then_set_on_every_row(tmp_path, n):
    """A change table's shape: rows made with no verdict, every verdict SET in place later, one SET again, then a
    change made without one: torn too. So a NULL once committed protects nothing; every nullable string kg SETs in
    place (Change's verdict and reason, Node's priority ...) is exposed when a row made later leaves it NULL."""
    rows = [{"key": f"c{i:02d}", "kind": "applied"} for i in range(n)]
    sets = [(f"MATCH (c:T {{key: 'c{i:02d}'}}) SET c.value = 'kept-{i}'", {}) for i in range(n)]
    steps = [(";".join(s for s, _ in sets), {}), ("MATCH (c:T {key: 'c01'}) SET c.value = 'reverted'", {}),
             ("CREATE (:T {key: 'new', kind: 'applied'})", {})]
    got = _probe(tmp_path / "g.kuzu", META, rows, steps, "MATCH (t:T) RETURN t.key, t.value")
    want = {f"c{i:02d}": f"kept-{i}" for i in range(n)} | {"c01": "reverted"}
    assert len([k for k, v in want.items() if got.get(k) != v]) >= n - 1


@pytest.mark.parametrize("n", [5, 6])  # sessions where kuzu tears (7 to 10: it does not)
def test_kg_s_session_summaries_survive_a_session_started_after_others_ended(tmp_path, n):
    """Each session ends with its summary SET in place; the next session was made with no summary (NULL): with a
    CHECKPOINT after each write (a long-lived workspace's log passing its size) kuzu tore the other sessions'
    summaries. A session is made with an empty summary now (memory_session_start, sessions_touch)."""
    from datetime import datetime, timedelta

    folder, path = _kg_graph(tmp_path)
    t0 = datetime(2026, 5, 1, 9)
    with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
        for i in range(n):
            st.run("memory_session_start", id=f"2026-05-01-{i:03d}", at=t0 + timedelta(hours=i), source="test")
            st.execute("CHECKPOINT")
        for i in range(n):
            st.run("memory_session_end", id=f"2026-05-01-{i:03d}", at=t0 + timedelta(hours=i, minutes=30),
                   summary=f"summary of session {i}")
            st.execute("CHECKPOINT")
        st.run("sessions_touch", rows=[{"id": "2026-05-02-001", "at": t0 + timedelta(days=1), "source": "test"}])
        st.execute("CHECKPOINT")
    got = _pairs(path, "MATCH (s:Session) WHERE s.ended_at IS NOT NULL RETURN s.id, s.summary")
    assert got == {f"2026-05-01-{i:03d}": f"summary of session {i}" for i in range(n)}


def test_kg_s_post_blocks_survive_a_change_made_after_others_were_exported(tmp_path):
    """A change is made with no post_block and its export SETs it in place (lc_change_post); the next change made
    with a NULL one tore the others' post blocks at a CHECKPOINT (6 changes, a checkpoint after each write). A change
    is made with an empty post_block now, whatever its caller passes."""
    from datetime import datetime

    folder, path = _kg_graph(tmp_path)
    at = datetime(2026, 5, 1, 9)

    def make(cid: str) -> None:
        st.run("lc_change_create", id=cid, kind="promotion", target="TOOLS.md", block="kaizen-kg", target_kind="tool",
               text="a rule", hypothesis="h", prior_block=None, prior_exists=False, post_block=None,
               pattern_key="k", at=at, next_check=at, evidence=["applied"], proposal=None, source="test")
        st.execute("CHECKPOINT")

    with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
        for i in range(6):
            make(f"CHG-{i:03d}")
        for i in range(6):
            st.run("lc_change_post", rows=[{"id": f"CHG-{i:03d}", "post": f"- rule number {i} for the tools file"}])
            st.execute("CHECKPOINT")
        make("CHG-new")
    got = _pairs(path, "MATCH (c:Change) WHERE c.id <> 'CHG-new' RETURN c.id, c.post_block")
    assert got == {f"CHG-{i:03d}": f"- rule number {i} for the tools file" for i in range(6)}


@pytest.mark.parametrize("n", [5, 6])  # events where kuzu tears
def test_kg_s_pattern_keys_survive_a_lesson_added_after_events_joined_patterns(tmp_path, n):
    """n keyed events (a checkpoint after each write, as a long-lived workspace's log gets), each given its
    pattern's key in place as linking does (pattern_event_set_key), then a lesson made by `kg node add`'s query
    with no key (NULL): the events' keys come back shifted and run together after the CHECKPOINT, in a graph where
    no node made with a NULL key is left (every event keyed, nothing promoted or added by hand before). A node is
    made with an empty key now, read back as None."""
    from datetime import datetime, timedelta

    from kg.ingest.apply import node_params

    folder, path = _kg_graph(tmp_path)
    t0 = datetime(2026, 5, 1, 9)
    with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
        for i in range(n):
            st.run("node_create", **node_params(f"EVT-{i:03d}", "event", f"event number {i}", t0 + timedelta(hours=i),
                                                entry_type="error", status="pending", pattern_key=f"key-{i}"))
            st.execute("CHECKPOINT")
        for i in range(n):
            st.run("pattern_event_set_key", id=f"EVT-{i:03d}", key=f"pattern-of-{i % 2}-" + "k" * i, at=t0)
            st.execute("CHECKPOINT")
        st.run("node_create", **node_params("LSN-001", "lesson", "a lesson learned", t0 + timedelta(days=40)))
        st.execute("CHECKPOINT")
    got = _pairs(path, "MATCH (n:Node) WHERE n.kind = 'event' RETURN n.id, n.pattern_key")
    assert got == {f"EVT-{i:03d}": f"pattern-of-{i % 2}-" + "k" * i for i in range(n)}


def test_a_node_without_a_key_reads_back_none_however_it_is_returned(tmp_path):
    """The '' a node is made with in place of a NULL key is never seen: not as a column read by its name, not in a
    whole node, not in a whole node after an OPTIONAL MATCH's empty first row."""
    from datetime import datetime

    from kg.ingest.apply import node_params

    folder, path = _kg_graph(tmp_path)
    with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10) as st:
        st.run("node_create", **node_params("LSN-001", "lesson", "a lesson learned", datetime(2026, 5, 1, 9)))
        assert st.execute("MATCH (n:Node {id: 'LSN-001'}) RETURN n.pattern_key AS key") == [{"key": None}]
        assert st.execute("MATCH (n:Node {id: 'LSN-001'}) RETURN n")[0]["n"]["pattern_key"] is None
        rows = st.execute("UNWIND ['NONE-1', 'LSN-001'] AS i OPTIONAL MATCH (n:Node {id: i}) RETURN i, n")
        assert rows[0]["n"] is None and rows[1]["n"]["pattern_key"] is None
