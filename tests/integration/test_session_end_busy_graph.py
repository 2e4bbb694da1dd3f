"""A runtime's session end answers at once and leaves the reflection to a detached child. When another kg writer
held the graph past the lock budget (a long `kg ingest`), the child gave up: the transcript's failures were never
logged, no summary was written, and the next start only wrote "this session's end stopped before it finished"
(QA). Now the child, which no runtime limits, waits `[session_end] lock_wait_seconds` for the graph; one that
still gives up (or dies) leaves its record in memory/.kg/ending, and the next session start does the reflection
from it. Once: what the live hook logged is not logged again. Real processes, the real console entry, a real
transcript, and the graph held by this test with kg's own lock. KG_LOCK_TIMEOUT=0 stands in for the 10 s a long
writer outlasts: the old child gave up at its first look."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fault_trials import children_done as _children_done  # noqa: E402
from fault_trials import processes_of  # noqa: E402

from kg.store.lock import FileLock

KG = str(Path(sys.executable).parent / "kg")
TRANSCRIPT = ("runtimes", "claude_code", "transcripts", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
FAILURES = ("Task failed: The required parameter `prompt` is missing", "`tree /path/to/Demo -I",
            "Edit `/path/to/Demo/CLAUDE.md` failed: File has not been read yet.")
EDIT = {"hook_event_name": "PostToolUseFailure", "tool_name": "Edit", "tool_use_id": "toolu_019ctBEHhLKehUi4xPDkYwvc",
        "tool_input": {"file_path": "/path/to/Demo/CLAUDE.md", "old_string": "a", "new_string": "b"},
        "error": "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"}


def _hook(root: Path, event: str, payload: dict, *extra: str, now: str, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KG_NOW": now, "KG_SERVER": "0", **env}
    env.pop("KG_WORKSPACE", None)
    env.pop("KG_HOOK_WAIT", None)
    return subprocess.run([KG, "-w", str(root), "hook", event, *extra, "--runtime", "claude-code"],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=root, env=env, timeout=300)


def _start(root: Path, base: dict, now: str, **env: str) -> str:
    brief = _hook(root, "session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"},
                  "--start-session", now=now, **env)
    assert brief.returncode == 0, brief.stderr
    return json.loads(brief.stdout)["hookSpecificOutput"]["additionalContext"].split("- Session: ")[1].split()[0]


def _errors(root: Path) -> list[str]:
    done = subprocess.run([KG, "-w", str(root), "list", "--limit", "200", "--json"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "KG_SERVER": "0"})
    assert done.returncode == 0, done.stderr
    return sorted(e["text"] for e in done.stdout and json.loads(done.stdout) if e["entry_type"] == "error")


def _ended(ws, session: str) -> bool:
    with ws.reading() as st:
        return st.run("memory_session_get", id=session)[0]["ended_at"] is not None


def _session_with_a_live_failure(ws, shared_data) -> tuple[dict, str]:
    real = shared_data.joinpath(*TRANSCRIPT)
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    first = _start(ws.root, base, "2026-07-01T09:00")
    live = _hook(ws.root, "post-tool-use", {**base, **EDIT}, now="2026-07-01T09:30", KG_HOOK_WAIT="1")
    assert live.returncode == 0, live.stderr
    assert len(_errors(ws.root)) == 1
    return base, first


def _end_while_held(root: Path, base: dict) -> tuple[FileLock, int]:
    """The SessionEnd, answered while this test holds the graph; its detached child's pid, as a pidfd."""
    holder = FileLock(root / "memory" / ".kg" / "graph.lock", timeout=60)
    holder.acquire()
    end = _hook(root, "session-end", {**base, "hook_event_name": "SessionEnd", "reason": "exit"},
                now="2026-07-01T10:00", KG_LOCK_TIMEOUT="0")
    assert (end.returncode, end.stdout) == (0, ""), end.stderr
    (child,) = processes_of(root, "session-end")
    return holder, os.pidfd_open(child)


def _gone(pidfd: int, timeout: float) -> bool:
    """Whether the process is gone within `timeout` seconds (the kernel says so on its pidfd; no polling)."""
    return bool(select.select([pidfd], [], [], timeout)[0])


def _check_once(ws, first: str) -> str:
    assert _ended(ws, first)
    summary = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    errors = _errors(ws.root)
    assert len(errors) == len(FAILURES) and all(any(e.startswith(f) for e in errors) for f in FAILURES), errors
    assert "stopped before it finished" not in summary
    assert not list((ws.root / "memory" / ".kg" / "ending").iterdir())
    return summary


@pytest.mark.embedded_only("holds the Kùzu file lock to keep the detached child waiting")
def test_the_detached_end_waits_out_a_writer_that_holds_the_graph(ws, shared_data):
    base, first = _session_with_a_live_failure(ws, shared_data)
    holder, pidfd = _end_while_held(ws.root, base)
    try:
        deadline = time.monotonic() + 120
        while not holder.others_waiting():  # the child waits for the graph (the old one had given up and gone)
            if _gone(pidfd, 0.05):
                break
            assert time.monotonic() < deadline, "the detached child neither waited nor went"
    finally:
        holder.release()
    assert _gone(pidfd, 300), "the detached session end never finished"
    os.close(pidfd)
    _check_once(ws, first)


@pytest.mark.embedded_only("holds the Kùzu file lock to make the detached child give up")
def test_the_next_start_does_the_reflection_an_end_that_gave_up_left(ws, shared_data):
    with (ws.root / "kg.toml").open("a", encoding="utf-8") as f:  # a child that does not wait for the graph
        f.write("\n[rules.hooks.session_end]\nlock_wait_seconds = 0\n")
    base, first = _session_with_a_live_failure(ws, shared_data)
    holder, pidfd = _end_while_held(ws.root, base)
    try:
        assert _gone(pidfd, 300), "the detached child never gave up"
    finally:
        holder.release()
        os.close(pidfd)
    assert not _ended(ws, first) and len(_errors(ws.root)) == 1  # what a child that gave up leaves
    assert [p.name for p in (ws.root / "memory" / ".kg" / "ending").iterdir()] == [f"{first}.json"]
    second = _start(ws.root, {**base, "session_id": "next-runtime-session"}, "2026-07-01T11:00")
    assert second != first
    _children_done(ws.root, "session-start")  # the start answered; its detached child reflects
    summary = _check_once(ws, first)
    # once: the next start and end leave it as it is
    stamp = (ws.root / "memory" / "sessions" / f"{first}.md").stat().st_mtime_ns
    assert _start(ws.root, {**base, "session_id": "next-runtime-session"}, "2026-07-01T12:00") == second
    assert not processes_of(ws.root, "session-start")  # nothing left to hand off: no child
    assert _check_once(ws, first) == summary
    assert (ws.root / "memory" / "sessions" / f"{first}.md").stat().st_mtime_ns == stamp


@pytest.mark.embedded_only("holds the Kùzu file lock while the start answers")
def test_a_start_hands_a_left_reflection_to_a_detached_child_and_answers_at_once(ws, shared_data):
    """The start did the left reflection itself, inside the runtime's hook timeout (30 s for Claude Code): a long
    transcript kept the agent waiting, or got the start killed with no brief, and every later start tried again.
    Now it answers, and a detached child waits for the graph and reflects. Here the graph is held as the start
    runs: it briefs from files at once, and its child waits until the holder lets go."""
    with (ws.root / "kg.toml").open("a", encoding="utf-8") as f:  # a start that does not wait for the graph
        f.write("\n[rules.hooks]\nbusy_wait_seconds = 0\n")
    base, first = _session_with_a_live_failure(ws, shared_data)
    folder = ws.root / "memory" / ".kg" / "ending"
    folder.mkdir(parents=True, exist_ok=True)  # as `hand_over` writes it, its hook and child gone
    (folder / f"{first}.json").write_text(json.dumps({"session": first, "at": "2026-07-01T10:00:00",
                                                      "transcript": base["transcript_path"]}))
    holder = FileLock(ws.root / "memory" / ".kg" / "graph.lock", timeout=60)
    holder.acquire()
    try:
        brief = _hook(ws.root, "session-start", {**base, "session_id": "next-runtime-session",
                                                  "hook_event_name": "SessionStart", "source": "startup"},
                      "--start-session", now="2026-07-01T11:00", KG_LOCK_TIMEOUT="600")
        assert brief.returncode == 0, brief.stderr
        assert "- Session: " in json.loads(brief.stdout)["hookSpecificOutput"]["additionalContext"]
        (child,) = processes_of(ws.root, "session-start")  # (before: no child; the reflection was never handed on)
        pidfd = os.pidfd_open(child)
    finally:
        holder.release()
    try:
        assert _gone(pidfd, 300), "the detached start never finished"
    finally:
        os.close(pidfd)
    _check_once(ws, first)


def test_a_left_reflection_that_fails_unexpectedly_ends_the_session_from_what_was_logged(ws, tmp_path):
    """A transcript whose reflection raised anything but KgError, OSError or ValueError (here a line nested too
    deeply for the JSON reader: RecursionError) escaped into every session start: each failed, and the record
    stayed for the next to fail on. Now the session is ended with the summary the graph can make, Open Items
    names the reflection and why it failed, and the record goes."""
    bad = tmp_path / "deep.jsonl"
    turn = {"type": "user", "sessionId": "s", "timestamp": "2026-07-01T09:00:00Z",
            "message": {"role": "user", "content": "fix the deploy script"}}
    bad.write_text(json.dumps(turn) + "\n" + '{"type": "assistant", "message": ' + "[" * 100000 + "]" * 100000
                   + "}\n", encoding="utf-8")
    base = {"session_id": "runtime-session", "transcript_path": str(bad), "cwd": str(ws.root),
            "permission_mode": "default"}
    first = _start(ws.root, base, "2026-07-01T09:00")
    folder = ws.root / "memory" / ".kg" / "ending"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{first}.json").write_text(json.dumps({"session": first, "at": "2026-07-01T10:00:00",
                                                      "transcript": str(bad)}))
    second = _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T11:00")
    _children_done(ws.root, "session-start")
    assert second != first and _ended(ws, first)
    text = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    assert "reflecting on it later failed: RecursionError" in text and f"`kg reflect {bad}" in text
    assert not list(folder.iterdir())
    assert _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T12:00") == second


def test_a_start_that_cannot_hand_off_reflects_only_on_a_small_transcript(ws, shared_data):
    """A start the read server answers has no detached child to hand the left reflection to: it reflects only on a
    transcript of `[session_end] inline_reflect_bytes` or less itself, and leaves a longer one's record for the
    next session end (a detached child), never holding the runtime's hook past its timeout."""
    from kg.runtimes import hooks
    from kg.workspace import open_workspace

    with (ws.root / "kg.toml").open("a", encoding="utf-8") as f:
        f.write("\n[rules.hooks.session_end]\ninline_reflect_bytes = 1000\n")
    real = shared_data.joinpath(*TRANSCRIPT)
    assert real.stat().st_size > 1000
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    first = _start(ws.root, base, "2026-07-01T09:00")
    record = ws.root / "memory" / ".kg" / "ending" / f"{first}.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"session": first, "at": "2026-07-01T10:00:00", "transcript": str(real)}))
    here = open_workspace(ws.root)
    second = hooks.session_start_brief(here, "2026-07-01T11:00", start_session=True, key="other")["session"]
    assert second != first and not _ended(ws, first) and record.exists()  # (before: reflected on in the start)
    hooks.session_end(here, None, "2026-07-01T12:00", session=second)  # the next end does it
    _check_once_ended(ws, first)


def _check_once_ended(ws, first: str) -> None:
    assert _ended(ws, first)
    summary = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    assert "stopped before it finished" not in summary and "File has not been read yet" in summary
    assert not list((ws.root / "memory" / ".kg" / "ending").iterdir())
