"""Another workspace's trail merged into this one: its lifecycle (changes, proposals, decisions: records of lines
in *its* files) is not imported, and said; nothing of this workspace's lifecycle changes, nothing of the other's is
attached to it, and this workspace's `kg cycle` checks and reverts only what it wrote. Both workspaces promoted a
rule on the same day, so both hold `chg-<day>-001`: the other's was counted "already present" and its proposal's
link could reach this workspace's change. Real CLI, real Kùzu (a team graph carries no lifecycle in its trail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, timedelta

import pytest

from tests.conftest import fresh_workspace, kg_runner

pytestmark = [pytest.mark.embedded_only("the trail's lifecycle is the embedded graph's (a team graph lacks it)"),
              pytest.mark.baseline_wait_off("importing another workspace's lifecycle")]

FIRST = date(2026, 5, 1)
PROMOTED = "2026-05-08T12:00"
CHANGE = "chg-20260508-001"


def _promote(run, key: str, text: str, rule: str, first: date = FIRST) -> str:
    for d in range(8):
        day = first + timedelta(days=d)
        r = run(["log", "error", text, "--category", "tool_gotcha", "--pattern-key", key, "--session", f"{key}{d}",
                 "--action", rule, "--now", f"{day.isoformat()}T10:00"])
        assert r.exit_code == 0, r.stderr
    at = f"{(first + timedelta(days=7)).isoformat()}T12:00"
    assert f"promoted '{key}'" in run(["cycle", "--now", at]).stdout
    return f"chg-{at[:10].replace('-', '')}-001"


def _trail(run, root, name: str) -> dict:
    out = root / name
    assert run(["export", "trail", "--out", str(out), "--now", "2026-05-09T09:00"]).exit_code == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    del doc["exported"]
    return doc


@pytest.fixture
def merged(ws, run_kg, tmp_path, request):
    _promote(run_kg, "docker.perm", "docker permission denied on socket", "Add the user to the docker group")
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    _promote(run_o, "git.push", "git push rejected without upstream", "Push with git push -u origin HEAD")
    theirs = _trail(run_o, other.root, "theirs.json")
    mine = _trail(run_kg, ws.root, "before.json")
    assert [c["id"] for c in theirs["changes"]] == [c["id"] for c in mine["changes"]] == [CHANGE]
    dry = run_kg(["import", "trail", str(other.root / "theirs.json"), "--json", "--dry-run"])
    assert dry.exit_code == 0 and dry.json["lifecycle"] == dry.json["lifecycle_not_imported"] == {}, dry.stdout
    assert any("lifecycle (1 block, 1 change); whether it is imported is decided by the import" in w
               for w in dry.json["warnings"]), dry.json
    r = run_kg(["import", "trail", str(other.root / "theirs.json"), "--json", "--now", "2026-05-09T09:00"])
    assert r.exit_code == 0, r.stderr
    return mine, theirs, r


def test_another_workspaces_lifecycle_is_not_imported_and_this_ones_is_unchanged(ws, run_kg, merged, tmp_path):
    mine, theirs, r = merged
    # every entry of it is kept: each was made at the same second as this workspace's entry of its id (10:00)
    assert (r.json["entries"], r.json["nodes"]) == (8, 2), r.json  # (the rule, and a pattern of the trail's key)
    kept = {k: len(v) for k, v in theirs["lifecycle"].items()} | {"changes": len(theirs["changes"])}
    assert r.json["lifecycle"] == dict.fromkeys(("changes", "proposals", "decisions", "blocks"), 0)
    assert r.json["lifecycle_not_imported"] == {k: n for k, n in kept.items() if n} == {"changes": 1, "blocks": 1}
    assert "the trail's lifecycle (1 block, 1 change) was not imported" in r.stderr, r.stderr
    after = _trail(run_kg, ws.root, "after.json")
    # this workspace's own records unchanged; the other's promoted rule waits as one `import` proposal
    added = [q for q in after["lifecycle"]["proposals"] if q not in mine["lifecycle"]["proposals"]]
    assert [(q["type"], q["target"], q["text"], q["status"]) for q in added] == [
        ("import", "TOOLS.md", "Push with git push -u origin HEAD", "pending")], added
    own = {**after["lifecycle"], "proposals": [q for q in after["lifecycle"]["proposals"] if q not in added]}
    assert after["changes"] == mine["changes"] and own == mine["lifecycle"]
    texts = [e["summary"] for e in after["entries"]]
    assert sorted(set(texts)) == ["docker permission denied on socket", "git push rejected without upstream"]
    assert len(texts) == 16
    why = run_kg(["why", "- Add the user to the docker group", "--json", "--now", "2026-05-09T10:00"]).json
    assert why["change"]["id"] == CHANGE and "docker group" in why["change"]["text"], why
    for again in (ws.root / "before.json", tmp_path / "other" / "theirs.json"):
        r = run_kg(["import", "trail", str(again), "--json", "--now", "2026-05-09T09:30"])
        assert r.exit_code == 0 and (r.json["entries"], r.json["nodes"], r.json["edges"]) == (0, 0, 0), r.json
    assert r.json["lifecycle_not_imported"] == {"changes": 1, "blocks": 1}
    text = run_kg(["import", "trail", str(ws.root / "before.json"), "--now", "2026-05-09T09:30"])
    assert text.exit_code == 0 and "Imported 0 entries" in text.stdout, text.stdout + text.stderr
    assert "not imported" not in text.stderr + text.stdout  # its own trail again: each record present as it is
    text = run_kg(["import", "trail", str(tmp_path / "other" / "theirs.json"), "--now", "2026-05-09T09:30"])
    assert text.stdout.endswith("; not imported, of the trail's lifecycle: 1 block, 1 change\n"), text.stdout


def test_this_workspaces_cycle_checks_and_reverts_only_what_it_wrote(ws, run_kg, tmp_path, request):
    """The other workspace promoted a day later (its `chg-20260509-001` is no id of this graph): loaded, this
    workspace's cycle verified a rule of the other's TOOLS.md and reverted it from its own."""
    mine = _promote(run_kg, "docker.perm", "docker permission denied on socket", "Add the user to the docker group")
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    theirs = _promote(run_o, "git.push", "git push rejected without upstream", "Push with git push -u origin HEAD",
                      first=FIRST + timedelta(days=1))
    _trail(run_o, other.root, "theirs.json")
    r = run_kg(["import", "trail", str(other.root / "theirs.json"), "--json", "--now", "2026-05-10T09:00"])
    assert r.exit_code == 0 and r.json["lifecycle_not_imported"] == {"changes": 1, "blocks": 1}, r.json
    own_rule = "- Add the user to the docker group"
    for day in ("2026-05-16T12:00", "2026-05-30T12:00", "2026-06-20T12:00", "2026-07-20T12:00"):
        r = run_kg(["cycle", "--json", "--now", day])
        assert r.exit_code == 0, r.stderr
        acted = [x for part in ("verified", "reverted", "withdrawn") for x in r.json[part]]
        assert theirs not in json.dumps(acted), acted
    ours = {c["id"]: c for c in _trail(run_kg, ws.root, "after.json")["changes"]}
    assert theirs not in ours and ours[mine]["verdict"], ours  # its own rule was checked
    assert own_rule in (ws.root / "TOOLS.md").read_text(encoding="utf-8") or ours[mine]["reverted_at"]


def test_a_trail_restored_into_an_empty_workspace_keeps_its_lifecycle_and_again_changes_nothing(
        ws, run_kg, tmp_path, request):
    _promote(run_kg, "docker.perm", "docker permission denied on socket", "Add the user to the docker group")
    before = _trail(run_kg, ws.root, "before.json")
    moved = fresh_workspace(tmp_path / "moved", request)
    run_m = kg_runner(moved.root)
    dry = run_m(["import", "trail", str(ws.root / "before.json"), "--json", "--dry-run"])
    assert dry.exit_code == 0 and dry.json["lifecycle"] == {}, dry.stdout + dry.stderr
    for _ in range(2):
        r = run_m(["import", "trail", str(ws.root / "before.json"), "--json", "--now", "2026-05-09T09:00"])
        assert r.exit_code == 0 and not r.json.get("lifecycle_not_imported"), r.stdout + r.stderr
    after = _trail(run_m, moved.root, "after.json")
    assert after["changes"] == before["changes"] and after["entries"] == before["entries"]


def test_a_restore_named_by_a_relative_path_killed_in_its_lifecycle_resumes_it_whole(ws, run_kg, tmp_path, request):
    """The mark names the file whose lifecycle the import takes as its path resolved, as it names the files the
    resumed import reads: a relative path must not make the resumed import take the lifecycle for another's."""
    import os
    import signal
    import subprocess
    import sys

    _promote(run_kg, "docker.perm", "docker permission denied on socket", "Add the user to the docker group")
    before = _trail(run_kg, ws.root, "before.json")
    moved = fresh_workspace(tmp_path / "moved", request)
    script = ("import os, signal, sys\nfrom pathlib import Path\nimport kg, kg.ingest.trail\n"
              "from kg.store import bulk\ncopy = bulk.copy_rows\n"
              "def die(st, label, rows, **kw):\n"
              "    if label == 'change_applies':\n        os.kill(os.getpid(), signal.SIGKILL)\n"
              "    return copy(st, label, rows, **kw)\n"
              "bulk.copy_rows = die\n"
              "kg.ingest.trail.import_trail(kg.open_workspace(Path(sys.argv[1])), [Path('before.json')])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    proc = subprocess.run([sys.executable, "-c", script, str(moved.root)], cwd=ws.root, env=env, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    r = kg_runner(moved.root)(["import", "trail", "--json", "--now", "2026-05-09T09:00"])
    assert r.exit_code == 0 and r.json["resumed"] and not r.json["lifecycle_not_imported"], r.stdout + r.stderr
    after = _trail(kg_runner(moved.root), moved.root, "after.json")
    assert after["changes"] == before["changes"] and after["changes"][0]["rule"]


def test_an_unreadable_import_mark_takes_no_lifecycle_into_a_graph_with_its_own(ws, run_kg, tmp_path, request):
    """A mark that cannot be read was taken for one written before marks kept whose lifecycle: every file's was
    taken, and another workspace's change loaded into a graph with its own history."""
    _promote(run_kg, "docker.perm", "docker permission denied on socket", "Add the user to the docker group")
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    _promote(run_o, "git.push", "git push rejected without upstream", "Push with git push -u origin HEAD",
             first=date(2026, 5, 2))
    _trail(run_o, other.root, "theirs.json")
    mine = _trail(run_kg, ws.root, "before.json")
    (ws.kg_dir / "import.json").write_text('{"paths": "x"', encoding="utf-8")
    r = run_kg(["import", "trail", str(other.root / "theirs.json"), "--json", "--now", "2026-05-10T09:00"])
    assert r.exit_code == 0, r.stdout + r.stderr
    assert r.json["lifecycle_not_imported"] == {"changes": 1, "blocks": 1}, r.json
    assert _trail(run_kg, ws.root, "after.json")["changes"] == mine["changes"]


_HOLDER = ("import sys, kg\nws = kg.open_workspace(sys.argv[1])\nwith ws.store():\n    print('open', flush=True)\n"
           "    sys.stdin.readline()\n")


def test_a_dry_run_reads_no_graph(ws, run_kg, tmp_path, monkeypatch):
    """`--dry-run` writes nothing: it opened the graph (applying the journal first) to say whose lifecycle it would
    take, and while another process held the graph it waited, then failed."""
    _promote(run_kg, "docker.perm", "docker permission denied on socket", "Add the user to the docker group")
    _trail(run_kg, ws.root, "before.json")
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(ws.root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "KG_SERVER": "0"})
    try:
        assert proc.stdout.readline().strip() == "open"  # another process holds the graph
        with monkeypatch.context() as m:
            m.setenv("KG_LOCK_TIMEOUT", "1")
            dry = run_kg(["import", "trail", str(ws.root / "before.json"), "--json", "--dry-run"])
        assert dry.exit_code == 0 and dry.json["entries"] == 8, dry.stdout + dry.stderr
        assert dry.json["lifecycle"] == dry.json["lifecycle_not_imported"] == {}, dry.json
    finally:
        proc.stdin.close()
        proc.wait()
