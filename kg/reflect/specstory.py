"""SpecStory markdown: the histories SpecStory saves from Cursor, Claude Code and Codex (`_**User**_` /
`_**Assistant**_` / `_**Agent (model)**_` sections, the CLI's `####` notes between them)."""

from __future__ import annotations

import re
from dataclasses import replace

from .parse import (
    CLAUDE_INTERRUPT,
    CLAUDE_META_OPENINGS,
    SPECSTORY_BANNER,
    SPECSTORY_HEADING,
    Transcript,
    TranscriptError,
    Turn,
)

# An agent heading naming Codex's auto-review agent (`_**Agent (codex-auto-review ...)**_`): the "user" section before
# it is the harness asking that agent to assess another session (which it quotes, its user's words too), not a person
_REVIEWER = re.compile(r"\bauto-review\b")
# The SpecStory CLI's notes of what happened between two turns, each a `####` heading with its time: a sub-agent
# started, a permission asked for (the harness's), a sub-agent's result (`**Result:**` and the sub-agent's report). They
# stand under the user's heading, after the words the user sent, but no person wrote them: "Perfect! I found the
# official documentation" was read as the user praising.
_SPECSTORY_NOTE = re.compile(r"^#{3,4} (Subagent (Started|Completed)|Permission Request)\b.* - \d{4}-\d\d-\d\d\b")

_NOT_HEADER = re.compile(r"^(?![ \t]*(?:#|<!--|---|$))", re.M)  # a line that is not a heading, comment or rule


def header_only(text: str) -> bool:
    """A history SpecStory saved before its first turn: its banner, then only headings, comments and rules (found
    at the first other line, without splitting a long text). A file with the banner and text in sections of another
    shape is not this: it is read as before (as plain text, or refused when named specstory)."""
    text = text.lstrip("\ufeff").lstrip()
    if not text.startswith(SPECSTORY_BANNER):
        return False
    end = text.find("\n")
    return end < 0 or _NOT_HEADER.search(text, end + 1) is None


def parse_specstory(text: str) -> Transcript:
    """`_**User**_` / `_**Assistant**_` (Cursor) or `_**Agent (model)**_` (Claude Code, Codex) sections. A history
    saved from Claude Code is read as its JSONL is (`parse_claude_code`): a sub-agent's sections (`(sidechain)` or
    `- sidechain` in the heading) are the sub-agent's, its "user" the main agent's prompt; Claude Code's own notes
    (CLAUDE_META_OPENINGS) are system turns, as is the prompt of Codex's auto-review agent (`_REVIEWER`), and the
    SpecStory CLI's `####` notes (`_SPECSTORY_NOTE`) end the section they stand in (a sub-agent's result is its own); an
    interrupt note is a turn of its own before the words the user sent
    with it. Shell echoes, slash commands and their output stay user turns, as in the JSONL: the detectors skip them
    as harness output and read them as the user's commands to the runtime."""
    lines = text.splitlines()
    turns: list[Turn] = []
    role: str | None = None
    side = False
    start = 0
    body: list[str] = []

    def add(who: str, content: str, first: int) -> None:
        turns.append(Turn(len(turns), who, content, None, position=f"line {first}", line=first, sidechain=side))

    def flush() -> None:
        if role is None:
            return
        while body and body[-1].strip() in ("", "---"):
            body.pop()
        lead = 0
        while lead < len(body) and not body[lead].strip():
            lead += 1
        content = "\n".join(body[lead:])
        first = start + 1 + lead
        if not content.strip():
            return
        if role == "user" and (side or content.lstrip().startswith(CLAUDE_META_OPENINGS)):
            add("system", content, first)
            return
        stop = CLAUDE_INTERRUPT.match(content) if role == "user" else None
        rest = content[stop.end():] if stop else ""
        if stop and rest.strip():
            add("user", content[:stop.end()], first)
            first += content[:stop.end()].count("\n") + rest[: len(rest) - len(rest.lstrip())].count("\n")
            content = rest.strip("\n").lstrip()
        add(role, content, first)

    for i, line in enumerate(lines, 1):
        m = SPECSTORY_HEADING.match(line)
        if m:
            flush()
            role = "user" if m.group(1) == "User" else "assistant"
            if role == "assistant" and _REVIEWER.search(m.group(2)) and turns and turns[-1].role == "user":
                turns[-1] = replace(turns[-1], role="system")  # the harness's prompt to a reviewing agent
            side = "sidechain" in m.group(2)
            start, body = i, []
        elif role is not None and (note := _SPECSTORY_NOTE.match(line)):
            flush()
            role, side = ("assistant" if note.group(2) == "Completed" else "system"), True  # a sub-agent's report
            start, body = i - 1, [line]
        elif role is not None:
            body.append(line)
    flush()
    if not turns and not header_only(text):
        raise TranscriptError(
            "no _**User**_ / _**Assistant**_ sections found: this is not SpecStory markdown; "
            "name the format with --format"
        )
    title = next((ln[2:].strip() for ln in lines[:10] if ln.startswith("# ")), None)
    return Transcript("specstory", tuple(turns), {}, title)
