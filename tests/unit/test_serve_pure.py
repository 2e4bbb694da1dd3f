"""Which command lines the read server may answer (kg.cli.entry.served), and its message framing."""

from __future__ import annotations

import socket

import pytest
from kg.cli.entry import served

from kg.serve import protocol


@pytest.mark.parametrize("argv, expected", [
    (["search", "docker"], (True, None)),
    (["-w", "/x", "search", "docker", "--json"], (True, "/x")),
    (["--workspace=/x", "--now", "2026-01-01", "status"], (True, "/x")),
    (["-w/x", "inject", "-m", "hi"], (True, "/x")),
    (["-w", "status", "show", "ERR-1"], (True, "status")),  # the value of -w is not the command
    (["hook", "session-start", "-m", "hi"], (True, None)),
    (["hook", "session-end"], (False, None)),
    (["hook"], (False, None)),
    (["log", "error", "x"], (False, None)),
    (["list", "--limit", "20"], (True, None)),
    (["list", "--help"], (False, None)),
    (["trail", "list"], (False, None)),
    (["--rules", "r", "search", "x"], (False, None)),  # the server holds the workspace's own rules
    (["search", "--help"], (False, None)),
    (["search", "-h"], (False, None)),
    (["search", "--", "-h"], (True, None)),  # a query, not an option
    (["--version"], (False, None)),
    ([], (False, None)),
])
def test_which_command_lines_are_served(argv, expected, monkeypatch):
    monkeypatch.delenv("_KG_COMPLETE", raising=False)
    assert served(argv) == expected


def test_completion_requests_are_not_served(monkeypatch):
    monkeypatch.setenv("_KG_COMPLETE", "complete_bash")
    assert served(["search", "x"]) == (False, None)


def test_messages_cross_a_socket_whole():
    a, b = socket.socketpair()
    with a, b:
        message = {"op": "run", "argv": ["search", "上周 docker"], "data": "x" * 20_000}
        protocol.send(a, message)
        assert protocol.receive(b) == message
        a.sendall(b"\x00\x00\x00\x10{}")  # a header promising more than arrives
        a.close()
        with pytest.raises(protocol.Closed):
            protocol.receive(b)


def test_the_door_never_waits_for_a_request_inside_a_drain(tmp_path):
    """The server's drain looks at its door between two records, with a write transaction open. A client that
    connected but has not sent its request (a hook whose stdin stays open) is kept for the loop, not read
    there: reading it waited up to 30 s with the transaction open. An applier's knock that arrived whole is
    answered at the door and the drain goes on."""
    from kg.serve.server import _Door

    listener = protocol.listen(tmp_path)
    door = _Door(listener)
    with listener:
        slow = protocol.connect(tmp_path, 5)
        try:
            assert door.waiting()  # at once: someone is at the door, its request not read yet
            request = {"op": "run", "argv": ["status"]}
            protocol.send(slow, request)
            conn, got = door.next(5)  # the loop reads it, outside the drain
            with conn:
                assert got == request
        finally:
            slow.close()
        knock = protocol.connect(tmp_path, 5)
        try:
            protocol.send(knock, {"op": "drain"})
            assert not door.waiting()  # answered there: the drain goes on
            assert protocol.receive(knock) == {"ok": True}
        finally:
            knock.close()
        gone = protocol.connect(tmp_path, 5)
        gone.close()
        assert not door.waiting() and door.next(0.05) is None
