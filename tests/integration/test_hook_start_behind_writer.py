"""In production `kg hook session-start` is answered by the read server. A writer that needs the graph (kg cycle,
import, doctor) makes the server let go; a server the hook's client then starts can only wait for the graph lock
(`[lock] timeout_seconds`) and leave, and the client waited for it before running the hook itself: 13 s at the
defaults, past the 30 s `kg install` gives the hook with a lock timeout of 30 s or more (the runtime kills it: no
brief, no session). Now the hook sees the writer and answers from its own busy path: a brief from files and a
journaled session that the next drain makes. Real processes: a real read server, a real writer frozen with
SIGSTOP, the real console entry; the lock timeout is 600 s, so the old path never answers within the test's
bound (a hook the runtime would have killed long before), and the trace shows what the hook's client did."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kg
from kg.runtimes.graph_held import by_a_writer
from kg.serve import client, protocol
from kg.store.lock import _waited_for

KG = str(Path(sys.executable).with_name("kg"))
HOOK_BOUND = 120  # seconds: four times the 30 s the runtime gives the hook, for a loaded machine
NOW = "2026-07-01T10:00"
WRITER = """
import sys, kg
ws = kg.open_workspace(sys.argv[1])
with ws.store():
    print("held", flush=True)
    sys.stdin.read()
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_HOOK_WAIT")}
    return {**env, "KG_SERVER": "1", "KG_NOW": NOW, **extra}


def _kg(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env=_env(**extra))


def _start(root: Path, rid: str, trace: Path) -> subprocess.Popen:
    """The hook as Claude Code runs it (its payload on stdin), its read client traced."""
    payload = {"session_id": rid, "hook_event_name": "SessionStart", "source": "startup", "cwd": str(root)}
    given = trace.with_name(f"{rid}.json")
    given.write_text(json.dumps(payload))
    with given.open() as stdin:
        return subprocess.Popen([KG, "-w", str(root), "hook", "session-start", "--start-session", "--runtime",
                                 "claude-code"], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=_env(KG_LOCK_TIMEOUT="600", KG_SERVE_TRACE=str(trace)))


def _answer(p: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        out, err = p.communicate(timeout=HOOK_BOUND)  # (the old path: 600 s for a server that waits for the graph)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _wait(what, why: str) -> None:
    deadline = time.monotonic() + 120
    while not what():
        assert time.monotonic() < deadline, why
        time.sleep(0.02)


def _phases(trace: Path, pid: int) -> list[str]:
    """What process `pid`'s read client did, in order (kg.serve.protocol.trace)."""
    lines = trace.read_text().splitlines() if trace.exists() else []
    return [line.split(" ", 2)[2] for line in lines if line.split()[1:2] == [str(pid)]]


def _session(brief: subprocess.CompletedProcess) -> str:
    assert brief.returncode == 0, brief.stderr
    text = json.loads(brief.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(started now; the graph makes it once it is free)" in text  # journaled: the busy path's brief
    return text.split("- Session: ")[1].split()[0]


@pytest.mark.embedded_only("the read server serves the embedded graph only")
def test_a_session_start_behind_a_writer_answers_from_its_busy_path_and_journals_its_session(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    trace = tmp_path / "trace"
    assert _kg(root, "status").returncode == 0  # the read server starts and answers
    _wait(lambda: (ws.kg_dir / protocol.SOCKET).exists(), "the read server never listened")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=_env(KG_LOCK_TIMEOUT="600"))
    started = None
    try:
        assert writer.stdout.readline().strip() == "held"  # the server let go of the graph to it
        writer.send_signal(signal.SIGSTOP)
        assert not client.alive(ws.kg_dir)
        # no server lives: the hook starts none (before: it started one and waited for it to give up)
        hook = _start(root, "runtime-a", trace)
        first = _session(_answer(hook))
        assert _phases(trace, hook.pid) == ["client gives way to a writer"]
        assert ws.current_session() == first
        # a server is starting (its starter holds serve.lock) and has not yet said it waits for the graph: the
        # hook's client waits for it, sees it wait for the writer once it does, and runs the hook itself
        lock = client.claim(ws.kg_dir)
        assert lock is not None
        hook = _start(root, "runtime-b", trace)
        _wait(lambda: "client waits for a starting server" in _phases(trace, hook.pid),
              "the hook never waited for the starting server")
        started = subprocess.Popen([sys.executable, "-m", "kg.serve.server", str(root), "--lock-fd", str(lock)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(lock,),
                                   env=_env(KG_LOCK_TIMEOUT="600"))
        os.close(lock)  # the server's copy keeps it
        second = _session(_answer(hook))
        assert second != first and _waited_for(ws.kg_dir / "graph.lock.wait")  # the server waits for the writer
        phases = _phases(trace, hook.pid)
        assert "client gives way to a writer" in phases and "client answered" not in phases, phases
        # a server waiting for the graph lives: the hook does not wait for it either
        hook = _start(root, "runtime-c", trace)
        third = _session(_answer(hook))
        assert third not in (first, second) and _phases(trace, hook.pid) == ["client gives way to a writer"]
        writer.send_signal(signal.SIGCONT)
        writer.stdin.close()
        writer.wait(timeout=300)
        assert _kg(root, "status").returncode == 0  # the graph is free: the server (waiting) gets it and answers
        with ws.reading() as st:  # the drain made the three journaled sessions
            assert [st.run("memory_session_get", id=s)[0]["ended_at"] for s in (first, second, third)] == [None] * 3
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.send_signal(signal.SIGCONT)
        _kg(root, "serve", "stop")
        if started is not None:
            started.wait(timeout=300)
        _wait(lambda: not client.alive(ws.kg_dir), "the server never stopped")


@pytest.mark.embedded_only("the read server serves the embedded graph only")
def test_a_graph_free_read_or_held_by_the_serving_server_is_not_taken_for_a_writer(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    kg_dir = str(ws.kg_dir)
    trace = tmp_path / "trace"
    assert not by_a_writer(kg_dir)  # nothing holds it
    with ws.reading():
        assert not by_a_writer(kg_dir)  # a reader's shared hold
    with ws.store():
        assert by_a_writer(kg_dir)  # a writer, and no server lives
    try:
        assert _kg(root, "status").returncode == 0  # the read server starts, holds the graph and answers
        _wait(lambda: (ws.kg_dir / protocol.SOCKET).exists(), "the read server never listened")
        assert not by_a_writer(kg_dir)  # the server that holds it answers
        hook = _start(root, "runtime-a", trace)
        assert "Session: " in _answer(hook).stdout
        assert _phases(trace, hook.pid)[-1] == "client answered"  # served, as before
    finally:
        _kg(root, "serve", "stop")
        _wait(lambda: not client.alive(ws.kg_dir), "the server never stopped")
    assert not by_a_writer(kg_dir)
