"""Issue 20, the read server's turns (kg/serve/server.py `_loop`): readers arriving back to back do not starve
the journal. A real server loop on a real workspace and a real socket, with a queue of clients at its door
before it looks at it: it passes the journal over at most once per waiting reader, so what agents logged is
applied between the readers, one record at a time (a reader waits for one record at most)."""

from __future__ import annotations

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
