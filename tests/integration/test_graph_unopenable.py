"""A graph file Kùzu cannot open any more (`truncate -s` on memory/.kg/graph.kuzu): `kg status`/`list`/`search`
failed with no hint, `kg doctor --repair` changed nothing, and a graph started by hand lost every entry though
memory search's side file still held them. Now the failure points to `kg doctor`, doctor says what --repair
brings back, and --repair starts a new graph with the side file's nodes (their edges are lost)."""

from __future__ import annotations

import json
import os

import pytest

NOW = "2026-12-01T10:00:00"


@pytest.mark.embedded_only("damages the Kùzu file")
def test_repair_brings_back_the_entries_of_a_graph_that_cannot_be_opened(ws, run_kg):
    logged = {run_kg(["--now", NOW, "log", kind, f"{kind} before the damage {n}", "--priority", "high", "--wait",
                      "--json"]).json["id"] for n in range(3) for kind in ("learning", "error")}
    assert run_kg(["--now", NOW, "resolve", sorted(logged)[0]]).exit_code == 0
    assert run_kg(["doctor"]).exit_code == 0  # the side index in step, the WAL checkpointed or not
    given = (ws.kg_dir / "ids.json").read_text()
    wal = ws.graph_path.with_name(ws.graph_path.name + ".wal")
    for path in (ws.graph_path, wal):
        if path.exists():
            os.truncate(path, path.stat().st_size // 3)

    for args in (["status"], ["list"], ["search", "damage"]):
        r = run_kg(args)
        assert r.exit_code == 1 and "cannot open the graph" in r.stderr and "Run `kg doctor`" in r.stderr, r.stderr
    for check_only in ([], ["--dry-run"]):  # --dry-run said "Run `kg doctor`: it says what can be done" (QA)
        r = run_kg(["doctor", *check_only, "--json"])
        graph = next(c for c in r.json["checks"] if c["name"] == "graph")
        assert r.exit_code == 1 and graph["status"] == "error", graph
        # the six entries and the two patterns the errors' repeats made
        assert "Run `kg doctor --repair`" in graph["detail"] and "with the 8 node(s)" in graph["detail"], graph
    assert not list(ws.kg_dir.glob("graph.kuzu.damaged-*"))

    r = run_kg(["doctor", "--repair", "--json"])
    graph = next(c for c in r.json["checks"] if c["name"] == "graph")
    assert graph["status"] == "repaired" and "rebuilt 6 entries" in graph["detail"], graph
    assert list(ws.kg_dir.glob("graph.kuzu.damaged-*"))  # the old file kept
    rows = run_kg(["--now", NOW, "list", "--limit", "100", "--json"]).json
    assert {r["id"] for r in rows if r.get("entry_type")} == logged
    assert {r["status"] for r in rows if r["id"] == sorted(logged)[0]} == {"resolved"}
    assert (ws.kg_dir / "ids.json").read_text() == given  # no id is given out again
    after = run_kg(["--now", NOW, "log", "learning", "after the repair", "--wait", "--json"])
    assert after.exit_code == 0 and after.json["id"] not in logged, after.stderr
    assert run_kg(["doctor", "--json"]).exit_code == 0
    assert json.loads(run_kg(["search", "before the damage", "--json"]).stdout)
