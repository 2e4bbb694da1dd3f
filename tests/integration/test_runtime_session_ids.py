"""A runtime's session end ends the kg session started for that runtime session, not whichever is current. kg
kept no tie between a runtime's own session ids and its sessions: OpenClaw's session:end for a session can come
after the next session started, and two Claude Code or Codex sessions can share a workspace; a start went on with
the other one's session, and an end ended the session running now. The runtime's id is tied to the kg session a
start opens (memory/.kg/sessions.json), and an end ends the one it names.

Real processes, the real console entry, real transcripts and the payload shapes of each runtime's hook schema;
OpenClaw's events go through the installed handler.js under node."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import processes_of  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
RUNTIMES = ("runtimes",)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k.startswith("KG_STORE")}  # a team pass
    return {**env, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0", **extra}


def _hook(root: Path, runtime: str, argv: list[str], payload: dict, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), "hook", *argv, "--runtime", runtime], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=root, env=_env(**extra), timeout=300)


def _until_gone(root: Path, event: str) -> None:
    deadline = time.monotonic() + 300
    while processes_of(root, event):
        assert time.monotonic() < deadline, f"kg {event} never finished"
        time.sleep(0.05)


def _started(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, run.stderr
    text = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    return text.split("- Session: ")[1].split()[0]


def _state(ws, *sessions: str) -> list[bool]:
    """Whether each session is open."""
    with ws.reading() as st:
        return [st.run("memory_session_get", id=s)[0]["ended_at"] is None for s in sessions]


def _summary(ws, sid: str) -> Path:
    return ws.root / "memory" / "sessions" / f"{sid}.md"


def test_claude_code_ends_the_session_its_session_id_names(ws, shared_data):
    a, b = sorted(shared_data.joinpath("runtimes", "claude_code", "transcripts").glob("*.jsonl"))[:2]
    base = {"cwd": str(ws.root), "permission_mode": "default", "model": "claude-sonnet-4"}
    start = {**base, "hook_event_name": "SessionStart", "source": "startup"}
    first = _started(_hook(ws.root, "claude-code", ["session-start", "--start-session"],
                           {**start, "session_id": a.stem, "transcript_path": None}))
    # a second window in the same workspace: its own session (before: it went on with the first one's)
    second = _started(_hook(ws.root, "claude-code", ["session-start", "--start-session"],
                            {**start, "session_id": b.stem, "transcript_path": None}))
    assert second != first and ws.current_session() == second
    # the first window compacts: it goes on with its own session, which is current again
    again = _started(_hook(ws.root, "claude-code", ["session-start", "--start-session"],
                           {**start, "source": "compact", "session_id": a.stem, "transcript_path": str(a)}))
    assert again == first and ws.current_session() == first
    resumed = _started(_hook(ws.root, "claude-code", ["session-start", "--start-session"],
                             {**start, "source": "resume", "session_id": b.stem, "transcript_path": None}))
    assert resumed == second and ws.current_session() == second
    # the first window exits: its session ends, not the second's (before: the current one, the second, ended)
    end = _hook(ws.root, "claude-code", ["session-end"],
                {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit", "session_id": a.stem,
                 "transcript_path": str(a)}, KG_HOOK_WAIT="1")
    assert end.returncode == 0, end.stderr
    assert _state(ws, first, second) == [False, True]
    assert _summary(ws, first).exists() and not _summary(ws, second).exists()
    assert ws.current_session() == second
    # its end again (a retried hook): nothing more ends
    end = _hook(ws.root, "claude-code", ["session-end"],
                {**base, "hook_event_name": "SessionEnd", "reason": "other", "session_id": a.stem,
                 "transcript_path": str(a)}, KG_HOOK_WAIT="1")
    assert end.returncode == 0, end.stderr
    assert _state(ws, first, second) == [False, True] and ws.current_session() == second


def test_codex_reflects_each_turn_into_its_own_session_and_ends_it(ws, shared_data):
    rollouts = sorted(shared_data.joinpath("runtimes", "codex", "transcripts").glob("rollout-*.jsonl"))
    a, b = rollouts[1], rollouts[2]  # (the first has no finding to log)
    ids = [json.loads(p.open(encoding="utf-8").readline())["payload"]["id"] for p in (a, b)]
    common = {"cwd": str(ws.root), "model": "gpt-5-codex", "permission_mode": "default"}
    first = _started(_hook(ws.root, "codex", ["session-start", "--start-session"],
                           {**common, "hook_event_name": "SessionStart", "source": "startup", "session_id": ids[0],
                            "transcript_path": None}))
    second = _started(_hook(ws.root, "codex", ["session-start", "--start-session"],
                            {**common, "hook_event_name": "SessionStart", "source": "startup",
                             "session_id": ids[1], "transcript_path": None}))
    assert second != first
    # the first session's turn ends (Stop, --no-summary as `kg install codex` writes it): its findings are its own
    stop = _hook(ws.root, "codex", ["session-end", "--no-summary"],
                 {**common, "hook_event_name": "Stop", "session_id": ids[0], "turn_id": "1", "transcript_path": str(a),
                  "last_assistant_message": None, "stop_hook_active": False})
    assert stop.returncode == 0, stop.stderr
    _until_gone(ws.root, "session-end")
    with ws.reading() as st:
        found = {n["id"] for n in st.run("memory_session_nodes", id=first)}
        assert found and not st.run("memory_session_nodes", id=second)  # (before: in the current one, second)
    end = _hook(ws.root, "codex", ["session-end"], {**common, "hook_event_name": "SessionEnd", "reason": "other",
                                                    "session_id": ids[0], "transcript_path": str(a)})
    assert end.returncode == 0, end.stderr
    _until_gone(ws.root, "session-end")
    assert _state(ws, first, second) == [False, True] and ws.current_session() == second
    assert _summary(ws, first).exists() and not _summary(ws, second).exists()
    # what the Stops logged is the session's too: its summary sums the whole rollout (it said "(none)", QA8 #3)
    done = _summary(ws, first).read_text(encoding="utf-8").split("## Tasks Completed\n")[1].split("\n")[0]
    assert done.startswith(f"- Reflected on {a} (codex, ") and f"{len(found)} error" in done, done


# The gateway's side: the handler imported once, as the gateway does; one event per line on stdin, each awaited;
# "done" after each.
DRIVER = r"""
import readline from "node:readline";
const { default: handler } = await import("file://" + process.argv[2]);
for await (const line of readline.createInterface({ input: process.stdin })) {
  await handler(JSON.parse(line));
  console.log("done");
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs OpenClaw's handler.js")
def test_openclaw_session_end_that_comes_after_the_next_start_ends_its_own_session(ws, shared_data, tmp_path):
    transcripts = sorted(shared_data.joinpath("runtimes", "openclaw", "transcripts").glob("*.jsonl"))
    x, y = (shutil.copyfile(p, tmp_path / p.name) for p in transcripts[:2])
    env = _env()
    assert subprocess.run([KG, "-w", str(ws.root), "install", "openclaw"], env=env, capture_output=True,
                          timeout=300).returncode == 0
    (tmp_path / "drive.mjs").write_text(DRIVER, encoding="utf-8")
    node = subprocess.Popen(["node", str(tmp_path / "drive.mjs"), str(ws.root / "hooks/kaizen-kg/handler.js")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ws.root, env=env)

    def event(kind: str, action: str, context: dict) -> None:
        node.stdin.write(json.dumps({"type": kind, "action": action, "sessionKey": "agent:main:main",
                                     "messages": [], "context": context}) + "\n")
        node.stdin.flush()
        assert node.stdout.readline().strip() == "done"
        for name in ("session-start", "session-end"):  # kg runs detached: each event's kg is done before the next
            _until_gone(ws.root, name)

    def bootstrap(sid: str) -> None:
        event("agent", "bootstrap", {"workspaceDir": str(ws.root), "bootstrapFiles": [], "agentId": "main",
                                     "sessionKey": "agent:main:main", "sessionId": sid})

    try:
        bootstrap(x.stem)  # the first brief (awaited): the session for X
        first = ws.current_session()
        bootstrap(y.stem)  # the daily reset gave the key a new sessionId, Y; X's end has not come yet
        second = ws.current_session()
        assert first and second and second != first  # (before: Y went on with X's session)
        # session:end for X, after Y started (before: it ended the current session, Y's)
        event("session", "end", {"sessionId": x.stem, "sessionFile": str(x)})
        assert _state(ws, first, second) == [False, True] and ws.current_session() == second
        assert _summary(ws, first).exists() and not _summary(ws, second).exists()
        event("session", "end", {"sessionId": x.stem, "sessionFile": str(x)})  # again: nothing more ends
        assert _state(ws, first, second) == [False, True] and ws.current_session() == second
        # /new on Y: its previous entry names Y, whose session ends
        event("command", "new", {"previousSessionEntry": {"sessionId": y.stem, "sessionFile": str(y)},
                                 "sessionEntry": {"sessionId": "a-fresh-one"}})
        assert _state(ws, first, second) == [False, False] and ws.current_session() is None
    finally:
        node.stdin.close()
        node.wait(timeout=300)
