"""One rule for every name that becomes a path, and where such paths may lead.

Session ids (typed, from `current-session`, or from a transcript's `sessionId`), skill slugs, pattern keys and
search filters all end up as file names under `memory/`. A name that carries `/`, `..` or a leading `.`
could write `AGENTS.md` or read any `*.md` on the disk, so every one of them passes `check_name` first, and
the file it names is resolved (symlinks followed) and must stay inside the workspace (`inside`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
from pathlib import Path

from kg.core.errors import UsageError

# Letters, digits, `_`, `-`, `.` and `:`; no leading dot, no `..`, at most 128 characters. Runtimes' session
# ids (UUIDs), kg's own (`2026-12-01-001`, `reflect-20261201-101010`) and pattern keys (`auto.deploy.x`) fit.
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:\-]{0,127}$")


def is_name(value: object) -> bool:
    """Whether `value` may become a file name under the workspace. Pure."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value)) and ".." not in value


def name_for(text: str, *, prefix: str = "session") -> str | None:
    """A safe name (`is_name`) for a name a person or a transcript gave in any script, or None for an empty one.
    A name that is one already, or becomes one with its blanks and punctuation as `-` ("2025-06-02 14:29:21"),
    stays readable; one with other characters (a SpecStory chat titled 修复订单导出分页 (2026-11-18 10:05:12), a
    `--session 周一-对话`) keeps its ASCII part, its date and time, and gets a short digest of the whole name: the same
    name always gives the same id, and two chats of one minute with different titles are two sessions. Pure."""
    import hashlib
    import unicodedata

    text = unicodedata.normalize("NFC", text or "").strip()
    safe = re.sub(r"[^\w.-]+", "-", text).strip("-.")[:128]
    if not safe:
        return None
    if is_name(safe):
        return safe
    ascii_part = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9_.-]+", "-", text)).strip("-._")[:110]
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    name = f"{ascii_part}-{digest}" if ascii_part else f"{prefix}-{digest}"
    return name if is_name(name) else f"{prefix}-{digest}"


def check_name(value: str, what: str, *, example: str = "2026-12-01-001") -> str:
    """`value` unchanged if it is a safe name, else a UsageError saying what a good one looks like."""
    if not is_name(value):
        shown = value if len(value) <= 80 else value[:77] + "..."
        raise UsageError(f"invalid {what} {shown!r}: use up to 128 letters, digits, '_', '-', '.' or ':' "
                         f"(no '/', no '..', not starting with '.'), for example {example}")
    return value


def inside(root: Path, path: Path, what: str) -> Path:
    """`path` with symlinks resolved, refused unless it stays inside the workspace `root`."""
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    if real != base and base not in real.parents:
        raise UsageError(f"{what} {path} leads outside the workspace {root} (to {real}); kg reads and writes "
                         "only inside its workspace")
    return real


def out_path(path: str | os.PathLike[str] | None, kg_dir: Path, *, root: Path | None = None) -> Path | None:
    """An `--out` value checked by `output_target`: the path as given, or a symlink's target (so the file is
    written through the link and the link stays).

    With `root` (the CLI: a path the user typed) it is confined to the workspace like every other name that
    becomes a path: a relative path resolves against `root`, not the current directory, and one that leads
    outside (`..`, an absolute path elsewhere, a symlink pointing out) is refused."""
    if path is None:
        return None
    given = Path(path).expanduser()
    if root is not None:
        given = given if given.is_absolute() else root / given
        real = Path(os.path.realpath(given))
        base = Path(os.path.realpath(root))
        if real != base and base not in real.parents:
            raise UsageError(f"--out {path} is outside the workspace {root}: kg writes only inside its "
                             "workspace. Name a file in it (a relative path is taken from the workspace "
                             "folder) and copy it from there, or export to stdout where the command allows")
    real = output_target(given, kg_dir)
    return real if given.is_symlink() else given


def output_target(path: Path, kg_dir: Path) -> Path:
    """Where an `--out` file may be written: not over kg's own state (`memory/.kg`), not onto a device, a
    FIFO or a folder. A symlink is written through (its target is replaced, the link stays)."""
    real = Path(os.path.realpath(path))
    state = Path(os.path.realpath(kg_dir))
    if real == state or state in real.parents:
        raise UsageError(f"--out {path} is inside kg's own state folder {kg_dir}; choose another file")
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise UsageError(f"--out {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"--out {path} is not a regular file (a folder, device or FIFO); name a file")
    return real


def try_flock(path: Path, mode: int = 0o644) -> int | None:
    """An exclusive lock on `path` taken without waiting: the file descriptor that holds it (inherited by a
    forked child), or None when another process holds it or the file cannot be opened."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def flock_wait(fd: int, timeout: float) -> bool:
    """Take an exclusive `flock` on `fd`, waiting at most `timeout` seconds: True once held, False when the
    time ran out.

    The wait blocks in the kernel, which hands the lock over the moment its holder lets go (no polling: many
    processes queued on a short lock neither spin nor oversleep). It blocks in a helper thread, on a duplicate
    of `fd` (the same open file, so the same lock), while the caller waits for it with a timeout. No signal is
    involved: an alarm (the earlier design) could fire between the lock being granted and the alarm being
    cleared, and end a `kg log` that held the lock with an unexpected failure; and a process-wide alarm cannot
    bound a wait in any thread but the main one. When the caller gives up, the helper stays blocked until the
    lock comes, then lets go of it at once and closes its duplicate. So after a False, close `fd` and never
    wait on it again: the helper's letting go would release a lock taken later through the same open file."""
    import threading

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    if timeout <= 0:
        return False
    dup = os.dup(fd)
    state = {"got": False, "gave_up": False, "error": None}
    decided = threading.Lock()
    done = threading.Event()

    def wait() -> None:
        try:
            fcntl.flock(dup, fcntl.LOCK_EX)
        except OSError as exc:
            state["error"] = exc
        with decided:
            if state["gave_up"]:  # too late: the caller left; let go at once
                if state["error"] is None:
                    fcntl.flock(dup, fcntl.LOCK_UN)
                os.close(dup)
                return
            state["got"] = state["error"] is None
        os.close(dup)  # the lock belongs to the open file, which `fd` still holds
        done.set()

    threading.Thread(target=wait, name="kg-flock-wait", daemon=True).start()
    done.wait(timeout)
    with decided:
        if not done.is_set() and not state["got"] and state["error"] is None:
            state["gave_up"] = True
            return False
    done.wait()  # decided just now: the helper is closing its duplicate
    if state["error"] is not None:
        raise state["error"]
    return True


class HeldLock:
    """What every file lock of kg shares once `acquire` (the subclass's) set `_fd`: release, `held`, and the
    context manager. Closing the descriptor after unlocking, even when the unlock fails."""

    _fd: int | None = None
    path: Path
    timeout: float
    what: str

    def acquire(self) -> None:
        raise NotImplementedError

    def _open(self) -> int:
        from kg.core.errors import StoreError

        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if getattr(self, "shared", False) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                try:  # a reader of a read-only workspace (a backup, a read-only mount): flock works on a read-only
                    return os.open(self.path, os.O_RDONLY)  # descriptor, so it still excludes a writer elsewhere
                except OSError:
                    pass  # (a writer keeps the refusal below: it could write nothing there)
            if exc.errno == errno.EISDIR:  # (QA11 #11) a folder in its place: not a matter of rights
                from kg.core.errors import os_failure

                raise StoreError(f"cannot open lock file: {os_failure(exc)}") from None
            raise StoreError(f"cannot open lock file {self.path}: {exc.strerror}; check that the workspace "
                             "folder is writable") from None

    def _busy(self, fd: int) -> Exception:
        """The error for a lock not got within the budget (closes `fd`), naming the holder's pid if it wrote it."""
        from kg.core.errors import StoreBusy

        try:
            pid = os.pread(fd, 11, 0).decode().strip()
        except (OSError, UnicodeDecodeError):
            pid = ""
        os.close(fd)
        holder = f" (pid {pid})" if pid.isdigit() else ""
        return StoreBusy(f"{self.what} is held by another process{holder} for longer than the {self.timeout:g} s "
                         "retry budget; try again when it finishes, or raise the budget with KG_LOCK_TIMEOUT=SECONDS")

    def _took(self, fd: int) -> None:
        try:
            os.pwrite(fd, f"{os.getpid():>10}\n".encode(), 0)  # fixed width: no truncate needed
        except OSError:
            pass  # the holder's pid is only a courtesy for error messages
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class WaitLock(HeldLock):
    """An exclusive lock on a short critical section shared by many processes (the write journal), taken with
    `flock_wait`: the same interface as `kg.store.lock.FileLock`, without its polling and its hand-over to
    waiting readers (nobody holds this lock for long)."""

    def __init__(self, path: Path, *, timeout: float, what: str):
        self.path, self.timeout, self.what = path, timeout, what
        self._fd: int | None = None

    def acquire(self) -> None:
        from kg.core.errors import StoreError

        fd = self._open()
        try:
            got = flock_wait(fd, self.timeout)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from None
        except BaseException:
            os.close(fd)
            raise
        if not got:
            raise self._busy(fd)
        self._took(fd)

