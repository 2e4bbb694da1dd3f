"""The streaming import (issue 22) and what a crash in the middle of it leaves (issue 20, item 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import kg
import kg.ingest.trail

NOW = "--now 2026-12-01T12:00:00"


def write_trail(path: Path, n: int) -> None:
    entries = [{"id": f"ERR-20260101-{i:04d}", "type": "error", "summary": f"git push failed on branch {i % 7}",
                "logged": f"2026-01-01T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
                "pattern_key": f"git.push.{i % 5}" if i % 2 == 0 else None, "session": f"2026-01-01-{i // 100 + 1:03d}"}
               for i in range(n)]
    nodes = [{"id": "les-20260101-001", "type": "lesson", "content": "set the upstream before pushing"}]
    edges = [{"from": "ERR-20260101-0001", "to": "les-20260101-001", "type": "led_to"}]
    path.write_text(json.dumps({"entries": entries, "graph": {"nodes": nodes, "edges": edges}}))


def graph_facts(ws: kg.Workspace) -> dict:
    with ws.store() as st:
        members = st.execute("MATCH (p:Node)-[:derived_from]->(e:Node) WHERE p.kind = 'pattern' "
                             "RETURN e.id AS e, count(p) AS n")
        return {"nodes": st.execute("MATCH (n:Node) RETURN count(n) AS n")[0]["n"],
                "patterns": st.execute("MATCH (n:Node) WHERE n.kind = 'pattern' RETURN count(n) AS n")[0]["n"],
                "members": len(members), "max_memberships": max(r["n"] for r in members),
                "led_to": st.execute("MATCH ()-[r:led_to]->() RETURN count(r) AS n")[0]["n"],
                "sessions": st.execute("MATCH (s:Session) RETURN count(s) AS n")[0]["n"],
                "fts": st.has_fts()}


def test_import_into_a_path_with_a_quote(run_kg, tmp_path):
    ws = kg.init_workspace(tmp_path / "it's here")
    trail = tmp_path / "trail.json"
    write_trail(trail, 40)
    r = run_kg(f"import trail {trail} --json {NOW}", workspace=ws.root)
    assert r.exit_code == 0, r.stderr
    assert (r.json["entries"], r.json["nodes"], r.json["edges"]) == (40, 1 + 5, 1)
    assert graph_facts(ws) == {"nodes": 46, "patterns": 5, "members": 20, "max_memberships": 1, "led_to": 1,
                               "sessions": 1, "fts": ws.store_url is not None}
    # (issue 22) an embedded graph has no full-text index of its own; a team graph (FalkorDB) keeps its own
    found = run_kg(f"search 'push failed branch' --json {NOW}", workspace=ws.root)
    assert found.exit_code == 0 and found.json, found.stderr
    assert not (ws.kg_dir / "import.json").exists()


def test_a_killed_import_leaves_a_working_workspace_and_resumes(tmp_path):
    """A real `kill -9` in the middle of the load: readers and writers keep working (the full-text index is
    rebuilt on the next open), and running the import again finishes it: every entry once, every pattern
    member once, the same graph as an import that was never interrupted."""
    trail = tmp_path / "trail.json"
    write_trail(trail, 600)
    clean = kg.init_workspace(tmp_path / "clean")
    kg.ingest.trail.import_trail(clean, [trail])
    ws = kg.init_workspace(tmp_path / "ws")
    script = ("import sys, kg, kg.ingest.trail, kg.ingest.importing as m\nfrom pathlib import Path\nm.BATCH = 50\n"
              "ws = kg.open_workspace(Path(sys.argv[1]))\n"
              "kg.ingest.trail.import_trail(ws, [Path(sys.argv[2])], progress=lambda d, t: print(d, flush=True))\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(ws.root), str(trail)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if int(line) >= 250:  # some batches are in, the index is dropped, the rest is not loaded
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert (ws.kg_dir / "import.json").exists()
    kg_bin = Path(sys.executable).parent / "kg"
    env = {**os.environ, "KG_NOW": "2026-12-01T12:00:00"}
    run = lambda *a: subprocess.run([str(kg_bin), "-w", str(ws.root), *a], capture_output=True, text=True,  # noqa: E731
                                    env=env, timeout=120)
    found = run("search", "push failed branch", "--json")
    assert found.returncode == 0, found.stderr
    logged = run("log", "error", "disk full on the build box", "--wait", "--json")
    assert logged.returncode == 0, logged.stderr
    partial = graph_facts(ws)
    assert partial["nodes"] < graph_facts(clean)["nodes"] + 1
    resumed = run("import", "trail", "--json")  # no paths: the interrupted import's
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["already_present"] > 0
    assert not (ws.kg_dir / "import.json").exists()
    expected = graph_facts(clean)
    expected["nodes"] += 1  # the entry logged in between
    assert graph_facts(ws) == expected


def test_allocate_many_writes_the_id_file_once_and_never_repeats(ws):
    with ws.journal.locked():
        first = ws.journal.allocate("pat", "20260101")
        many = ws.journal.allocate_many([("pat", "20260101"), ("pat", "20260102"), ("pat", "20260101")])
        after = ws.journal.allocate("pat", "20260101")
    assert first == ["pat-20260101-001"]
    assert many == ["pat-20260101-002", "pat-20260102-001", "pat-20260101-003"]
    assert after == ["pat-20260101-004"]


@pytest.mark.parametrize("bad, message", [
    ('{"entries": [', "is not valid JSON"),
    ('{"entries": [{"id": 1}] } trailing', "is not valid JSON"),
])
def test_invalid_json_is_refused_before_anything_is_written(run_kg, ws, tmp_path, bad, message):
    path = tmp_path / "t.json"
    good = [{"id": f"ERR-20260101-{i:03d}", "type": "error", "summary": "x"} for i in range(5)]
    path.write_text(json.dumps({"entries": good})[:-2] + ", " + bad)
    r = run_kg(f"import trail {path}")
    assert r.exit_code == 2 and message in r.stderr
    assert run_kg("list --json").json == []


# One secret of a few kinds, each in a different field of an entry that sits among clean ones: the import
# scans a group of entries as one text and redacts value by value only where that finds something.
_SECRETS = [("summary", "push failed with AKIAHUGO274PAFHSG4A7", "AKIAHUGO274PAFHSG4A7"),
            ("details", "token ghp_Runzqw7wZyVGOeUvfJIssDj4PTTKtb2TxxDB in the log",
             "ghp_Runzqw7wZyVGOeUvfJIssDj4PTTKtb2TxxDB"),
            ("suggested_action", "set password=uL5bI9vmJdUh again", "uL5bI9vmJdUh"),
            ("error", "curl -u admin:RdWwUZlPOgGu https://ci.example.com", "RdWwUZlPOgGu"),
            ("tags", ["ok", "DB_PASSWORD_PROD=kNhhciHwMPPt"], "kNhhciHwMPPt"),
            ("pattern_key", "auth sk_live_SU8iIoELi9M4SGsfAQk7iYY6Lt", "sk_live_SU8iIoELi9M4SGsfAQk7iYY6Lt")]


def test_secrets_among_many_clean_entries_never_reach_the_workspace(run_kg, ws, tmp_path):
    trail = tmp_path / "trail.json"
    write_trail(trail, 300)
    doc = json.loads(trail.read_text())
    for n, (field, value, _) in enumerate(_SECRETS):
        doc["entries"][37 + 41 * n][field] = value  # spread over several of the import's groups
    trail.write_text(json.dumps(doc))
    r = run_kg(f"import trail {trail} --json {NOW}", workspace=ws.root)
    assert r.exit_code == 0, r.stderr
    assert r.json["entries"] == 300
    with ws.store() as st:
        marked = {row["id"]: row["r"] for row in st.execute(
            "MATCH (n:Node) WHERE size(n.redactions) > 0 RETURN n.id AS id, n.redactions AS r")}
    assert set(marked) == {f"ERR-20260101-{37 + 41 * n:04d}" for n in range(len(_SECRETS))}
    leaks = [(str(p), s) for p in ws.root.rglob("*") if p.is_file() for _, _, s in _SECRETS
             if s.encode() in p.read_bytes() or s.lower().encode() in p.read_bytes()]
    assert leaks == []


def test_repeated_ids_across_batches_load_once_and_are_counted(tmp_path, monkeypatch):
    """The duplicate check keeps no set of every id (kg/ingest/trail_seen.py): a repeat in a later batch is
    found in the graph, a repeat in the same batch in the batch's own set."""
    import kg.ingest.importing as importing

    monkeypatch.setattr(importing, "BATCH", 40)
    trail = tmp_path / "trail.json"
    write_trail(trail, 200)
    doc = json.loads(trail.read_text())
    doc["entries"] += [dict(doc["entries"][i], summary="a second copy") for i in (3, 3, 150, 199)]
    doc["entries"].insert(10, dict(doc["entries"][9]))  # within one batch
    trail.write_text(json.dumps(doc))
    ws = kg.init_workspace(tmp_path / "ws")
    report = kg.ingest.trail.import_trail(ws, [trail])
    assert report.entries == 200
    assert report.skipped == {"duplicate id in the imported files": 5}
    with ws.store() as st:
        assert st.execute("MATCH (n:Node) WHERE n.text = 'a second copy' RETURN count(n) AS n")[0]["n"] == 0
    assert graph_facts(ws)["nodes"] == 200 + 1 + 5


@pytest.mark.embedded_only("node_fts is Kùzu's; a team graph keeps its index on its server")
def test_an_old_graphs_full_text_index_is_dropped_and_an_import_builds_none(tmp_path):
    """Issue 22: nothing asks Kùzu's node_fts any more (linking and search ask the side index), and building it
    was most of a large import's CPU and memory. A graph that has it (made before) loses it at the next
    writer's open, under the import's own crash protection (kg/store/rollback.py); an import builds none, and
    linking and search still find what it loaded."""
    from kg.store import _FTS_CREATE

    ws = kg.init_workspace(tmp_path / "ws")
    trail = tmp_path / "trail.json"
    write_trail(trail, 40)
    kg.ingest.trail.import_trail(ws, [trail])
    with ws.store() as st:
        assert not st.has_fts()
        st.execute(_FTS_CREATE)  # as a graph made before issue 22 carries it
    with ws.store() as st:
        assert not st.has_fts()
    assert not list(ws.kg_dir.glob("graph.kuzu.rollback*"))
    entry = ws.log("error", "git push failed again: no upstream branch", wait=True)
    with ws.store() as st:
        linked = st.execute("MATCH (a:Node {id: $id})-[r]-(b:Node) RETURN count(r) AS n", {"id": entry.id})
    assert linked[0]["n"] > 0


def kill_import_midway(ws: kg.Workspace, trail: Path, at: int = 250) -> None:
    """`kg import trail` killed with SIGKILL once `at` items are loaded (batches of 50): the index dropped,
    the aggregates cleared, the mark left."""
    script = ("import os, signal, sys, kg, kg.ingest.trail, kg.ingest.importing as m\nfrom pathlib import Path\n"
              "m.BATCH = 50\nws = kg.open_workspace(Path(sys.argv[1]))\n"
              "def die(done, total):\n    if done >= int(sys.argv[3]):\n        os.kill(os.getpid(), signal.SIGKILL)\n"
              "kg.ingest.trail.import_trail(ws, [Path(sys.argv[2])], progress=die)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(ws.root), str(trail), str(at)], timeout=300)
    assert proc.returncode == -signal.SIGKILL
    assert (ws.kg_dir / "import.json").exists()


@pytest.mark.embedded_only("the full-text index and the aggregate table it counts are Kùzu's; a team graph keeps "
                           "neither (its index is on its server)")
def test_a_resumed_import_builds_the_index_and_the_aggregates_once(tmp_path, monkeypatch):
    """Resuming, the writer's open does not build the aggregate table that the import drops and rebuilds after
    its last batch, and no full-text index is built at all (issue 22: it was ~50 s of CPU at a million)."""
    import kg.ingest.importing as importing
    from kg.store import Store, aggregates

    trail = tmp_path / "trail.json"
    write_trail(trail, 600)
    ws = kg.init_workspace(tmp_path / "ws")
    kill_import_midway(ws, trail)
    builds: list[str] = []
    raw = Store._execute_raw
    monkeypatch.setattr(Store, "_execute_raw", lambda self, cypher, params: (
        builds.append(cypher) if "CREATE_FTS_INDEX" in cypher else None, raw(self, cypher, params))[1])
    rebuilt: list[int] = []
    rebuild = aggregates.rebuild
    monkeypatch.setattr(aggregates, "rebuild", lambda st: (rebuilt.append(1), rebuild(st))[1])
    monkeypatch.setattr(importing, "BATCH", 50)
    report = kg.ingest.trail.import_trail(kg.open_workspace(ws.root))
    assert report.resumed and report.already_present >= 250
    assert len(builds) == 0 and len(rebuilt) == 1
    clean = kg.init_workspace(tmp_path / "clean")
    kg.ingest.trail.import_trail(clean, [trail])
    assert graph_facts(kg.open_workspace(ws.root)) == graph_facts(clean)


def test_a_resumed_import_does_not_redact_what_is_loaded_already(tmp_path, monkeypatch):
    """The entries the killed run loaded are set aside before the gate (redaction is most of an entry's cost),
    and still get the pattern edges and sessions the kill took from them."""
    import kg.ingest.importing as importing

    trail = tmp_path / "trail.json"
    write_trail(trail, 600)
    ws = kg.init_workspace(tmp_path / "ws")
    kill_import_midway(ws, trail)
    with ws.store() as st:
        loaded = {r["id"] for r in st.execute("MATCH (n:Node) WHERE n.kind = 'event' RETURN n.id AS id")}
    assert 250 <= len(loaded) < 600
    gated: list[str] = []
    gate = importing.gate
    monkeypatch.setattr(importing, "gate", lambda redactor, group, clean=None: (
        gated.extend(item.get("id") for _, item in group if isinstance(item, dict)), gate(redactor, group, clean))[1])
    monkeypatch.setattr(importing, "BATCH", 50)
    report = kg.ingest.trail.import_trail(kg.open_workspace(ws.root))
    assert report.already_present == len(loaded) and report.entries == 600 - len(loaded)
    assert not loaded & set(gated) and len(gated) >= 600 - len(loaded)
    clean = kg.init_workspace(tmp_path / "clean")
    kg.ingest.trail.import_trail(clean, [trail])
    assert graph_facts(kg.open_workspace(ws.root)) == graph_facts(clean)
