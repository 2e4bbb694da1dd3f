"""(QA5 #1) A graph whose write-ahead log was lost or cut short before Kùzu checkpointed it opens without its
newest nodes, saying nothing; `kg doctor` then "rebuilt" memory search's side index to the graph's count, throwing
away the last copy of those acknowledged entries. Now no sync shrinks the side index below nodes the graph lacks,
`kg status` and `kg doctor --dry-run` say so (the latter exit 1), and `kg doctor` imports them back from it, each
event into its pattern, and links them again."""

from __future__ import annotations

import pytest

NOW = "2026-12-01T10:00:00"


@pytest.mark.embedded_only("removes the Kùzu write-ahead log")
def test_doctor_restores_what_the_graph_lost_with_its_wal(ws, run_kg):
    logged = {run_kg(["--now", NOW, "log", "learning", f"acked-marker {n} before the loss", "--wait",
                      "--pattern-key", f"wal.k{n % 2}", "--json"]).json["id"] for n in range(4)}
    assert {p["key"]: p["recurrence"] for p in run_kg(["patterns", "--json"]).json} == {"wal.k0": 2, "wal.k1": 2}
    wal = ws.graph_path.with_name(ws.graph_path.name + ".wal")
    assert wal.is_file()  # not checkpointed yet: the newest entries are only there
    wal.unlink()
    assert not {r["id"] for r in run_kg(["list", "--json"]).json} & logged  # the graph lost them
    said = run_kg(["status"]).stdout  # it said 0 nodes and nothing else
    assert "⚠️  Graph: the graph lacks nodes memory search's index (search.sqlite) holds" in said, said
    assert "run `kg doctor` to restore them" in said

    after = run_kg(["--now", NOW, "log", "learning", "written after the loss", "--wait", "--json"])
    assert after.exit_code == 0, after.stderr  # a writer's close must not rebuild the index without them
    r = run_kg(["doctor", "--dry-run", "--json"])
    graph = [c for c in r.json["checks"] if c["name"] == "graph" and c["status"] == "error"]
    assert r.exit_code == 1 and graph and "node(s) that search.sqlite still holds" in graph[0]["detail"], r.json
    assert "run `kg doctor` to restore them" in graph[0]["detail"]

    r = run_kg(["doctor", "--json"])
    assert r.exit_code == 0, r.json
    graph = next(c for c in r.json["checks"] if c["name"] == "graph" and c["status"] == "repaired")
    assert "rebuilt 4 entries" in graph["detail"], graph
    assert "4 restored event(s) back in their pattern" in graph["detail"], graph
    assert {p["key"]: p["recurrence"] for p in run_kg(["patterns", "--json"]).json} == {"wal.k0": 2, "wal.k1": 2}
    rows = run_kg(["list", "--limit", "0", "--json"]).json
    assert logged | {after.json["id"]} <= {r["id"] for r in rows}
    found = run_kg(["search", "acked-marker", "--json"])
    assert found.exit_code == 0 and len(found.json) == 4, found.stdout
    assert run_kg(["doctor", "--json"]).json["ok"]
    assert run_kg(["status", "--json"]).json["graph_lost"] is None
