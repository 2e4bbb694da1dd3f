"""The analyst's view on a real Kùzu workspace: snapshots that never lock the agent out, the networkx graph
with every property, every export format read back, and the Cypher export replayed into an empty graph."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import pytest

import kg
from kg import analysis as ka
from kg.analysis import export as ke
from kg.analysis import snapshot

NOW = "2026-11-30T18:00:00"


def kg_command() -> list[str]:
    """The installed `kg` console script next to this interpreter (what an agent runs)."""
    script = Path(sys.executable).with_name("kg")
    found = str(script) if script.exists() else shutil.which("kg")
    assert found, "the kg console script is not installed"
    return [found]


def _add_edge(ws, a, b, t, now):
    try:
        ws.edge_add(a, b, t, now=now)
    except kg.UsageError:  # auto-linking may have made it already
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A small history, built once: a recurring error pattern, a lesson and a principle drawn from it, a
    contradiction, an orphan, and text that is hard to escape."""
    ws = kg.init_workspace(tmp_path_factory.mktemp("history") / "ws")
    ids = {}
    with ws:
        for i, day in enumerate((1, 3, 8, 15)):
            r = ws.log("error", f"git push failed: auth not configured ({i})", area="tooling",
                       pattern_key="git.push.auth", session=f"s{i}", now=f"2026-11-{day:02d}T10:00:00",
                       details='line one\nline two: it\'s "quoted" \\ back; <xml> & #hash', files=["a.py", "中文.md"],
                       wait=True)  # applied before it answers: the pattern's id is in the answer
            ids.setdefault("errors", []).append(r.id)
        ids["pattern"] = r.pattern["id"]
        ids["other"] = ws.log("error", "npm ci failed: lockfile out of sync", area="build",
                              now="2026-11-20T09:00:00").id
        ids["lesson"] = ws.node_add("lesson", "configure git credentials before pushing", now="2026-11-09T12:00")["id"]
        ids["principle"] = ws.node_add("principle", "set up auth before network operations",
                                       now="2026-11-10T12:00")["id"]
        ids["rival"] = ws.node_add("principle", "push first, configure later", now="2026-11-11T12:00")["id"]
        ids["orphan"] = ws.node_add("knowledge", "用中文记录的知识 ✅", now="2026-11-12T12:00")["id"]
        _add_edge(ws, ids["lesson"], ids["errors"][0], "caused_by", "2026-11-09T12:00")
        _add_edge(ws, ids["principle"], ids["lesson"], "derived_from", "2026-11-10T12:00")
        _add_edge(ws, ids["principle"], ids["pattern"], "supports", "2026-11-10T12:00")
        _add_edge(ws, ids["rival"], ids["principle"], "contradicts", "2026-11-11T12:00")
    return ws.root, ids


@pytest.fixture
def ws(built, tmp_path):
    """A private copy of the built workspace (tests may write to it)."""
    root, _ = built
    shutil.copytree(root, tmp_path / "ws")
    return kg.open_workspace(tmp_path / "ws")


@pytest.fixture
def history(built):
    return built[1]


# -- snapshots -----------------------------------------------------------------------------------------------
def test_snapshot_is_a_complete_private_copy(ws, history):
    with snapshot.take(ws) as snap:
        assert snap.directory != ws.kg_dir and snap.graph_path.exists()
        data = snapshot.read(snap)
    assert snap.closed and not snap.directory.exists()
    assert len(data.nodes) == 10
    assert {e["type"] for e in data.edges} >= {"derived_from", "caused_by", "supports", "contradicts"}
    assert len(data.sessions) == 4


def test_snapshot_includes_journaled_writes(ws):
    ws.log("error", "logged while the graph was busy", now=NOW, apply=False)  # only in the journal
    with snapshot.take(ws) as snap:
        texts = [n["text"] for n in snapshot.read(snap).nodes]
    assert "logged while the graph was busy" in texts


@pytest.mark.embedded_only("a named folder keeps the Kùzu file's copy; a team graph's copy is on its server, "
                          "deleted on close")
def test_snapshot_into_a_named_folder_is_kept(ws, history, tmp_path):
    snap = snapshot.take(ws, tmp_path / "snap")
    snap.close()
    assert (tmp_path / "snap" / "graph.kuzu").exists()
    with pytest.raises(kg.KgError, match="not empty"):
        snapshot.take(ws, tmp_path / "snap")


def _objects(st, label):
    """A table read the plain way, as whole node objects, for comparison with the bulk read. The four tables
    migration 0011 made kinds of Meta row are read as their rows of that kind, with the table's old columns."""
    from kg.store.schema import MERGED_KINDS

    if label in MERGED_KINDS:
        kind, columns = MERGED_KINDS[label]
        rows = [r["x"] for r in st.execute("MATCH (x:Meta) WHERE x.kind = $k RETURN x", {"k": kind})]
        return [{old: r[col] for old, col in columns.items()} for r in rows]
    rows = [r["x"] for r in st.execute(f"MATCH (x:{label}) RETURN x")]
    return [{k: v for k, v in r.items() if k not in ("_id", "_label")} for r in rows]


KILLED_OWNER = """
import sys, os
import kg
from kg.analysis import snapshot
snap = snapshot.take(kg.open_workspace(sys.argv[1]))
print(snap.directory, flush=True)
os.kill(os.getpid(), 9)  # killed holding its copy: nothing removes it
"""


def _team_graphs(ws) -> list[str]:
    from kg.store.falkor import _client

    return [g.decode() if isinstance(g, bytes) else g
            for g in _client(ws.store_url).connection.execute_command("GRAPH.LIST")]


def test_a_snapshot_copies_into_the_workspace_and_the_next_sweeps_what_dead_owners_left(ws, tmp_path):
    """Nothing is written outside the workspace: the copy a snapshot owns lives in memory/.kg/snapshots/, not in
    $TMPDIR. A process killed holding one leaves it; the next snapshot removes it, never a living owner's."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    killed = subprocess.run([sys.executable, "-c", KILLED_OWNER, str(ws.root)], capture_output=True, text=True,
                            env=env, timeout=120)
    left = Path(killed.stdout.strip())
    assert killed.returncode == -9 and left.is_relative_to(ws.kg_dir / snapshot.SNAPSHOTS), killed.stderr
    copy = left / snapshot.SNAPSHOT_URL  # a team graph's snapshot names its copy on the server
    assert (left / snapshot.SNAPSHOT_GRAPH).exists() or copy.exists()
    copy = copy.read_text().strip().rsplit("/", 1)[-1] if copy.exists() else None
    assert copy is None or copy in _team_graphs(ws)
    out = tmp_path / "graph.json"
    ran = subprocess.run([*kg_command(), "-w", str(ws.root), "export", "graph", "--format", "json", "--out",
                          "g.json"], capture_output=True, text=True, env={**env, "KG_SERVER": "0"}, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert not left.exists()  # swept: its owner is dead
    assert copy is None or copy not in _team_graphs(ws)  # and its copy on the team's server dropped
    assert list(tmp.iterdir()) == []  # and the export's own copy was made inside the workspace, then removed
    assert not (ws.kg_dir / snapshot.SNAPSHOTS).exists()  # and the folder, empty now, with it
    assert not out.exists()
    with snapshot.take(ws) as mine:  # a living owner's copy: another take leaves it alone
        with snapshot.take(ws) as other:
            assert mine.directory.exists() and other.directory.parent == mine.directory.parent
        assert snapshot.sweep(mine.directory.parent) == [] and mine.directory.exists()
        assert len(snapshot.read(mine).nodes) > 0
    assert not mine.directory.exists()


@pytest.mark.embedded_only("creates a Kùzu table (DDL) and reads it back through Kùzu's own catalogue")
def test_snapshot_reads_every_table_column_by_column_as_stored(ws, history):
    """The bulk read (columns, not node objects) gives the same rows, keys in the same order, as reading
    whole objects; `tokens` only on request; a relation spanning several pairs of tables is read per pair."""
    with ws.store() as st:
        st.execute("CREATE REL TABLE test_multi(FROM Node TO Session, FROM Session TO Node, weight DOUBLE)")
        st.execute("MATCH (a:Node {id: $a}), (s:Session {id: 's1'}) CREATE (a)-[:test_multi {weight: 0.5}]->(s)",
                   {"a": history["lesson"]})
        st.execute("MATCH (s:Session {id: 's2'}), (b:Node {id: $b}) CREATE (s)-[:test_multi]->(b)",
                   {"b": history["orphan"]})
    with snapshot.take(ws) as snap:
        data = snapshot.read(snap)
        with_tokens = snapshot.read(snap, include_tokens=True)
        with snap.store() as st:
            objects = [r["n"] for r in st.run("nodes_all")]
            edges = st.run("edges_all")
            sessions = sorted(_objects(st, "Session"), key=lambda r: (r["started_at"], r["id"]))
            tables = {name: _objects(st, name) for name in data.tables}
    nodes = [{k: v for k, v in r.items() if k not in ("_id", "_label")} for r in objects]
    assert [list(r.items()) for r in with_tokens.nodes] == [list(r.items()) for r in nodes]
    assert [list(r.items()) for r in data.nodes] == [[kv for kv in r.items() if kv[0] != "tokens"] for r in nodes]
    assert data.edges == edges and data.sessions == sessions
    assert data.tables == tables and {"Decision", "ManagedBlock", "Preference", "Score", "Tally"} <= set(tables)
    assert sorted(data.relations["test_multi"], key=lambda r: r["src_table"]) == [
        {"src_table": "Node", "src": history["lesson"], "dst_table": "Session", "dst": "s1", "weight": 0.5},
        {"src_table": "Session", "src": "s2", "dst_table": "Node", "dst": history["orphan"], "weight": None},
    ]


def test_a_long_lived_analysis_does_not_block_kg_log(ws, history):
    """A notebook keeps an Analysis (and even an open snapshot handle) for hours; the agent's `kg log` in
    another process still goes straight into the graph."""
    a = ka.load(ws, now=NOW)
    env = {**os.environ, "KG_LOCK_TIMEOUT": "10"}
    with a.snapshot.store() as st:  # the snapshot held open, read-only, in this process
        assert st.run("count_sessions")[0]["n"] == 4
        proc = subprocess.run([*kg_command(), "-w", str(ws.root), "log", "error", "logged during analysis",
                               "--now", NOW, "--json", "--wait"],
                              check=False, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    logged = json.loads(proc.stdout)
    assert logged["applied"] is True, logged["note"]  # into the graph, not left waiting in the journal
    assert a.graph.number_of_nodes() == 10  # the analysis still sees its snapshot
    a.refresh()
    assert a.graph.number_of_nodes() == 11
    assert a.query("MATCH (n:Node) WHERE n.text = $t RETURN n.id AS id", t="logged during analysis")
    a.close()
    with pytest.raises(kg.UsageError, match="closed"):
        a.query("RETURN 1")


@pytest.mark.embedded_only("holds the Kùzu file lock as a long `kg ingest` does")
def test_a_load_waits_for_a_writer_when_told_and_says_how_when_not(ws, history, monkeypatch):
    """(QA #10) ka.load() during a 20 s `kg ingest` gave up after the workspace's 10 s with StoreBusy, saying
    nothing of how a notebook waits longer. It says so now, and `wait=` waits for the writer to finish."""
    import threading

    from kg.core.errors import ArgumentError, StoreBusy
    from kg.store.lock import FileLock

    monkeypatch.setenv("KG_LOCK_TIMEOUT", "0.2")  # the workspace's budget, short
    holder = FileLock(ws.kg_dir / "graph.lock", timeout=0)
    holder.acquire()
    try:
        for call in (lambda: ka.load(ws.root), lambda: ka.to_networkx(ws.root)):
            with pytest.raises(StoreBusy, match=r"pass wait=SECONDS to kg.analysis.load\(\) or to_networkx\(\)"):
                call()
        got: dict[str, object] = {}
        waiter = threading.Thread(target=lambda: got.update(a=ka.load(ws.root, now=NOW, wait=120)))
        waiter.start()
        deadline = time.monotonic() + 120
        while not holder.others_waiting():  # the load waits for the graph, past the workspace's budget
            assert waiter.is_alive() and time.monotonic() < deadline, got
            waiter.join(0.05)
    finally:
        holder.release()
    waiter.join(120)
    assert got["a"].graph.number_of_nodes() == 10
    got["a"].close()
    with pytest.raises(ArgumentError, match="wait must be a number of seconds"):
        ka.load(ws.root, wait="forever")


# -- networkx ------------------------------------------------------------------------------------------------
def test_to_networkx_carries_every_property(ws, history):
    g = ka.to_networkx(ws)
    assert isinstance(g, nx.MultiDiGraph)
    with ws.store() as st:
        stored = {r["n"]["id"]: r["n"] for r in st.run("nodes_all")}
        edges = st.run("edges_all")
    assert set(g.nodes) == set(stored)
    for nid, row in stored.items():
        expected = {k: v for k, v in row.items() if k not in ("_id", "_label", "id", "tokens")}
        assert g.nodes[nid] == expected
    assert g.number_of_edges() == len(edges)
    e = history["errors"][0]
    assert g.nodes[e]["files"] == ["a.py", "中文.md"] and g.nodes[e]["area"] == "tooling"
    assert g.edges[history["rival"], history["principle"], "contradicts"]["manual"] is True


def test_to_networkx_filters(ws, history):
    g = ka.to_networkx(ws, types="lesson,principle")
    assert sorted(g.nodes) == sorted([history["lesson"], history["principle"], history["rival"]])
    assert {t for _, _, t in g.edges(data="type")} >= {"derived_from", "contradicts"}
    recent = ka.to_networkx(ws, since="16d", now=NOW)
    assert sorted(recent.nodes) == sorted([history["errors"][3], history["other"]])
    with pytest.raises(kg.UsageError, match="unknown type"):
        ka.to_networkx(ws, types="rules")


def test_analysis_answers_the_questions(ws, history):
    with ka.load(ws, now=NOW) as a:
        counts = a.counts()
        assert counts["nodes"]["event"] == 5 and counts["sessions"] == 4
        assert a.central(kinds=("principle",), top=1)[0]["id"] == history["principle"]
        ev = a.evidence(history["principle"])
        assert set(history["errors"]) <= set(ev["events"])
        assert ev["contradicted_by"] == [history["rival"]]
        assert [history["errors"][0], history["lesson"], history["principle"]] in ev["chains"]
        assert history["orphan"] in [o["id"] for o in a.orphans()]
        (p,) = [p for p in a.patterns() if p["key"] == "git.push.auth"]
        assert (p["recurrence"], p["sessions"]) == (4, 4)
        assert a.recurrence("week").total("git.push.auth") == 4
        assert a.error_timeline(period="month").to_dict()["values"] == [[4], [1]]
        (effect,) = a.rule_effect()
        assert (effect["before"], effect["after"]) == (3, 1)
        assert a.score_trends() == [] and a.conflict_decisions() == []


def test_score_trends_and_decisions_read_their_tables(ws, history):
    with ws.store() as st:
        tables = {r["name"] for r in st.execute("CALL show_tables() RETURN name")}
    assert not {"Decision", "Score"} & tables  # (migration 0011: kinds of Meta row; the analyst sees them as tables)
    with ws.store() as st:
        for day, acc in ((1, 5), (8, 7), (15, 9)):
            st.execute("CREATE (:Meta {key: 'score:' + $id, kind: 'score', id: $id, at: timestamp($at), "
                       "accuracy: $acc, average: $avg})",
                       {"id": f"score-{day}", "at": f"2026-11-{day:02d} 10:00:00", "acc": acc, "avg": acc - 0.5})
        st.execute("CREATE (:Meta {key: 'decision:dec-1', kind: 'decision', id: 'dec-1', a: $a, b: $b, score_a: 140, "
                   "score_b: 60, winner: $a, "
                   "status: 'decided', parts_a: '{\"priority\": 100}', created_at: timestamp('2026-11-20 10:00:00')})",
                   {"a": history["principle"], "b": history["rival"]})
    with ka.load(ws, now=NOW) as a:
        trends = a.score_trends()
        assert [t["accuracy"] for t in trends] == [5, 7, 9]
        assert [w["period"] for w in a.score_trends(period="week")] == ["2026-W44", "2026-W45", "2026-W46"]
        (d,) = a.conflict_decisions()
        assert d["winner_text"] == "set up auth before network operations"
        assert d["parts_a"] == {"priority": 100}


# -- exports -------------------------------------------------------------------------------------------------
@pytest.fixture
def graph(ws, history):
    return ka.to_networkx(ws)


def test_graphml_loads_back(ws, graph, tmp_path):
    out = tmp_path / "g.graphml"
    result = ke.export_graph(ws, "graphml", out=out)
    assert (result.nodes, result.edges, result.out) == (10, graph.number_of_edges(), str(out))
    back = nx.read_graphml(out, force_multigraph=True)
    assert set(back.nodes) == set(graph.nodes)
    assert back.number_of_edges() == graph.number_of_edges()
    e = next(n for n, a in graph.nodes(data=True) if a.get("pattern_key") and a["kind"] == "event")
    assert back.nodes[e]["details"] == graph.nodes[e]["details"]
    assert json.loads(back.nodes[e]["files"]) == ["a.py", "中文.md"]
    assert back.nodes[e]["pinned"] is False
    assert back.nodes[e]["created_at"] == graph.nodes[e]["created_at"].isoformat()


def test_exporting_an_analysis_leaves_its_graph_whole(ws, history):
    """export_graph empties the graph it built once written (freeing it at once), never an Analysis's own."""
    with ka.load(ws, now=NOW) as a:
        before = a.graph.number_of_nodes()
        assert ke.export_graph(a, "json").nodes == before
        assert ke.export_graph(a, "graphml", types="lesson").nodes == 1
        assert a.graph.number_of_nodes() == before == 10 and a.graph.number_of_edges() > 0


def test_gexf_loads_back(graph, tmp_path):
    out = tmp_path / "g.gexf"
    out.write_text(ke.to_gexf(graph), encoding="utf-8")
    back = nx.read_gexf(out)
    assert set(back.nodes) == set(graph.nodes)
    assert back.number_of_edges() == graph.number_of_edges()
    rel = {d["relation"] for _, _, d in back.edges(data=True)}
    assert rel == {t for _, _, t in graph.edges(data="type")}


def test_json_is_node_link(graph):
    data = json.loads(ke.to_json(graph))
    assert "links" in data and "edges" not in data  # what d3 and networkx's default reader expect
    back = nx.node_link_graph(data, edges="links")
    assert back.is_directed() and back.is_multigraph()
    assert set(back.nodes) == set(graph.nodes) and back.number_of_edges() == graph.number_of_edges()


def test_mermaid_is_a_flowchart_with_safe_labels(graph):
    text = ke.to_mermaid(graph)
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    node_lines = [ln for ln in lines if re.match(r'^    n\d+\["', ln)]
    edge_lines = [ln for ln in lines if re.match(r"^    n\d+ (-->|-\.->)\|\w+\| n\d+$", ln)]
    assert len(node_lines) == graph.number_of_nodes()
    assert len(edge_lines) == graph.number_of_edges()
    for ln in node_lines:  # the quoted label holds no raw quote, bracket or angle bracket
        label = ln.split('["', 1)[1].rsplit('"]', 1)[0]
        assert not re.search(r'["\[\]<>]', label.replace("<br/>", ""))
    assert any("-.->|contradicts|" in ln for ln in edge_lines)


def _read_dot(text: str) -> tuple[set[str], list[tuple[str, str, dict[str, str]]]]:
    """A small DOT reader: enough to prove the quoting is right (every string closes, every statement
    parses)."""
    token = re.compile(r'"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*|-?[0-9.]+)|(->|[{}\[\];=,])|(\s+)')
    toks, pos = [], 0
    while pos < len(text):
        m = token.match(text, pos)
        assert m, f"bad DOT at {text[pos:pos + 40]!r}"
        if m.group(1) is not None:
            toks.append(("str", m.group(1).replace('\\"', '"')))
        elif m.group(2):
            toks.append(("id", m.group(2)))
        elif m.group(3):
            toks.append(("p", m.group(3)))
        pos = m.end()
    nodes, edges = set(), []
    i = 4  # digraph NAME {
    assert toks[0] == ("id", "digraph") and toks[2] == ("p", "{") and toks[-1] == ("p", "}")
    i = 3
    while i < len(toks) - 1:
        stmt = []
        while toks[i] != ("p", ";"):
            stmt.append(toks[i])
            i += 1
        i += 1
        if stmt[0][0] == "id" and stmt[0][1] in ("graph", "node", "edge"):
            continue
        attrs = {}
        if ("p", "[") in stmt:
            start = stmt.index(("p", "["))
            body, head = stmt[start + 1:-1], stmt[:start]
            assert stmt[-1] == ("p", "]")
            for j in range(0, len(body), 4):
                assert body[j + 1] == ("p", "=")
                attrs[body[j][1]] = body[j + 2][1]
        else:
            head = stmt
        if len(head) == 3 and head[1] == ("p", "->"):
            edges.append((head[0][1], head[2][1], attrs))
        else:
            assert len(head) == 1
            nodes.add(head[0][1])
    return nodes, edges


def test_dot_parses_and_keeps_every_node_and_edge(graph):
    nodes, edges = _read_dot(ke.to_dot(graph))
    assert nodes == set(graph.nodes)
    assert len(edges) == graph.number_of_edges()
    assert {e[2]["label"] for e in edges} == {t for _, _, t in graph.edges(data="type")}


@pytest.mark.embedded_only("kg export cypher writes Kùzu DDL, replayed into a Kùzu file")
def test_cypher_replays_into_an_empty_graph(ws, history, tmp_path):
    result = ke.export_graph(ws, "cypher")
    fresh = kg.init_workspace(tmp_path / "fresh")
    ran = ke.replay_cypher(fresh, result.text)
    assert ran == len(ke.split_cypher(result.text))
    a = ka.to_networkx(ws, include_tokens=True)
    b = ka.to_networkx(fresh, include_tokens=True)
    assert dict(a.nodes(data=True)) == dict(b.nodes(data=True))
    assert sorted(a.edges(keys=True, data=True)) == sorted(b.edges(keys=True, data=True))
    # the replayed graph is searchable like the original (its tokens are indexed by the side index, issue 22)
    from kg.store import sideindex

    with fresh.store() as st:
        side = sideindex.for_reading(st)
        hits = side.rows_at([p for p, _ in side.ranked(["lockfile"], 3)])
    assert [h["id"] for h in hits.values()] == [history["other"]]


def test_export_filtered_and_to_stdout_text(ws, history):
    result = ke.export_graph(ws, "json", types="principle")
    data = json.loads(result.text)
    assert {n["id"] for n in data["nodes"]} == {history["principle"], history["rival"]}
    assert result.out is None and (result.nodes, result.edges) == (2, 1)


def test_export_refuses_bad_format_and_folder(ws, tmp_path):
    with pytest.raises(kg.UsageError, match="unknown format 'xml'"):
        ke.export_graph(ws, "xml")
    with pytest.raises(kg.UsageError, match="is a folder"):
        ke.export_graph(ws, "graphml", out=tmp_path)


def test_drawing_writes_png_and_svg(ws, history, tmp_path, need):
    need("matplotlib")
    from kg.analysis.drawing import show_subgraph

    png = show_subgraph(ws, out=tmp_path / "p.png", node_id=history["principle"], depth=2)
    assert png["nodes"] >= 4 and (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = show_subgraph(ws, out=tmp_path / "t.svg", types="lesson,principle")
    assert svg["nodes"] == 3 and "<svg" in (tmp_path / "t.svg").read_text(encoding="utf-8")[:500]
