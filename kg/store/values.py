"""What the store checks and converts, apart from the graph itself: values Kùzu cannot hold refused as bad input,
a nearly full disk refused before a write, Kùzu's messages said plainly, rows made JSON-ready, labels checked
against the schema's names. Split from `kg.store` (issue 22: a module of 553 lines); `kg.store` re-exports the
public names (`plain`, `check_label`, `NODE_COLUMNS`, `HIDDEN_COLUMNS`) and the checks it uses."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.errors import DiskFull, StoreError, UsageError

_INT64 = (-(2**63), 2**63 - 1)


def check_values(value: Any, name: str = "") -> None:
    """Refuse, as bad input, values Kùzu cannot hold (a number past 64 bits, text that is not UTF-8), which
    its binding layer otherwise reports as an opaque cast failure."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise UsageError(f"the number {value} is out of range (at most {_INT64[1]:,}); give a smaller value")
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(f"{name or 'a value'} is not valid UTF-8 text; give UTF-8 text") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_values(item, str(key))
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_values(item, name)


def check_space(path: Path, min_free_mb: int) -> None:
    """Refuse to open the graph for writing on a nearly full disk. Kùzu does not report a failed write to its
    WAL as an error: it aborts the process (`terminate called after throwing kuzu::common::IOException`),
    which a caller cannot catch. Entries already acknowledged stay in the journal until there is room."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return
    free = st.f_bavail * st.f_frsize
    if free < min_free_mb * 1024 * 1024:
        raise DiskFull(f"the disk holding {path.parent} is full ({free // 1024:,} KB free, kg needs "
                         f"{min_free_mb} MB to write the graph safely); free some space and run the command "
                         "again. Acknowledged entries wait in the journal")
    room = _size_limit_room(path)
    if room is not None and room < min_free_mb * 1024 * 1024:
        raise DiskFull(f"the file size limit of this process (ulimit -f) lets the graph's files in {path.parent} "
                       f"grow by {max(room, 0) // 1024:,} KB, and kg needs {min_free_mb} MB to write the graph "
                       "safely; raise the limit (ulimit -f unlimited) and run the command again. Acknowledged "
                       "entries wait in the journal")


def _size_limit_room(path: Path) -> int | None:
    """How many bytes the larger of the graph and its WAL may still grow under the process's file size limit
    (RLIMIT_FSIZE, `ulimit -f`), None without one. A write past it fails in Kùzu as a full disk does (the
    process aborts), so the floor of `check_space` counts it as free space."""
    try:
        import resource
    except ImportError:  # not on every platform
        return None
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit == resource.RLIM_INFINITY or limit < 0:
        return None
    biggest = 0
    for name in (path, path.with_name(path.name + ".wal")):
        try:
            biggest = max(biggest, name.stat().st_size)
        except OSError:
            continue
    return limit - biggest


_WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|COPY|DROP|ALTER|CHECKPOINT|INSTALL|LOAD)\b", re.IGNORECASE)
_written: dict[str, bool] = {}


def writes(cypher: str) -> bool:
    """Whether a statement may write to the graph (and so to its WAL): a keyword test, kept per statement text.
    Generous on purpose (a read that names `set` is checked too): the check it guards is one statvfs."""
    found = _written.get(cypher)
    if found is None:
        found = _written[cypher] = bool(_WRITES.search(cypher))
        if len(_written) > 4096:  # inline statements with formatted labels: bounded
            _written.clear()
    return found


def empty(path: Path) -> bool:
    try:
        return os.stat(path).st_size == 0
    except FileNotFoundError:
        return True


KUZU_RESERVED = 1 << 43  # kuzu 0.11.3's default max_db_size: address space reserved (not used) at every open


def db_size_args() -> dict[str, int]:
    """Kùzu's `max_db_size` when the process's address space is limited (`ulimit -v`, RLIMIT_AS: containers, CI
    runners, login nodes): Kùzu reserves 8 TiB of addresses at every open by default, so any such limit failed
    every open ("Mmap for size 8796093022208 failed"), and the graph was taken for a damaged file (QA11 #0). The
    largest power of two within a quarter of the limit (the rest for the buffer pool, Python and the side index),
    which caps how large the graph may grow under it; {} without a limit."""
    return db_size_for(_address_limit())


def db_size_for(limit: int | None) -> dict[str, int]:
    """`db_size_args` for an address-space limit of `limit` bytes (None: none)."""
    if limit is None or limit >= 4 * KUZU_RESERVED:
        return {}
    return {"max_db_size": 1 << max((limit // 4).bit_length() - 1, 24)}


def _address_limit() -> int | None:
    try:
        import resource
    except ImportError:  # not on every platform
        return None
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if limit == resource.RLIM_INFINITY or limit < 0 else limit


def resource_error(exc: BaseException) -> str | None:
    """What a failed open says when the cause is this process's limits or rights, not the file (so no repair can
    help, and none may be offered): None when it is not one of those."""
    text = str(exc)
    low = text.lower()
    limit = _address_limit()
    # Kùzu's reservation at open ("Mmap for size N failed") asks for the same whatever the file holds; a MemoryError
    # or a failed allocation may be a damaged file's (the repair's case) unless the process's address space is capped
    allocation = isinstance(exc, MemoryError) or "cannot allocate memory" in low
    if "mmap for size" in low or limit is not None and allocation:
        said = f"; this process's address space is limited to {limit >> 20:,} MB (`ulimit -v`)" if limit else ""
        return (f"Kùzu could not reserve the memory to open it ({text}{said}); raise the process's memory limits "
                "(`ulimit -v`, a container's or job's memory limit) and run the command again. The file is not "
                "damaged")
    if "could not set lock on file" in low:  # (kg's own processes take graph.lock first: another program)
        return (f"another program has the graph open ({text}): Kùzu Explorer, a notebook or script with its own "
                "`kuzu.Database` on this file; close it (`kg.analysis` in a notebook reads through kg) and run the "
                "command again. The file is not damaged")
    if "too many open files" in low:
        return (f"this process may open no more files ({text}); raise the limit (`ulimit -n`) and run the command "
                "again. The file is not damaged")
    if "permission denied" in low or "read-only" in low or "read only file" in low:
        return (f"the workspace is not writable ({text}): a file of memory/.kg/ owned by another user (a `sudo kg`?) "
                "or a read-only folder; give them back to this user (`chown -R`) or make the folder writable, and "
                "run the command again. The file is not damaged")
    return None


def plain_error(exc: BaseException) -> str:
    """Kùzu's message, with disk-full and read-only cases said plainly."""
    text = str(exc)
    low = text.lower()
    if "no space" in low or "enospc" in low:
        return f"the disk is full ({text}); free some space and run the command again"
    if "read-only" in low or "read only file" in low or "permission denied" in low:
        return f"the workspace is not writable ({text}); check the folder's permissions"
    return text


NODE_COLUMNS = (
    "id", "kind", "entry_type", "text", "details", "action", "category", "priority", "status", "area", "source",
    "pattern_key", "session", "files", "tags", "error_text", "context", "reproducible", "user_context",
    "complexity", "frequency", "redactions", "created_at", "updated_at", "reinforced_at", "pinned", "stale",
    "tokens",
)


HIDDEN_COLUMNS = frozenset({"_id", "_label", "tokens"})


def plain(value: Any, *, hide: frozenset[str] = frozenset()) -> Any:
    """The one JSON-ready conversion (rows, reports): datetimes as ISO text, in nested dicts and lists too;
    `hide` keys dropped from the top-level dict."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k not in hide}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value.isoformat() if isinstance(value, datetime) else value


def check_label(name: str, allowed: tuple[str, ...], what: str) -> str:
    """Labels cannot be parameters in Cypher; only names from the schema's fixed lists are formatted in."""
    if name not in allowed:
        raise StoreError(f"unknown {what} {name!r}")
    return name
