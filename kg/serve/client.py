"""The light side of the read server: what a `kg` process does before it knows whether it needs kg at all.

`run` sends a read command to the workspace's server and writes its answer; it imports the standard
library, `kg.serve.protocol` and nothing of kg's own (no Kùzu, no typer): the process stays a few MB and
answers in the time of the server's work. When no server lives it starts one and waits for it; when the
server is off, cannot start, or will not answer (another kg installation, changed rules), it says so and the
command runs in this process as before. `hand_over` is how a process that needs the graph itself gets it from
a server (`kg.store.lock`).
"""

from __future__ import annotations

import binascii
import errno
import fcntl
import os
import sys
import time

from kg.serve import protocol, waiting

TYPE_CHECKING = False  # `typing` and `pathlib` cost a client that should take tens of ms several of them
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

ENV = "KG_SERVER"  # 0/false/no/off: never use or start a read server
OFF = {"0", "false", "no", "off"}
MARKER = os.path.join("memory", ".kg")  # kg.workspace_root.MARKER, kept here so that this module imports nothing of kg
STOPPED = "serve.stopped"  # in memory/.kg/: when (epoch seconds) `kg serve stop` last ran (`mark_stopped`)
ANSWER_TIMEOUT = 600.0  # a read at a million entries; a server that hangs longer is treated as dead
_in_server = False  # set in the server process: it never asks itself to let go


class Outcome:
    """What `run` did: `code` is the exit code when the server answered; otherwise the command runs here,
    and `root` names the workspace whose server to `spawn` after it, when none lives (a str or a Path).
    (Not a dataclass: `dataclasses` imports `inspect`, ~10 ms of a client that should take tens.)"""

    __slots__ = ("code", "root")

    def __init__(self, code: int | None = None, root: Path | None = None):
        self.code, self.root = code, root


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in OFF


def locate(explicit: str | None) -> str | None:
    """The workspace folder as `kg.workspace_root.find_root` finds it, or None (the command then runs here and
    says what is wrong). A str path: `pathlib` is not loaded in the client."""
    try:
        named = explicit or os.environ.get("KG_WORKSPACE")
        if named:
            root = os.path.realpath(os.path.expanduser(named))
            return root if os.path.isdir(os.path.join(root, MARKER)) else None
        folder = os.path.realpath(os.getcwd())
        while True:
            if os.path.isdir(os.path.join(folder, MARKER)):
                return folder
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent
    except (OSError, RuntimeError, ValueError):
        pass
    return None


def configured(root: str | Path) -> bool:
    """Whether this workspace may be served: not a team graph (kg.toml [store], KG_STORE), and not switched
    off in kg.toml (`[rules.policy.serve] enabled = false`). A kg.toml that does not parse is not served:
    the command reports it."""
    if os.environ.get("KG_STORE"):
        return False
    try:
        with open(os.path.join(root, "kg.toml"), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
        serve = data.get("rules", {}).get("policy", {}).get("serve", {})
        return "store" not in data and serve.get("enabled", True) is not False
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        return False


def alive(kg_dir: str | Path) -> bool:
    """Whether a server lives (or is starting) for this workspace: it holds `serve.lock` all its life. The check
    takes a shared lock for an instant, which a starter (`claim`) tells from a server's exclusive one: a
    checker never looks like a server (an exclusive instant here made one spawn in six start nothing)."""
    try:
        fd = os.open(os.path.join(kg_dir, protocol.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return True  # cannot tell: do not start another
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock if it was taken
    return False


# Why `serve.lock` could not be opened, when it means no server can run for the workspace: a read-only
# filesystem, or a folder this user cannot write. `alive` says "cannot tell" (True) for any failure to open it,
# so a read then waited its whole budget (~60 s) for a server that could never start.
UNSERVABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def servable(open_errno: int | None) -> bool:
    """Whether a server can run, given the errno of opening `serve.lock` for writing (None: it opened). Pure."""
    return open_errno not in UNSERVABLE


def _open_errno(kg_dir: str | Path) -> int | None:
    try:
        fd = os.open(os.path.join(kg_dir, protocol.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        return exc.errno
    os.close(fd)
    return None


def clean_stale(kg_dir: str | Path) -> None:
    """Remove the socket a killed server left, when no server lives (checked under a shared hold of its lock,
    which a starting server waits out, so a starting server's fresh socket is never removed)."""
    try:
        fd = os.open(os.path.join(kg_dir, protocol.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        try:
            os.unlink(os.path.join(kg_dir, protocol.SOCKET))
        except FileNotFoundError:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def take(fd: int, patience: float = 1.0) -> bool:
    """Take `serve.lock` (open on `fd`) exclusively for a server, unless a server holds it (or is starting):
    the shared instants of checkers (`alive`, `clean_stale`) are waited out, up to `patience` seconds."""
    deadline = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            pass
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return False  # an exclusive holder: a server, or its starter
        fcntl.flock(fd, fcntl.LOCK_UN)  # only checkers held it: again, once their instant is over
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


def claim(kg_dir: str | Path) -> int | None:
    """`serve.lock` opened and taken for a server to start (`take`), or None when one lives or is starting."""
    try:
        fd = os.open(os.path.join(kg_dir, protocol.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    if take(fd):
        return fd
    os.close(fd)
    return None


def identity() -> dict[str, str]:
    """Which kg this is: a server answers only a client of the same installation."""
    import kg

    return {"version": kg.__version__, "package": os.path.dirname(os.path.abspath(kg.__file__))}


def _stream_info(stream: Any) -> dict[str, Any]:
    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError):
        tty = False
    return {"encoding": getattr(stream, "encoding", None) or "utf-8",
            "errors": getattr(stream, "errors", None) or "strict", "tty": tty}


def _stdin(argv: list[str]) -> dict[str, Any] | None:
    """The hook payload a `--runtime claude-code|codex` session-start reads from stdin, read here (as the
    command would) and sent along; None when the command reads no stdin."""
    runtime = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--runtime"), None)
    runtime = runtime or next((a.split("=", 1)[1] for a in argv if a.startswith("--runtime=")), None)
    if runtime not in ("claude-code", "codex"):
        return None
    stream = sys.stdin
    if stream is None:
        return {"none": True}
    info = _stream_info(stream)
    if info["tty"]:
        return info
    from kg.core.inputs import MAX_PAYLOAD_BYTES

    data = stream.buffer.read(MAX_PAYLOAD_BYTES + 1)  # one byte over: the command refuses it as it would here
    return {**info, "data": _b64(data)}


def run(argv: list[str], workspace: str | None, give_way: Callable[[str], bool] | None = None) -> Outcome:
    """Answer `kg ARGV` (a served read command) from the workspace's server when one runs. `give_way(kg_dir)`:
    whether to run here at once instead, looked at first and while a starting server is waited for (a
    session-start hook behind a writer: `kg.runtimes.graph_held`)."""
    if not enabled():
        return Outcome()
    root = locate(workspace)
    if root is None or not configured(root):
        return Outcome()
    if give_way is not None and give_way(os.path.join(root, MARKER)):
        protocol.trace("client gives way to a writer")
        return Outcome()
    try:  # built before connecting: a hook's stdin that stays open must not hold the server (issue 20)
        request = _request(argv)
    except (OSError, ValueError):  # stdin unreadable, or not UTF-8: the command reports it here
        return Outcome(root=root)
    protocol.trace(f"client start {request['started']:.3f}")
    sock = _reach(os.path.join(root, MARKER), give_way)
    protocol.trace("client connected")
    if isinstance(sock, str):  # it waited for a migration as long as a read may: the read fails saying why
        _give_back(request["stdin"])
        _write(2, f"Error: {sock}\n".encode())
        from kg.cli.entry import error_document, json_asked  # (loaded already: the console entry's module)

        if json_asked(argv):  # as every failure says it with --json (cli/common.py json_error)
            _write(1, error_document(sock, 1).encode())
        return Outcome(code=1)
    if sock is None:
        _give_back(request["stdin"])
        return Outcome()  # it could not start (the graph stayed busy): this read runs here, as before
    try:
        try:
            protocol.send(sock, request)
            answer = waiting.answer(sock, ANSWER_TIMEOUT)
        except waiting.Stopped as stopped:  # it holds the graph and cannot answer: said at once, not after 600 s
            _give_back(request["stdin"])
            _write(2, f"Error: {stopped}\n".encode())
            from kg.cli.entry import error_document, json_asked

            if json_asked(argv):
                _write(1, error_document(str(stopped), 1).encode())
            return Outcome(code=1)
        except (OSError, ValueError, protocol.Closed):  # not UTF-8 (refused here by the command), or it died
            _give_back(request["stdin"])
            return Outcome(root=root)
    finally:
        sock.close()
    if "code" not in answer:  # it would not answer this one (another kg, changed rules): run it here
        _give_back(request["stdin"])
        return Outcome(root=root)
    protocol.trace("client answered")
    failure = None
    for fd, chunk in answer.get("chunks", []):
        failure = _write(fd, binascii.a2b_base64(chunk)) or failure
    if failure is not None:  # as the command says it run here (cli/output.py)
        from kg.cli import output

        return Outcome(code=output.lost(failure, int(answer["code"])))
    return Outcome(code=int(answer["code"]))


def _request(argv: list[str]) -> dict[str, Any]:
    """What the server needs to run `kg ARGV` as this process would, stdin included."""
    env = dict(os.environ)
    out = _stream_info(sys.stdout)
    if out["tty"] and "COLUMNS" not in env:  # help and usage boxes are laid out for this terminal
        try:
            size = os.get_terminal_size(sys.stdout.fileno())
            env.update(COLUMNS=str(size.columns), LINES=str(size.lines))
        except (OSError, ValueError):
            pass
    return {"op": "run", "argv": argv, "cwd": os.getcwd(), "env": env, "stdout": out,
            "stderr": _stream_info(sys.stderr), "stdin": _stdin(argv), **identity(),
            "started": protocol.process_start(time.monotonic())}  # the read's drain budget counts from it


def _give_back(stdin: dict[str, Any] | None) -> None:
    """The command runs in this process after all: it reads the stdin the request had read already."""
    if stdin and "data" in stdin:
        import io

        sys.stdin = io.TextIOWrapper(io.BytesIO(binascii.a2b_base64(stdin["data"])), encoding=stdin["encoding"],
                                     errors=stdin["errors"])


def _b64(data: bytes) -> str:
    """Base64 without the `base64` module (it imports `re` and `struct`)."""
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _reach(kg_dir: str, give_way: Callable[[str], bool] | None = None) -> Any:
    """A connection to the workspace's server; when none lives, one is started and waited for (the first read pays
    its start, the pattern of language servers). It takes the graph as a foreground process does, so the detached
    appliers of agents logging stand aside for it. None when it does not come up: it gave up on a graph held past
    its retry budget (or a back-off from the last one that did is on), or it was asked to let go meanwhile, or
    `give_way` said to run here. A server that leaves before it listens (killed, or its starter's start failed) is
    started again, twice at most. While a migration runs (`kg.serve.progress`) the read waits for it, saying so on
    stderr; past that bound, the message the read fails with (exit 1)."""
    try:
        return protocol.connect(kg_dir, ANSWER_TIMEOUT)
    except ConnectionRefusedError:  # a socket no one listens on: a killed server's
        clean_stale(kg_dir)
    except OSError:
        pass
    root = os.path.dirname(os.path.dirname(kg_dir))
    if not servable(_open_errno(kg_dir)):  # the command fails here at once, saying why (as with KG_SERVER=0)
        protocol.trace("client: no server can run (the workspace is not writable)")
        return None
    if not alive(kg_dir):
        if backing_off(kg_dir):
            protocol.trace("client backs off")
            return None
        protocol.trace("client spawns")
        if not spawn(root):
            return None
    else:
        protocol.trace("client waits for a starting server")
    try:
        budget = 3 * float(os.environ.get("KG_LOCK_TIMEOUT") or 10) + 30
    except ValueError:
        budget = 60.0
    from kg.serve.progress import Watch, give_up_line

    watch = Watch(kg_dir)
    started = spawned = waited = time.monotonic()
    seen, restarts = False, 0
    while True:
        time.sleep(0.01)
        try:
            return protocol.connect(kg_dir, ANSWER_TIMEOUT)
        except OSError:
            pass
        if give_way is not None and give_way(kg_dir):  # the server it waits for waits for a writer itself
            protocol.trace("client gives way to a writer")
            return None
        now = time.monotonic()
        migrating = watch.check()
        if migrating is False:
            return give_up_line(watch.record)
        if migrating:  # the budget counts from the migration's end
            waited = now
        elif now - waited > budget:
            return None
        if alive(kg_dir):
            seen = True
        elif (not seen and now - started > 10.0) or restarts > 1:  # it never got going, or left twice
            return None
        elif seen or now - spawned > 0.5:  # it left before it listened, or a starter said one was starting
            protocol.trace("client starts it again")  # yet none lives: start one now
            if not spawn(root):
                return None
            seen, spawned, restarts = False, now, restarts + 1


def _write(fd: int, data: bytes) -> OSError | None:
    """Write the server's output; the error when standard output could not take it."""
    stream = sys.stdout if fd == 1 else sys.stderr
    try:
        stream.buffer.write(data)
        stream.flush()
    except OSError as exc:
        return exc if fd == 1 else None
    except (ValueError, AttributeError):  # closed
        pass
    return None


def spawn(root: str | Path, *, force: bool = False, unless_stopped_since: float | None = None) -> bool:
    """Start the workspace's server, detached (its own session, stdio on /dev/null, so a hook waiting for this
    process's output is not kept waiting), unless one lives or is starting. False when none could start, or
    (unless `force`: `kg serve start`) while the last server's busy back-off lasts (`backing_off`): every
    starter (a read, `kg log`, the detached applier) honours it, so a graph held by a long job is not met by a
    new server per read that waits for it and gives up. `unless_stopped_since` (the detached applier: when its
    log answered): False, and none started, when `kg serve stop` ran after that moment (`stopped_since`)."""
    kg_dir = os.path.join(root, MARKER)
    if not enabled() or (not force and backing_off(kg_dir)):
        return False
    # (issue 20) the server's liveness lock is taken here and handed to the child, which holds it from its
    # first instant: a server still importing is alive already, so a read arriving meanwhile waits for it
    # instead of starting a second one (at load 13, one of two first reads did, ~1.5 s of a core for nothing)
    lock = claim(kg_dir)
    if lock is None:
        return True  # one lives, or is starting
    if unless_stopped_since is not None and stopped_since(kg_dir, unless_stopped_since):
        # looked at with the lock held: a stop that stamps after this look finds the lock taken (alive) and waits
        # for the server to listen, then stops it; one that stamped before is seen here
        os.close(lock)
        return False
    try:
        import subprocess

        try:
            subprocess.Popen([sys.executable, "-m", "kg.serve.server", str(root), "--lock-fd", str(lock)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True, close_fds=True, pass_fds=(lock,), cwd=str(root))
        except OSError:
            return False  # the read runs on its own, as before (closing below lets go of the lock)
        return True
    finally:
        os.close(lock)  # the child's copy of the descriptor keeps the lock


def prestart(workspace: str | None) -> None:
    """Start the workspace's read server as a `kg log` begins, unless one lives (issue 20): under agents'
    logging the server applies the journal anyway (the detached applier starts it), and started seconds
    earlier it is warm for the first read. Costs a resident process per workspace until `[serve]
    idle_seconds`. (The console entry calls it; not for `--wait`, which needs the graph itself, nor `--rules`.)"""
    if not enabled():
        return
    root = locate(workspace)
    if root is None or alive(os.path.join(root, MARKER)):
        return
    if configured(root):  # (spawn honours the busy back-off)
        spawn(root)


def mark_stopped(kg_dir: str | Path) -> None:
    """Stamp the moment `kg serve stop` ran, before it stops the server: a detached applier left by a log that
    answered earlier (niced, late on a loaded machine) then starts no server after the stop (`spawn`'s
    `unless_stopped_since`). A read, or a log, after the stop starts one as before. Best effort: a workspace
    that cannot be written keeps no stamp."""
    write_stamp(kg_dir, STOPPED, time.time())


def stopped_since(kg_dir: str | Path, moment: float) -> bool:
    """Whether `kg serve stop` ran after `moment` (epoch seconds)."""
    stamp = read_stamp(kg_dir, STOPPED)
    return stamp is not None and stamp > moment


def write_stamp(kg_dir: str | Path, name: str, moment: float) -> None:
    """A moment (epoch seconds) in the file `name` of memory/.kg, written whole (by rename); best effort."""
    part = os.path.join(kg_dir, f"{name}.{os.getpid()}")
    try:
        with open(part, "w", encoding="ascii") as f:
            f.write(f"{moment:.6f}")
        os.replace(part, os.path.join(kg_dir, name))
    except OSError:
        try:
            os.unlink(part)
        except OSError:
            pass


def read_stamp(kg_dir: str | Path, name: str) -> float | None:
    """The moment `write_stamp` left in `name`, or None (no stamp, or not one)."""
    try:
        with open(os.path.join(kg_dir, name), "rb") as f:
            return float(f.read(64))
    except (OSError, ValueError):
        return None


def backing_off(kg_dir: str | Path) -> bool:
    """Whether the last server to start found the graph held by a long import or cycle, recently (its stamp,
    `[serve] busy_backoff_seconds`): no starter starts one then, which would only wait for the lock and exit.
    The stamp goes when a process lets go of the graph (`kg.store.lock.FileLock.release`): it is free again."""
    until = read_stamp(kg_dir, protocol.BUSY)
    return until is not None and until > time.time()


def hand_over(kg_dir: str | Path, *, polite: bool, timeout: float) -> bool:
    """Called by a process waiting for the graph lock: if this workspace's read server holds the graph, ask
    it to apply the journal (`polite`: a detached applier, whose work that is) or to close the graph and exit
    (anyone else, who then takes the lock). True when a server took the request."""
    if _in_server:
        return False
    try:
        answer = protocol.ask(kg_dir, {"op": "drain" if polite else "release"}, max(0.1, timeout))
    except ConnectionRefusedError:
        clean_stale(kg_dir)
        return False
    except (OSError, ValueError, protocol.Closed):
        return False
    return bool(answer.get("ok"))
