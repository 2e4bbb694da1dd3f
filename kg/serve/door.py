"""The read server's door: its listening socket, read so that a drain between reads never waits there
(issue 20). See `Door`."""

from __future__ import annotations

import errno
import os
import socket
import time
from typing import Any

from kg.serve import protocol

RECEIVE_TIMEOUT = 30.0  # seconds for a connected client to send its whole request (read outside any drain)
_PEEK = 4096  # a request this small that arrived whole is read at the door (an applier's knock is ~20 bytes)
# an accept that fails for want of a resource leaves the connection in the backlog, so the listener stays readable:
# looking again at once was a hot loop holding the graph for good (QA11 #6, under `ulimit -n 10`)
# Out of this process's descriptors (EMFILE) lasts; the machine's (ENFILE) or its memory (ENOBUFS, ENOMEM) is mostly a
# moment's shortage: the door waits a little and looks again, and gives up only when it lasts (review M3).
_JAMMED = {errno.EMFILE}
_SHORT = {errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
SHORT_WAIT = 0.05  # seconds between two looks through a shortage
SHORT_LOOKS = 100  # looks in a row before a shortage counts as lasting (~5 s)


class Door:
    """The listening socket, with at most one request taken in early. A drain between reads looks at the door
    between two records (`waiting`), with a write transaction open, so it never waits there: it answers a
    detached applier's knock (`drain`: entries wait, which the server applies anyway) that arrived whole and
    goes on; anything else (a read, a request to let go, a client whose request has not arrived yet) is kept
    for the loop, which reads it once the drain has stopped and committed (issue 20)."""

    def __init__(self, listener: socket.socket):
        self.listener = listener
        self.kept: tuple[socket.socket, dict[str, Any] | None] | None = None
        self.jammed: str | None = None  # why no connection can be taken: the server lets go of the graph
        self._short = 0  # accepts in a row that failed for a shortage of the machine's

    def waiting(self) -> bool:
        """Whether a request waits (or the door is jammed: a drain stops, and the loop ends)."""
        import select

        while self.kept is None and self.jammed is None and select.select([self.listener], [], [], 0)[0]:
            conn = self._accept()
            if conn is None:
                continue
            request = _arrived(conn)
            if request is False:  # it closed, or sent what is not a request
                conn.close()
                continue
            if request is not None and request.get("op") == "drain":
                with conn:
                    try:
                        protocol.send(conn, {"ok": True})
                    except OSError:
                        pass
                continue
            self.kept = (conn, request)
        return self.kept is not None or self.jammed is not None

    def next(self, timeout: float) -> tuple[socket.socket, dict[str, Any]] | None:
        """The request kept, or the next one to arrive within `timeout` seconds (None: none came)."""
        if self.kept is not None:
            (conn, request), self.kept = self.kept, None
            if request is not None:
                return conn, request
            got = _receive(conn)
            if got is not None:
                return got
        deadline = time.monotonic() + timeout
        while self.jammed is None and (left := deadline - time.monotonic()) > 0:
            self.listener.settimeout(left)
            conn = self._accept()
            got = None if conn is None else _receive(conn)
            if got is not None:
                return got
        return None

    def _accept(self) -> socket.socket | None:
        """One connection of this user's; None when none came in time."""
        try:
            conn, _ = self.listener.accept()
        except OSError as exc:  # the timeout (or, polled, nothing there after all)
            if exc.errno in _SHORT:
                self._short += 1
                time.sleep(SHORT_WAIT)  # (the connection stays in the backlog: no hot loop meanwhile)
            if exc.errno in _JAMMED or self._short >= SHORT_LOOKS:
                self.jammed = f"cannot take a connection ({exc.strerror}): let go of the graph"
            return None
        self._short = 0
        conn.settimeout(RECEIVE_TIMEOUT)
        if not _same_user(conn):  # the socket is 0600 already; a peer of another user is not answered
            conn.close()
            return None
        return conn


def _receive(conn: socket.socket) -> tuple[socket.socket, dict[str, Any]] | None:
    """The request on `conn` (waiting up to RECEIVE_TIMEOUT for it), or None (closed) when none came whole."""
    try:
        return conn, protocol.receive(conn)
    except (OSError, ValueError, protocol.Closed):
        conn.close()
        return None


def _arrived(conn: socket.socket) -> dict[str, Any] | None | bool:
    """The request on `conn` if a small one arrived whole already (read without waiting); None when it has
    not (or is large: the loop reads it); False when the client closed or sent what is not a request."""
    conn.setblocking(False)  # (a socket with a timeout polls for data before it reads, whatever the flags)
    try:
        head = conn.recv(_PEEK, socket.MSG_PEEK)
    except BlockingIOError:
        return None
    except OSError:
        return False
    finally:
        conn.settimeout(RECEIVE_TIMEOUT)
    if not head:
        return False
    header = protocol.HEADER
    if len(head) < header or int.from_bytes(head[:header], "big") + header > len(head):
        return None
    try:
        return protocol.receive(conn)  # whole in the socket's buffer: no wait
    except (OSError, ValueError, protocol.Closed):
        return False


def _same_user(conn: socket.socket) -> bool:
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # not Linux: the socket's mode is the guard
    import struct

    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                        struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()
