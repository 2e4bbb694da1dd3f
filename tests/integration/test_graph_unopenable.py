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
    Now the auto links intake makes are made again, each event goes back into its pattern (the side file keeps its
    Pattern-Key: before, every pattern counted again from zero), and the zone is recorded as it was."""
    lines = [json.dumps({"kind": ("error", "learning")[n % 2], "summary": f"entry number {n} about topic{n % 3} "
                         f"failing in module{n % 4}", "at": f"2026-11-0{1 + n % 5}T10:0{n % 10}:00",
                         "pattern_key": f"pk.t{n % 3}"}) for n in range(12)]
    assert run_kg(["ingest", "-"], input="\n".join(lines) + "\n").exit_code == 0
    before = run_kg(["status", "--json"]).json
    assert before["edges"].get("related_to") and before["zone_recorded"], before
    counted = {p["key"]: p["recurrence"] for p in run_kg(["patterns", "--json"]).json}
    assert counted == {"pk.t0": 4, "pk.t1": 4, "pk.t2": 4}, counted
    assert run_kg(["doctor"]).exit_code == 0
    wal = ws.graph_path.with_name(ws.graph_path.name + ".wal")
    for path in (ws.graph_path, wal):
        if path.exists():
            os.truncate(path, path.stat().st_size // 3)
    assert run_kg(["--now", NOW, "log", "learning", "journaled while the graph is damaged"]).exit_code == 0

    r = run_kg(["doctor", "--repair", "--json"])
    graph = next(c for c in r.json["checks"] if c["name"] == "graph")
    assert graph["status"] == "repaired" and "auto link(s) again" in graph["detail"], graph
    assert "12 restored event(s) back in their pattern" in graph["detail"], graph
    assert {p["key"]: p["recurrence"] for p in run_kg(["patterns", "--json"]).json} == counted
    after = run_kg(["status", "--json"]).json
    assert after["edges"].get("related_to"), after["edges"]
    assert after["zone_recorded"] and after["zone_note"] is None, after
    clock = next(c for c in run_kg(["doctor", "--json"]).json["checks"] if c["name"] == "clock zone")
    assert clock["status"] == "ok", clock


LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv.pop(1)), resource.RLIM_INFINITY))
from kg.cli.entry import main
sys.argv = ["kg", *sys.argv[1:]]
sys.exit(main())
"""


def _limited(root, limit: int, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", LIMITED, str(limit), "-w", str(root), *args], capture_output=True,
                          text=True, env={**os.environ, "KG_SERVER": "0", "KG_NOW": NOW}, timeout=300)


@pytest.mark.embedded_only("Kùzu's address-space reservation")
def test_a_graph_opens_under_an_address_space_limit_and_is_never_called_damaged(ws, run_kg):
    """(QA11 #0) Under `ulimit -v 8000000` (containers, CI runners) every open failed "Mmap for size 8796093022208
    failed" (Kùzu reserves 8 TiB of addresses by default), the healthy graph was called damaged, and the advised
    `kg doctor --repair` set it and the search index aside, then failed, and the next repair started an empty graph.
    kg now asks Kùzu for less under a limit; a limit too small for any open is said as one, and nothing is moved."""
    for n in range(3):
        assert run_kg(["--now", NOW, "log", "error", f"make failed {n}: missing header", "--wait"]).exit_code == 0
    r = _limited(ws.root, 8_000_000 * 1024, "log", "error", "logged under a limit", "--wait", "--json")
    assert r.returncode == 0, r.stderr
    r = _limited(ws.root, 8_000_000 * 1024, "status", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["nodes"]["event"] == 4, r.stderr
    before = sorted(p.name for p in ws.kg_dir.iterdir())
    r = _limited(ws.root, 300 << 20, "doctor", "--repair")
    assert r.returncode != 0 and "damaged" not in r.stdout.replace("not damaged", ""), r.stdout
    assert not list(ws.kg_dir.glob("*.damaged-*")) and sorted(p.name for p in ws.kg_dir.iterdir()) == before
    assert json.loads(run_kg(["status", "--json"]).stdout)["nodes"]["event"] == 4


def test_a_limit_or_a_right_is_not_a_damaged_file():
    from kg.store.values import resource_error

    for text in ("Buffer manager exception: Mmap for size 8796093022208 failed.",
                 "IO exception: Cannot open file /w/memory/.kg/graph.kuzu.wal: Permission denied",
                 "IO exception: Too many open files",
                 "IO exception: Could not set lock on file : /w/memory/.kg/graph.kuzu"):
        assert "The file is not damaged" in resource_error(RuntimeError(text)), text
    assert resource_error(RuntimeError("Runtime exception: Invalid database file header")) is None


@pytest.mark.embedded_only("damages the Kùzu file")
def test_a_repair_that_cannot_make_a_new_graph_puts_everything_back(ws, run_kg, monkeypatch):
    """A repair moved the graph and the search index aside before it knew a new graph could be made; when it could
    not, the workspace was left with neither (QA11 #0's first repair). Now what it moved is put back."""
    from kg.core.errors import GraphUnopenable, StoreError
    from kg.ingest.recover import start_over
    from kg.workspace import Workspace

    assert run_kg(["--now", NOW, "log", "learning", "kept through a failed repair", "--wait"]).exit_code == 0
    assert run_kg(["doctor"]).exit_code == 0
    files = {p.name: p.read_bytes() for p in ws.kg_dir.iterdir() if p.is_file() and p.name.startswith(("graph.kuzu",
                                                                                                       "search."))}
    assert "graph.kuzu" in files

    def no_new_graph(self, *a, **k):
        raise StoreError("the disk is full (a test's); free some space and run the command again")

    monkeypatch.setattr(Workspace, "store", no_new_graph)
    status, detail = start_over(ws, GraphUnopenable("cannot open the graph: damaged. Run `kg doctor`"), True)
    monkeypatch.undo()
    assert status == "error" and "nothing was set aside" in detail, detail
    assert not list(ws.kg_dir.glob("*.damaged-*")) and not list(ws.kg_dir.glob("recovered-*"))
    assert {n: (ws.kg_dir / n).read_bytes() for n in files} == files
    assert "kept through a failed repair" in run_kg(["list"]).stdout


@pytest.mark.embedded_only("another program's Kùzu handle on the file")
def test_a_graph_another_program_holds_is_not_called_damaged(ws, run_kg):
    """(QA11 #0) Kùzu Explorer or a notebook's own `kuzu.Database` on graph.kuzu: "Could not set lock on file" was
    called damage, with a repair that set the healthy graph aside."""
    import subprocess
    import sys

    assert run_kg(["--now", NOW, "log", "learning", "kept while another program holds it", "--wait"]).exit_code == 0
    holder = subprocess.Popen([sys.executable, "-c", "import kuzu, sys; db = kuzu.Database(sys.argv[1]); "
                               "print('held', flush=True); sys.stdin.read()", str(ws.graph_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = _limited(ws.root, 1 << 62, "doctor", "--repair")
        assert r.returncode == 1 and "another program has the graph open" in r.stdout, r.stdout
        assert not list(ws.kg_dir.glob("*.damaged-*"))
    finally:
        holder.communicate("", timeout=60)
    assert "kept while another program holds it" in run_kg(["list"]).stdout
