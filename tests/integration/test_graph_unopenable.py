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


@pytest.mark.embedded_only("damages the Kùzu file")
def test_repair_links_the_restored_entries_again_and_keeps_the_clock_zone(ws, run_kg):
    """(QA5 #2) --repair brought every entry back with no edge ("Edges: 0" where there were 1,798), and, with a
    write journaled while the graph could not be opened, recorded no clock zone though memory/.kg/clock-zone
    named it: status and doctor then said "no clock zone is recorded for this workspace (made by an older kg)".
    Now the auto links intake makes are made again, what cannot be (an event's pattern) is said, and the zone is
    recorded as it was."""
    lines = [json.dumps({"kind": ("error", "learning")[n % 2], "summary": f"entry number {n} about topic{n % 3} "
                         f"failing in module{n % 4}", "at": f"2026-11-0{1 + n % 5}T10:0{n % 10}:00",
                         "pattern_key": f"pk.t{n % 3}"}) for n in range(12)]
    assert run_kg(["ingest", "-"], input="\n".join(lines) + "\n").exit_code == 0
    before = run_kg(["status", "--json"]).json
    assert before["edges"].get("related_to") and before["zone_recorded"], before
    assert run_kg(["doctor"]).exit_code == 0
    wal = ws.graph_path.with_name(ws.graph_path.name + ".wal")
    for path in (ws.graph_path, wal):
        if path.exists():
            os.truncate(path, path.stat().st_size // 3)
    assert run_kg(["--now", NOW, "log", "learning", "journaled while the graph is damaged"]).exit_code == 0

    r = run_kg(["doctor", "--repair", "--json"])
    graph = next(c for c in r.json["checks"] if c["name"] == "graph")
    assert graph["status"] == "repaired" and "auto link(s) again" in graph["detail"], graph
    assert "not restored: the pattern each of the 12 restored event(s) belonged to" in graph["detail"], graph
    after = run_kg(["status", "--json"]).json
    assert after["edges"].get("related_to"), after["edges"]
    assert after["zone_recorded"] and after["zone_note"] is None, after
    clock = next(c for c in run_kg(["doctor", "--json"]).json["checks"] if c["name"] == "clock zone")
    assert clock["status"] == "ok", clock
