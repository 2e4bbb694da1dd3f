"""Issue 20, the read server's turns (kg/serve/server.py `_loop`): readers arriving back to back do not starve
the journal. A real server loop on a real workspace and a real socket, with a queue of clients at its door
before it looks at it: it passes the journal over at most once per waiting reader, so what agents logged is
applied between the readers, one record at a time (a reader waits for one record at most)."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack

import kg
from kg.serve import protocol
from kg.serve.server import Server, _loop, _stamp


def test_readers_back_to_back_leave_the_journal_its_turns(tmp_path):
    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    ws.log("learning", "an entry in the graph before the server opens it", now="2026-11-01T09:00")
    for i in range(10):  # what agents logged: acknowledged, not applied
        ws.log("error", f"deploy step {i} failed on staging", now="2026-11-01T10:00", apply=False)
    assert ws.journal.pending_count() == 10
    readers = 6
    with ExitStack() as stack:
        ws.open_options = {"max_threads": 1}
        stack.enter_context(ws.store(apply_journal=False))
        server = Server(ws, 60.0, _stamp(ws))
        listener = stack.enter_context(protocol.listen(ws.kg_dir))
        # the queue at the door: every request arrived whole before the loop's first look
        clients = [protocol.connect(ws.kg_dir, 30) for _ in range(readers + 1)]
        for sock in clients:
            stack.callback(sock.close)
        for sock in clients[:-1]:
            protocol.send(sock, {"op": "status"})  # a reader (answered without the graph: only the turns count)
        protocol.send(clients[-1], {"op": "stop"})  # then someone who needs the graph: the loop ends there
        why, conn = _loop(server, listener)
        assert why == "asked to let go of the graph" and conn is not None
        conn.close()
        for sock in clients[:-1]:
            assert protocol.receive(sock)["ok"] is True  # every reader was answered
        left = ws.journal.pending_count()
    applied = 10 - left
    # the old loop passed the journal over whenever someone was at the door: nothing applied while readers
    # kept coming. Now every second visitor waits for a record (the first request is answered before any
    # drain): readers 3 and 5 and the seventh visitor, one record each, and the rest stays for later turns
    assert applied == (readers + 1) // 2, applied


def _kg(root, *args: str, server: str = "1"):
    import os
    import subprocess
    import sys
    from pathlib import Path

    return subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(root), *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "KG_SERVER": server})


def test_an_agents_log_starts_the_server_which_is_alive_from_its_first_instant(tmp_path, monkeypatch):
    """(issue 20) The first read under agents' logging met a server still starting (6-9 s at load 13): a `kg log`
    now starts it as it begins, and the starter hands it the liveness lock, so it counts as alive before it
    has imported anything (a read arriving meanwhile waited for it instead of starting a second one)."""
    from kg.serve import client

    root = tmp_path / "ws"
    kg.init_workspace(root)
    kg_dir = root / "memory" / ".kg"
    assert _kg(root, "log", "learning", "a log that needs the graph itself", "--wait").returncode == 0
    assert not client.alive(kg_dir)  # `--wait` applies the entry itself: it starts no server
    assert _kg(root, "log", "learning", "off: no server", server="0").returncode == 0
    assert not client.alive(kg_dir)
    monkeypatch.setenv("KG_SERVER", "1")
    try:
        assert client.spawn(root) and client.alive(kg_dir)  # at once: the lock was taken for the child
        assert json.loads(_kg(root, "serve", "start", "--json").stdout)["started"] is False  # it was starting
        assert _kg(root, "serve", "stop").returncode == 0
        deadline = time.monotonic() + 120
        while client.alive(kg_dir):  # it closes the graph, then exits
            assert time.monotonic() < deadline
            time.sleep(0.02)
        logged = _kg(root, "log", "learning", "an agent's log starts the read server")
        assert logged.returncode == 0, logged.stderr
        assert client.alive(kg_dir)
        found = _kg(root, "search", "read server", "--json")  # answered by it
        assert found.returncode == 0 and "an agent's log starts the read server" in found.stdout
    finally:
        _kg(root, "serve", "stop")


def test_the_applier_leaves_the_graph_to_a_server_that_is_starting(tmp_path, monkeypatch):
    """A detached applier that finds a read server alive but not listening yet (it holds `serve.lock`, its
    socket is not there) does not open the graph in front of it: the server applies the journal once it
    listens. With no server, the applier drains as before."""
    from kg.core.paths import try_flock
    from kg.ingest.background import watching
    from kg.serve import protocol

    root = tmp_path / "ws"
    kg.init_workspace(root)
    ws = kg.open_workspace(root)
    for i in range(3):
        ws.log("error", f"deploy step {i} failed on staging", now="2026-11-01T10:00", apply=False)
    once = watching(ws, lambda: ws.drain(if_pending=True))
    monkeypatch.setenv("KG_SERVER", "1")
    starting = try_flock(ws.kg_dir / protocol.LOCK, 0o600)  # a server that has not listened yet
    assert starting is not None
    try:
        assert once() is None and ws.journal.pending_count() == 3
    finally:
        import os

        os.close(starting)
    monkeypatch.setenv("KG_SERVER", "0")  # no server (and none to start): the applier drains itself
    report = once()
    assert report is not None and report.applied == 3 and ws.journal.pending_count() == 0
