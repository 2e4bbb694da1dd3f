"""When a transcript's conversation began, read from its head only (a hook at session start must stay cheap).

A runtime's SessionStart names its transcript (`transcript_path`). When a new session's file (source "startup")
already holds timed lines, it is being replayed into kg, and the kg session it opens is dated when it began:
the entries reflection later logs from it carry the transcript's own times, and the session's id and day agree
with them (they did not when the session took the clock's day: `2026-12-02-001` holding entries of 2025-09-03).
A resumed session (source "resume", "clear", "compact") goes on now: the CLI passes no transcript for it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from kg.core import clock
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


def began(path: str | Path | None) -> datetime | None:
    """The first time the transcript at `path` records (a JSONL line's `timestamp`, an aider chat's start, a
    Codex rollout's file name), or None: no such file, or nothing timed in its head. Never raises."""
    if not path:
        return None
    p = Path(path)
    try:
        with p.open("rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
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
