"""A transcript a runtime names that is not a regular file (a FIFO, a link to a device) is never read: a FIFO
with no writer held the session-start hook for ever (with the graph, so every later command waited behind it,
the read server too), and Claude Code's sub-agent files were read whole, whatever they were. Real `kg`
processes under a timeout: before the fix they did not answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))


def _kg(ws, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KG_SERVER": "0", "KG_NOW": "2026-12-05T09:00:00"}
    return subprocess.run([KG, "-w", str(ws.root), *args], input=stdin, capture_output=True, text=True,
                          timeout=120, check=False, env=env)


def test_a_session_start_naming_a_fifo_transcript_starts_now_with_a_note(ws, tmp_path):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    payload = {"session_id": "a1", "transcript_path": str(fifo), "hook_event_name": "SessionStart",
               "source": "startup"}
    done = _kg(ws, "hook", "session-start", "--start-session", "--runtime", "claude-code", "--json",
               stdin=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"Note: the transcript {fifo} is not a regular file (a FIFO, device or socket): not "
                           "read, the session starts now\n")
    brief = json.loads(done.stdout)
    assert (brief["session"], brief["session_started"]) == ("2026-12-05-001", True)
    after = _kg(ws, "status", "--json")  # nothing is left holding the graph
    assert after.returncode == 0 and json.loads(after.stdout)["sessions"] == 1, after.stderr
