"""`kg reflect --apply` through the CLI on the runtimes' real transcripts (Claude Code, Codex, OpenClaw/pi), each into a
fresh workspace: every learning it logs quotes what the user typed, read here straight from the raw file by the
runtime's own marks (runtimes/INDEX.md), never a tool's output, a system reminder, a skill body or sub-agent prompt
injected as a user message, nor OpenClaw's "/new" start-up prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOW = "--now 2026-12-03T10:00:00"
INJECTED = ("<system-reminder>", "Session Startup sequence", "<command-", "<environment_context>",
            "AGENTS.md instructions", "Caveat: The messages below")


def _claude_code(record: dict) -> list[str]:
    """A user line with text content that is not meta (a skill body), not a sub-agent's prompt, not a tool result."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isSidechain"):
        return []
    content = record.get("message", {}).get("content")
    if isinstance(content, str):
        return [content]
    return [c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text"]


def _codex(record: dict) -> list[str]:
    payload = record.get("payload") or {}
    ok = record.get("type") == "event_msg" and payload.get("type") == "user_message"
    return [payload.get("message", "")] if ok else []


def _openclaw(record: dict) -> list[str]:
    message = record.get("message") or {}
    if record.get("type") != "message" or message.get("role") != "user":
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text"]


READERS = {"claude_code": _claude_code, "codex": _codex, "openclaw": _openclaw}


def typed(path: Path, runtime: str) -> list[str]:
    """What the user typed, whitespace folded; OpenClaw's first user message of a session is its start-up prompt."""
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        start = line.find("{")  # an OpenClaw file here opens with a stray prefix (upstream)
        try:
            record = json.loads(line[start:]) if start >= 0 else None
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            out += [" ".join(t.split()) for t in READERS[runtime](record)]
    return [t for t in out if "Session Startup sequence" not in t]


def transcripts(data: Path) -> list[tuple[str, Path]]:
    return [(r, p) for r in READERS for p in sorted((data / "runtimes" / r / "transcripts").rglob("*.jsonl"))]


@pytest.mark.parametrize("runtime", sorted(READERS))
def test_what_reflect_logs_from_a_runtime_is_what_its_user_typed(runtime, run_kg, ws, shared_data):
    files = [p for r, p in transcripts(shared_data) if r == runtime]
    assert files
    learned = 0
    for path in files:
        r = run_kg(f"reflect {path} --apply --json {NOW}")
        assert r.exit_code == 0, r.stderr
        assert len(r.json["logged"]) == len(r.json["findings"])
        said = typed(path, runtime)
        for f in r.json["findings"]:
            if f["category"] == "error":
                continue  # a failed tool call: the tool's output is its evidence
            learned += 1
            evidence = " ".join(f["evidence"].split()).rstrip("…")
            assert any(evidence in s for s in said), (path.name, f["evidence"])
            assert not any(m in f["evidence"] or m in f["summary"] for m in INJECTED), f
    if runtime == "openclaw":
        assert learned >= 10  # the pi session's corrections and preferences are read (13 logged when written)


def _args_of(text: str) -> str:
    start, end = text.find("<command-args>"), text.find("</command-args>")
    return text[start + len("<command-args>"):end] if 0 <= start < end else ""


def test_what_the_user_typed_after_their_own_slash_command_is_read_as_their_words(shared_data):
    """Claude Code writes `/orchestrator create TODO app` as `<command-message>..<command-name>..<command-args>`:
    the arguments are the user's words (the request of the session), the rest is the harness."""
    from kg.reflect import default_rules, own_lines, read_transcript
    from kg.reflect.detect import speaking_turns

    rules, seen = default_rules(), 0
    for _, path in [(r, p) for r, p in transcripts(shared_data) if r == "claude_code"]:
        args = [_args_of(s) for s in typed(path, "claude_code") if _args_of(s).strip()]
        if not args:
            continue
        t = read_transcript(path)
        words = [" ".join(line for _, line in own_lines(t.turns[i].text, rules)) for i in speaking_turns(t, rules)]
        for a in args:
            seen += 1
            assert a in words, (path.name, a)
        assert not any("<command-" in w or "is running" in w for w in words)
    assert seen >= 2  # the two /orchestrator sessions


def test_a_correction_said_as_a_slash_commands_arguments_is_learned(run_kg, ws, shared_data, tmp_path):
    """The real session, and a last turn in its own form: the user runs their /orchestrator again, its arguments a
    correction of the agent's claim before it."""
    path = shared_data / "runtimes/claude_code/transcripts/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    said = "no, that's wrong: this repo uses pnpm, not npm. redo the setup with pnpm"
    first["message"]["content"] = first["message"]["content"].replace("create TODO app by Next.js", said)
    first.update(parentUuid=json.loads(lines[-1])["uuid"], uuid="00000000-0000-4000-8000-000000000001",
                 timestamp="2025-09-03T01:05:00.000Z")
    copy = tmp_path / path.name
    copy.write_text("\n".join([*lines, json.dumps(first)]) + "\n", encoding="utf-8")
    r = run_kg(f"reflect {copy} --json {NOW}")
    assert r.exit_code == 0, r.stderr
    from_it = [f for f in r.json["findings"] if "pnpm" in f["evidence"]]
    assert from_it and {f["category"] for f in from_it} & {"correction", "preference", "knowledge_gap"}
    assert not any("<command-" in f["evidence"] or "orchestrator" in f["evidence"] for f in from_it)
