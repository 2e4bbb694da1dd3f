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


def test_a_start_that_has_not_said_ready_is_loading_even_before_it_says_it_replays(tmp_path):
    """ci64: on a loaded machine a restarted server had logged its start but not yet "AOF loading" when start()'s
    wait ended, and was killed, its replay thrown away. Until its last start says "Ready to accept connections" it
    is loading; only a start that says it replays extends the wait."""
    log = tmp_path / "falkordb.log"
    assert not falkor_server._loading(log)  # no log: nothing started
    earlier = "1:C * Redis is starting\n1:M * Server initialized\n1:M * Ready to accept connections tcp\n"
    log.write_text(earlier, encoding="utf-8")
    assert not falkor_server._loading(log)
    log.write_text(earlier + "2:C * Redis is starting\n2:M * Module 'graph' loaded\n", encoding="utf-8")
    assert falkor_server._loading(log) and not falkor_server._replaying(log)
    log.write_text(earlier + "2:C * Redis is starting\n2:M * DB loaded from base file appendonly.aof.1.base.rdb\n",
                   encoding="utf-8")
    assert falkor_server._loading(log) and falkor_server._replaying(log)
    log.write_text(log.read_text(encoding="utf-8") + "2:M * Ready to accept connections tcp\n", encoding="utf-8")
    assert not falkor_server._loading(log) and not falkor_server._replaying(log)
    log.write_text(earlier + "2:C * Redis is starting\n2:M * Module 'graph' loaded\n", encoding="utf-8")
    assert falkor_server.state(tmp_path).startswith("still starting: its log has not yet said it is ready")
