"""Repeats: the same entry again in the same session and day (an agent retrying a failing command). `kg.memory.logs`
folds one into the daily-log line or `.learnings` entry it repeats instead of writing it again; this module finds
that line or entry and says what it becomes (it writes nothing: `kg.memory.logs` is those files' one writer). See
`kg.memory.logs` for the formats."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from kg.lifecycle.blocks import digest

_REPEATS_LINE = re.compile(r"^- Repeats: .*$", re.M)
_REPEAT = re.compile(r"([A-Za-z]+-\d{8}-[0-9A-Za-z]+) at (\d{2}:\d{2})")
_TAIL = 128 * 1024  # a repeat is looked for among the entries in this many last bytes of a .learnings file


def fold_daily(text: str, icon: str, first_at: str, rest: str) -> str | None:
    """`text` with the session's earlier line (`### ICON[×N] HH:MM - REST`) counted once more, or None when that
    line is no longer there as kg wrote it (a person edited it)."""
    found = re.search(rf"^### {re.escape(icon)}(?:×(\d+))? {first_at} - {re.escape(rest)}$", text, re.M)
    if found is None:
        return None
    count = int(found.group(1) or 1) + 1
    return f"{text[:found.start()]}### {icon}×{count} {first_at} - {rest}{text[found.end():]}"


def first_lines(index: Path) -> dict[str, str]:
    try:
        rows = index.read_text("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return {}
    return dict(row.split("\t", 1) for row in rows if "\t" in row)


def repeats_line(repeats: list[tuple[str, str]]) -> str:
    """`- Repeats: 2 more: ERR-20261201-004 at 10:41, ERR-20261201-007 at 10:52` ((id, HH:MM) each)."""
    return f"- Repeats: {len(repeats)} more: " + ", ".join(f"{i} at {hm}" for i, hm in repeats)


def repeat_key(entry: dict[str, Any]) -> str | None:
    """What makes two entries of a file repeats of each other: the same session and day, and the same title,
    priority, status and summary (details such as a tool call's id differ between retries of one failing
    command). None without a session (nothing says the two belong together)."""
    if not entry.get("session"):
        return None
    return _key(entry["session"], str(entry["created_at"])[:10], entry.get("category") or entry["entry_type"],
                entry["priority"], entry["status"], entry["text"])


def _key(*parts: Any) -> str:
    return digest("\x00".join(map(str, parts)))


_FIELDS = re.compile(r"^## \[[^\]]+\] ([^:\n]*):.*?^\*\*Logged\*\*: (\S*)\n\*\*Priority\*\*: (.*?)\n"
                     r"\*\*Status\*\*: (.*?)\n.*?^### Summary\n(.*?)\n\n.*?^- Session: (.*?)$", re.M | re.S)


def segment_key(body: str) -> str | None:
    """`repeat_key` of an entry as kg wrote it (its text from heading to metadata)."""
    from kg.memory.logs import field_text

    m = _FIELDS.search(body)
    return None if m is None else _key(m.group(6), m.group(2)[:10], m.group(1), m.group(3), m.group(4),
                                       field_text(m.group(5)))


def hm(entry: dict[str, Any]) -> str:
    return str(entry["created_at"])[11:16]


def fold_learning(path: Path, entry: dict[str, Any]) -> tuple[int, bytes] | None:
    """Fold `entry` into the entry it repeats among the last ones of `path` (kg's own, unedited), adding it to
    that entry's `- Repeats:` line. False when there is none (the entry is appended as it is)."""
    want = repeat_key(entry)
    if want is None:
        return None
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            start = max(0, size - _TAIL)
            fh.seek(start)
            tail = fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    from kg.memory.logs import ENTRY_MARK, field_lines, segments

    if f"### Summary\n{field_lines(entry['text'])}\n" not in tail:
        return None  # the usual case, found without reading the entries
    if start:  # begin at a line
        cut = tail.find("\n") + 1
        start, tail = start + len(tail[:cut].encode("utf-8", "surrogateescape")), tail[cut:]

    for seg in reversed(list(segments(tail))):
        if not (seg.mark and seg.intact):
            continue
        region = tail[seg.start:seg.end]
        body = region[:region.rindex("<!-- kaizen-kg:entry ")]
        found = _REPEATS_LINE.search(body)
        bare = body[:found.start()] + body[found.end() + 1:] if found else body
        if segment_key(bare) != want:
            continue
        repeats = _REPEAT.findall(found.group(0)) if found else []
        new_body = bare + repeats_line([*repeats, (entry["id"], hm(entry))]) + "\n"
        new_region = new_body + ENTRY_MARK.format(hash=digest(new_body)) + "\n"
        at = start + len(tail[:seg.start].encode("utf-8", "surrogateescape"))
        return at, (new_region + tail[seg.end:]).encode("utf-8", "surrogateescape")
    return None
