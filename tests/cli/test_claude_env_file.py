"""Two Claude Code windows on one workspace: each window's `kg log` goes to the session its own start opened.

A SessionStart hook may append `export` lines to the file `$CLAUDE_ENV_FILE` names, and Claude Code sources it
before the session's Bash commands (runtimes/claude_code/HOOKS_SUMMARY.md). kg's start appends KG_SESSION there.
Before, both windows shared the workspace's one current session: a log went to whichever window started last,
and after one window's end the other's logs went to no session and were missing from its summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).parent / "kg")
RUNTIME = Path(__file__).resolve().parents[3] / "shared" / "data" / "runtimes" / "claude_code" / "transcripts"


def real_session_ids() -> list[str]:
    """Two real Claude Code session ids (the transcripts' own `sessionId`)."""
    ids = []
    for path in sorted(RUNTIME.glob("*.jsonl"))[:2]:
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        ids.append(first["sessionId"])
    return ids


def hook(ws_root: Path, command: str, payload: dict, env_file: Path | None, now: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_SESSION", "CLAUDE_ENV_FILE")}
    env |= {"KG_NOW": now, "KG_HOOK_WAIT": "1"}
    if env_file is not None:
        env["CLAUDE_ENV_FILE"] = str(env_file)
    return subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True,
                          cwd=ws_root, env=env, timeout=120, check=False)


def agent_log(ws_root: Path, env_file: Path, text: str, now: str) -> subprocess.CompletedProcess:
    """A `kg log` from the window's Bash tool: Claude Code sources the env file first."""
    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_SESSION", "CLAUDE_ENV_FILE")}
    env["KG_NOW"] = now
    script = f'. "{env_file}"; "{KG}" log error "$1" --wait'
    return subprocess.run(["bash", "-c", script, "bash", text], capture_output=True, text=True, cwd=ws_root,
                          env=env, timeout=120, check=False)


def ours(settings: dict, event: str) -> str:
    return next(h["command"] for g in settings["hooks"][event] for h in g["hooks"] if "--runtime" in h["command"])


def test_two_windows_log_into_their_own_sessions(ws, run_kg, tmp_path):
    run_kg("install claude-code")
    settings = json.loads((ws.root / ".claude" / "settings.local.json").read_text())
    a_id, b_id = real_session_ids()
    env_a, env_b = tmp_path / "env-a.sh", tmp_path / "env-b.sh"
    env_a.write_text("", encoding="utf-8")
    env_b.write_text("export EDITOR=vi\n", encoding="utf-8")  # what another hook wrote stays

    def start(sid: str, env_file: Path, now: str) -> str:
        done = hook(ws.root, ours(settings, "SessionStart"),
                    {"session_id": sid, "hook_event_name": "SessionStart", "source": "startup", "cwd": str(ws.root),
                     "transcript_path": str(tmp_path / f"{sid}.jsonl")}, env_file, now)
        assert done.returncode == 0, done.stderr
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        return re.search(r"- Session: (\S+)", context).group(1)

    sess_b = start(b_id, env_b, "2026-07-01T09:00")
    sess_a = start(a_id, env_a, "2026-07-01T09:01")
    assert sess_a != sess_b
    assert env_a.read_text(encoding="utf-8") == f"export KG_SESSION={sess_a}\n"
    assert env_b.read_text(encoding="utf-8") == f"export EDITOR=vi\nexport KG_SESSION={sess_b}\n"

    # B's window logs after A started: B's session, not the last started
    assert agent_log(ws.root, env_b, "window b: the build failed", "2026-07-01T09:02").returncode == 0
    assert agent_log(ws.root, env_a, "window a: the lint failed", "2026-07-01T09:03").returncode == 0
    # A's window ends; B's window goes on logging into B's session
    end = hook(ws.root, ours(settings, "SessionEnd"),
               {"session_id": a_id, "hook_event_name": "SessionEnd", "reason": "exit", "cwd": str(ws.root),
                "transcript_path": str(tmp_path / "missing.jsonl")}, None, "2026-07-01T09:10")
    assert end.returncode == 0, end.stderr
    assert agent_log(ws.root, env_b, "window b: the deploy failed", "2026-07-01T09:12").returncode == 0

    by_text = {n["text"]: n["session"] for n in run_kg("list --json").json}
    assert by_text["window b: the build failed"] == sess_b
    assert by_text["window a: the lint failed"] == sess_a
    assert by_text["window b: the deploy failed"] == sess_b


def test_a_start_without_the_env_file_or_with_a_bad_one_still_answers(ws, run_kg, tmp_path):
    run_kg("install claude-code")
    settings = json.loads((ws.root / ".claude" / "settings.local.json").read_text())
    payload = {"session_id": real_session_ids()[0], "hook_event_name": "SessionStart", "source": "startup",
               "cwd": str(ws.root)}
    plain = hook(ws.root, ours(settings, "SessionStart"), payload, None, "2026-07-01T09:00")
    assert plain.returncode == 0 and "hookSpecificOutput" in json.loads(plain.stdout)
    blocked = tmp_path / "no-such-dir" / "env.sh"  # cannot be written: a note, the brief all the same
    done = hook(ws.root, ours(settings, "SessionStart"), payload, blocked, "2026-07-01T09:05")
    assert done.returncode == 0 and "hookSpecificOutput" in json.loads(done.stdout)
    assert "KG_SESSION" in done.stderr and not blocked.exists()
