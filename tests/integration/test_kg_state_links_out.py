"""A link inside memory/.kg leading out of it is not written through (QA3 #4): a linked snapshots/ got a full copy
of the graph from `kg export graph`, a linked ending/ the SessionEnd hook's records, and a linked cycle.log the
scheduled run's line. Now the export fails with kg's one Error line (exit 1), the hook still answers 0 and ends the
session without its record (a warning on stderr), the run says the line was not logged (exit 1, the log in
`skipped`), and neither doctor nor a session start sweeps the outside folder. Real processes, the real console
entry, a real Claude Code transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import children_done  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
SID = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"


def kg(root: Path, *args: str, payload: dict | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_HOOK_WAIT", "KG_CRONTAB")}
    env["KG_SERVER"] = "0"
    return subprocess.run([KG, "-w", str(root), *args], input=json.dumps(payload) if payload else None,
                          capture_output=True, text=True, cwd=root, env=env, timeout=300, check=False)


def _linked(ws, name: str, outside: Path) -> None:
    place = ws.kg_dir / name
    if place.is_dir():
        place.rmdir()
    place.unlink(missing_ok=True)
    place.symlink_to(outside)


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def test_a_snapshot_is_not_copied_through_a_linked_snapshots_folder(ws, outside):
    assert kg(ws.root, "log", "error", "a first entry", "--wait").returncode == 0
    _linked(ws, "snapshots", outside)
    dead = outside / "snap-left"  # a copy as a killed process leaves it: its owner lock held by no one
    dead.mkdir()
    (dead / "owner.lock").write_text("", encoding="utf-8")
    r = kg(ws.root, "export", "graph", "--format", "json", "--out", "g.json")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr == (f"Error: memory/.kg/snapshots is a symlink to {outside}, outside the workspace {ws.root}; "
                        "kg will not write there: replace the link with a copy of the folder, or link to a folder "
                        "inside the workspace\n")
    assert [p.name for p in outside.iterdir()] == ["snap-left"] and not (ws.root / "g.json").exists()
    doctor = kg(ws.root, "doctor", "--json")
    assert dead.is_dir(), "doctor swept a folder outside memory/.kg"
    files = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "files"]
    assert [c["status"] for c in files] == ["error"] and "memory/.kg/snapshots is a symlink" in files[0]["detail"]


def test_the_session_end_hook_answers_0_and_writes_no_record_through_a_linked_ending_folder(ws, outside,
                                                                                           shared_data):
    transcript = str(shared_data / "runtimes" / "claude_code" / "transcripts" / f"{SID}.jsonl")
    started = kg(ws.root, "session", "start", "--json")
    assert started.returncode == 0, started.stderr
    session = json.loads(started.stdout)["id"]
    _linked(ws, "ending", outside)
    (outside / "someone-else.json").write_text("{}", encoding="utf-8")  # not kg's to end or remove
    payload = {"session_id": SID, "transcript_path": transcript, "hook_event_name": "SessionEnd",
               "cwd": str(ws.root)}
    end = kg(ws.root, "hook", "session-end", "--runtime", "claude-code", payload=payload)
    assert end.returncode == 0, end.stderr
    assert end.stderr.startswith(f"Warning: memory/.kg/ending is a symlink to {outside}, outside the workspace ")
    assert end.stderr.rstrip().endswith("this session end goes on without its record")
    assert [p.name for p in outside.iterdir()] == ["someone-else.json"]  # early record and full path: none
    children_done(ws.root, "session-end")
    assert (ws.root / "memory" / "sessions" / f"{session}.md").is_file()  # the end itself was done
    assert kg(ws.root, "session", "start").returncode == 0  # its sweep leaves the outside folder alone
    assert [p.name for p in outside.iterdir()] == ["someone-else.json"]


def test_the_scheduled_run_does_not_append_to_a_linked_cycle_log(ws, outside):
    log = outside / "cycle.log"
    log.write_text("someone else's log\n", encoding="utf-8")
    _linked(ws, "cycle.log", log)
    r = kg(ws.root, "schedule", "run", "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    done = json.loads(r.stdout)
    assert done["ok"] is True and done["skipped"] == ["memory/.kg/cycle.log"]
    assert done["line"].endswith(f"not logged: memory/.kg/cycle.log is a symlink to {log}, outside the workspace "
                                 f"{ws.root}; kg will not write there: replace the link with a copy of the file, or "
                                 "link to a file inside the workspace (skipped)")
    assert log.read_text(encoding="utf-8") == "someone else's log\n"
    last = json.loads((ws.kg_dir / "last-cycle.json").read_text(encoding="utf-8"))
    assert last["skipped"] == ["memory/.kg/cycle.log"]
