"""A failure that recurs in one session is raised by the live hook as a reflection of the same transcript raises it
(rules/errors.toml `[priority] repeat` from `repeat_threshold` on). QA7 #3: Claude Code transcript fe5e1c67 replayed
through the installed PostToolUseFailure hook logged its 13 read-before-write failures at medium, so the brief's
high-priority list was empty; `kg reflect --apply` of the same file logged them at high. Real transcript, real
payloads built from its failed tool calls, the real CLI."""

from __future__ import annotations

import json
from collections import defaultdict

import kg
from tests.conftest import kg_runner

NOW = "2026-07-01T09:00"


def _failed_calls(path) -> list[dict]:
    """The PostToolUseFailure payloads Claude Code sent for the transcript's failed tool calls, in order."""
    calls, payloads = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        content = (row.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_use":
                calls[block["id"]] = block
            elif block.get("type") == "tool_result" and block.get("is_error") and block["tool_use_id"] in calls:
                use = calls[block["tool_use_id"]]
                error = block.get("content")
                error = error if isinstance(error, str) else "\n".join(b.get("text", "") for b in error or [])
                payloads.append({"session_id": row["sessionId"], "transcript_path": str(path), "cwd": "/tmp",
                                 "hook_event_name": "PostToolUseFailure", "tool_name": use["name"],
                                 "tool_input": use.get("input") or {}, "tool_use_id": use["id"], "error": error,
                                 "is_interrupt": False})
    return payloads


def _priorities(run) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for row in run("list --limit 0 --json").json:
        if row["id"].startswith("ERR-"):
            out[row.get("pattern_key") or ""].add(row["priority"])
    return out


def test_the_hook_raises_a_recurring_failure_as_reflection_does(tmp_path, shared_data):
    transcript = shared_data / "runtimes" / "claude_code" / "transcripts" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    payloads = _failed_calls(transcript)
    assert len(payloads) >= 13
    hooked = kg_runner(kg.init_workspace(tmp_path / "hooked").root)
    for payload in payloads:
        done = hooked(f"hook post-tool-use --runtime claude-code --now {NOW}", input=json.dumps(payload))
        assert done.exit_code == 0, done.stderr
    reflected = kg_runner(kg.init_workspace(tmp_path / "reflected").root)
    assert reflected(f"reflect {transcript} --apply --now {NOW}").exit_code == 0
    live, batch = _priorities(hooked), _priorities(reflected)
    raised = {key for key, seen in batch.items() if "high" in seen}
    assert raised, batch  # the transcript has a failure that recurs (13 read-before-write errors)
    assert {key for key, seen in live.items() if "high" in seen} == raised, (live, batch)
    # the first failures of a pattern were logged before it recurred: medium; from the threshold on, high
    assert all(live[key] == {"medium", "high"} for key in raised), live
