"""Readers for the transcripts the agent runtimes write, beside Claude Code's (in `parse`):

- **openai**: OpenAI-style `{role, content, tool_calls}` messages, as one JSON list (or `{"messages": [...]}`)
  or one message per line.
- **codex**: Codex rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`): `{"timestamp","type","payload"}`
  lines of type `session_meta`, `turn_context`, `response_item`, `event_msg` ... A failed command is marked
  by `Process exited with code N` in the output (unified exec), by `metadata.exit_code` in a JSON output (the
  old `shell` tool, `apply_patch`), or by an `exec_command_end` event with `status: "failed"`. A command that
  outlives its first call is polled with `write_stdin`; its exit is the original call's failure.
- **openclaw**: OpenClaw / pi session JSONL: a `{"type":"session"}` header (v3, or the older header without a
  version), then `{"type":"message","message":{role: user | assistant | toolResult}}` lines. A tool failed when
  `isError` is true, `details.status` is "error", `details.exitCode` is not 0, or the text ends with
  "(Command exited with code N)" (OpenClaw 2026.2 marks failures only these ways).
- **aider**: `.aider.chat.history.md`: `#### ` lines are the user, `> ` lines aider's own output, the rest the
  assistant. A failed edit is "# N SEARCH/REPLACE block(s) failed to match!" or "The LLM did not conform to
  the edit format." in aider's output.

Every reader keeps each tool call's id (`call_id`) so that a live hook and a later reflection name the same
failure the same way, and the exit code where the format gives one. Pure: text in, Transcript out.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from kg.core import inputs
from kg.core.errors import UsageError

from .parse import (
    Transcript,
    TranscriptError,
    Turn,
    command_of,
    decode,
    describe_skipped,
    flatten,
    json_records,
    parse_claude_code,
)


# -- Claude Code sub-agent files ---------------------------------------------------------------------------------
def with_subagents(t: Transcript, path: Path) -> Transcript:
    """Newer Claude Code versions write each sub-agent to `<session>/subagents/agent-<id>.jsonl` beside the
    session's file: their turns (tool calls and failures included) belong to the session. Each file is read as
    the session's own is (kg.core.inputs.read_file: a regular file, within the same size limit): a FIFO, a link
    to /dev/zero or a file past the limit is skipped with a note, never read (they hung or filled memory)."""
    folder = path.with_name(path.name.split(".")[0]) / "subagents"
    if not folder.is_dir():
        return t
    turns = list(t.turns)
    skipped = Counter(t.skipped)
    for sub in sorted(folder.glob("*.jsonl")):
        try:
            data = inputs.read_file(sub, what="the sub-agent file")
        except UsageError as exc:  # "the sub-agent file P is not a regular file (...); kg reads only ..."
            why = str(exc).removeprefix(f"the sub-agent file {sub} ").split(";")[0]
            skipped[f"sub-agent file {sub.name}, which {why}"] += 1
            continue
        try:
            part = parse_claude_code(decode(data, str(sub)), sidechain=True)
        except TranscriptError:
            skipped[f"unreadable sub-agent file {sub.name}"] += 1
            continue
        for turn in part.turns:
            turns.append(replace(turn, index=len(turns), position=f"{sub.name} {turn.position}"))
        skipped.update(part.skipped)
    return Transcript(t.format, tuple(turns), dict(skipped), t.session_hint)


# -- Codex --------------------------------------------------------------------------------------------------------
CODEX_QUIET = frozenset({"turn_context", "compacted", "world_state", "inter_agent_communication",
                         "inter_agent_communication_metadata", "security_risk_score"})
_UNIFIED_EXIT = re.compile(r"(?m)^Process exited with code (-?\d+)\s*$")
_UNIFIED_RUNNING = re.compile(r"(?m)^Process running with session ID (\d+)\s*$")
_UNIFIED_HEAD = re.compile(r"(?s)\A(?:Chunk ID:.*?\n)?(?:Wall time:.*?\n)?.*?Output:\n?")


def _json_or(value: Any) -> Any:
    if isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):
            return json.loads(value)
    return value


def _codex_command(name: str, args: Any) -> str | None:
    args = _json_or(args)
    if isinstance(args, dict):
        cmd = args.get("cmd") if "cmd" in args else args.get("command")
        if isinstance(cmd, list):  # the old `shell` tool: ["bash", "-lc", "the command"]
            cmd = cmd[-1] if len(cmd) >= 3 and str(cmd[-2]).startswith("-") else " ".join(map(str, cmd))
        if isinstance(cmd, str) and cmd:
            return cmd
        return command_of(args)
    if name == "apply_patch" and isinstance(args, str):
        files = re.findall(r"(?m)^\*\*\* (?:Update|Add|Delete) File: (.+)$", args)
        return "apply_patch " + " ".join(files) if files else "apply_patch"
    return None


def _codex_output(raw: Any) -> tuple[str, int | None, str | None]:
    """(text, exit code, running session id) of a tool output, in any of Codex's shapes."""
    doc = _json_or(raw)
    if isinstance(doc, dict) and ("output" in doc or "metadata" in doc):
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        code = meta.get("exit_code")
        return flatten(doc.get("output")), code if isinstance(code, int) else None, None
    text = flatten(raw) if not isinstance(raw, str) else raw
    running = _UNIFIED_RUNNING.search(text[:400])
    m = _UNIFIED_EXIT.search(text[:400])
    body = _UNIFIED_HEAD.sub("", text, count=1) if (m or running) else text
    return body, int(m.group(1)) if m else None, running.group(1) if running else None


def parse_codex(text: str) -> Transcript:
    turns: list[Turn] = []
    skipped: Counter[str] = Counter()
    calls: dict[str, tuple[str, str | None]] = {}   # call id -> (tool, command)
    sessions: dict[str, str] = {}                     # exec session id -> the call that started it
    failed: set[str] = set()                          # calls whose failure is already a turn
    session: str | None = None
    user_events = '"user_message"' in text

    def add(role: str, body: str, lineno: int, ts: Any, **kw: Any) -> None:
        turns.append(Turn(len(turns), role, body, ts if isinstance(ts, str) else None, position=f"line {lineno}",
                          line=lineno, **kw))

    def result(call: str, body: str, code: int | None, lineno: int, ts: Any) -> None:
        name, cmd = calls.get(call, ("tool", None))
        if code not in (None, 0):
            if call in failed:
                return
            failed.add(call)
        add("tool", body, lineno, ts, tool_name=name, tool_input=cmd, call_id=call,
            is_error=None if code is None else code != 0, exit_code=code)

    for lineno, rec in json_records(text.splitlines(), skipped):
        if not isinstance(rec, dict) or not isinstance(rec.get("payload"), dict):
            skipped["line without a payload"] += 1
            continue
        kind, p, ts = rec.get("type"), rec["payload"], rec.get("timestamp")
        ptype = p.get("type")
        if kind == "session_meta":
            session = session or (p.get("id") if isinstance(p.get("id"), str) else None)
        elif kind == "event_msg":
            if ptype == "user_message" and str(p.get("message") or "").strip():
                add("user", str(p["message"]), lineno, ts)
            elif ptype == "exec_command_end" and p.get("status") == "failed":
                call = str(p.get("call_id"))
                code = p.get("exit_code")
                code = int(code) if isinstance(code, int | str) and str(code).lstrip("-").isdigit() else 1
                if call not in calls:
                    cmd = p.get("command")
                    calls[call] = ("exec_command", _codex_command("exec_command", {"command": cmd}))
                if p.get("process_id") is not None:  # the polls after it speak for this call: a read that resumed
                    sessions[str(p["process_id"])] = call  # past "Process running" learns it only here
                result(call, flatten(p.get("aggregated_output") or p.get("stderr") or ""), code or 1, lineno, ts)
            elif ptype == "patch_apply_end" and p.get("success") is False:
                result(str(p.get("call_id")), flatten(p.get("stderr") or p.get("stdout") or ""), 1, lineno, ts)
        elif kind == "response_item":
            if ptype == "message":
                role = p.get("role")
                body = flatten(p.get("content"))
                if role == "assistant" and body.strip():
                    add("assistant", body, lineno, ts)
                elif role == "user" and not user_events and body.strip():
                    add("user" if not body.lstrip().startswith(("<", "# AGENTS.md")) else "system", body, lineno, ts)
            elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
                call = str(p.get("call_id") or p.get("id"))
                name = str(p.get("name") or ("local_shell" if ptype == "local_shell_call" else "tool"))
                args = p.get("arguments") if ptype == "function_call" else (
                    p.get("input") if ptype == "custom_tool_call" else p.get("action"))
                if name == "write_stdin":  # a poll of a running command: it speaks for the call that started it
                    sid = str((_json_or(args) or {}).get("session_id", "")) if isinstance(_json_or(args), dict) else ""
                    if sid in sessions:
                        calls[call] = ("write_stdin", sessions[sid])
                        continue
                cmd = _codex_command(name, args)
                calls[call] = (name, cmd)
                add("assistant", "", lineno, ts, tool_name=name, tool_input=cmd, call_id=call)
            elif ptype in ("function_call_output", "custom_tool_call_output"):
                call = str(p.get("call_id"))
                body, code, running = _codex_output(p.get("output"))
                name, target = calls.get(call, ("tool", None))
                if name == "write_stdin" and target:  # the original call's outcome
                    call = target
                if running:
                    sessions[running] = call
                    continue
                result(call, body, code, lineno, ts)
    if not turns and skipped:
        raise TranscriptError(f"no readable Codex records ({describe_skipped(skipped)})")
    return Transcript("codex", tuple(turns), dict(skipped), session)


# -- OpenClaw / pi ------------------------------------------------------------------------------------------------
OPENCLAW_QUIET = frozenset({"model_change", "thinking_level_change", "custom", "custom_message", "compaction",
                            "branch_summary", "label"})
_OPENCLAW_EXIT = re.compile(r"\(?Command exited with code (-?\d+)\)?\s*$")
# The prompt OpenClaw injects as the first user message after /new or /reset: not the human speaking.
OPENCLAW_STARTUP = "A new session was started via /new or /reset."


def _openclaw_failure(msg: dict[str, Any], body: str) -> tuple[bool, int | None]:
    details = msg.get("details") if isinstance(msg.get("details"), dict) else {}
    code = details.get("exitCode")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    m = _OPENCLAW_EXIT.search(body[-200:])
    if code is None and m:
        code = int(m.group(1))
    failed = (msg.get("isError") is True or details.get("status") == "error" or code not in (None, 0))
    return failed, code


def parse_openclaw(text: str) -> Transcript:
    lines = text.splitlines()
    if lines and not lines[0].lstrip().startswith("{") and "{" in lines[0]:
        lines[0] = lines[0][lines[0].index("{"):]  # a stray prefix before the header (seen in real files)
    turns: list[Turn] = []
    skipped: Counter[str] = Counter()
    calls: dict[str, tuple[str, str | None]] = {}
    session: str | None = None
    for lineno, rec in json_records(lines, skipped):
        if not isinstance(rec, dict):
            skipped["line is not a JSON object"] += 1
            continue
        rtype = rec.get("type")
        if rtype == "session":
            session = session or (rec.get("id") if isinstance(rec.get("id"), str) else None)
            continue
        if rtype in OPENCLAW_QUIET:
            continue
        msg = rec.get("message")
        if rtype != "message" or not isinstance(msg, dict):
            skipped[f"unknown record type {str(rtype)[:40]!r}"] += 1
            continue
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None

        def add(role: str, body: str, *, _n: int = lineno, _ts: str | None = ts, **kw: Any) -> None:
            turns.append(Turn(len(turns), role, body, _ts, position=f"line {_n}", line=_n, **kw))

        role = msg.get("role")
        content = msg.get("content")
        if role == "user":
            body = flatten(content)
            if body.strip():
                add("system" if body.lstrip().startswith(OPENCLAW_STARTUP) else "user", body)
        elif role == "assistant":
            for block in content if isinstance(content, list) else [{"type": "text", "text": flatten(content)}]:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and str(block.get("text") or "").strip():
                    add("assistant", str(block["text"]))
                elif block.get("type") == "toolCall":
                    call, name = str(block.get("id")), str(block.get("name") or "tool")
                    cmd = command_of(_json_or(block.get("arguments")))
                    calls[call] = (name, cmd)
                    add("assistant", "", tool_name=name, tool_input=cmd, call_id=call)
        elif role == "toolResult":
            call = str(msg.get("toolCallId"))
            name, cmd = calls.get(call, (str(msg.get("toolName") or "tool"), None))
            body = flatten(content)
            failed, code = _openclaw_failure(msg, body)
            add("tool", body, tool_name=name, tool_input=cmd, call_id=call, is_error=failed, exit_code=code)
        else:
            skipped[f"unknown message role {str(role)[:40]!r}"] += 1
    if not turns and skipped:
        raise TranscriptError(f"no readable OpenClaw records ({describe_skipped(skipped)})")
    return Transcript("openclaw", tuple(turns), dict(skipped), session)


# -- aider --------------------------------------------------------------------------------------------------------
AIDER_SESSION = re.compile(r"^# aider chat started at (.+?)\s*$")
_AIDER_FAILED = re.compile(r"^> (# \d+ SEARCH/REPLACE blocks? failed to match!|The LLM did not conform to the "
                           r"edit format\.)")
_AIDER_MISSED = re.compile(r"^## SearchReplaceNoExactMatch\b")
_AIDER_GUIDANCE = re.compile(r"^The SEARCH section must exactly match\b")
_AIDER_APPLIED = re.compile(r"^> Applied edit to (.+?)\s*$")
_AIDER_CONFIRM = re.compile(r"\? \(Y\)es/\(N\)o")
_AIDER_TOKENS = re.compile(r"^> Tokens: ")  # printed when a reply is complete
_AIDER_CTRL_C = re.compile(r"^> \^C KeyboardInterrupt")  # "^C again to exit" is at the prompt


def _aider_failure_detail(block: list[str], lines: list[str], after: int) -> list[str]:
    """The lines that say which file a failed edit missed and why: `## SearchReplaceNoExactMatch: ... in <file>`
    and "The SEARCH section must exactly match ...". Older aider prints them inside its `> ` block; newer aider
    prints them as plain lines after it (the guidance further down, before the next user or aider line)."""
    inside = [b[1:].strip() for b in block]
    rest: list[str] = []
    for ln in lines[after:after + 400]:
        if ln.startswith("####") or re.match(r">(\s|$)", ln) or AIDER_SESSION.match(ln):
            break  # `>>>>>>> REPLACE` is the echoed block, not aider's next output
        rest.append(ln.strip())
    found: list[str] = []
    for pool in (inside, rest):
        found += [ln.lstrip("# ").strip() for ln in pool if _AIDER_MISSED.match(ln)]
        found += [ln for ln in pool if _AIDER_GUIDANCE.match(ln)][:1]
    return list(dict.fromkeys(found))


def parse_aider(text: str) -> Transcript:
    """One user turn per run of `#### ` lines; aider's `> ` output blocks become tool turns when they apply an
    edit or say it failed; everything else is the assistant. A failed edit's turn carries aider's own message
    and the `## SearchReplaceNoExactMatch ...` line after it."""
    lines = text.splitlines()
    turns: list[Turn] = []
    session: str | None = None
    i = 0
    replying = False  # the agent's reply has started and aider has not yet printed its token count

    def add(role: str, body: str, first: int, at: int | None = None, **kw: Any) -> None:
        if body.strip() or kw.get("tool_name"):
            turns.append(Turn(len(turns), role, body, None, position=f"line {at or first}", line=first, **kw))

    while i < len(lines):
        line = lines[i]
        m = AIDER_SESSION.match(line)
        if m:
            session = m.group(1)
            add("system", line.strip(), i + 1)  # a new session in the same file: a fresh context
            i += 1
            continue
        if line.startswith("####"):
            replying = False
            first, body = i + 1, []
            while i < len(lines) and lines[i].startswith("####"):
                body.append(lines[i][5:].rstrip())
                i += 1
            said = "\n".join(body).strip("\n")
            if _AIDER_CONFIRM.search(said):
                continue
            if said.startswith("/run ") or said.startswith("/test "):
                add("user", said, first)
                add("assistant", "", first, tool_name="run", tool_input=said.split(" ", 1)[1].strip())
            else:
                add("system" if said.startswith("# Fix any errors below") else "user", said, first)
            continue
        if line.startswith(">"):
            first, block = i + 1, []
            while i < len(lines) and lines[i].startswith(">"):
                block.append(lines[i].rstrip())
                i += 1
            for n, b in enumerate(block):
                if _AIDER_TOKENS.match(b):
                    replying = False
                elif replying and _AIDER_CTRL_C.match(b):
                    # Ctrl-C before the reply was done: the user stopped the agent mid-reply (a Ctrl-C at the prompt,
                    # after the token count, only clears the input or exits)
                    add("system", "Interrupted", first + n)
                    replying = False
            failed = [b for b in block if _AIDER_FAILED.match(b)]
            applied = [am.group(1) for b in block if (am := _AIDER_APPLIED.match(b))]
            if failed:
                add("assistant", "", first, tool_name="edit")
                # `line` stays the block's (turns in file order: the cursor of incremental reads); the position is
                # aider's own failure message, not its `> Tokens:` line above: the file's lines after the block that
                # name the missed file may not be written yet when a growing history is read (the position is part
                # of what tells a failure found again from a new one)
                said = first + next(n for n, b in enumerate(block) if _AIDER_FAILED.match(b))
                add("tool", "\n".join([b[2:].strip() for b in failed] + _aider_failure_detail(block, lines, i)), first,
                    tool_name="edit", is_error=True, at=said)
            for path in applied:
                add("assistant", "", first, tool_name="edit", tool_input=path)
                add("tool", f"Applied edit to {path}", first, tool_name="edit", tool_input=path, is_error=False)
            continue
        first, body = i + 1, []
        while i < len(lines) and not (lines[i].startswith(("####", ">")) or AIDER_SESSION.match(lines[i])):
            body.append(lines[i])
            i += 1
        said = "\n".join(body).strip("\n")
        replying = replying or bool(said.strip())
        add("assistant", said, first)
    if not turns:
        raise TranscriptError("no `#### ` user lines or `> ` aider lines found: this is not an aider chat history")
    return Transcript("aider", tuple(turns), {}, session)


def looks_like_aider(text: str) -> bool:
    head = text[:20000]
    return bool(re.search(r"(?m)^# aider chat started at ", head)) or (
        bool(re.search(r"(?m)^#### \S", head)) and bool(re.search(r"(?m)^> ", head)))


# -- OpenAI-style messages ---------------------------------------------------------------------------------------


def openai_messages(doc: Any) -> list[Any] | None:
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        doc = doc["messages"]
    is_messages = isinstance(doc, list) and doc and all(isinstance(m, dict) for m in doc)
    return doc if is_messages and sum(1 for m in doc if "role" in m) * 2 >= len(doc) else None


def parse_openai(text: str) -> Transcript:
    skipped: Counter[str] = Counter()
    try:
        doc = json.loads(text)
        messages = openai_messages(doc)
        lines = None
        if messages is None:
            raise TranscriptError(
                "JSON without a list of {role, content} messages: give OpenAI-style messages, "
                "or name another format with --format"
            )
    except json.JSONDecodeError:
        # One message per line (JSONL).
        messages, lines = [], []
        for lineno, rec in json_records(text.splitlines(), skipped):
            if isinstance(rec, dict):
                messages.append(rec)
                lines.append(lineno)
            else:
                skipped["line is not a JSON object"] += 1
        if not messages:
            raise TranscriptError(
                "not valid JSON and no readable JSON lines: check the file, or name the format with --format"
            ) from None
    turns: list[Turn] = []
    tools: dict[str, tuple[str, str | None]] = {}
    for i, m in enumerate(messages):
        pos, line = (f"line {lines[i]}", lines[i]) if lines else (f"turn {i + 1}", None)
        role = m.get("role")
        ts = m.get("timestamp") or m.get("created_at")
        ts = ts if isinstance(ts, str) else None

        def add(r: str, body: str, *, _at: tuple = (ts, pos, line), **kw: Any) -> None:
            turns.append(Turn(len(turns), r, body, _at[0], position=_at[1], line=_at[2], **kw))

        if role in ("system", "developer"):
            add("system", flatten(m.get("content")))
        elif role == "user":
            add("user", flatten(m.get("content")))
        elif role == "assistant":
            body = flatten(m.get("content"))
            if body.strip():
                add("assistant", body)
            calls = m.get("tool_calls") or (
                [m["function_call"]] if isinstance(m.get("function_call"), dict) else []
            )
            for call in calls if isinstance(calls, list) else []:
                if not isinstance(call, dict):
                    continue
                fn = call.get("function") if isinstance(call.get("function"), dict) else call
                name = str(fn.get("name") or "tool")
                args = fn.get("arguments")
                if isinstance(args, str):
                    with contextlib.suppress(json.JSONDecodeError):
                        args = json.loads(args)
                cmd = command_of(args)
                tools[str(call.get("id"))] = (name, cmd)
                add("assistant", "", tool_name=name, tool_input=cmd)
        elif role in ("tool", "function"):
            name, cmd = tools.get(str(m.get("tool_call_id")), (m.get("name"), None))
            flag = m.get("is_error")
            add(
                "tool",
                flatten(m.get("content")),
                tool_name=name,
                tool_input=cmd,
                is_error=flag if isinstance(flag, bool) else None,
                call_id=str(m["tool_call_id"]) if m.get("tool_call_id") else None,
            )
        else:
            skipped[f"unknown role {str(role)[:40]!r}"] += 1
    return Transcript("openai", tuple(turns), dict(skipped), None)
