"""The wire between the light client and the read server: where the socket lives, and length-prefixed JSON
messages. Standard library only (the client imports this before it knows whether it needs kg at all)."""

from __future__ import annotations

import json
import os
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SOCKET = "serve.sock"  # in memory/.kg/, mode 0600
LOCK = "serve.lock"  # held (flock) by the live server for its whole life: its liveness
MAX_MESSAGE = 64 * 1024 * 1024  # a session-start payload (16 MB) and its base64, or a large answer
_HEADER = struct.Struct(">I")
# sun_path holds 108 bytes on Linux, 104 on macOS; a longer path is reached from inside its folder
_SUN_PATH_MAX = 100


class Closed(Exception):
    """The other side went away before a whole message arrived."""


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket) -> dict[str, Any]:
    (size,) = _HEADER.unpack(_exactly(sock, _HEADER.size))
    if size > MAX_MESSAGE:
        raise Closed(f"a message of {size} bytes is larger than {MAX_MESSAGE}")
    value = json.loads(_exactly(sock, size).decode("utf-8"))
    if not isinstance(value, dict):
        raise Closed("a message is not a JSON object")
    return value


def _exactly(sock: socket.socket, size: int) -> bytes:
    parts, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            raise Closed("the connection closed mid-message")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


@contextmanager
def _inside(folder: Path, path: Path) -> Iterator[str]:
    """The address to give bind/connect for `path`: itself, or (too long for sun_path) its bare name, with
    the working directory moved into its folder for the call and moved back after."""
    if len(os.fsencode(str(path))) <= _SUN_PATH_MAX:
        yield str(path)
        return
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(folder)
        yield path.name
    finally:
        os.fchdir(here)
        os.close(here)


def connect(kg_dir: Path, timeout: float) -> socket.socket:
    """A connection to the server of the workspace whose state folder is `kg_dir` (OSError when none
    listens: FileNotFoundError, ConnectionRefusedError)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        with _inside(kg_dir, kg_dir / SOCKET) as address:
            sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return sock


def listen(kg_dir: Path) -> socket.socket:
    """Bind the server's socket, readable and writable by its owner only (0600 from the start: the umask is
    set around the bind, so there is no moment when others could connect)."""
    path = kg_dir / SOCKET
    path.unlink(missing_ok=True)  # a dead server's; the caller holds the server lock, so no live one's
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        with _inside(kg_dir, path) as address:
            sock.bind(address)
        os.chmod(path, 0o600)
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old)
    return sock


def ask(kg_dir: Path, message: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One request, one answer (OSError or Closed when no server answers)."""
    with connect(kg_dir, timeout) as sock:
        send(sock, message)
        return receive(sock)
