"""A transcript a runtime names that is not a regular file (a FIFO, a link to a device) is never read: a FIFO
with no writer held the session-start hook for ever (with the graph, so every later command waited behind it,
the read server too), and Claude Code's sub-agent files were read whole, whatever they were. Real `kg`
processes under a timeout: before the fix they did not answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))
SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


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


def test_claude_code_sub_agent_files_that_are_not_files_are_skipped_with_a_note(ws, tmp_path, shared_data):
    main = tmp_path / "s1.jsonl"
    shutil.copy(shared_data / "runtimes" / "claude_code" / "transcripts" / SESSION, main)
    subs = tmp_path / "s1" / "subagents"
    subs.mkdir(parents=True)
    os.mkfifo(subs / "agent-fifo.jsonl")
    (subs / "agent-null.jsonl").symlink_to("/dev/null")
    done = _kg(ws, "reflect", str(main), "--json")
    assert done.returncode == 0, done.stderr
    skipped = json.loads(done.stdout)["skipped"]
    assert {k: v for k, v in skipped.items() if "sub-agent" in k} == {
        f"sub-agent file agent-{name}.jsonl, which is not a regular file (a FIFO, device or socket)": 1
        for name in ("fifo", "null")}
    assert json.loads(done.stdout)["turns"] > 0  # the session itself was read
