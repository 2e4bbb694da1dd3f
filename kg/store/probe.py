"""Whether Kùzu crashes opening a graph file, asked of a child process.

kuzu 0.11.3 dies with a segmentation fault opening some damaged files (a run of zeroed pages inside graph.kuzu),
read-only too: there is no exception to catch, the process ends with exit 139 and says nothing, `kg doctor`
included (QA #6). So the question is asked where a crash costs nothing but the answer:
- `kg doctor` asks a child process to open the file before it opens it itself (`crashes`), and says what is wrong
  and what `--repair` brings back (and leaves the mark below, so the next command does not crash first);
- every other open leaves a mark (`graph.opening-<pid>`, beside graph.kuzu) while Kùzu opens the file: a file and its
  removal, nothing measurable beside the open. A mark whose process is gone is an open that never returned: the next
  open asks a child (once) and refuses a file that crashes it with the usual "Run `kg doctor`", instead of crashing
  in turn. (A mark left by a kill -9 during an open costs that one child's open, and goes.)
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kg.store.lock import pid_alive
from kg.store.values import KUZU_RESERVED, db_size_for

# The child opens the file read-only (it writes nothing), with this interpreter's kuzu; it imports kuzu alone: kg's
# store package would double its start (0.7 s against 0.3).
# Its address space is capped: another damaged file (the same 200 KB of zeroes in another demo graph) made Kùzu
# ask for memory without end, 23 GB before the kernel's OOM killer ended it, and the machine with it. Kùzu reserves
# its whole `max_db_size` (8 TiB) of addresses up front, so the cap is that and the budget for what it really uses.
_CHILD = """
import resource, sys
cap, hard = int(sys.argv[2]), resource.getrlimit(resource.RLIMIT_AS)[1]
resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
import kuzu
size = {"max_db_size": int(sys.argv[3])} if int(sys.argv[3]) else {}  # under a hard limit below the cap (values.py)
try:
    kuzu.Database(sys.argv[1], read_only=True, buffer_pool_size=256 << 20, **size)
except MemoryError:
    sys.exit(3)
except Exception:
    sys.exit(1)
"""
_OUT_OF_MEMORY = 3
_RESERVED = KUZU_RESERVED
_MARK = ".opening-"
STALE = 600.0  # seconds: an open takes seconds (a WAL's replay included); a mark this old is no open's any more
CRASHED = "crashed"  # the mark `kg doctor` leaves on a file it found Kùzu crashes on (no process's)


def crashes(path: Path, timeout: float | None = None) -> str | None:
    """How Kùzu fails in a child process opening `path` read-only, when it ends that process ("crashes reading it
    (SIGSEGV)") or asks for more memory than any open needs ("runs out of memory ..."); None when it opened,
    refused with an error (a lock, a file cut short: the caller's own open says it), ran past `timeout`, or there
    is no file."""
    if not path.is_file():
        return None
    import resource
    import signal  # (late: only doctor and an open after a crashed one ask)
    import subprocess
    import sys

    size = path.stat().st_size + _size(path.with_name(path.name + ".wal"))
    budget = (4 << 30) + 4 * size  # the buffer pool's 256 MB, the catalog, a WAL's replay
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}  # (its crash is the answer)
    try:
        cap = _RESERVED + budget
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        size = db_size_for(cap if hard == resource.RLIM_INFINITY else min(cap, hard)).get("max_db_size", 0)
        done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(cap), str(size)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == _OUT_OF_MEMORY:
        return f"runs out of memory reading it (past {budget / 2**30:.1f} GB for {size / 1e6:.1f} MB of graph)"
    if done.returncode >= 0:
        return None
    try:
        return f"crashes reading it ({signal.Signals(-done.returncode).name})"
    except ValueError:
        return f"crashes reading it (signal {-done.returncode})"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def crashed_text(path: Path, how: str) -> str:
    """GraphUnopenable's message for a file Kùzu crashes on (`kg doctor` cuts it at ". Run `kg doctor`")."""
    return (f"cannot open the graph {path}: Kùzu {how}, so the file is damaged. Run `kg doctor`: it says what can "
            "be done")


def left_marks(path: Path) -> list[Path]:
    """Marks of opens of `path` whose process is gone (an open that crashed, or was killed) or that are older
    than any open takes (its pid now another process's: a mark kept by a reused pid never went, and the open it
    stood for was never asked about), and doctor's. None where they cannot be removed (a read-only workspace, a
    copy of one): asking a child on every open would slow every command for good, and no answer could be kept."""
    out = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    head = path.stem + _MARK
    marks = [name for name in names if name.startswith(head)]
    if not marks or not os.access(path.parent, os.W_OK):
        return []
    now = time.time()
    for name in marks:
        tail, at = name[len(head):], path.with_name(name)
        if tail == CRASHED or tail.isdigit() and (not pid_alive(int(tail)) or now - _mtime(at, now) > STALE):
            out.append(at)
    return out


def _mtime(path: Path, default: float) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return default


def crashed(path: Path) -> None:
    """`kg doctor` found that `path` crashes Kùzu: the next command asks a child too, instead of crashing first."""
    try:
        path.with_name(f"{path.stem}{_MARK}{CRASHED}").touch()
    except OSError:
        pass


def mark(path: Path) -> Path | None:
    """This process's mark while it opens `path` (None when the folder takes no file: a read-only workspace)."""
    at = path.with_name(f"{path.stem}{_MARK}{os.getpid()}")
    try:
        at.touch()
    except OSError:
        return None
    return at


def unmark(marks: list[Path | None]) -> None:
    for at in marks:
        if at is not None:
            try:
                at.unlink()
            except OSError:
                pass
