"""Issues 17 and 22: a pattern is found by its Pattern-Key from the side index (kg/store/sidekeys.py), so a key no
pattern has is known absent without reading the node table (`pattern_get` scans it: 112 ms and +17 MB resident at
100k entries, on every new key an agent logs). The side index's answer must equal the graph's for every key, across
merges, splits, a writer's open transaction, and a side file of the previous form. Real Kùzu, real SQLite."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from kg.graph import patterns
from kg.ingest.apply import PATTERN_KEY_META, node_params, pattern_for_key
from kg.memory import search
from kg.store import Store, sidefile, sideindex
from kg.store.sidekeys import pattern_ids

pytestmark = pytest.mark.embedded_only("the side index is the embedded store's; a team graph indexes its keys")

NOW = "2026-02-01T12:00"


def _log(ws, items: list[tuple[str, str | None]], day: int = 1) -> list[str]:
    out = []
    with ws:
        for i, (text, key) in enumerate(items):
            e = ws.log("error", text, now=f"2026-01-{day:02d}T10:{i % 60:02d}", session=f"2026-01-{day:02d}-001",
                       pattern_key=key, link=False)
            out.append(e.id)
    return out


def _graph_keys(st) -> dict[str, list[str]]:
    """Every pattern's key and the patterns holding it, read from the graph itself."""
    out: dict[str, list[str]] = {}
    for r in st.execute("MATCH (p:Node) WHERE p.kind = 'pattern' RETURN p.id AS id, p.pattern_key AS key"):
        out.setdefault(r["key"], []).append(r["id"])
    return {k: sorted(v) for k, v in out.items()}


def _scanned(st, key: str) -> str | None:
    """`pattern_for_key`'s answer as the scan gives it (the path before the side index)."""
    for row in st.run("pattern_get", ref=key):
        if row["key"] == key:
            return row["merged_into"] or row["id"]
    return None


class _Calls:
    """The named queries a block runs (a spy on the real store, which still runs each)."""

    def __enter__(self) -> Counter:
        self.calls: Counter[str] = Counter()
        self.run = Store.run
        calls, run = self.calls, self.run

        def counted(store, name, /, **params):
            calls[name] += 1
            return run(store, name, **params)

        Store.run = counted
        return self.calls

    def __exit__(self, *exc) -> None:
        Store.run = self.run


def _forget_remembered(st, keys) -> None:
    for key in keys:
        st.execute("MATCH (m:Meta {key: $k}) DELETE m", {"k": PATTERN_KEY_META + key})


def test_a_new_key_and_a_key_not_remembered_are_found_without_reading_the_node_table(ws):
    _log(ws, [("docker build timed out", "docker.build"), ("git push was rejected", "git.push"),
              ("docker build timed out again", "docker.build")])
    with ws.store() as st:
        _forget_remembered(st, ["git.push"])  # as an import leaves an imported pattern: not remembered in Meta
    with _Calls() as calls:
        ids = _log(ws, [("npm lock file conflict", "npm.lock"), ("git push was rejected again", "git.push")], day=2)
    assert calls["pattern_get"] == 0, sorted(calls.items())
    with ws.store() as st:
        keys = _graph_keys(st)
        assert len(keys["npm.lock"]) == 1 and len(keys["git.push"]) == 1  # no second pattern for a known key
        members = {r["id"] for r in st.run("pattern_members", id=keys["git.push"][0])}
        assert ids[1] in members and len(members) == 2


def test_the_side_index_names_the_graphs_patterns_for_every_key_across_merges_and_splits(ws):
    ids = _log(ws, [(f"{tool} {what} failed on step {i}", f"{tool}.{what}")
                    for i, (tool, what) in enumerate([("docker", "build"), ("git", "push"), ("npm", "lock"),
                                                      ("docker", "build"), ("pytest", "fixture"), ("git", "push"),
                                                      ("npm", "lock"), ("kubectl", "rollout")])])
    with ws.store() as st:
        pid = {k: v[0] for k, v in _graph_keys(st).items()}
    patterns.merge(ws, pid["git.push"], pid["npm.lock"], now=NOW)  # npm.lock's pattern is a tombstone now
    patterns.split(ws, pid["docker.build"], [ids[3]], key="docker.cache", now=NOW)
    _log(ws, [("npm lock file again", "npm.lock"), ("docker cache again", "docker.cache"),
              ("helm chart failed", "helm.chart")], day=3)
    with ws.store() as st:
        graph = _graph_keys(st)
        assert len(graph) == 7 and len(graph["npm.lock"]) == 1  # the merged key still names the tombstone
        _forget_remembered(st, graph)
        for key in [*graph, "absent.key", "docker", "pat-20260101-001"]:
            assert pattern_ids(st, key) == graph.get(key, []), key
            assert pattern_for_key(st, key) == _scanned(st, key), key
        assert pattern_for_key(st, "npm.lock") == pid["git.push"]  # a merged key finds the pattern it went into
    with ws.reading() as st:  # a one-off reader: the file in step, read-only
        assert all(pattern_ids(st, key) == graph[key] for key in graph) and pattern_ids(st, "absent.key") == []
        with _Calls() as calls:
            assert search.patterns_named(st, ["npm.lock", "helm.chart", "absent.key"]) == (
                pid["git.push"], graph["helm.chart"][0])
        assert calls["pattern_get"] == 0


def test_a_pattern_made_in_the_writers_open_transaction_is_found_by_its_key(ws):
    _log(ws, [("docker build timed out", "docker.build")])
    with ws.store() as st:
        with st.transaction():
            st.run("node_create", **node_params("pat-20260201-900", "pattern", "a pattern made by hand",
                                                __import__("datetime").datetime(2026, 2, 1), pattern_key="hand.made"))
            assert pattern_ids(st, "hand.made") == ["pat-20260201-900"]
            assert pattern_for_key(st, "hand.made") == "pat-20260201-900"
        assert pattern_ids(st, "hand.made") == ["pat-20260201-900"]  # committed (and synced or in the tail)
    with ws.reading() as st:
        assert pattern_ids(st, "hand.made") == ["pat-20260201-900"]


def test_a_side_file_of_the_previous_form_gets_its_keys_in_place_not_rebuilt(ws):
    _log(ws, [("docker build timed out", "docker.build"), ("git push was rejected", "git.push"),
              ("a note without a key", None)])
    path = sideindex.path_of(ws.graph_path)
    with sqlite3.connect(path) as db:  # as kg with side file version 6 left it (an older kg's rebuild: stale rows)
        db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (sidefile.version("6"),))
        db.execute("DELETE FROM pkey")
        db.execute("INSERT INTO pkey VALUES (0, 'stale.key')")
        fts_before = db.execute("SELECT count(*) FROM fts").fetchone()[0]
    with ws.reading() as st:  # a one-off reader does not write the file: it cannot say, and the graph answers
        assert pattern_ids(st, "docker.build") is None
    with ws.store() as st:
        assert sideindex.sync(st) == "in step"  # brought to this form in place: nothing to add, nothing rebuilt
        graph = _graph_keys(st)
        assert all(pattern_ids(st, k) == v for k, v in graph.items()) and pattern_ids(st, "stale.key") == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] == sidefile.version()
        assert db.execute("SELECT count(*) FROM pkey").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM fts").fetchone()[0] == fts_before
        assert _node_keys(db) == {"docker build timed out": "docker.build", "git push was rejected": "git.push"}


def _node_keys(db) -> dict[str, str]:
    """The events' Pattern-Keys the side file keeps (`nodekey`), by text."""
    return dict(db.execute("SELECT n.text, k.key FROM nodekey k JOIN node n ON n.pos = k.pos "
                           "WHERE n.kind = 'event'").fetchall())


def test_a_side_file_of_version_7_gets_its_events_keys_in_place(ws):
    """Version 8 keeps each node's Pattern-Key (`nodekey`: `kg doctor` restores an event into its pattern by it). A
    file of version 7, or one an older kg rebuilt as its own 7 (leaving this kg's key rows where they were), is
    brought to 8 in place from one read of the graph's keys: the nodes are not rebuilt."""
    _log(ws, [("docker build timed out", "docker.build"), ("a note without a key", None)])
    path = sideindex.path_of(ws.graph_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (sidefile.version("7"),))
        keyless = db.execute("SELECT pos FROM node WHERE text = 'a note without a key'").fetchone()[0]
        db.execute("DELETE FROM nodekey")
        db.execute("INSERT INTO nodekey VALUES (?, 'left.by.a.rebuild')", (keyless,))
        fts_before = db.execute("SELECT count(*) FROM fts").fetchone()[0]
    with ws.store() as st:
        assert sideindex.sync(st) == "in step"
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] == sidefile.version()
        whole = db.execute("SELECT n.kind, n.text, k.key FROM nodekey k JOIN node n ON n.pos = k.pos").fetchall()
        # the event's and its pattern's keys; the stale row at the keyless note's position gone
        assert sorted(whole) == [("event", "docker build timed out", "docker.build"),
                                 ("pattern", "docker build timed out", "docker.build")], whole
        assert db.execute("SELECT count(*) FROM fts").fetchone()[0] == fts_before


def test_an_events_key_follows_it_into_and_out_of_a_pattern(ws):
    """An event's key changes after it is made (it joins a pattern matched by its text; a split takes it out):
    the side file's key is the graph's after each, read again by key (`pattern_event_set_key` names its event),
    and `kg doctor` finds none that differ."""
    from kg.doctor import doctor

    ids = _log(ws, [("docker build timed out", "docker.build"), ("docker build timed out", None)])
    path = sideindex.path_of(ws.graph_path)
    with ws.store() as st:
        st.run("pattern_event_set_key", id=ids[1], key="docker.build", at=__import__("datetime").datetime(2026, 1, 2))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM nodekey k JOIN node n ON n.pos = k.pos WHERE n.id = ?",
                          (ids[1],)).fetchone()[0] == 1
        assert db.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()[0] == "ok"  # not stale
    with ws.store() as st:
        st.run("pattern_event_set_key", id=ids[0], key=None, at=__import__("datetime").datetime(2026, 1, 2))
    with sqlite3.connect(path) as db:
        keys = dict(db.execute("SELECT n.id, k.key FROM nodekey k JOIN node n ON n.pos = k.pos").fetchall())
    assert keys.get(ids[1]) == "docker.build" and ids[0] not in keys
    check = {c.name: c for c in doctor(ws, dry_run=True).checks}["search index"]
    assert check.status == "ok", check


@pytest.mark.parametrize("damage", ["deleted", "renamed"])
def test_doctor_finds_a_pattern_key_row_lost_by_hand_and_rebuilds_it(ws, damage):
    """The file is trusted for which keys exist: a `pkey` row deleted (or changed) by hand made a known key look
    absent, and the next log of it made a second pattern. `kg doctor` reads the rows back against the graph's
    patterns and rebuilds; no other check of the file notices (its stamp, counts and sample are unchanged)."""
    from kg.doctor import doctor

    _log(ws, [("docker build timed out", "docker.build"), ("git push was rejected", "git.push"),
              ("docker build timed out again", "docker.build")])
    with ws.reading() as st:
        before = _graph_keys(st)
    with sqlite3.connect(sideindex.path_of(ws.graph_path)) as db:
        if damage == "deleted":
            db.execute("DELETE FROM pkey WHERE key = 'docker.build'")
        else:
            db.execute("UPDATE pkey SET key = 'docker.built' WHERE key = 'docker.build'")
    with ws.reading() as st:
        assert sideindex.status(st)[0]  # the stamp and the sample still say the file is whole
    check = {c.name: c for c in doctor(ws, dry_run=True).checks}["search index"]
    assert check.status == "warning" and "docker.buil" in check.detail and "Pattern-Key" in check.detail
    check = {c.name: c for c in doctor(ws).checks}["search index"]
    assert check.status == "repaired" and "rebuilt" in check.detail
    with ws.store() as st:
        assert pattern_ids(st, "docker.build") == before["docker.build"]
    _log(ws, [("docker build timed out once more", "docker.build")], day=2)
    with ws.reading() as st:
        assert _graph_keys(st) == before  # the same pattern took it: no second one
    assert {c.name: c for c in doctor(ws, dry_run=True).checks}["search index"].status == "ok"


@pytest.mark.parametrize("form", ["7", "6", "5"])
def test_a_side_file_of_an_older_form_still_gives_its_nodes_back(ws, form):
    """`kg doctor --repair` reads the side file of a graph it cannot open (kg/ingest/recover.py `nodes_of`): one an
    older kg wrote lacks `nodekey` (6), `pkey` too (5), or holds a `nodekey` an older kg's rebuild left stale (7 on
    its stamp). Each still gives every node back (a query of tables it lacks returned none); the keys it cannot vouch
    for are not read."""
    from kg.ingest.recover import nodes_of

    _log(ws, [("docker build timed out", "docker.build"), ("a note without a key", None)])
    path = sideindex.path_of(ws.graph_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (sidefile.version(form),))
        if form in ("6", "5"):
            db.execute("DROP TABLE nodekey")
        if form == "5":
            db.execute("DROP TABLE pkey")
    nodes = {(n["kind"], n["text"]): n for n in nodes_of(path)}
    assert {("event", "docker build timed out"), ("event", "a note without a key")} <= set(nodes), nodes
    assert nodes[("event", "docker build timed out")]["pattern_key"] is None  # an event's: only a current nodekey
    assert nodes[("pattern", "docker build timed out")]["pattern_key"] == (None if form == "5" else "docker.build")
