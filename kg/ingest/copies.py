"""An entry's readable copies (its daily-log line, its `.learnings` entry), finished for a writer killed between
the journal's fsync, which acknowledges the entry, and the copies it writes next (QA8 #1: the graph had the entry,
the day's log never got its line).

A writer notes what it is about to copy in `memory/.kg/copying.<pid>.<thread>.json` before it appends to the
journal, and removes the note once its copies are written; all of it under the journal lock. So a note found by
the next holder of that lock (`Journal._sweep`, before anything else) is a writer's that died in its locked
section. Of the entries it names, those the journal holds were acknowledged: each gets the copies it lacks (a
daily-log line not in its day's file, a `.learnings` entry kg did not note as written). An entry in no journal
file was never acknowledged, and nothing is copied for it. The note is not fsync'd: a power cut may lose it with
the copies it names, as it may lose any copy (the graph is the source of truth; the journal is what is fsync'd).
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.memory import logs as files

PREFIX = "copying."


class Note:
    """A writer's note of its copies. `copy` writes one: a copy that cannot be written now (a full disk) is said in
    `skipped` and left to the note, which then outlives the block as an acknowledged writer's."""

    def __init__(self, path: Path | None):
        self.path, self.keep = path, False

    def copy(self, skipped: list[str], write: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return files.copy_or_note(skipped, write, *args, **kwargs)
        except OSError as exc:  # the journal holds the entry: a failure said for it would have it logged twice
            skipped.append(f"could not write {exc.filename or 'its copy'} now "
                           f"({'the disk is full' if exc.errno in LATER else exc.strerror or exc})"
                           f"{'; kg writes it once the disk has room' if exc.errno in LATER and self.path else ''}")
            self.keep = self.keep or exc.errno in LATER
            return None


# Failures a copy may get past later: the disk full, a quota, an I/O error of a network mount. Any other (a folder in
# the file's place, no rights) stays until someone acts, and the warning says what it was.
LATER = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO})
ACKED = ".acked.json"  # a note kept by a writer whose append returned: its entries were acknowledged


@contextmanager
def noted(folder: Path, journal: Path, ids: list[str], daily: list[tuple[str, str | None, datetime]],
          learnings: list[dict[str, Any]]) -> Iterator[Note]:
    """Hold a note of the copies `ids` are about to get (the caller holds the journal lock and appends to
    `journal` inside this block, then writes the copies with the yielded note's `copy`); removed when the block
    ends normally. A block that raises leaves it: the next holder writes what the journal holds and its copies
    lack. A copy that failed for now (a full disk) keeps it as an acknowledged writer's (`ACKED`): its entries are
    copied by a later holder even once the journal has gone to the graph."""
    path = folder / f"{PREFIX}{os.getpid()}.{threading.get_ident()}.json"
    note = {"journal": journal.name, "ids": ids, "learnings": learnings,
            "daily": [[line, session, at.isoformat()] for line, session, at in daily]}
    try:
        path.write_text(json.dumps(note, ensure_ascii=False), "utf-8")
    except (OSError, TypeError, ValueError):  # no note (a full disk): the copies are written as before, unguarded
        path = None
    held = Note(path)
    yield held  # raised past the append (a full disk, Ctrl-C): the note stays for the next holder (review M4)
    if path is None:
        return
    if held.keep:
        try:  # (a rename needs no free block: it works on the full disk that failed the copy)
            path.rename(path.with_name(f"{path.name[:-5]}.{time.time_ns()}{ACKED}"))
            return
        except OSError:
            pass
    _unlink_note(path)


def _unlink_note(path: Path) -> None:
    path.unlink(missing_ok=True)


def finish(folder: Path) -> list[str]:
    """Write the copies that dead writers' notes in `folder` (a workspace's memory/.kg, its journal lock held)
    name and that are missing, then remove the notes; the ids whose copies were finished. Never raises: what
    cannot be copied now stays in the graph and the journal, as a copy kg may not write does."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(PREFIX) and n.endswith(".json"))
    except OSError:
        return []
    done: list[str] = []
    for name in names:
        path = folder / name
        later = False
        try:
            note = json.loads(path.read_text("utf-8"))
            finished, later = _finish_one(folder, note, acked=name.endswith(ACKED))
            done += finished
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            pass  # a torn or unreadable note: its entries keep their graph record and any copy written
        if later and name.endswith(ACKED):  # the disk is still full: a later holder tries again
            continue
        try:
            path.unlink(missing_ok=True)
        except OSError:  # (a folder in its place, a read-only mount: finished again by the next holder)
            pass
    return done


def _finish_one(folder: Path, note: dict[str, Any], *, acked: bool) -> tuple[list[str], bool]:
    """The ids whose copies were written, and whether one could not be written for now (`LATER`)."""
    held = set(note["ids"]) if acked else _journaled(folder, note["journal"], note["ids"])
    if not held:
        return [], False
    memory, root = folder.parent, folder.parent.parent
    days: dict[str, tuple[datetime, list[tuple[str, str | None]]]] = {}
    for line, session, at in note["daily"]:
        when = datetime.fromisoformat(at)
        if not _in_day(memory, line, when):
            days.setdefault(f"{when:%Y-%m-%d}", (when, []))[1].append((line, session))
    skipped: list[str] = []
    copying = Note(None)
    for when, lines in days.values():
        copying.copy(skipped, files.append_daily_lines, memory, lines, when)
    written = files.learnings_written(root)
    for entry in note["learnings"]:
        there = entry.get("id") in written or (acked and files.learning_in_file(root, entry))  # (written, its id
        if entry.get("id") in held and not there:  # not noted: a full disk between the two)
            copying.copy(skipped, files.append_learning, root, entry)
    return sorted(held), copying.keep


def _journaled(folder: Path, journal: str, ids: list[str]) -> set[str]:
    """Which of `ids` a journal file of `folder` holds: the one the writer appended to, or a draining file (a
    sweep never runs between a writer's append and a drain's take of it, but a lane may hand files over)."""
    wanted = {f'"id": {json.dumps(i, ensure_ascii=False)}'.encode(): i for i in ids}
    held: set[str] = set()
    paths = [folder / journal, *sorted(folder.glob("draining*.jsonl"))]
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        held |= {i for key, i in wanted.items() if key in data}
        if len(held) == len(wanted):
            break
    return held


def _in_day(memory: Path, line: str, when: datetime) -> bool:
    """Whether the day's log has this line already (at its time, any icon or repeat count)."""
    try:
        text = files.daily_log_path(memory, when).read_text("utf-8", "surrogateescape")
    except OSError:
        return False
    m = files.DAILY_LINE.match(line.rstrip("\n")) if line.count("\n") <= 1 else None
    if m is None:
        return line in text
    return any((x := files.DAILY_LINE.match(have)) is not None and x.group(3, 4) == m.group(3, 4)
               for have in text.splitlines())
