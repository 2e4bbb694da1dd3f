"""Issue 20 review: the read server's liveness lock (`serve.lock`) with real processes and real locks.

A checker (`client.alive`, run by every read and by the applier each round) must never look like a server to a
starter; a server trusts no `--lock-fd` it was not handed; `kg log` starts a server only for a log line that
will run, in the workspace it names, and not while the graph is held by a long job; `kg serve stop` stops a
server that is still starting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import kg
from kg.core.paths import try_flock
from kg.serve import client, protocol

KG = str(Path(sys.executable).with_name("kg"))
CHECKER = """
import sys
from kg.serve import client
kg_dir = sys.argv[1]
print("checking", flush=True)
while True:
    client.alive(kg_dir)
"""


def _kg(*args: str, cwd=None, env=None, **kw):
    return subprocess.run([KG, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "KG_SERVER": "1", **(env or {})}, **kw)


def _gone(kg_dir) -> None:
    deadline = time.monotonic() + 120
    while client.alive(kg_dir):  # it closes the graph, then exits
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _applied(kg_dir) -> None:
    """Wait until the log's detached applier let go of its slot: it starts the server when it sees agents logging,
    so one still running after a `kg serve stop` could start a new server, idle for minutes."""
    from kg.ingest.background import applier_running

    deadline = time.monotonic() + 120
    while applier_running(kg_dir):
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_checker_never_looks_like_a_server_to_a_starter(tmp_path):
    kg_dir = tmp_path / "kg"
    kg_dir.mkdir()
    checkers = [subprocess.Popen([sys.executable, "-c", CHECKER, str(kg_dir)], stdout=subprocess.PIPE, text=True)
                for _ in range(2)]
    try:
        for checker in checkers:
            assert checker.stdout.readline().strip() == "checking"
        refused = 0
        for _ in range(20000):  # a starter's claim while another process loops alive(): its instants are waited out
            fd = client.claim(kg_dir)
            if fd is None:
                refused += 1
            else:
                os.close(fd)
        # (with an exclusive instant in alive(), about one claim in six was refused: "one lives", none did)
        assert refused == 0, refused
    finally:
        for checker in checkers:
            checker.kill()
            checker.wait()
    held = try_flock(kg_dir / protocol.LOCK, 0o600)  # a server (or its starter) holds it: no claim, alive
    assert held is not None
    try:
        assert client.claim(kg_dir) is None and client.alive(kg_dir)
    finally:
        os.close(held)
    assert not client.alive(kg_dir)


def test_a_server_refuses_a_lock_fd_it_does_not_hold(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    kg_dir = root / "memory" / ".kg"
    held = try_flock(kg_dir / protocol.LOCK, 0o600)  # another server's
    other = os.open(kg_dir / protocol.LOCK, os.O_RDWR)  # the same file, but not the open file that holds it
    stray = os.open(tmp_path / "stray", os.O_RDWR | os.O_CREAT, 0o600)  # a lockable file that is not serve.lock
    try:
        for fd in (other, stray):
            ran = subprocess.run([sys.executable, "-m", "kg.serve.server", str(root), "--lock-fd", str(fd)],
                                 capture_output=True, text=True, timeout=120, pass_fds=(fd,),
                                 env={**os.environ, "KG_SERVER": "1"})
            assert ran.returncode == 1 and "--lock-fd" in ran.stderr, ran.stderr
            assert not (kg_dir / protocol.SOCKET).exists()
    finally:
        for fd in (held, other, stray):
            os.close(fd)


def test_a_log_starts_a_server_only_for_a_log_that_runs_in_the_workspace_it_names(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    kg_dir = root / "memory" / ".kg"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    try:
        for args in (["log", "--help"], ["--help", "log"], ["log", "learning"], ["log", "bogus", "a summary"],
                     ["log", "learning", "a", "b"]):
            ran = _kg(f"--workspace={root}", *args, cwd=elsewhere)
            assert not client.alive(kg_dir), args  # help, or a usage error: no server
        assert ran.returncode == 2
        # a long import holds the graph: the last server gave up and stamped it, so logs start none meanwhile
        (kg_dir / protocol.BUSY).write_text(f"{time.time() + 3600:.3f}")
        assert _kg(f"-w{root}", "log", "learning", "while the graph is held", cwd=elsewhere).returncode == 0
        assert not client.alive(kg_dir)
        (kg_dir / protocol.BUSY).write_text(f"{time.time() - 1:.3f}")  # the back-off is over
        for form in ([f"-w{root}"], [f"--workspace={root}"]):
            logged = _kg(*form, "log", "learning", "a log names its workspace", "--area", "tests", cwd=elsewhere)
            assert logged.returncode == 0, logged.stderr
            assert client.alive(kg_dir), form  # it started the server of the workspace it named
            _applied(kg_dir)  # (its detached applier, niced and late on a loaded machine, may start one again)
            assert _kg("-w", str(root), "serve", "stop").returncode == 0
            _gone(kg_dir)
    finally:
        _kg("-w", str(root), "serve", "stop")


def test_a_server_that_gives_up_on_a_held_graph_stamps_a_back_off(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    with ws.store():  # a long job holds the graph
        ran = subprocess.run([sys.executable, "-m", "kg.serve.server", str(root)], capture_output=True, text=True,
                             timeout=300, env={**os.environ, "KG_SERVER": "1", "KG_LOCK_TIMEOUT": "0.2"})
        assert "cannot serve" in ran.stderr, ran.stderr
        assert client.backing_off(ws.kg_dir)
    assert not client.backing_off(ws.kg_dir)  # the job let go of the graph: it is free, the back-off is over


def test_no_starter_starts_a_server_while_the_busy_back_off_lasts(tmp_path, monkeypatch):
    """Reads and the detached applier honour the back-off as `kg log` does: before, every read started a server
    that waited for the held graph and gave up, and the read waited for it before running on its own."""
    from kg.ingest.background import serve_readers

    monkeypatch.setenv("KG_SERVER", "1")
    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    trace = tmp_path / "trace"
    env = {"KG_LOCK_TIMEOUT": "0.3", "KG_SERVE_TRACE": str(trace)}
    with ws.store():  # a long job holds the graph, and the last server gave up on it
        ran = subprocess.run([sys.executable, "-m", "kg.serve.server", str(root)], capture_output=True, text=True,
                             timeout=300, env={**os.environ, "KG_SERVER": "1", "KG_LOCK_TIMEOUT": "0.2"})
        assert client.backing_off(ws.kg_dir), ran.stderr
        for args in (["search", "docker"], ["status"]):
            read = _kg("-w", str(root), *args, env=env)
            assert read.returncode == 1 and "held by another process" in read.stderr, (args, read.stderr)
        brief = _kg("-w", str(root), "hook", "session-start", env=env)  # a hook briefs from the files instead
        assert brief.returncode == 0 and "The graph was busy" in brief.stdout, (brief.stdout, brief.stderr)
        assert not client.alive(ws.kg_dir)
        phases = trace.read_text() if trace.exists() else ""
        assert "spawns" not in phases and "server start" not in phases, phases
        assert not serve_readers(ws) and not client.spawn(root)  # the applier's starter, any starter
        assert not client.alive(ws.kg_dir)
    assert client.spawn(root)  # the graph is free: the next starter starts one
    try:
        deadline = time.monotonic() + 120
        while not (ws.kg_dir / protocol.SOCKET).exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        _kg("-w", str(root), "serve", "stop")
        _gone(ws.kg_dir)


def test_stop_stops_a_server_that_is_still_starting(tmp_path, monkeypatch):
    monkeypatch.setenv("KG_SERVER", "1")
    monkeypatch.setenv("KG_LOCK_TIMEOUT", "120")  # the server waits for the graph the test holds
    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    trace = tmp_path / "trace"
    stop = None
    try:
        with ws.store():  # the graph is held: the server starts, holds its lock, and cannot listen yet
            assert client.spawn(root) and client.alive(ws.kg_dir)
            stop = subprocess.Popen([KG, "-w", str(root), "serve", "stop", "--json"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True,
                                    env={**os.environ, "KG_SERVER": "1", "KG_SERVE_TRACE": str(trace)})
            deadline = time.monotonic() + 120
            while not (trace.exists() and "stop waits" in trace.read_text()):
                # (before: it said "No read server was running" at once and left the starting server running)
                assert stop.poll() is None, stop.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.02)
        out, err = stop.communicate(timeout=300)  # the graph is free: it listens, and is stopped
        assert stop.returncode == 0 and json.loads(out)["stopped"] is True, err
        _gone(ws.kg_dir)
    finally:
        if stop is not None and stop.poll() is None:
            stop.kill()
        _kg("-w", str(root), "serve", "stop")


def test_a_stopped_server_is_not_started_again_by_an_applier_left_before_the_stop(tmp_path, monkeypatch):
    """(the CI failure of 786aecf's parent) Agents logged, and the last `kg log` left its detached applier; the user
    ran `kg serve stop` before that applier ran (niced, late on a loaded machine). The applier saw agents logging
    and started a new server, idle for minutes: a stopped server came back unasked. It applies the entries itself
    now; an applier left after the stop starts the server as before (a log after a stop starts one anyway)."""
    from kg.ingest.background import claim_applier, detached_applier

    monkeypatch.setenv("KG_SERVER", "1")
    root = tmp_path / "ws"
    ws = kg.init_workspace(root)
    try:
        for i in range(2):  # two agents' entries, journaled: the applier takes that for agents logging in parallel
            ws.log("error", f"deploy step {i} failed on staging", area="infra", apply=False)
        slot = claim_applier(ws.kg_dir)  # the last log claims the applier's slot as it answers
        assert slot is not None
        stopped = _kg("-w", str(root), "serve", "stop", "--json")  # then the user stops the server
        assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"] is False, stopped.stderr
        detached_applier(ws, slot)  # the applier runs only now
        assert not client.alive(ws.kg_dir)  # (before: it had started a server)
        assert not ws.journal.has_pending()  # it applied both entries itself
        for i in range(2):  # agents log after the stop: their applier starts the server, as it did
            ws.log("error", f"deploy step {i} failed again", area="infra", apply=False)
        detached_applier(ws, claim_applier(ws.kg_dir))
        assert client.alive(ws.kg_dir)
    finally:
        _kg("-w", str(root), "serve", "stop")
        _gone(ws.kg_dir)
