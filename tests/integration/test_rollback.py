"""The import's copy to roll back to (kg/store/rollback.py): whose intent it is, a failure that is not a kill,
the file a restore leaves, a graph reached through a symbolic link. Real Kùzu, the real CLI in another process
where "the next writer" must have another pid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kg.cli.app import run

from kg.ingest.trail import import_trail
from kg.store import rollback

pytestmark = pytest.mark.embedded_only("the copy and the intent are files beside an embedded Kùzu graph")



def kg_elsewhere(ws, *argv: str) -> tuple[int, str, str]:
    """`kg ARGS` in another process (another pid), as the next writer after this one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    proc = subprocess.run([sys.executable, "-c", "import sys; from kg.cli.app import run; sys.exit(run(sys.argv[1:]))",
                           "-w", str(ws.root), *argv], capture_output=True, text=True, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def listed(ws) -> set[str]:
    code, out, err = kg_elsewhere(ws, "list", "--limit", "1000", "--json")
    assert code == 0, err
    return {r["id"] for r in json.loads(out)}


def cut_short_here(ws) -> None:
    """An import killed while building the index, as it leaves the files: the copy and an intent this process
    did not take (its own pid in it: a killed import's pid reused by this writer)."""
    with ws.store() as st:
        assert rollback.take(st, "import")
        rollback.phase(st, "index")
    getattr(rollback, "_taken", {}).clear()  # (the process that took it is gone)
    plan = json.loads(rollback.intent_of(ws.graph_path).read_text())
    assert plan["pid"] == os.getpid() and plan["phase"] == "index"


def test_a_killed_imports_intent_is_stale_even_when_its_pid_is_this_writers(ws):
    before = ws.log("learning", "logged before the import", wait=True).id
    cut_short_here(ws)
    after = ws.log("learning", "logged by the writer that reuses the pid", wait=True).id
    # the writer restored the copy before writing: nothing is left for the next one to restore over its write
    assert not rollback.intent_of(ws.graph_path).exists() and not rollback.backup_of(ws.graph_path).exists()
    assert listed(ws) >= {before, after}
    assert kg_elsewhere(ws, "log", "learning", "a later writer with another pid", "--wait")[0] == 0
    assert listed(ws) >= {before, after}


def test_an_import_that_raises_inside_a_held_workspace_leaves_the_next_write_in_the_graph(ws, tmp_path,
                                                                                         monkeypatch):
    trail = tmp_path / "t.trail.json"
    trail.write_text(json.dumps({"entries": [
        {"id": f"ERR-20250102-{i:06d}", "type": "error", "summary": f"imported failure {i}",
         "logged": f"2025-01-02T10:00:{i:02d}"} for i in range(5)]}))
    import kg.ingest.importing as importing

    def failing(*_a):
        raise RuntimeError("the import's last step failed")

    with ws:
        monkeypatch.setattr(importing, "_build_index", failing)  # (issue 22: it builds no index to fail)
        with pytest.raises(RuntimeError):
            import_trail(ws, [trail])
        monkeypatch.undo()
        assert not rollback.intent_of(ws.graph_path).exists()  # given up before the process writes on
        logged = ws.log("learning", "platypusword written after the failed import", wait=True).id
    assert not (ws.kg_dir / "journal.rejected").exists()
    assert logged in listed(ws)
    code, out, err = kg_elsewhere(ws, "import", "trail", str(trail))  # the import runs again, whole
    assert code == 0, err
    assert listed(ws) >= {logged} | {f"ERR-20250102-{i:06d}" for i in range(5)}


def test_doctor_removes_the_file_a_restore_left(ws, capsys):
    ws.log("learning", "logged before the import", wait=True)
    cut_short_here(ws)
    assert kg_elsewhere(ws, "log", "learning", "the writer that restores", "--wait")[0] == 0
    kept = ws.graph_path.with_name("graph.kuzu.cut-short")
    assert kept.is_file()
    capsys.readouterr()
    run(["-w", str(ws.root), "doctor", "--dry-run"])
    assert "cut-short graph" in capsys.readouterr().out and kept.is_file()
    run(["-w", str(ws.root), "doctor"])
    assert "🔧 cut-short graph: removed" in capsys.readouterr().out and not kept.exists()


def test_a_restore_writes_through_a_symbolic_link(ws, tmp_path):
    before = ws.log("learning", "logged before the link", wait=True).id
    target = tmp_path / "elsewhere" / "graph.kuzu"
    target.parent.mkdir()
    os.replace(ws.graph_path, target)
    ws.graph_path.symlink_to(target)
    cut_short_here(ws)
    assert kg_elsewhere(ws, "log", "learning", "logged by the restoring writer", "--wait")[0] == 0
    assert ws.graph_path.is_symlink() and Path(os.path.realpath(ws.graph_path)) == target
    after = ws.log("learning", "logged after the restore", wait=True).id
    assert ws.graph_path.is_symlink()
    assert listed(ws) >= {before, after}


def test_a_rebuild_after_a_killed_import_writes_through_a_symbolic_link(ws, tmp_path):
    from tests.integration.test_reliability import _import_killed

    target = tmp_path / "elsewhere" / "graph.kuzu"
    target.parent.mkdir()
    ws.log("learning", "logged before the link", wait=True)
    os.replace(ws.graph_path, target)
    ws.graph_path.symlink_to(target)
    before, _ = _import_killed(ws, tmp_path, after=0, legacy=True)
    rollback.discard(ws.graph_path)  # no copy (as a kg before it left it): the graph is rebuilt at the next open
    code, _, err = kg_elsewhere(ws, "log", "learning", "logged by the rebuilding writer", "--wait")
    assert code == 0 and "rebuilt the graph" in err, err
    assert ws.graph_path.is_symlink() and Path(os.path.realpath(ws.graph_path)) == target
    assert listed(ws) >= set(before)
