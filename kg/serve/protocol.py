"""The wire between the light client and the read server: where the socket lives, and length-prefixed JSON
messages. Standard library only (the client imports this before it knows whether it needs kg at all)."""

from __future__ import annotations

import _socket  # not `socket`: its enums and selectors cost the client ~10 ms of a ~60 ms run
import json
import os

TYPE_CHECKING = False  # `typing` itself costs the client ~5 ms
if TYPE_CHECKING:
    import socket
    from pathlib import Path

SOCKET = "serve.sock"  # in memory/.kg/, mode 0600
LOCK = "serve.lock"  # held (flock) by the live server for its whole life: its liveness
MAX_MESSAGE = 64 * 1024 * 1024  # a session-start payload (16 MB) and its base64, or a large answer
HEADER = 4  # bytes of big-endian length before each message
# sun_path holds 108 bytes on Linux, 104 on macOS; a longer path is reached from inside its folder
_SUN_PATH_MAX = 100


def process_start(now: float, *, longest: float = 60.0) -> float:
    """When this process started, on the monotonic clock of `now` (`time.monotonic()`, which every process of
    the machine shares): a one-off reader's drain budget counts from there, whether it reads the graph itself
    (`kg.ingest.drain.command_started`) or asks the read server (the client sends it with the request), so a
    read that already waited for the CPU applies nothing under contention. A process older than `longest`
    seconds (the MCP server, a notebook) counts from `now`. Linux only (`/proc`); elsewhere `now`."""
    import time

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # starttime: field 22, after pid and (comm)
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age <= longest else now


class Closed(Exception):
    """The other side went away before a whole message arrived."""


def send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    sock.sendall(len(data).to_bytes(HEADER, "big") + data)


def receive(sock: socket.socket) -> dict:
    size = int.from_bytes(_exactly(sock, HEADER), "big")
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


def _bind_or_connect(call: object, kg_dir: str | Path, name: str) -> None:
    """`call(address)` for the file `name` in `kg_dir`: its path, or (too long for sun_path) its bare name with
    the working directory moved into `kg_dir` for the call and moved back after."""
    path = os.path.join(os.fspath(kg_dir), name)
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        call(path)
        return
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(kg_dir)
        call(name)
    finally:
        os.fchdir(here)
        os.close(here)


def connect(kg_dir: str | Path, timeout: float) -> _socket.socket:
    """A connection to the server of the workspace whose state folder is `kg_dir` (OSError when none
    listens: FileNotFoundError, ConnectionRefusedError). The caller closes it."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        _bind_or_connect(sock.connect, kg_dir, SOCKET)
    except BaseException:
        sock.close()
        raise
    return sock


def listen(kg_dir: Path) -> socket.socket:
    """Bind the server's socket, readable and writable by its owner only (0600 from the start: the umask is
    set around the bind, so there is no moment when others could connect)."""
    import socket

    path = kg_dir / SOCKET
    path.unlink(missing_ok=True)  # a dead server's; the caller holds the server lock, so no live one's
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        _bind_or_connect(sock.bind, kg_dir, SOCKET)
        os.chmod(path, 0o600)
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old)
    return sock


def ask(kg_dir: str | Path, message: dict, timeout: float) -> dict:
    """One request, one answer (OSError or Closed when no server answers)."""
    sock = connect(kg_dir, timeout)
    try:
        send(sock, message)
        return receive(sock)
    finally:
        sock.close()


def trace(phase: str) -> None:
    """(issue 20) With KG_SERVE_TRACE=FILE, append `monotonic pid phase` to FILE: the phases of a read and of a
    server's start (client start / spawns / connected / answered; server start / imported / opening / opened /
    listens / request / answered), on the monotonic clock every process of the machine shares. A diagnostic:
    set it in the environment of the agents and readers whose first read is slow."""
    path = os.environ.get("KG_SERVE_TRACE")
    if not path:
        return
    import time

    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{time.monotonic():.3f} {os.getpid()} {phase}\n")
    except OSError:
        pass
