"""A runtime's session end answers at once and reflects in a detached child (Claude Code cancels hooks still running
when it exits). The runtime does not wait for that child: Claude Code's /clear fires SessionEnd and the next
SessionStart back to back, so the new session's start may come before the child ends the old one. With real
processes, the real console entry and a real transcript; the child is held still (SIGSTOP) at the worst moment
instead of hoping the machine is slow."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import processes_of  # noqa: E402

from kg.store.lock import FileLock

KG = str(Path(sys.executable).parent / "kg")
TRANSCRIPT = ("runtimes", "claude_code", "transcripts", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")


def _hook(root: Path, event: str, payload: dict, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0"}
    env.pop("KG_WORKSPACE", None)
    env.pop("KG_HOOK_WAIT", None)
    return subprocess.run([KG, "-w", str(root), "hook", event, *extra, "--runtime", "claude-code"],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=root, env=env, timeout=300)


def _session(brief: subprocess.CompletedProcess) -> str:
    assert brief.returncode == 0, brief.stderr
    return json.loads(brief.stdout)["hookSpecificOutput"]["additionalContext"].split("- Session: ")[1].split()[0]


def _end_then_start(root: Path, base: dict) -> str:
    """A SessionEnd whose detached child is held still until the next SessionStart (a /clear) has answered; then
    it goes on, and this waits for it. Returns the session the start names."""
    holder = FileLock(root / "memory" / ".kg" / "graph.lock", timeout=30)
    holder.acquire()  # the child cannot reach the graph yet
    try:
        end = _hook(root, "session-end", {**base, "hook_event_name": "SessionEnd", "reason": "clear"})
        assert (end.returncode, end.stdout) == (0, ""), end.stderr
        (child,) = processes_of(root, "session-end")
        os.kill(child, signal.SIGSTOP)  # late: it has not ended the session when the next one starts
    finally:
        holder.release()
    try:
        started = _session(_hook(root, "session-start", {**base, "hook_event_name": "SessionStart",
                                                          "source": "clear"}, "--start-session"))
    finally:
        os.kill(child, signal.SIGCONT)
    deadline = time.monotonic() + 300
    while processes_of(root, "session-end"):  # the child reflects and ends the session it was handed
        assert time.monotonic() < deadline, "the detached session end never finished"
        time.sleep(0.05)
    return started


def _open(ws, session: str) -> bool:
    with ws.reading() as st:
        return st.run("memory_session_get", id=session)[0]["ended_at"] is None


@pytest.mark.embedded_only("holds the Kùzu file lock to keep the detached child waiting")
def test_a_clear_starts_a_new_session_even_before_the_old_ones_end_has_run(ws, shared_data):
    real = shared_data.joinpath(*TRANSCRIPT)
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    first = _session(_hook(ws.root, "session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"},
                           "--start-session"))
    second = _end_then_start(ws.root, base)
    # (before: the start found the old session still open and went on with it; the late end then closed it, and
    # everything after the /clear was logged with no session at all)
    assert second != first
    assert ws.current_session() == second and _open(ws, second)
    assert not _open(ws, first) and (ws.root / "memory" / "sessions" / f"{first}.md").exists()
    assert not (ws.root / "memory" / "sessions" / f"{second}.md").exists()
    # no session current as the hook answers (ended by hand): its late child must not end the one started meanwhile
    ended = subprocess.run([KG, "-w", str(ws.root), "session", "end"], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "KG_SERVER": "0", "KG_NOW": "2026-07-01T10:00"})
    assert ended.returncode == 0 and ws.current_session() is None, ended.stderr
    third = _end_then_start(ws.root, base)
    assert third not in (first, second)
    assert ws.current_session() == third and _open(ws, third)  # (before: the child ended it)
    assert not (ws.root / "memory" / "sessions" / f"{third}.md").exists()
