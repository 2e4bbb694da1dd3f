"""Writing a file so that a reader sees the old or the new content, never a mix: the one way kg replaces a file.

Every module that owns a file kg writes (see docs/architecture.md, "Files kg writes") replaces it through
`write_atomic` (bytes in hand) or `atomic_writer` (a format streamed into a handle, as GraphML is), and a
module that appends to one (the daily log, `.learnings/`) checks it first with `check_target`: one rule for
where a write may land. A file of a workspace that is a symlink is written through only when the link leads to
a file inside that workspace (a person links AGENTS.md to CLAUDE.md); one leading out of it is refused, as is
a folder or any other non-file where kg's file belongs.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

from kg.core.errors import FileChanged, UnusableFile

STATE = Path("memory") / ".kg"  # the folder that makes a folder a workspace (kg.workspace_root.MARKER)
ANY: Any = object()  # `base` when kg replaces a file whatever it holds now (its own state files)
BEFORE_REPLACE: Any = None  # a test hook: called with the path after the new content is on disk, before the check
LEFT_TMP_AGE_S = 60.0  # a dead writer's temporary file this old is removed by the next write of its file
TRIES = 5  # how many times a read-merge-write of a file someone keeps writing is made from a fresh read (`retried`)
T = TypeVar("T")


def fsync_dir(path: Path) -> None:
    """Make a folder's entries durable (a new or renamed file's name survives a power loss)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create(tmp: Path, mode: int | None) -> int:
    """A new temp file that has the replaced file's mode before anything is written to it (a 0600 file's new
    content is never readable by others). A leftover of a killed writer with the same name is replaced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666)
    except FileExistsError:
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666)
    if mode is not None:
        try:
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
    return fd


def workspace_of(path: Path) -> Path | None:
    """The workspace holding `path`: the nearest folder above it that has `memory/.kg`; None outside any."""
    for folder in Path(os.path.abspath(path)).parents:
        if (folder / STATE).is_dir():
            return folder
    return None


def target_problem(path: Path, *, root: Path | None = None, confined: bool = True, writing: bool = True) -> str:
    """Why kg may not write `path` ('' when it may). A symlink in a workspace (`root`, else the one holding
    `path`) must lead inside it, unless `confined` is off (a read: `kg.lifecycle.blocks.read` asks only why a
    file cannot be read; `kg install` too refuses a link out since QA3 #3); what is there must be a file (or
    nothing), and a file of a workspace must be writable: a person who made TOOLS.md read-only (no owner
    write bit, which root's writes would ignore) keeps it as it is. A QA pass found `kg export memory`
    rewriting the file an outside link led to, a folder named USER.md failing the whole cycle, and a
    read-only TOOLS.md replaced by a rename. `writing` off asks only whether kg may read it and keep it as it
    is: a read-only file whose block is current is no problem until kg has something to write there (QA2 #7:
    every daily cycle failed on a read-only SOUL.md it had nothing to change in)."""
    path = Path(path)
    root = root if root is not None else workspace_of(path)
    if confined:
        leak = outside_problem(path, root=root)
        if leak:
            return leak
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return ""
    except OSError as exc:  # a symlink loop, a folder on the way that cannot be searched
        return f"{_shown(path, root)} cannot be used: {exc.strerror}; fix or remove it"
    if stat.S_ISDIR(mode):
        return (f"{_shown(path, root)} is a folder, not a file: kg keeps its text in a file of that name; move or "
                "rename the folder")
    if not stat.S_ISREG(mode):
        return (f"{_shown(path, root)} is not a regular file (a device, FIFO or socket); remove it so kg can "
                "write a file there")
    if not writing:
        return ""
    if root is not None and not mode & stat.S_IWUSR:
        return (f"{_shown(path, root)} is read-only (mode {stat.S_IMODE(mode):o}); kg will not replace a file a "
                f"person made read-only: make it writable (chmod u+w {_shown(path, root)}) for kg to update it")
    if root is not None and not os.access(path, os.W_OK):  # the mode allows it: chmod would not help (QA2 #7)
        return (f"{_shown(path, root)} cannot be written though its mode ({stat.S_IMODE(mode):o}) allows it: an "
                "immutable attribute (`lsattr`; `chattr -i` clears it), a read-only mount, or another owner; kg "
                "will not replace it until it is writable")
    return ""


def outside_problem(path: Path, *, root: Path | None = None) -> str:
    """Why `path`, a file or folder of a workspace (`root`, else the one holding it), leads out of it ('' when
    it stays inside): a symlink on the way (the file itself, or a folder such as `memory/skills` or
    `.learnings`) whose target is elsewhere. Inside kg's state folder the folder's own place is the bound:
    a person may keep `memory/.kg` elsewhere through a link. A QA pass found `kg skill new` writing into the
    folder a linked `memory/skills` led to, and `kg export trail --learnings` into a linked `.learnings`."""
    root = root if root is not None else workspace_of(path)
    if root is None:
        return ""
    given, base = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    if base not in given.parents:
        return ""  # not a file of this workspace (an `--out` the person named is theirs to choose)
    if base / STATE in given.parents:  # kg's own state: a linked `memory/.kg` moved it (and the graph Kùzu
        base = base / STATE            # writes, which no check of kg's reaches) elsewhere; a link in it may not
    real_base = Path(os.path.realpath(base))
    real = Path(os.path.realpath(given))
    if real == real_base or real_base in real.parents:
        return ""
    link = base
    for part in given.relative_to(base).parts:  # the first link on the way that leads out
        link = link / part
        target = Path(os.path.realpath(link))
        if os.path.islink(link) and target != real_base and real_base not in target.parents:
            break
    what = "folder" if os.path.isdir(link) else "file"
    written = "" if link == given else f" {_shown(given, root)}"
    real_root = Path(os.path.realpath(root))
    if base != Path(os.path.abspath(root)) and (target == real_root or real_root in target.parents):
        # a link in memory/.kg to elsewhere in the workspace (QA3 #1 said "outside the workspace" of it)
        return (f"{_shown(link, root)} is a symlink to {target}, out of {STATE}, the folder kg keeps its state in; "
                f"kg will not write{written} there: replace the link with a copy of the {what}, or link to a {what} "
                f"inside {STATE}")
    return (f"{_shown(link, root)} is a symlink to {target}, outside the workspace {root}; kg will not write"
            f"{written} there: replace the link with a copy of the {what}, or link to a {what} inside the "
            "workspace")


def make_folder(folder: Path, *, root: Path | None = None) -> None:
    """Create a workspace folder kg writes into (and the folders above it), refusing (UnusableFile) one that
    leads out of the workspace before anything is made there."""
    check_folder(folder, root=root)
    folder.mkdir(parents=True, exist_ok=True)


def check_folder(folder: Path, *, root: Path | None = None) -> None:
    """Refuse (UnusableFile) a workspace folder that leads out of the workspace (`outside_problem`)."""
    problem = outside_problem(folder, root=root)
    if problem:
        raise UnusableFile(problem, str(folder))


def check_target(path: Path, *, root: Path | None = None, confined: bool = True) -> None:
    """Refuse (UnusableFile, naming the file) a write `target_problem` finds a reason against."""
    problem = target_problem(path, root=root, confined=confined)
    if problem:
        raise UnusableFile(problem, str(path))


def _shown(path: Path, root: Path | None) -> str:
    """`path` as a person names it: relative to its workspace."""
    root = root if root is not None else workspace_of(path)
    try:
        return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(root))) if root else str(path)
    except ValueError:
        return str(path)


@contextmanager
def atomic_writer(path: Path, *, text: bool = False, encoding: str = "utf-8",
                  confined: bool = True, base: bytes | None = ANY) -> Iterator[IO[Any]]:
    """A handle on a temporary file beside `path` that replaces `path` when the block ends without error.

    A symlink is written through when `check_target` lets it (see `target_problem`): its target gets the new
    content and the link stays a link (a person who linked CLAUDE.md to AGENTS.md keeps the link), and the file
    keeps its permission bits. A failed write (disk full, read-only folder, an exception in the block) leaves
    no temporary file behind and the old content in place.

    `base` is what the file held when the new content was made from it (None: there was no file): a file that
    no longer holds it is left as it is and FileChanged is raised, so a write made between kg's read and its
    replace is never lost. The check reads the file right before the rename; what the OS leaves is the window
    between that read and `os.replace` (microseconds: rename has no compare-and-swap)."""
    path = Path(path)
    check_target(path, confined=confined)
    if os.path.islink(path):
        path = Path(os.path.realpath(path))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:  # the replaced file keeps its permissions: a USER.md a person made read-only (or 0600) stays so
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    try:
        fd = _create(tmp, mode)
        with (open(fd, "w", encoding=encoding, newline="\n") if text else open(fd, "wb")) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if BEFORE_REPLACE is not None:
            BEFORE_REPLACE(path)
        if base is not ANY:
            _check_unchanged(path, base)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)
    _drop_left(path)


def _drop_left(path: Path) -> None:
    """Remove the temporary files of `path` that writers killed before their rename left (`.AGENTS.md.<pid>.<thread>
    .tmp` in a project's root after a `kg approve` killed mid-write, QA8 #5): only those whose process is gone and
    that are a minute old (a writer in another pid namespace, a container sharing the folder, is not seen here)."""
    for tmp in temporaries(path):
        pid = tmp.name[len(path.name) + 2:-len(".tmp")].split(".")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or pid_alive(int(pid)):
            continue
        try:
            if time.time() - os.stat(tmp).st_mtime > LEFT_TMP_AGE_S:
                os.unlink(tmp)
        except OSError:
            pass


def temporaries(path: Path) -> list[Path]:
    """The temporary files beside `path` that writers of it make (`.NAME.<pid>.<thread>.tmp`, `atomic_writer`)."""
    prefix = f".{path.name}."
    try:
        return [path.parent / n for n in os.listdir(path.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return []


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts: it cannot be signalled, but it is
    there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_unchanged(path: Path, base: bytes | None) -> None:
    """Refuse (FileChanged) to replace `path` when it no longer holds `base` (None: no file)."""
    try:
        now: bytes | None = path.read_bytes()
    except FileNotFoundError:
        now = None
    except OSError as exc:
        raise UnusableFile(f"{_shown(path, None)} cannot be read: {exc.strerror}", str(path)) from None
    if now != base:
        raise FileChanged(f"{_shown(path, None)} was written by someone else while kg was updating it, so kg did "
                          "not replace it (nothing written to it is lost): run the command again", str(path))


def write_atomic(path: Path, data: bytes, *, confined: bool = True, base: bytes | None = ANY) -> None:
    """Replace `path` with `data` (see `atomic_writer`; `base`: what the file held when `data` was made)."""
    with atomic_writer(path, confined=confined, base=base) as fh:
        fh.write(data)


def retried(step: Callable[[], T], tries: int = TRIES) -> T:
    """Run `step`, a read of a file, a merge and a write checked against what was read (`base`), again from a
    fresh read each time the file was written by someone else in between (FileChanged), `tries` times in all;
    then the FileChanged is raised, the file as that person left it. A step must read inside itself."""
    for attempt in range(tries):
        try:
            return step()
        except FileChanged:
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")
