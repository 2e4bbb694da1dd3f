"""A runtime's session end answers at once and leaves the reflection and the summary to a detached child; the
session stops being current and tied to its runtime session as the hook answers. When that child dies before it
ends the session (kill -9 here, as a full disk or a crash would leave it), the next session start that reaches the
graph does its reflection and ends it, once; when the transcript is gone by then, with the summary the graph can
still make. Real processes, the real console entry, a real transcript; the child is held still at the worst
moment (answered, nothing ended) instead of hoping for timing."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_session_end_busy_graph as busy  # noqa: E402 - its hook runner (sys.path as fault_trials)
from fault_trials import processes_of  # noqa: E402

from kg.store.lock import FileLock

KG = str(Path(sys.executable).parent / "kg")
TRANSCRIPT = ("runtimes", "claude_code", "transcripts", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")


def _hook(root: Path, event: str, payload: dict, *extra: str, now: str) -> subprocess.CompletedProcess:
    return busy._hook(root, event, payload, *extra, now=now, KG_LOCK_TIMEOUT="600")


def _start(root: Path, base: dict, now: str) -> str:
    return busy._start(root, base, now, KG_LOCK_TIMEOUT="600")


def _ended(ws, session: str) -> str | None:
    with ws.reading() as st:
        at = st.run("memory_session_get", id=session)[0]["ended_at"]
    return None if at is None else f"{at:%Y-%m-%dT%H:%M}"


def _children_done(root: Path) -> None:
    """Wait until a session start's detached child (the reflection it hands on) has finished, on its pidfd."""
    for pid in processes_of(root, "session-start"):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            assert select.select([pidfd], [], [], 300)[0], "the detached session start never finished"
        finally:
            os.close(pidfd)


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in ("Z", "X"):
            return
        assert time.monotonic() < deadline, "the killed child never went"
        time.sleep(0.02)


@pytest.mark.embedded_only("holds the Kùzu file lock to keep the detached child waiting")
def test_a_session_whose_handed_over_end_was_killed_is_ended_by_the_next_start_once(ws, shared_data):
    real = shared_data.joinpath(*TRANSCRIPT)
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    first = _start(ws.root, base, "2026-07-01T09:00")
    entry = subprocess.run([KG, "-w", str(ws.root), "log", "learning", "run the migrations before the tests",
                            "--session", first], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "KG_SERVER": "0", "KG_NOW": "2026-07-01T09:30"})
    assert entry.returncode == 0, entry.stderr
    holder = FileLock(ws.root / "memory" / ".kg" / "graph.lock", timeout=30)
    holder.acquire()  # the child cannot reach the graph: it has answered and ended nothing
    try:
        end = _hook(ws.root, "session-end", {**base, "hook_event_name": "SessionEnd", "reason": "clear"},
                    now="2026-07-01T10:00")
        assert (end.returncode, end.stdout) == (0, ""), end.stderr
        (child,) = processes_of(ws.root, "session-end")
        os.kill(child, signal.SIGSTOP)
    finally:
        holder.release()
    try:
        # the child lives (stopped): its end is under way, and a start does not take it over
        second = _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T10:01")
        assert second != first and _ended(ws, first) is None
    finally:
        os.kill(child, signal.SIGKILL)
        os.kill(child, signal.SIGCONT)
    _wait_gone(child)
    summary = ws.root / "memory" / "sessions" / f"{first}.md"
    assert _ended(ws, first) is None and not summary.exists()  # what a killed child leaves
    # (before: nothing ever ended it; it stayed open with no summary, neither current nor tied to anything)
    assert _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T11:00") == second
    _children_done(ws.root)  # (handed to a detached child: the start answers at once)
    # the start did the reflection the child left undone (before: it only named it in Open Items), which ended
    # the session as the child would have: dated by the transcript's last turn, its failures in the summary
    assert _ended(ws, first) == "2025-09-07T09:54"
    text = summary.read_text()
    assert "run the migrations before the tests" in text and "File has not been read yet" in text
    assert "stopped before it finished" not in text
    assert ws.current_session() == second and _ended(ws, second) is None
    assert not list((ws.root / "memory" / ".kg" / "ending").iterdir())
    # once: a later start and a later end leave the first summary as it is
    stamp = summary.stat().st_mtime_ns
    assert _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T12:00") == second
    done = _hook(ws.root, "session-end", {**base, "session_id": "other-runtime-session",
                                           "hook_event_name": "SessionEnd", "reason": "exit"},
                 now="2026-07-01T12:30")
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 300
    while processes_of(ws.root, "session-end"):
        assert time.monotonic() < deadline, "the detached session end never finished"
        time.sleep(0.05)
    assert _ended(ws, second) is not None  # (dated by the reflection, from the transcript)
    assert summary.stat().st_mtime_ns == stamp and summary.read_text() == text
    assert not list((ws.root / "memory" / ".kg" / "ending").iterdir())



@pytest.mark.embedded_only("holds the Kùzu file lock to keep the detached child waiting")
def test_a_killed_end_that_had_logged_its_findings_is_ended_with_the_whole_summary(ws, shared_data):
    """QA8 #3: the child logged every finding and died before it wrote the summary; the start that finished its end
    found nothing new to log and ended the session with an empty summary ("Tasks Completed: (none)", no skill
    candidate), dated by the start instead of the transcript's last turn."""
    real = shared_data.joinpath(*TRANSCRIPT)
    base = {"session_id": real.stem, "transcript_path": str(real), "cwd": str(ws.root), "permission_mode": "default"}
    first = _start(ws.root, base, "2026-07-01T09:00")
    # what the child logged before it died: the reflection without the end (as Codex's Stop runs it)
    logged = _hook(ws.root, "session-end", {**base, "hook_event_name": "Stop"}, "--no-summary", now="2026-07-01T09:59")
    assert logged.returncode == 0, logged.stderr
    deadline = time.monotonic() + 300
    while processes_of(ws.root, "session-end"):
        assert time.monotonic() < deadline, "the detached reflection never finished"
        time.sleep(0.05)
    errors = len(busy._errors(ws.root))
    assert errors and _ended(ws, first) is None
    holder = FileLock(ws.root / "memory" / ".kg" / "graph.lock", timeout=30)
    holder.acquire()
    try:
        end = _hook(ws.root, "session-end", {**base, "hook_event_name": "SessionEnd", "reason": "exit"},
                    now="2026-07-01T10:00")
        assert (end.returncode, end.stdout) == (0, ""), end.stderr
        (child,) = processes_of(ws.root, "session-end")
        os.kill(child, signal.SIGKILL)
    finally:
        holder.release()
    _wait_gone(child)
    assert _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T11:00") != first
    _children_done(ws.root)
    assert _ended(ws, first) == "2025-09-07T09:54"  # the transcript's last turn, as the child would have dated it
    text = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    done = text.split("## Tasks Completed\n")[1].split("\n")[0]
    assert done == f"- Reflected on {real} (claude-code, " + done.split("(claude-code, ")[1], done
    assert done.endswith(f": {errors} error"), done
    assert len(busy._errors(ws.root)) == errors  # nothing logged twice


def test_a_left_end_whose_transcript_is_gone_is_ended_from_what_was_logged(ws, shared_data, tmp_path):
    """The record a dead child left names a transcript deleted since: the next start ends the session from what
    was logged, and Open Items says the reflection was not done and why."""
    copy = tmp_path / "gone.jsonl"
    copy.write_bytes(shared_data.joinpath(*TRANSCRIPT).read_bytes())
    base = {"session_id": "runtime-session", "transcript_path": str(copy), "cwd": str(ws.root),
            "permission_mode": "default"}
    first = _start(ws.root, base, "2026-07-01T09:00")
    folder = ws.root / "memory" / ".kg" / "ending"
    folder.mkdir(parents=True, exist_ok=True)  # as `hand_over` writes it, its writer and child gone
    (folder / f"{first}.json").write_text(json.dumps({"session": first, "at": "2026-07-01T10:00:00",
                                                      "transcript": str(copy)}))
    copy.unlink()
    assert _start(ws.root, {**base, "session_id": "other-runtime-session"}, "2026-07-01T11:00") != first
    _children_done(ws.root)
    assert _ended(ws, first) == "2026-07-01T10:00"  # dated when its runtime ended it
    text = (ws.root / "memory" / "sessions" / f"{first}.md").read_text()
    assert f"`kg reflect {copy} --apply --session {first}`" in text and "reflecting on it later failed" in text
    assert not list(folder.iterdir())


def test_a_handed_over_end_never_writes_its_record_outside_the_workspace(ws, tmp_path):
    """The session a runtime's end names (`--session`, or the current session's file) becomes the record's file name
    in memory/.kg/ending/: a name with a path in it put the record outside the workspace (the session end refused
    it as a session id only after the record was written). Refused before anything is written, as the end does."""
    from kg.core.errors import UsageError
    from kg.runtimes import hooks

    assert ws.root == tmp_path / "ws"
    (tmp_path / tmp_path.name).mkdir()  # where `./../../../../<name>/evil` leads from memory/.kg/ending
    for session in ("./" + "../" * 4 + f"{tmp_path.name}/evil", "../escape", "a/b"):
        with pytest.raises(UsageError, match="session id"):
            hooks.hand_over_end(ws, session, write_summary=True, now="2026-12-03T10:00:00")
    assert [p for p in tmp_path.rglob("*evil*")] == []
    assert not (ws.kg_dir / "ending").exists() or not any((ws.kg_dir / "ending").iterdir())


def test_a_start_removes_the_private_record_of_a_writer_killed_before_its_rename_and_keeps_a_live_ones(ws):
    """`hand_over` writes its record under a private name `.<session>.<pid>.tmp` and renames it into place; a hook
    killed between the two left that file in memory/.kg/ending for ever. The next start's sweep removes it when its
    writer's pid is gone; a live writer's stays (it is about to rename it)."""
    folder = ws.root / "memory" / ".kg" / "ending"
    folder.mkdir(parents=True, exist_ok=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=60)  # reaped: its pid names no process
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        dead_tmp = folder / f".2026-07-01-001.{gone.pid}.tmp"
        live_tmp = folder / f".2026-07-01-002.{live.pid}.tmp"
        for path in (dead_tmp, live_tmp):
            path.write_text('{"session": "2026-07-01-00')  # cut short, as a kill before the rename leaves it
        base = {"session_id": "runtime-session", "cwd": str(ws.root), "permission_mode": "default"}
        _start(ws.root, base, "2026-07-01T09:00")
        assert not dead_tmp.exists()
        assert live_tmp.exists()
    finally:
        live.stdin.close()
        live.wait(timeout=60)
