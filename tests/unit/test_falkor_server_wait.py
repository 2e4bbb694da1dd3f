"""kg/store/falkor_server.py: how `start` tells a server that is still loading from one that is not there.

A FalkorDB server replaying a big graph (a million nodes) takes connections but answers nothing for over a
minute while it decodes the graph; `start` must wait for it, not kill it after `wait_s` as if it had hung."""

from __future__ import annotations

import socket

from kg.store import falkor_server


def test_a_port_that_takes_the_connection_but_says_nothing_is_busy():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        assert falkor_server._answer(port, timeout=0.2) == falkor_server.BUSY
        assert not falkor_server.ping(port, timeout=0.2)


def test_a_port_with_nothing_listening_is_no_answer():
    port = falkor_server.free_port()
    assert falkor_server._answer(port, timeout=0.2) == b""
