"""Reflection on a growing transcript reads what is new, not the whole file again.

A reflection logs only what lies past its cursor (`kg.reflect.state`), but the detectors read context before it: a
user turn is judged with the agent's turn before it (its words, its tool calls, what it edited), the reply after it
and the user's last few turns ("said again", asked again after an "/undo"), and a failed call's result with its
call. So the next read begins where the user last spoke (what follows is the agent's turn still going on), with a
few earlier turns cut out of the file before it: the last `context_turns` user and harness turns (with them the
aider chat header in force), the agent's last turn with words and its last tool call. Past the cursor it finds
what a reading of the whole file finds (tests/integration/test_reflect_incremental.py, on the real transcripts).

The cursor keeps those parts' byte ranges, the file's size and a hash of the parts' bytes: a file that shrank, was
rewritten under them, or has another first line is read whole again, as is one that cannot be cut by lines
(gzipped, one JSON document, Claude Code's sub-agent files beside it). Codex's Stop reflects after every turn:
each Stop then costs about one turn, not the whole session so far.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kg.core import inputs
from kg.core.errors import UsageError

from .parse import SPECSTORY_HEADING, Transcript, TranscriptError, Turn, decode, parse_text, transcript_of

LINE_FORMATS = frozenset({"codex", "claude-code", "openclaw", "openai"})  # one record a line: a turn is its line
_AIDER_HEADER = "# aider chat started at "
_LINE = re.compile(r"line (\d+)")  # a turn's position in a line-addressable file
_SPAN = 4096  # bytes of the line the next read resumes at that its hash covers
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Segment:
    line: int  # the file's line number of its first line
    byte: int  # where it starts in the file
    text: str


@dataclass(frozen=True)
class Read:
    transcript: Transcript
    segments: tuple[Segment, ...]  # () when the file cannot be cut by lines
    size: int  # bytes of the file read
    from_line: int = 1  # where the read resumed (1: the whole file)


def read(path: str, format: str | None, cursor: dict[str, Any] | None) -> Read:
    """The transcript at `path`: from the cursor's parts and where it resumes when they still hold, else whole."""
    p = Path(path)
    stem = p.name.split(".")[0]
    subagents = bool(stem) and (p.parent / stem).is_dir()  # Claude Code's sub-agents' folder: read whole
    if cursor and format in (None, cursor.get("format")) and not subagents:
        got = _window(p, cursor)
        if got is not None:
            return got
    try:
        data = inputs.read_file(p, what="the transcript")  # bounded; FIFOs and devices refused
    except UsageError as exc:
        raise TranscriptError(str(exc)) from None
    text = decode(data, str(p))
    t = transcript_of(p, text, format)
    cut = data[:2] != b"\x1f\x8b" and not subagents
    return Read(t, (Segment(1, len(_BOM) if data.startswith(_BOM) else 0, text),) if cut else (), len(data))


def _window(p: Path, c: dict[str, Any]) -> Read | None:
    """The parts the cursor names and the rest of the file from where it resumes, or None when they do not hold."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size < int(c["size"]):
            return None  # shrunk: rewritten or truncated
        with os.fdopen(fd, "rb", closefd=False) as fh:
            if hashlib.sha256(fh.readline(65536)).hexdigest()[:16] != c["head"]:
                return None
            parts = []
            for start, end, _ in c["context"]:
                fh.seek(start)
                parts.append(fh.read(end - start))
            fh.seek(int(c["at"]))
            rest = inputs.read_stream(fh, what=f"the transcript {p}")
    except (OSError, UsageError, KeyError, TypeError, ValueError):
        return None
    finally:
        os.close(fd)
    if _sig(parts, rest[: int(c["span"])]) != c["sig"]:
        return None
    try:
        segments = [Segment(line, start, decode(b, str(p))) for (start, _, line), b in zip(c["context"], parts,
                                                                                          strict=True)]
        segments.append(Segment(int(c["at_line"]), int(c["at"]), decode(rest, str(p))))
        t = parse_text("".join(s.text for s in segments), format=c["format"], name=str(p))
    except TranscriptError:
        return None
    at: list[int] = []  # the file's line number of each line read, in order
    for s in segments:
        at.extend(range(s.line, s.line + len(s.text.splitlines())))

    def moved(turn: Turn) -> Turn:
        if turn.line is None or not 0 < turn.line <= len(at):
            return turn
        said = _LINE.fullmatch(turn.position)  # (an aider failure is placed on its message, below its turn's line)
        k = int(said.group(1)) if said else 0
        return replace(turn, line=at[turn.line - 1],
                       position=f"line {at[k - 1]}" if 0 < k <= len(at) else turn.position)

    hint = t.session_hint if c["format"] == "aider" and t.session_hint else c.get("hint")
    t = Transcript(t.format, tuple(moved(x) for x in t.turns), t.skipped, hint)
    return Read(t, tuple(segments), int(c["at"]) + len(rest), int(c["at_line"]))


def _sig(parts: list[bytes], head: bytes) -> str:
    h = hashlib.sha256()
    for b in parts:
        h.update(b)
    h.update(head)
    return h.hexdigest()[:16]


def plan(r: Read, path: str, speaking: Callable[[Turn], bool], context_turns: int) -> dict[str, Any] | None:
    """Where the next reflection on this file resumes, and the parts before it that it reads again (see the module's
    docstring); None when it must read the whole file."""
    turns = r.transcript.turns
    if not r.segments or any(t.line is None or not _LINE.fullmatch(t.position) for t in turns):
        return None
    lines = _Lines(r.segments)
    fmt = r.transcript.format
    starts = sorted({lines.start(t, fmt) for t in turns})
    if not starts:
        return None
    resume = starts[-1]  # the last turn, read again: a reply still being written goes on in the lines after it
    before = [t for t in turns if lines.start(t, fmt) < resume]
    users = [t for t in before if speaking(t)]
    since = lines.start(users[-1], fmt) if users else 0
    chosen = [t for t in before if t.role in ("user", "system")][-context_turns:]
    earlier = [t for t in before if lines.start(t, fmt) < since]
    chosen += [t for t in earlier if t.role == "assistant" and t.text.strip()][-1:]
    chosen += [t for t in earlier if t.role == "assistant" and t.tool_name][-1:]
    # the turn in progress since the user last spoke, but the output of calls that did not fail (most of its bytes)
    chosen += [t for t in before if lines.start(t, fmt) >= since and (t.role != "tool" or t.is_error)]
    if fmt == "aider":
        chosen += [t for t in before if t.role == "system" and t.text.startswith(_AIDER_HEADER)][-1:]
    ranges: list[tuple[int, int]] = []
    for first in sorted({lines.start(t, fmt) for t in chosen}):
        end = first + 1 if fmt in LINE_FORMATS else min(
            (s for s in starts if s > first), default=resume)
        if ranges and ranges[-1][1] >= first:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], end))
        else:
            ranges.append((first, min(end, resume)))
    context = []
    for first, end in ranges:
        for a, b, line in lines.bytes_of(first, end):
            context.append([a, b, line])
    at = lines.bytes_of(resume, resume + 1)
    if not at:
        return None
    expected = [lines.encoded(line, b - a) for a, b, line in context]
    head = lines.encoded(resume, min(_SPAN, at[0][1] - at[0][0]))
    try:  # the bytes must be the file's: a text that decoding changed (bad bytes replaced) is not cut
        with open(path, "rb") as fh:
            found = []
            for a, b, _ in [*context, [at[0][0], at[0][0] + len(head), resume]]:
                fh.seek(a)
                found.append(fh.read(b - a))
    except OSError:
        return None
    if found != [*expected, head]:
        return None
    return {"at": at[0][0], "at_line": resume, "span": len(head), "sig": _sig(expected, head),
            "context": context}


class _Lines:
    """The lines read, by the file's line number, with where each starts in the file."""

    def __init__(self, segments: tuple[Segment, ...]) -> None:
        self.of: dict[int, tuple[int, str]] = {}  # line number -> (byte offset, text with its line end)
        for s in segments:
            at = s.byte
            for n, text in enumerate(s.text.splitlines(keepends=True), s.line):
                self.of[n] = (at, text)
                at += len(text.encode("utf-8"))

    def start(self, turn: Turn, fmt: str) -> int:
        """The line a turn starts on: SpecStory's turn starts at its `_**User**_` heading, above its first line."""
        n = turn.line or 0
        if fmt == "specstory":
            k = n
            while k - 1 in self.of and not SPECSTORY_HEADING.match(self.of[k][1].rstrip("\r\n")):
                k -= 1
            return k if k in self.of and SPECSTORY_HEADING.match(self.of[k][1].rstrip("\r\n")) else n
        return n

    def bytes_of(self, first: int, end: int) -> list[tuple[int, int, int]]:
        """(start, end, first line) in the file of lines [first, end), one range per run of adjacent lines."""
        out: list[tuple[int, int, int]] = []
        for n in range(first, end):
            if n not in self.of:
                continue
            a, text = self.of[n]
            b = a + len(text.encode("utf-8"))
            if out and out[-1][1] == a and n - 1 in self.of:
                out[-1] = (out[-1][0], b, out[-1][2])
            else:
                out.append((a, b, n))
        return out

    def encoded(self, first: int, size: int) -> bytes:
        out = b""
        n = first
        while len(out) < size and n in self.of:
            out += self.of[n][1].encode("utf-8")
            n += 1
        return out[:size]
