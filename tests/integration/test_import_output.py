"""What `kg import trail` produces, entry by entry (issue 22: the import is made faster without changing it): every
entry of the trail is a node holding its fields, each pattern key one pattern with its members, the trail's own
edges and sessions are in; the search side file answers each entry's own word with that entry, and holds exactly
what a rebuild from the graph holds. Real CLI, real Kùzu, a trail loaded in several batches."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import kg.ingest.importing as importing
from kg.store import bulk, sideindex

NOW = "--now 2026-12-01T12:00:00"
N = 300


def word(i: int) -> str:
    """A word no other entry holds (letters only, so every tokenizer keeps it whole)."""
    out = ""
    for _ in range(3):
        out += "bcdfghjklmnpqrstvwxz"[i % 20]
        i //= 20
    return "zy" + out


def trail(path: Path) -> list[dict]:
    entries = []
    for i in range(N):
        kind = ("error", "learning", "feature")[i % 3]
        prefix = {"error": "ERR", "learning": "LRN", "feature": "FEAT"}[kind]
        entries.append({
            "id": f"{prefix}-20260101-{i:04d}", "type": kind,
            "summary": f"the {word(i)} step failed on branch {i % 7}" + (" — déjà vu" if i % 11 == 0 else ""),
            "details": f"details of {i}" if i % 2 else "", "area": ("tests", "infra", "docs")[i % 3],
            "logged": f"2026-01-01T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
            "pattern_key": f"git.push.{i % 9}" if i % 4 == 0 else None, "tags": [f"t{i % 5}", "import"],
            "files": [f"src/f{i % 3}.py"] if i % 6 == 0 else [], "session": f"2026-01-01-{i // 50 + 1:03d}"})
    entries.append(dict(entries[5]))  # a repeat: loaded once
    entries[7]["details"] = "export password=uL5bI9vmJdUh then retry"  # a secret: redacted
    nodes = [{"id": "les-20260101-001", "type": "lesson", "content": "set the upstream before pushing"}]
    edges = [{"from": "ERR-20260101-0003", "to": "les-20260101-001", "type": "led_to"}]
    path.write_text(json.dumps({"entries": entries, "graph": {"nodes": nodes, "edges": edges}}))
    return entries[:N]


def side_dump(path: Path) -> dict[str, list]:
    """Every table of a side file but its stamp's time-free rows, and each FTS5 document's terms."""
    with closing(sqlite3.connect(path)) as db:
        out = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
               for t in ("node", "state", "pkey", "lpost", "ldf", "ltot")}
        db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts, 'instance')")
        out["fts"] = db.execute("SELECT term, doc, offset FROM temp.v ORDER BY term, doc, offset").fetchall()
        out["meta"] = sorted(db.execute("SELECT key, value FROM meta").fetchall())
    return out


def test_an_import_holds_every_entry_as_it_was_and_the_side_file_a_rebuild_would_make(
        run_kg, ws, tmp_path, monkeypatch):
    monkeypatch.setattr(importing, "BATCH", 64)  # five batches, each collected and loaded on its own
    monkeypatch.setattr(sideindex, "BATCH", 70)
    entries = trail(tmp_path / "trail.json")
    r = run_kg(f"import trail {tmp_path / 'trail.json'} --json {NOW}")
    assert r.exit_code == 0, r.stderr
    assert (r.json["entries"], r.json["edges"]) == (N, 1)
    assert r.json["skipped"] == {"duplicate id in the imported files": 1} and r.json["redacted"]

    with ws.store() as st:
        nodes = {n["id"]: n for n in bulk.read_table(st, "Node")}
        members = st.execute("MATCH (p:Node)-[:derived_from]->(e:Node) RETURN p.pattern_key AS key, e.id AS e")
        led_to = st.execute("MATCH (a:Node)-[:led_to]->(b:Node) RETURN a.id AS a, b.id AS b")
        sessions = {s["id"] for s in st.execute("MATCH (s:Session) RETURN s.id AS id")}
    for e in entries:
        n = nodes[e["id"]]
        assert (n["kind"], n["entry_type"], n["area"], n["session"], n["tags"], n["files"]) == (
            "event", e["type"], e["area"], e["session"], e["tags"], e["files"]), e["id"]
        assert n["text"] == e["summary"] and n["pattern_key"] == e["pattern_key"], e["id"]
        assert n["details"] == (e["details"] or None) or e is entries[7], e["id"]
        assert n["created_at"].isoformat() == e["logged"], e["id"]
    assert nodes[entries[7]["id"]]["details"] == "export password=[REDACTED:password_assignment] then retry"
    patterns = {n["pattern_key"]: n for n in nodes.values() if n["kind"] == "pattern"}
    assert sorted(patterns) == [f"git.push.{k}" for k in range(9)]
    assert sorted((m["key"], m["e"]) for m in members) == sorted(
        (e["pattern_key"], e["id"]) for e in entries if e["pattern_key"])
    assert [(x["a"], x["b"]) for x in led_to] == [("ERR-20260101-0003", "les-20260101-001")]
    assert sessions == {e["session"] for e in entries}
    assert len(nodes) == N + 1 + len(patterns)
    if ws.store_url is not None:
        return  # a team graph keeps its own full-text query: no side file

    side = sideindex.path_of(ws.kg_dir / "graph.kuzu")
    imported = side_dump(side)
    with closing(sqlite3.connect(side)) as db:
        pos = dict(db.execute("SELECT pos, id FROM node"))
        for i, e in enumerate(entries):  # each entry's own word finds it, and the pattern named after it alone
            found = sorted(pos[p] for (p,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (word(i),)))
            assert found == sorted(x for x, n in nodes.items() if word(i) in n["text"].split()), word(i)
            assert e["id"] in found
    assert len(pos) == len(nodes)
    found = run_kg(f"search {word(42)} --json {NOW}")
    assert found.exit_code == 0 and found.json[0]["ref"] == entries[42]["id"], found.stdout

    for p in side.parent.glob(side.name + "*"):
        p.unlink()
    with ws.store() as st:  # the same file, made again from the graph alone
        assert sideindex.sync(st, rebuild=True).startswith("rebuilt")
    assert side_dump(side) == imported
