"""A hook payload's known field of the wrong JSON type is bad input, by the hooks' one rule (README: under
`--runtime` an `Error:` line and exit 1, stdout empty, never 2, which Claude Code and Codex read as "block" or "go
on"; without it exit 2). Before: a transcript_path that was a number failed as "kg hook failed: TypeError: ...", a
prompt that was a list as an AttributeError, and a session_id that was a number was taken for none, so a session
end ended whichever session was current. The installed `kg` console script, as a runtime runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _hook(ws, args: list[str], payload: dict) -> subprocess.CompletedProcess[str]:
    kg = str(Path(sys.executable).with_name("kg"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {
        "KG_SERVER": "0", "KG_HOOK_WAIT": "1", "KG_NOW": "2026-07-01T10:00:00"}
    if os.environ.get("KG_STORE"):  # the FalkorDB pass: this workspace's graph on the test server
        env["KG_STORE"] = os.environ["KG_STORE"]
    return subprocess.run([kg, "-w", str(ws.root), "hook", *args], input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=300)


SCHEMA = "Error: the hook payload on stdin does not fit the hook's schema: "


@pytest.mark.parametrize(("hook", "payload", "said"), [
    ("session-end", {"session_id": "s1", "hook_event_name": "SessionEnd", "transcript_path": 5},
     "transcript_path should be text (the transcript's path, a JSON string), not a number"),
    ("session-start", {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
                       "prompt": ["deploy"]}, "prompt should be text (a JSON string), not a list"),
    ("session-end", {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": "false"},
     "stop_hook_active should be true or false, not text"),
    ("post-tool-use", {"session_id": {"id": 1}, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                       "tool_input": ["pytest"], "error": "Exit code 1\nboom"},
     "session_id should be text (a JSON string), not an object; tool_input should be an object, not a list"),
])
@pytest.mark.parametrize("runtime", ["claude-code", "codex"])
def test_a_known_field_of_the_wrong_type_is_one_error_line_and_exit_1(ws, hook, payload, said, runtime):
    done = _hook(ws, [hook, "--runtime", runtime], payload)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", SCHEMA + said + "\n")


def test_without_runtime_it_is_bad_input_as_for_every_command(ws):
    done = _hook(ws, ["session-end"], {"transcript_path": 5})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == SCHEMA + "transcript_path should be text (the transcript's path, a JSON string), " \
                                   "not a number\n"


def test_a_session_id_of_the_wrong_type_ends_no_session(ws):
    started = _hook(ws, ["session-start", "--start-session", "--runtime", "claude-code", "--json"],
                    {"session_id": "window-1", "hook_event_name": "SessionStart", "source": "startup"})
    assert started.returncode == 0, started.stderr
    sid = json.loads(started.stdout)["session"]
    done = _hook(ws, ["session-end", "--runtime", "claude-code"], {"session_id": 7, "hook_event_name": "SessionEnd"})
    assert done.returncode == 1 and "session_id should be text" in done.stderr
    assert ws.current_session() == sid and not (ws.root / "memory" / "sessions" / f"{sid}.md").exists()
