"""The read server: one process per workspace that holds the graph open and answers the agent's one-off
reads, byte for byte as the command would have answered in its own process (it runs the same command,
`kg.cli.app.run`, on the workspace it holds). See `kg.serve` for the whole picture.

Run by `python -m kg.serve.server ROOT` (what `client.spawn` starts) or `kg serve run`.
"""

from __future__ import annotations

import base64
import fcntl
import io
import os
import signal
import socket
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.serve import client, protocol
from kg.serve.cache import ReadCache
from kg.serve.door import Door as _Door
from kg.serve.renew import Bounds, fold_before_close, resident_mb

# KG_READ_CACHE=0 in a read's environment: the server forgets the answers it kept first, so the read costs
# what the first read after a write costs (an agent logs between its reads; a bench repeating one read would
# otherwise measure kept answers)
COLD_ENV = "KG_READ_CACHE"
TICK = 1.0  # seconds between looks at the journal while idle (an applier's note may have been missed)
_KEEP = {"_memory_rules", "_lifecycle_policy"}  # what a workspace derives from its rules alone: kept across reads
# (issue 20) what the first drain and the first reads load (linking, search, the session brief, the lifecycle
# they show): loaded while the server waits for the graph and opens it, not in the first reader's time
WARM = ("kg.ingest.drain", "kg.graph.linking", "kg.memory.search", "kg.memory.views", "kg.lifecycle.api",
        "kg.runtimes.hooks", "kg.redaction.redact", "kg.store.bulk")


@dataclass(frozen=True)
class Settings:
    enabled: bool
    idle_seconds: float
    busy_backoff: float = 30.0
    malloc_arenas: int = 0
    renew: Bounds | None = None  # when to open the graph again, giving memory back (kg/serve/renew.py)


def settings(ws: Any) -> Settings:
    """`[serve]` of rules/policy.toml, with kg.toml's `[rules.policy.serve]` over it."""
    from kg.core.policy import RuleReader

    def build(data: dict[str, Any]) -> Settings:
        r = RuleReader(data, "rules/policy.toml").table("serve")
        r.known(("enabled", "idle_seconds", "busy_backoff_seconds", "malloc_arenas", "renew_idle_seconds",
                 "renew_above_mb", "renew_hard_mb", "renew_wal_mb", "renew_grew_mb"))
        bounds = Bounds(idle_seconds=r.number("renew_idle_seconds", 0.0, 86_400),
                        above_mb=r.number("renew_above_mb", 0.0, 1 << 20),
                        hard_mb=r.number("renew_hard_mb", 0.0, 1 << 20), wal_mb=r.number("renew_wal_mb", 0.0, 1 << 20),
                        grew_mb=r.number("renew_grew_mb", 0.0, 1 << 20, default=0.0))
        return Settings(enabled=r.flag("enabled"), idle_seconds=r.number("idle_seconds", 0.05, 7 * 86_400),
                        busy_backoff=r.number("busy_backoff_seconds", 0.0, 86_400),
                        malloc_arenas=r.whole("malloc_arenas", 0, 1024, default=0), renew=bounds)

    return ws.rules.checked("policy", build)


@dataclass
class Server:
    ws: Any
    idle_seconds: float
    stamp: tuple
    since: float = field(default_factory=time.time)
    requests: int = 0
    baseline: set[str] = field(default_factory=set)
    behind: bool = False  # its last drain stopped for someone at the door with entries left: agents are logging
    started_amid: bool = False  # agents logged while it started (ids given out meanwhile): for its first read
    home: tuple = ()  # (device, inode) of the memory/.kg folder it opened: its graph's identity
    cache: Any = None  # its ReadCache: answers kept until the graph changes
    bounds: Bounds | None = None  # when it opens the graph again (kg/serve/renew.py); None: never
    grown: bool = True  # it applied entries (or migrated, at its open) since it last opened the graph
    applied_at: float = 0.0  # when (monotonic) it last applied an entry
    opened_mb: float = 0.0  # its resident MB once it (last) opened the graph (kg/serve/renew.py; 0: not known)

    graph: tuple = ()  # (device, inode) of the graph file it holds open

    def moved(self) -> str:
        """Why it must stop at once ("" while not): the folder it serves is gone or is another one (the workspace
        was removed, maybe made again at the same path), or its graph file was (a sync tool, a person "resetting",
        a restore by hand; QA11 #10). Its graph is not the one there, so it must not answer, drain that journal or
        touch a file: closing would fold its log into a new file at that path (a stub Kùzu could not open)."""
        if self.home and _identity(self.ws.root / client.MARKER) != self.home:
            return _MOVED
        if self.graph and _identity(self.ws.graph_path) != self.graph:
            return _GRAPH_GONE
        return ""

    # -- one request ----------------------------------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The answer to one request, and why to stop after it ("" to go on)."""
        op = request.get("op")
        if op == "status":
            return {"ok": True, **self.describe()}, ""
        if op in ("release", "stop"):
            return {"ok": True}, "released"
        if op == "drain":
            return {"ok": True}, ""
        if op != "run":
            return {"error": f"unknown request {op!r}"}, ""
        if any(request.get(k) != v for k, v in client.identity().items()):
            return {"fallback": "another kg installation"}, "another kg installation asked"
        if _stamp(self.ws) != self.stamp:
            return {"fallback": "kg.toml changed"}, "kg.toml changed"
        self.requests += 1
        return self.run(request), ""

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run the command as its own process would: its arguments, environment, working directory, stdin and
        the encodings of its streams; what it writes is returned in order, stdout and stderr interleaved."""
        from kg.cli.app import run

        for key in set(self.ws.__dict__) - self.baseline - _KEEP:  # what a fresh process would not know yet
            del self.ws.__dict__[key]
        if self.cache is not None and (request.get("env") or {}).get(COLD_ENV) == "0":
            self.cache.clear()  # a read answered as the first after a write (bench/scale.py's cold rows)
        bounded = self._reader_drain(request.get("started"))  # (issue 20) as long as a one-shot read waits
        chunks: list[list[Any]] = []
        saved = (dict(os.environ), sys.stdin, sys.stdout, sys.stderr)
        here = os.open(".", os.O_RDONLY)
        try:
            os.environ.clear()
            os.environ.update(request.get("env") or {})
            try:
                os.chdir(request.get("cwd") or self.ws.root)
            except OSError:
                pass
            sys.stdout = _Capture(chunks, 1, request.get("stdout") or {})
            sys.stderr = _Capture(chunks, 2, request.get("stderr") or {})
            sys.stdin = _stdin(request.get("stdin"))
            try:
                code = run(list(request["argv"]))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        finally:
            if bounded:
                self.ws._held_reader = False
            os.environ.clear()
            os.environ.update(saved[0])
            sys.stdin, sys.stdout, sys.stderr = saved[1:]
            os.fchdir(here)
            os.close(here)
        return {"code": code, "chunks": [[fd, base64.b64encode(data).decode("ascii")] for fd, data in chunks]}

    def drain(self, waiting: Any = None) -> bool:
        """Apply what the journal holds (the server is the graph's one user: appliers leave it this work),
        stopping between two records when `waiting()` says a reader is at the door (issue 20)."""
        from kg.core.errors import KgError
        from kg.ingest.drain import drain_held

        try:
            report = drain_held(self.ws, yield_to=waiting)
            self._applied(report)
            stopped = report.stopped
            self.behind = stopped == "handed over"
            self.started_amid = self.started_amid and self.behind  # a backlog it caught up with is not theirs
        except (KgError, OSError) as exc:  # the entries stay in the journal for the next drain
            _say(f"drain failed: {exc}")
            return False
        return True

    def _reader_drain(self, started: Any = None) -> bool:
        """Before a read: apply the journal for at most `write.reader_drain_seconds` (a batch at least) since
        the client's process started, as a one-shot read does (a client that already waited that long for the
        CPU applies nothing under contention), and keep the command's own open from draining the rest. False
        when the drain failed: the command's own drain then meets the failure and reports it."""
        from kg.core.errors import KgError
        from kg.ingest.drain import drain_held

        now = time.monotonic()
        # a client's start on the machine's monotonic clock; anything odd (an old client) counts from now
        since = started if isinstance(started, (int, float)) and now - 60.0 <= started <= now else now
        try:
            # a backlog the server was applying when this reader came: agents are logging, and a read past its
            # budget applies none of it (else it applied a record or more before an entry arrived to show it)
            # (the first read: agents logged while the server started, so the backlog is theirs, still growing)
            streaming, self.started_amid = self.behind or self.started_amid, False
            # (QA3 #1) with no contention either: a bulk backlog is the server's to apply between its reads (`_loop`),
            # not this reader's to wait for (3,000 entries: a `kg status` of 68 s)
            report = drain_held(self.ws, budget=self.ws.policy.reader_drain_seconds, since=since,
                                streaming=streaming, behind=lambda: True)
            self._applied(report)
            self.ws.pending = report.pending
        except (KgError, OSError):
            return False
        self.ws._held_reader = True
        return True

    def _applied(self, report: Any) -> None:
        if report.applied or report.sessions or report.rejected:
            self.grown, self.applied_at = True, time.monotonic()

    def describe(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "workspace": str(self.ws.root), "since": self.since,
                "requests": self.requests, "idle_seconds": self.idle_seconds}


class _Capture(io.TextIOWrapper):
    """A standard stream that records what is written to it, in order with the other stream's writes, and
    answers `isatty()` as the client's own stream would."""

    def __init__(self, chunks: list[list[Any]], fd: int, info: dict[str, Any]):
        self._sink = _Sink(chunks, fd)
        super().__init__(self._sink, encoding=info.get("encoding") or "utf-8",
                         errors=info.get("errors") or "strict", write_through=True)
        self._tty = bool(info.get("tty"))

    def isatty(self) -> bool:
        return self._tty


class _Sink(io.RawIOBase):
    def __init__(self, chunks: list[list[Any]], fd: int):
        self.chunks, self.fd = chunks, fd

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        if self.chunks and self.chunks[-1][0] == self.fd:
            self.chunks[-1][1] += data
        else:
            self.chunks.append([self.fd, data])
        return len(data)


class _Tty(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def _stdin(info: dict[str, Any] | None) -> Any:
    """The client's stdin as the command would read it (the client sends it only to a command that reads it)."""
    if info is None:
        return io.TextIOWrapper(io.BytesIO(b""))
    if info.get("none"):
        return None
    if info.get("tty"):
        return _Tty(io.BytesIO(b""))
    return io.TextIOWrapper(io.BytesIO(base64.b64decode(info.get("data") or "")),
                            encoding=info.get("encoding") or "utf-8", errors=info.get("errors") or "strict")


def _cap_arenas(arenas: int) -> bool:
    """At most `arenas` glibc malloc arenas in this process (0: leave glibc's default). The server's threads
    (the warm-up, Kùzu's worker) each took an arena of their own, whose free pages stay resident: ~4 MB of
    the server's ~200 MB at 100k entries (201 -> 197 MB, p17). False where glibc's `mallopt` is missing."""
    if arenas < 1:
        return False
    try:
        import ctypes

        return ctypes.CDLL(None).mallopt(-8, arenas) == 1  # -8: M_ARENA_MAX (glibc's malloc.h)
    except (OSError, AttributeError):
        return False


def _warm() -> None:
    import importlib

    for name in WARM:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - only a head start: the read that needs it reports the failure
            pass


def _stamp(ws: Any) -> tuple:
    """kg.toml as it was when the server started: a change means rules the server did not load."""
    try:
        s = (ws.root / "kg.toml").stat()
        return (s.st_mtime_ns, s.st_size, s.st_ino)
    except OSError:
        return ()


def _identity(path: Path) -> tuple:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino)


def _set_aside_own_log(graph: Path) -> None:
    """The graph file was removed or replaced under the server: the write-ahead log beside it, when it is the one
    this process holds open (Kùzu keeps it open), belongs to the graph that is gone; replayed onto a file put back
    in its place, it would mix the two graphs unseen. It is kept aside, named for what it is; a log put back with
    the file (another inode) is left alone."""
    wal = graph.with_name(graph.name + ".wal")
    at = _identity(wal)
    if not at:
        return
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:  # (not Linux: left as it was)
        return
    for fd in fds:
        try:
            st = os.fstat(int(fd))
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) == at:
            try:
                os.replace(wal, wal.with_name(f"{wal.name}.of-a-removed-graph-{time.strftime('%Y%m%d-%H%M%S')}"))
            except OSError:
                pass
            return


def _unlink_own(path: Path, own: tuple) -> None:
    """Remove the socket only if it is still the one this server made (not a later server's at that path)."""
    if own and _identity(path) == own:
        path.unlink(missing_ok=True)


def _busy_stamp(kg_dir: Path, seconds: float) -> None:
    """Until when `client.prestart` starts no server: this one found the graph held."""
    client.write_stamp(kg_dir, protocol.BUSY, time.time() + seconds)


def _say(message: str) -> None:
    try:
        sys.stderr.write(f"kg serve: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


ANOTHER = "another server runs for this workspace"
OFF = "the read server is off ([serve] enabled = false)"
TEAM = "a team graph is not served"
CANNOT = "cannot serve: "  # and what stopped it: the graph held by another process, missing, unreadable
NEVER_SERVED = frozenset({ANOTHER, OFF, TEAM})  # with CANNOT, why `serve` returns before it answered anything


def never_served(why: str) -> bool:
    """Whether `serve` returned `why` without having served at all (a failure to say), not after serving."""
    return why in NEVER_SERVED or why.startswith(CANNOT)


def serve(root: Path, lock: int | None = None) -> str:
    """Serve the workspace at `root` until idle, asked to let go, or stopped; returns why it stopped. `lock`:
    the descriptor of `serve.lock` its starter took for it (`client.spawn`), else it takes the lock itself."""
    from kg.core.errors import KgError, StoreBusy
    from kg.workspace import open_workspace
    from kg.workspace_root import MARKER

    client._in_server = True
    protocol.trace(f"server start {protocol.process_start(time.monotonic()):.3f}")
    kg_dir = root / MARKER
    if lock is None:
        lock = client.claim(kg_dir)  # (a checker's shared instant is waited out, not taken for a server)
    if lock is None:
        return ANOTHER
    backoff = Settings(True, 0.0).busy_backoff
    try:
        protocol.trace("server imported")
        ws = open_workspace(root)
        conf = settings(ws)
        backoff = conf.busy_backoff
        if not conf.enabled:
            return OFF
        if ws.store_url is not None:
            return TEAM
        _cap_arenas(conf.malloc_arenas)  # before the warm-up thread and Kùzu's worker make their own
        import kg.cli.app  # noqa: F401 - loaded before the first request, not during it
        import kg.cli.common as common

        stamp = _stamp(ws)
        from kg.ingest.journal import read_ids

        given = read_ids(ws.journal.ids_path)
        threading.Thread(target=_warm, name="kg-serve-warm", daemon=True).start()
        # one query thread: Kùzu's full-text top-k breaks score ties by thread timing, and a one-off reader
        # (`ws.reading()`) runs one thread, so the answers match it. The page cache stays the writer's: Kùzu
        # also works in it (a 96 MB one failed the open of a 10k workspace), and it does not set the resident
        # size (~5 MB per table's key index does: ~100 MB for kg's schema, measured with a bare Kùzu open).
        # (issue 22) Nor can the server drain with a small one: at 1M, after 300 entries, its CHECKPOINT fails
        # with 128 MB ("the buffer pool is full"), and one such run left a graph whose log no longer replayed
        ws.open_options = {"max_threads": 1}
        with ExitStack() as stack:
            # a foreground open: the detached appliers stand aside for it (a reader waits for it to answer); a
            # process that needs the graph itself asks it to let go once it listens
            # (issue 20) its open applies nothing: the first read waits for the server to listen, not for a
            # backlog; each read drains as a one-shot read would, and the loop applies the rest between reads
            protocol.trace("server opening")
            held = stack.enter_context(ws.store(budget=ws.policy.reader_drain_seconds, apply_journal=False))
            protocol.trace("server opened")
            # last before the graph closes: the log folded into the graph (issue 20: kg closes without a checkpoint,
            # which a short `kg log` cannot afford, so every later open replays what the server applied, up to 8 MB;
            # 140 KB of it made an open 0.3 s slower at load 18); (issue 22) saying so to those it shuts out: a
            # CHECKPOINT took minutes at 1M entries (165 s after 60 logs), past a waiting process's 10 s budget
            stack.callback(fold_before_close, held)
            cache = ReadCache(held).install()  # answers kept until the graph changes
            stack.callback(cache.uninstall)
            server = Server(ws, conf.idle_seconds, stamp, started_amid=read_ids(ws.journal.ids_path) > given,
                            cache=cache, bounds=conf.renew)
            server.baseline = set(ws.__dict__)
            server.opened_mb = resident_mb()
            server.home, server.graph = _identity(kg_dir), _identity(ws.graph_path)
            common._served[:] = [ws]
            stack.callback(common._served.clear)
            listener = stack.enter_context(protocol.listen(kg_dir))
            protocol.trace("server listens")
            stack.callback(_unlink_own, kg_dir / protocol.SOCKET, _identity(kg_dir / protocol.SOCKET))
            why, conn = _loop(server, listener)
            if server.moved():  # closing would checkpoint and clean up files by path: the new workspace's, or a
                # stub graph where one was removed (what it applied is in the journal's search index and ids)
                if why == _GRAPH_GONE:
                    _set_aside_own_log(ws.graph_path)
                _say(f"stopped: {why}")
                os._exit(0)
            # leaving the stack: the socket goes first (new readers run on their own), then the graph closes
        if conn is not None:  # the process that asked for the graph hears once it is free
            with conn:
                try:
                    protocol.send(conn, {"ok": True})
                except OSError:
                    pass
        return why
    except StoreBusy as exc:  # a long import or cycle holds the graph: logs start no server for a while
        _busy_stamp(kg_dir, backoff)
        return f"{CANNOT}{exc}"
    except KgError as exc:
        return f"{CANNOT}{exc}"
    finally:
        os.close(lock)


_MOVED = "the workspace it served was removed or replaced"
_GRAPH_GONE = "its graph file was removed or replaced"


def _loop(server: Server, listener: socket.socket) -> tuple[str, socket.socket | None]:
    door = _Door(listener)
    last, drained = time.monotonic(), True
    # the read that started the server (or found it starting) is about to knock: a drain begun just before it
    # would make it wait for a record (seconds on a loaded machine, for a fresh process's first), so the first
    # look at the journal comes after the first request, or after a tick without one
    fresh = True
    passed_over = False
    while True:
        # (issue 20) between requests the server applies what agents log, record by record, and stops for a
        # reader at the door; after a failed drain it waits for the next tick, so a full disk is not a hot loop.
        # A reader at the door passes the journal over once, never twice in a row: a drain applies at least one
        # record, so readers arriving back to back each wait for one record at most every other request, and
        # what agents logged is still applied (else nothing was, for as long as reads kept coming)
        if moved := server.moved():
            return moved, None
        if door.jammed:  # (out of descriptors: readers read alone, the next command starts a server again)
            return door.jammed, None
        if drained and not fresh and server.ws.journal.has_pending():
            if door.waiting() and not passed_over:
                passed_over = True
            else:
                passed_over = False
                drained = server.drain(door.waiting)
        fresh = False
        left = server.idle_seconds - (time.monotonic() - last)
        if left <= 0 and door.kept is None:  # (a request taken in early is answered first)
            return f"idle for {server.idle_seconds:g} s", None
        got = door.next(max(0.0, min(left, TICK)))
        if moved := server.moved():  # (a client at the door falls back to reading alone, in the workspace there now)
            if got is not None:
                got[0].close()
            return moved, None
        if got is None:
            if door.jammed:
                return door.jammed, None
            drained = server.drain(door.waiting)
            if not door.waiting() and (failed := _renew(server, last)):
                return failed, None
            continue
        conn, request = got
        protocol.trace(f"server request {request.get('op')}")
        answer, stop = server.handle(request)
        protocol.trace("server answered")
        if stop == "released":
            return "asked to let go of the graph", conn
        with conn:
            try:
                protocol.send(conn, answer)
            except OSError:
                pass
        if request.get("op") == "drain":
            drained = server.drain(door.waiting)
        if stop:
            return stop, None
        last = time.monotonic()
        if failed := _renew(server, last):  # (past its hard bounds only: it was just busy)
            return failed, None


def _renew(server: Server, idle_since: float) -> str:
    """Give memory back when due (kg/serve/renew.py); why to stop when the graph would not open again."""
    from kg.core.errors import KgError
    from kg.serve.renew import renew_if_due

    try:
        renew_if_due(server, idle_since)
    except (KgError, OSError) as exc:
        return f"could not open the graph again: {exc}"
    return ""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    lock = None
    if len(args) == 3 and args[1] == "--lock-fd" and args[2].isdigit():  # the lock `client.spawn` took for it
        lock, args = int(args[2]), args[:1]
        try:  # the same open file as the starter's: it holds the lock already, so this costs nothing
            held, named = os.fstat(lock), os.stat(Path(args[0]).resolve() / client.MARKER / protocol.LOCK)
            if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
                raise OSError("another file")
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.set_inheritable(lock, False)  # what it runs (a hook, git) must not keep the server alive
        except OSError:
            _say(f"--lock-fd {lock} is not this workspace's serve.lock taken for this server; not serving")
            return 1
    if len(args) != 1:
        _say("usage: python -m kg.serve.server WORKSPACE [--lock-fd FD]")
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # close the graph cleanly on a plain kill
    _say(f"stopped: {serve(Path(args[0]).resolve(), lock)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
