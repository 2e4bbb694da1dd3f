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
