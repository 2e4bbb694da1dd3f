"""A session start that finds the graph held by the previous session end's reflection. The start waited
`busy_wait_seconds`, answered from files and started no session: everything the agent logged after it had no
session. A session start is a write the agent was told happened, so it is journaled like a log now: its id is
decided as it answers, it is current at once (the logs that follow name it), and the next drain makes it.

Real processes: the real console entry, the real hook payload shapes of Claude Code and OpenClaw, their real
transcripts; the busy writer is the real detached session end, which stops itself (SIGSTOP) right after it opened
the graph read-write, so it holds the lock for as long as the test wants, with no timing involved."""

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

KG = str(Path(sys.executable).parent / "kg")
CLAUDE = ("runtimes", "claude_code", "transcripts")
OPENCLAW = ("runtimes", "openclaw", "transcripts")

# The real console entry; its detached after-answer child (the session end's reflection) stops itself once it has
# opened the graph for writing, holding the graph's lock until the test sends SIGCONT.
_FREEZING = """
import contextlib, os, signal, sys
import kg.store as S
parent, opened, stops = os.getpid(), S.Store.open, []
@contextlib.contextmanager
def holding(*a, **k):
    with opened(*a, **k) as st:
        if st is not None and os.getpid() != parent and not k.get("read_only") and not stops:
            stops.append(1)  # once: its later opens go on
            os.kill(os.getpid(), signal.SIGSTOP)
        yield st
S.Store.open = holding
sys.argv = ["kg", *sys.argv[1:]]
from kg.cli.app import main
main()
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k.startswith("KG_STORE")}  # a team pass
    return {**env, "KG_NOW": "2026-07-01T10:00", "KG_LOCK_TIMEOUT": "600", "KG_SERVER": "0"}


def _hook(root: Path, argv: list[str], payload: dict | None = None, *, freeze: bool = False,
          **extra_env: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", _FREEZING] if freeze else [KG]
    return subprocess.run([*cmd, "-w", str(root), "hook", *argv], input=json.dumps(payload or {}),
                          capture_output=True, text=True, cwd=root, env={**_env(), **extra_env}, timeout=300)


def _kg(root: Path, *argv: str, **extra_env: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *argv], capture_output=True, text=True, cwd=root,
                          env={**_env(), **extra_env}, timeout=300)


def _stopped(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


def _frozen_end(root: Path, argv: list[str], payload: dict | None) -> int:
    """Run a session end whose detached reflection stops itself holding the graph; its pid, once stopped."""
    end = _hook(root, argv, payload, freeze=True)
    assert (end.returncode, end.stdout) == (0, ""), end.stderr
    deadline = time.monotonic() + 300
    while True:  # the child forks after the answer: wait for it to hold the graph, stopped
        children = processes_of(root, "session-end")
        if children and _stopped(children[0]):
            return children[0]
        assert time.monotonic() < deadline, "the detached session end never opened the graph"
        time.sleep(0.02)


def _finish(root: Path, child: int) -> None:
    os.kill(child, signal.SIGCONT)
    deadline = time.monotonic() + 120
    while processes_of(root, "session-end"):
        assert time.monotonic() < deadline, "the detached session end never finished"
        time.sleep(0.05)


def _session_line(text: str) -> str:
    assert "- Session: " in text, text
    return text.split("- Session: ")[1].split()[0]


def _payloads(runtime: str, shared: Path) -> tuple[list[str], dict | None, list[str], dict | None]:
    """(start argv, start payload, end argv, end payload) as the runtime's installed hooks call kg."""
    if runtime == "claude-code":
        first, second = sorted(shared.joinpath(*CLAUDE).glob("*.jsonl"))[:2]
        base = {"cwd": "/app", "permission_mode": "default"}
        end = {**base, "session_id": first.stem, "transcript_path": str(first), "hook_event_name": "SessionEnd",
               "reason": "clear"}
        start = {**base, "session_id": second.stem, "transcript_path": str(second),
                 "hook_event_name": "SessionStart", "source": "clear", "model": "claude-sonnet-4"}
        return (["session-start", "--start-session", "--runtime", runtime], start,
                ["session-end", "--runtime", runtime], end)
    first, second = sorted(shared.joinpath(*OPENCLAW).glob("*.jsonl"))[:2]
    ids = [p.stem for p in (first, second)]  # <sessionId>.jsonl
    return (["session-start", "--start-session", "--write", "--runtime", runtime, "--runtime-session", ids[1]], None,
            ["session-end", "--transcript", str(first), "--runtime", runtime, "--runtime-session", ids[0]], None)


@pytest.mark.embedded_only("the busy writer holds the Kùzu file's lock")
@pytest.mark.parametrize("runtime", ["claude-code", "openclaw"])
def test_a_start_behind_a_reflecting_end_opens_its_session_and_the_next_logs_land_in_it(ws, shared_data, runtime):
    root = ws.root
    (root / "kg.toml").write_text("[rules.hooks]\nbusy_wait_seconds = 0.5\n", encoding="utf-8")
    start_argv, start_payload, end_argv, end_payload = _payloads(runtime, shared_data)
    if runtime == "claude-code":  # the first session, as the runtime started it
        first_payload = {**end_payload, "hook_event_name": "SessionStart", "source": "startup"}
        first_payload.pop("reason")
        opened = _hook(root, ["session-start", "--start-session", "--runtime", runtime], first_payload)
        first = _session_line(json.loads(opened.stdout)["hookSpecificOutput"]["additionalContext"])
    else:
        opened = _hook(root, ["session-start", "--start-session", "--runtime", runtime, "--runtime-session",
                              end_argv[-1]])
        first = _session_line(opened.stdout)
    assert opened.returncode == 0, opened.stderr
    child = _frozen_end(root, end_argv, end_payload)
    try:
        started = _hook(root, start_argv, start_payload)
        assert started.returncode == 0, started.stderr
        text = (json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"] if runtime == "claude-code"
                else started.stdout)
        assert "graph was busy" in text
        second = _session_line(text)  # (before: no session line, and no current session)
        assert second != first and "(started now" in text
        assert ws.current_session() == second
        logged = _kg(root, "log", "error", "the migration script broke on the staging database", "--json",
                     KG_LOCK_TIMEOUT="0.5")
        assert logged.returncode == 0, logged.stderr
        entry = json.loads(logged.stdout)["id"]
    finally:
        _finish(root, child)
    with ws.reading() as st:
        row = st.run("memory_session_get", id=second)[0]
        assert (row["ended_at"], row["source"], row["started_at"].isoformat()) == (None, runtime,
                                                                                  "2026-07-01T10:00:00")
        assert [n["id"] for n in st.run("memory_session_nodes", id=second)] == [entry]
        assert st.run("memory_session_get", id=first)[0]["ended_at"] is not None
    assert (root / "memory" / "sessions" / f"{first}.md").exists()
    assert not (root / "memory" / ".kg" / "journal.rejected").exists()
    # the session so started ends as any other: its summary names the entry logged in it
    ended = _kg(root, "session", "end", "--json")
    assert ended.returncode == 0, ended.stderr
    assert json.loads(ended.stdout)["id"] == second and entry in (root / "memory" / "sessions" /
                                                                  f"{second}.md").read_text(encoding="utf-8")
