"""What kg says, in an MCP client's words: the library's messages are written for the `kg` command line (flags,
metavars, `kg propose`), and pydantic's argument errors are a multi-line report. Over MCP the same facts name the
tool's arguments and the other tools. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_COMMAND = re.compile(r"`kg ([a-z][a-z-]*)(?: [^`]*)?`")
_FLAG = re.compile(r"--([a-z][a-z-]*)(?: \"\.\.\.\")?")
_METAVAR = re.compile(r"\b[A-Z][A-Z_]{2,}\b")
# options the server's process takes, not a tool: what they set, in a tool's words (QA9 #4b: "--now 2026-11-01 00:00
# is before proposal #1" named a flag no tool has; the server's time is KG_NOW, or `kg mcp`'s --now)
_SERVER_SET = {"now": "the server's clock (KG_NOW)"}
_WHOLE = {"int_type", "int_parsing", "int_from_float"}  # pydantic's error types for a number that is no integer


def in_tool_words(message: str, tool: str, arguments: Iterable[str], tools: Iterable[str]) -> str:
    """`message` with the CLI's names turned into this tool's: `--budget` → `budget` (an argument of `tool`),
    TOPIC → `topic`, `kg propose` → the `propose` tool, `--now` → the server's clock. Names with no MCP counterpart
    are left as they are (a shell command the user can still run)."""
    args = set(arguments)
    names = set(tools)

    def command(m: re.Match[str]) -> str:
        return f"the `{m.group(1)}` tool" if m.group(1) in names else m.group(0)

    def flag(m: re.Match[str]) -> str:
        name = m.group(1).replace("-", "_")
        return f"`{name}`" if name in args else _SERVER_SET.get(name, m.group(0))

    def metavar(m: re.Match[str]) -> str:
        name = m.group(0).lower()
        return f"`{name}`" if name in args else m.group(0)

    return _METAVAR.sub(metavar, _FLAG.sub(flag, _COMMAND.sub(command, message)))


def argument_errors(tool: str, errors: Iterable[Mapping[str, Any]], takes: Iterable[str] = ()) -> str:
    """pydantic's `ValidationError.errors()` as one line: `kind: should be 'learning', 'error' or 'feature' (got
    'bogus'); summary: required`. Arguments the tool does not take (`extra_forbidden`) come first, in one part
    saying the ones it `takes`: `unknown argument colour: log takes kind, summary, ...`."""
    errors = list(errors)
    unknown = sorted({".".join(map(str, e.get("loc", ()))) for e in errors if e.get("type") == "extra_forbidden"})
    parts = [f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}: {tool} takes "
             f"{', '.join(takes) or 'no arguments'}"] if unknown else []
    for err in errors:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "__root__")
        msg = str(err.get("msg", "invalid"))
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            continue
        if kind == "missing":
            parts.append(f"{where}: required" if where else "an argument is missing")
            continue
        if kind == "value_error":  # our own check (unknown arguments): its text is the message
            parts.append(msg.removeprefix("Value error, "))
            continue
        if kind in _WHOLE:  # pydantic says "a valid integer"; a model or a user reads "a whole number"
            msg = "should be a whole number"
        msg = re.sub(r"^Input should\b", "should", msg)
        msg = msg[:1].lower() + msg[1:]
        given = err.get("input")
        shown = f" (got {given!r})" if isinstance(given, (str, int, float, bool)) and len(repr(given)) <= 60 else ""
        if isinstance(given, bool):  # as the client wrote it: JSON's true, not Python's True
            shown = f" (got {str(given).lower()})"
        parts.append(f"{where}: {msg}{shown}" if where else msg + shown)
    return "; ".join(parts) or f"the arguments of {tool} are not valid"
