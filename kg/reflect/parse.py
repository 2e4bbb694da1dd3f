"""Read session transcripts of several tools into one model of turns.

Formats: Claude Code JSONL (plain or gzipped; sub-agent lines inline or in `<session>/subagents/*.jsonl`),
Codex rollout JSONL, OpenClaw / pi session JSONL, aider chat histories (`kg.reflect.readers`),
OpenAI-style messages JSON (a list, `{"messages": [...]}`, or one message per line), SpecStory markdown
(Cursor) and plain text. Damaged parts (truncated JSONL lines, unknown record types) are skipped and counted;
input that is not a transcript at all raises TranscriptError naming the formats kg reads.
"""

from __future__ import annotations

import contextlib
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.core import inputs, paths
from kg.core.errors import UsageError

FORMATS = ("claude-code", "codex", "openclaw", "aider", "openai", "specstory", "text")
READS = ("Claude Code JSONL, Codex rollout JSONL, OpenClaw/pi session JSONL, aider .aider.chat.history.md, "
         "OpenAI-style messages JSON, SpecStory markdown or plain text")
ROLES = ("user", "assistant", "tool", "system")

# Claude Code records that carry no conversation: ignored without counting as skipped.
CLAUDE_QUIET_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "summary",
        "system",
        "attachment",
        "custom-title",
    }
)
# Tool input keys that hold what was run, in order of preference.
COMMAND_KEYS = ("command", "cmd", "file_path", "path", "pattern", "url", "query")

_SPECSTORY_HEADING = re.compile(r"^_\*\*(User|Assistant|Agent)\b[^*]*\*\*_\s*$")
_TEXT_ROLE = re.compile(
    r"^\s*(?:\*\*)?(user|human|me|you|assistant|ai|claude|gpt|chatgpt|agent|model|bot|system|tool|用户|助手)"
    r"(?:\*\*)?\s*[:：]\s?(.*)$",
    re.IGNORECASE,
)
_TEXT_ROLE_MAP = {
    "user": "user",
    "human": "user",
    "me": "user",
    "用户": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "claude": "assistant",
    "gpt": "assistant",
    "chatgpt": "assistant",
    "agent": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "you": "assistant",
    "助手": "assistant",
    "system": "system",
    "tool": "tool",
}


class TranscriptError(ValueError):
    """The input is not a transcript this reader understands; the message says what to do."""


@dataclass(frozen=True)
class Turn:
    index: int
    role: str  # user | assistant | tool | system
    text: str
    timestamp: str | None = None
    tool_name: str | None = None
    tool_input: str | None = None  # the command (or path, query) a tool call ran
    is_error: bool | None = None  # None: the format does not say
    position: str = ""  # "line 42" or "turn 7"
    line: int | None = None  # first line of `text` in the source, when it is line-addressable
    call_id: str | None = None  # the runtime's id of the tool call (tool_use_id, call_id, toolCallId)
    exit_code: int | None = None  # when the format records the command's exit status
    sidechain: bool = False  # a sub-agent's turn (Claude Code Task agents)


@dataclass(frozen=True)
class Transcript:
    format: str
    turns: tuple[Turn, ...]
    skipped: dict[str, int] = field(default_factory=dict)
    session_hint: str | None = None


def read_transcript(path: str | Path, *, format: str | None = None, stdin: Any = None) -> Transcript:
    """Read PATH (or '-' for stdin bytes) and parse it. With `kg.reflect.window`, the only functions that do I/O."""
    if str(path) == "-":
        import sys

        stream = stdin if stdin is not None else sys.stdin.buffer
        return parse_bytes(inputs.read_stream(stream, what="stdin"), format=format, name="<stdin>")
    if format is not None and format not in FORMATS:
        raise TranscriptError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    p = Path(path)
    try:
        data = inputs.read_file(p, what="the transcript")  # bounded; FIFOs and devices refused
    except UsageError as exc:
        raise TranscriptError(str(exc)) from None
    return transcript_of(p, decode(data, str(p)), format)


def transcript_of(p: Path, text: str, format: str | None = None) -> Transcript:
    """The transcript of the file `p` from its text: named by the file when the text names no session (Codex:
    rollout-<time>-<thread uuid>.jsonl), and a Claude Code session with its sub-agents' files beside it."""
    hint = p.name.split(".")[0] if paths.is_name(p.name.split(".")[0]) else None
    if p.name.startswith("rollout-") and p.name.endswith((".jsonl", ".jsonl.gz")):
        hint = p.name.split(".")[0][-36:]
    t = parse_text(text, format=format, name=str(p))
    if t.format == "claude-code":
        from .readers import with_subagents

        t = with_subagents(t, p)
    if t.session_hint is None and hint:
        t = Transcript(t.format, t.turns, t.skipped, hint)
    return t


def decode(data: bytes, name: str = "input") -> str:
    """Bytes to text: gunzip if gzipped, refuse binary, tolerate a few bad bytes."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = inputs.gunzip(data, what=name)
        except (OSError, EOFError, zlib.error):
            data = _gunzip_partial(data)
            if not data:
                raise TranscriptError(
                    f"{name} is a damaged gzip file: unpack it with `gunzip` to see what is left"
                ) from None
    sample = data[:8192]
    if b"\x00" in sample:
        raise TranscriptError(
            f"{name} looks binary (it has NUL bytes): give a transcript as JSONL, JSON, markdown or text"
        )
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad and bad > max(8, len(text) // 100):
        raise TranscriptError(
            f"{name} is not UTF-8 text ({bad} undecodable bytes): convert it with `iconv -t utf-8` first"
        )
    return text.removeprefix("\ufeff")


def _gunzip_partial(data: bytes) -> bytes:
    """What a truncated gzip stream still yields."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        return d.decompress(data)
    except zlib.error:
        return b""


def parse_bytes(data: bytes, *, format: str | None = None, name: str = "input") -> Transcript:
    if format is not None and format not in FORMATS:
        raise TranscriptError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    return parse_text(decode(data, name), format=format, name=name)


def parse_text(text: str, *, format: str | None = None, name: str = "input") -> Transcript:
    if not text or text.isspace():
        return Transcript(format or "text", (), {"empty input": 1})
    fmt = format or detect_format(text, name)
    from . import readers

    return {
        "claude-code": parse_claude_code,
        "codex": readers.parse_codex,
        "openclaw": readers.parse_openclaw,
        "aider": readers.parse_aider,
        "openai": readers.parse_openai,
        "specstory": parse_specstory,
        "text": lambda body: parse_plain(body, name=name),
    }[fmt](text)


def _first_line(text: str) -> str:
    """The first line that is not blank, without splitting the whole text (a transcript can be many MB)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end].rstrip("\r")
        if line.strip():
            return line
        start = end + 1
    return ""


def detect_format(text: str, name: str = "input") -> str:
    from .readers import looks_like_aider, openai_messages

    first = _first_line(text)
    if "{" in first[:40] and first.lstrip()[:1] != "{":
        first = first[first.index("{"):]  # a stray prefix before the first record (seen in OpenClaw files)
    with contextlib.suppress(json.JSONDecodeError):
        record = json.loads(first)
        if isinstance(record, dict) and isinstance(record.get("payload"), dict) and "type" in record:
            return "codex"
        if isinstance(record, dict) and record.get("type") == "session":
            return "openclaw"
    head = text.lstrip()[:1]
    if head in "[{":
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if whole is not None:
            if openai_messages(whole) is not None:
                return "openai"
            if isinstance(whole, dict) and ("type" in whole or "message" in whole):
                return "claude-code"
            raise TranscriptError(
                f"{name} is JSON but not a transcript kg reads: kg reads {READS}; name the format with --format "
                f"({', '.join(FORMATS)})"
            )
        try:
            record = json.loads(first)
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            if "role" in record and "type" not in record:
                return "openai"
            return "claude-code"
        if len(text.splitlines()) > 1 or head == "{":
            # A first line that is broken JSON: most likely JSONL with a damaged first record.
            return "claude-code"
    if any(_SPECSTORY_HEADING.match(line) for line in text.splitlines()[:2000]):
        return "specstory"
    if looks_like_aider(text):
        return "aider"
    return "text"


# --- Claude Code JSONL ---------------------------------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
    return []


def _flatten(content: Any) -> str:
    """Text of a tool result or message content, whatever its shape."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if "text" in b and isinstance(b["text"], str):
                    parts.append(b["text"])
                elif b.get("type") == "image":
                    parts.append("[image]")
            elif isinstance(b, str):
                parts.append(b)
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def json_records(lines: Any, skipped: Counter) -> Any:
    """(line number, decoded value) of each non-blank JSON line; a line that does not decode is counted in
    `skipped` and passed over (a transcript cut off mid-write ends in one)."""
    for lineno, raw in enumerate(lines, 1):
        if not raw or raw.isspace():  # (strip() would copy every line, some are megabytes of tool output)
            continue
        try:
            yield lineno, json.loads(raw)
        except json.JSONDecodeError:
            skipped["truncated or invalid JSON line"] += 1


def command_of(tool_input: Any) -> str | None:
    if isinstance(tool_input, str):
        return tool_input
    if isinstance(tool_input, dict):
        for key in COMMAND_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def parse_claude_code(text: str, *, sidechain: bool = False) -> Transcript:
    turns: list[Turn] = []
    skipped: Counter[str] = Counter()
    tools: dict[str, tuple[str, str | None]] = {}
    session: str | None = None
    for lineno, rec in json_records(text.splitlines(), skipped):
        if not isinstance(rec, dict):
            skipped["line is not a JSON object"] += 1
            continue
        session = session or (rec.get("sessionId") if paths.is_name(rec.get("sessionId")) else None)
        rtype = rec.get("type")
        if rtype in CLAUDE_QUIET_TYPES:
            continue
        msg = rec.get("message")
        if rtype not in ("user", "assistant") or not isinstance(msg, dict):
            skipped[
                f"unknown record type {str(rtype)[:40]!r}"
                if rtype not in ("user", "assistant")
                else "record without a message"
            ] += 1
            continue
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        pos = f"line {lineno}"
        meta = bool(rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"))
        side = sidechain or rec.get("isSidechain") is True

        def add(role: str, body: str, *, _at: tuple = (ts, pos, lineno, side), **kw: Any) -> None:
            turns.append(Turn(len(turns), role, body, _at[0], position=_at[1], line=_at[2], sidechain=_at[3], **kw))

        for block in _blocks(msg.get("content")):
            btype = block.get("type")
            if btype == "text":
                body = block.get("text") or ""
                if body and not body.isspace():
                    # a sub-agent's "user" is the main agent's prompt to it, not the human
                    role = "system" if meta or (side and rtype == "user") else rtype
                    add(role, body)
            elif btype == "tool_use":
                name = str(block.get("name") or "tool")
                cmd = command_of(block.get("input"))
                tools[str(block.get("id"))] = (name, cmd)
                add("assistant", "", tool_name=name, tool_input=cmd, call_id=str(block.get("id")))
            elif btype == "tool_result":
                name, cmd = tools.get(str(block.get("tool_use_id")), (None, None))
                flag = block.get("is_error")
                add(
                    "tool",
                    _flatten(block.get("content")),
                    tool_name=name,
                    tool_input=cmd,
                    is_error=bool(flag),
                    call_id=str(block.get("tool_use_id")),
                )
            elif btype in ("thinking", "redacted_thinking", "image", "document"):
                continue
            else:
                skipped[f"unknown content block {str(btype)[:40]!r}"] += 1
    if not turns and skipped:
        raise TranscriptError(
            f"no readable records ({_describe(skipped)}): this is not a transcript kg reads; kg reads {READS}; "
            f"name the format with --format ({', '.join(FORMATS)})"
        )
    return Transcript("claude-code", tuple(turns), dict(skipped), session)


def _describe(skipped: Counter[str] | dict[str, int]) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items()))


# --- SpecStory markdown ---------------------------------------------------------------


def parse_specstory(text: str) -> Transcript:
    lines = text.splitlines()
    turns: list[Turn] = []
    role: str | None = None
    start = 0
    body: list[str] = []

    def flush() -> None:
        if role is None:
            return
        while body and body[-1].strip() in ("", "---"):
            body.pop()
        lead = 0
        while lead < len(body) and not body[lead].strip():
            lead += 1
        content = "\n".join(body[lead:])
        if content.strip():
            first = start + 1 + lead
            turns.append(Turn(len(turns), role, content, None, position=f"line {first}", line=first))

    for i, line in enumerate(lines, 1):
        m = _SPECSTORY_HEADING.match(line)
        if m:
            flush()
            role = "user" if m.group(1) == "User" else "assistant"
            start, body = i, []
        elif role is not None:
            body.append(line)
    flush()
    if not turns:
        raise TranscriptError(
            "no _**User**_ / _**Assistant**_ sections found: this is not SpecStory markdown; "
            "name the format with --format"
        )
    title = next((ln[2:].strip() for ln in lines[:10] if ln.startswith("# ")), None)
    return Transcript("specstory", tuple(turns), {}, title)


# --- Plain text -----------------------------------------------------------------------


def parse_plain(text: str, *, name: str = "input") -> Transcript:
    """`Role: text` lines start turns; without any role markers each paragraph is a user turn."""
    lines = text.splitlines()
    marked = [(_TEXT_ROLE.match(line), i) for i, line in enumerate(lines, 1)]
    turns: list[Turn] = []
    if any(m for m, _ in marked):
        role: str | None = None
        body: list[str] = []
        first = 0
        for m, i in marked:
            if m:
                _append_plain(turns, role, body, first)
                role, body, first = _TEXT_ROLE_MAP[m.group(1).lower()], [m.group(2)], i
            elif role is not None:
                body.append(lines[i - 1])
        _append_plain(turns, role, body, first)
    else:
        if _is_document(lines):
            raise TranscriptError(
                f"{name} reads as a notes document (markdown headings or tables, and no 'User:' / 'Assistant:' turns), "
                f"not a conversation: kg reflect reads {READS}; to reflect on plain text, start each turn with "
                "'User:' or 'Assistant:'")
        for first, para in _paragraphs(lines):
            _append_plain(turns, "user", para, first)
    return Transcript("text", tuple(turns), {}, None)


_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_MD_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")


def _is_document(lines: list[str]) -> bool:
    """Plain text without role markers is read as what a user said, a paragraph a turn; a README, a licence list or
    notes are not (every paragraph of LICENSES.md became a "correction"). The shape of a markdown document: it opens
    with a heading, or holds two headings, or a table (its `|---|---|` rule). A message a user wrote rarely does."""
    head = next((ln for ln in lines if ln.strip()), "")
    headings = sum(1 for ln in lines if _MD_HEADING.match(ln))
    return bool(_MD_HEADING.match(head)) or headings >= 2 or any(_MD_TABLE_RULE.match(ln) for ln in lines)


def _append_plain(turns: list[Turn], role: str | None, body: list[str], first: int) -> None:
    content = "\n".join(body).strip("\n")
    if role and content.strip():
        turns.append(Turn(len(turns), role, content, None, position=f"line {first}", line=first))


def _paragraphs(lines: list[str]) -> Iterable[tuple[int, list[str]]]:
    para: list[str] = []
    first = 0
    for i, line in enumerate(lines, 1):
        if line.strip():
            if not para:
                first = i
            para.append(line)
        elif para:
            yield first, para
            para = []
    if para:
        yield first, para
