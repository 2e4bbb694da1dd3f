"""The ids the workspace holds already, for a `memory/.kg/ids.json` that is behind them (QA3 #2).

ids.json can be readable and still behind: a backup of it restored, a workspace copied while a log ran. Its counter
then gives out an id another entry has: `kg log` answered ERR-...-002 and the applier kept the entry as -005 (the
net in kg/ingest/apply.py `_renamed`), so `kg show` and `kg resolve` of the answered id acted on another entry.

Before a counter gives out its first id in a process, `Journal.allocate` raises it past what is cheap to read
without the graph (`highest`): the node ids memory search's side index holds (every node the graph has, written at
each commit; an index range read of one prefix and day, about a millisecond in a fresh process) and the ids in the
tails of the journal files (entries not applied yet). `kg doctor` compares every counter with the whole side
index, the whole journal and `.learnings/` (`behind`) and raises those that are behind. Ids are read as the
allocator writes them (`Journal.counter_of`, as kg/ingest/ids_rebuild.py reads them): a teammate's tagged id is no
counter of this workspace's.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

TAIL = 256 * 1024  # bytes of each journal file read at an allocation: the newest records, which carry the newest ids
_ID = re.compile(r"\b([A-Za-z]+)-(\d{8})-(\d+)\b")
_warned: list[bool] = []


def _side_ids(folder: Path, heads: Iterable[str] | None) -> list[str]:
    """The node ids in the side index (memory/.kg/search.sqlite) that start with one of `heads` (None: all), read
    only; [] when there is none or it cannot be read (it is rebuilt, locked, damaged: the journal and the applier's
    net remain)."""
    path = folder / "search.sqlite"
    if not path.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        if heads is None:
            return [row[0] for row in db.execute("SELECT id FROM node")]
        out: list[str] = []
        for head in heads:  # `PREFIX-YYYYMMDD-`: '.' sorts right after '-', so the range is exactly that prefix
            out += [row[0] for row in db.execute("SELECT id FROM node WHERE id >= ? AND id < ?",
                                                 (head, head[:-1] + "."))]
        return out
    except sqlite3.Error:
        return []
    finally:
        db.close()


def _journal_text(folder: Path, tail: int | None) -> str:
    """The text of every journal lane's files (`journal*.jsonl`, `draining*.jsonl`), the last `tail` bytes of each
    (None: whole)."""
    parts: list[str] = []
    try:
        names = [e.name for e in os.scandir(folder) if e.name.startswith(("journal", "draining"))
                 and e.name.endswith(".jsonl")]
    except OSError:
        return ""
    for name in names:
        try:
            with open(folder / name, "rb") as fh:
                if tail is not None:
                    size = os.fstat(fh.fileno()).st_size
                    fh.seek(max(0, size - tail))
                parts.append(fh.read().decode("utf-8", "replace"))
        except OSError:
            continue
    return "\n".join(parts)


def _raise(found: dict[str, int], ids: Iterable[str], counter_of: Callable[[str], int | None],
           keys: set[str] | None = None) -> None:
    for prefix, day, digits in _ID.findall("\n".join(ids)):
        key = f"{prefix}-{day}"
        number = counter_of(digits) if keys is None or key in keys else None
        if number is not None and number > found.get(key, 0):
            found[key] = number


def highest(folder: Path, keys: Iterable[str], counter_of: Callable[[str], int | None]) -> dict[str, int]:
    """The highest counter of each of `keys` (`PREFIX-YYYYMMDD`) among the ids the side index and the journal
    files' tails hold (keys none holds are left out)."""
    wanted = set(keys)
    found: dict[str, int] = {}
    _raise(found, _side_ids(folder, sorted(f"{key}-" for key in wanted)), counter_of)
    _raise(found, [_journal_text(folder, TAIL)], counter_of, wanted)
    return found


def behind(ws: Any, counters: dict[str, int]) -> dict[str, int]:
    """The counters of `counters` (ids.json's) that are behind an id the workspace holds (the whole side index,
    journal, `journal.rejected` and `.learnings/`), each with the highest counter found: `kg doctor`'s check."""
    from kg.ingest.ids_rebuild import journal_files

    counter_of = ws.journal.counter_of
    found: dict[str, int] = {}
    _raise(found, _side_ids(ws.kg_dir, None), counter_of)
    for path in journal_files(ws.kg_dir, ws.root):
        try:
            _raise(found, [path.read_bytes().decode("utf-8", "replace")], counter_of)
        except OSError:
            continue
    return {key: number for key, number in sorted(found.items()) if number > counters.get(key, 0)}


def warn(key: str, had: int, seen: int) -> None:
    """Say once a process that ids.json was behind (a restored backup, a copy made mid-log): raised."""
    if _warned:
        return
    _warned.append(True)
    try:
        sys.stderr.write(f"Warning: memory/.kg/ids.json was behind what the workspace holds ({key}: {had}, an "
                         f"entry has {seen}; a backup of it restored, or a copy made while kg wrote): its counter "
                         "now goes on past it, so no id is given out twice (`kg doctor` checks every counter)\n")
    except (OSError, ValueError):
        pass
