"""A client waiting for the read server's answer, looking now and then at whether the server can still give one: a
stopped server (SIGSTOP, Ctrl-Z on `kg serve run`, a paused container) holds the graph and answers nothing. Like
kg/serve/client.py, it imports the standard library and `kg.serve.protocol` only."""

from __future__ import annotations

import time

from kg.serve import protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STOPPED_LOOK = 2.0  # seconds between looks at whether a server that has not answered yet is stopped


class Stopped(Exception):
    pass


def answer(sock: Any, timeout: float) -> dict:
    """The server's answer, waited for as long as a read may take (`timeout`), unless the server is stopped
    (SIGSTOP, Ctrl-Z on `kg serve run`, a paused container): then every read, the session-start hook's included,
    waited the whole 600 s, and a runtime killed the hook at its own timeout (QA11 #12)."""
    import select
    import socket
    import struct

    try:
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
    except (OSError, AttributeError):  # (no SO_PEERCRED: not Linux) waited for as before
        pid = 0
    deadline = time.monotonic() + timeout
    poll = select.poll()  # (not select(): a descriptor past 1024 in a process with many files open)
    poll.register(sock, select.POLLIN)
    while pid and not poll.poll(max(0.0, min(STOPPED_LOOK, deadline - time.monotonic())) * 1000):
        if time.monotonic() >= deadline:
            raise TimeoutError("the read server did not answer")
        if is_stopped(pid):
            raise Stopped(f"the read server (pid {pid}) is stopped (a SIGSTOP, Ctrl-Z, or a paused container) and "
                          f"holds the graph: resume it (`kill -CONT {pid}`) or end it (`kill {pid}`)")
    return protocol.receive(sock)


def is_stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (Linux's /proc; elsewhere never said)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] == b"T"  # (not "t": a server under strace or gdb still answers)
