"""When a transcript's conversation began, read from its head only (a hook at session start must stay cheap).

A runtime's SessionStart names its transcript (`transcript_path`). When a new session's file (source "startup")
already holds timed lines, it is being replayed into kg, and the kg session it opens is dated when it began:
the entries reflection later logs from it carry the transcript's own times, and the session's id and day agree
with them (they did not when the session took the clock's day: `2026-12-02-001` holding entries of 2025-09-03).
A resumed session (source "resume", "clear", "compact") goes on now: the CLI passes no transcript for it.

Only a regular file is read, through the same check as `kg reflect` (kg.core.inputs): a FIFO named as the
transcript blocked a plain open for ever, inside the hook that holds the graph to start the session, and every
later command waited on it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import datetime
from pathlib import Path

from kg.core import clock, inputs
from kg.core.errors import UsageError

HEAD_BYTES = 64 * 1024  # the first timed line of every JSONL format kg reads is within its first few lines
_CODEX_NAME = re.compile(r"rollout-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})")  # local time, as Codex names it
_AIDER = re.compile(r"^# aider chat started at (\S+ \S+)", re.M)


def _parsed(text: object) -> datetime | None:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return clock.parse_time(text)
    except UsageError:
        return None


def skipped(path: str | Path | None) -> str | None:
    """Why the transcript at `path` is not read to date the session (it is there, but a FIFO, device, socket or
    folder, which `began` refuses), or None. A missing file is no note: a new session's may not be written yet.
    Only stats the path: never opens it, never blocks, never raises."""
    if not path or not isinstance(path, str | os.PathLike):
        return None
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, device or socket)"
    return f"the transcript {path} is {kind}: not read, the session starts now"


def began(path: str | Path | None) -> datetime | None:
    """The first time the transcript at `path` records (a JSONL line's `timestamp`, an aider chat's start, a
    Codex rollout's file name), or None: no such file, not a regular file, or nothing timed in its head. Never
    blocks, never raises."""
    if not path:
        return None
    p = Path(path)
    try:
        head = inputs.read_head(p, HEAD_BYTES, what="the transcript").decode("utf-8", "replace")
    except (OSError, UsageError):
        return None
    for line in head.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        at = _parsed(row.get("timestamp")) if isinstance(row, dict) else None
        if at is not None:
            return at
    m = _AIDER.search(head)
    if m:
        return _parsed(m.group(1).replace(" ", "T"))
    m = _CODEX_NAME.search(p.name)
    return _parsed(f"{m.group(1)}T{m.group(2)}:{m.group(3)}:{m.group(4)}") if m else None
