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
