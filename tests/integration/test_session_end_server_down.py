"""A Claude Code session that starts and ends while the team server is down (QA2 #6): its start opens no kg session
(session numbers are every workspace's), and its SessionEnd, which answers at once, left no record in
memory/.kg/ending/ once its detached child failed on the unreachable server, so nothing ever reflected the
transcript. Now the end records the reflection it owes, and the next start after the server is back does it, into
the session named after the transcript's own id, with that session's summary (as an end kg never saw a start of).
Real processes, the real console entry, a real Claude Code transcript, a real FalkorDB server stopped and started.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kg

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import children_done  # noqa: E402

pytestmark = pytest.mark.falkordb

KG = str(Path(sys.executable).parent / "kg")
SID = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"


def _hook(root: Path, event: str, sid: str, transcript: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KG_NOW": "2026-12-06T10:00", "KG_SERVER": "0"}
    for name in ("KG_WORKSPACE", "KG_HOOK_WAIT", "KG_STORE"):
        env.pop(name, None)
    payload = {"session_id": sid, "transcript_path": transcript, "cwd": str(root), "hook_event_name": event,
               "source": "startup", "reason": "exit"}
    name = "session-start" if event == "SessionStart" else "session-end"
    return subprocess.run([KG, "-w", str(root), "hook", name, "--runtime", "claude-code", *extra],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=root, env=env, timeout=300)


def test_a_session_that_starts_and_ends_with_the_server_down_is_reflected_once_it_is_back(tmp_path, shared_data):
    from kg.store import falkor_server

    transcript = tmp_path / "t.jsonl"
    shutil.copy(shared_data / "runtimes" / "claude_code" / "transcripts" / f"{SID}.jsonl", transcript)
    data = tmp_path / "server"
    server = falkor_server.start(data)
    try:
        root = kg.init_workspace(tmp_path / "ws", store=f"falkordb://127.0.0.1:{server.port}/team").root
    finally:
        falkor_server.stop(data)
    ending = root / "memory" / ".kg" / "ending"

    start = _hook(root, "SessionStart", SID, str(transcript), "--start-session")
    assert start.returncode == 0, start.stderr
    end = _hook(root, "SessionEnd", SID, str(transcript))
    assert end.returncode == 0 and "Traceback" not in end.stderr, end.stderr
    children_done(root, "session-end")  # its child failed on the server that is down
    records = [json.loads(p.read_text()) for p in ending.glob("*.json")]
    assert [(r["transcript"], r.get("no_session")) for r in records] == [(str(transcript), True)]  # before: none

    again = falkor_server.start(data)
    try:
        assert again.port == server.port
        nxt = _hook(root, "SessionStart", "7b1c0d2e-0000-4000-8000-000000000001", "/nonexistent", "--start-session")
        assert nxt.returncode == 0, nxt.stderr
        children_done(root, "session-start")  # the start hands the reflection left to a detached child
        assert not list(ending.glob("*.json"))
        listed = subprocess.run([KG, "-w", str(root), "list", "--json"], capture_output=True, text=True,
                                env={**os.environ, "KG_SERVER": "0"}, timeout=120)
        assert listed.returncode == 0, listed.stderr
        entries = json.loads(listed.stdout)
        logged = [e for e in entries if e["kind"] != "pattern"]  # (a pattern is the graph's, of no session)
        assert logged and {e["session"] for e in logged} == {SID}, entries
        summary = root / "memory" / "sessions" / f"{SID}.md"
        assert summary.exists()
        # once: a later end reflects nothing twice
        ended = _hook(root, "SessionEnd", "7b1c0d2e-0000-4000-8000-000000000001", "/nonexistent")
        assert ended.returncode == 0, ended.stderr
        children_done(root, "session-end")
        listed = subprocess.run([KG, "-w", str(root), "list", "--json"], capture_output=True, text=True,
                                env={**os.environ, "KG_SERVER": "0"}, timeout=120)
        assert len(json.loads(listed.stdout)) == len(entries)
    finally:
        falkor_server.stop(data)
