"""The session brief, the session end and tool-failure logging on a real workspace."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from kg.runtimes import hooks

NOW = "2026-07-01T09:00"
TRANSCRIPT = [
    {"type": "user", "message": {"role": "user", "content": "deploy the app please"},
     "timestamp": "2026-07-01T09:01:00Z", "sessionId": "abc"},
    {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "I used npm."}]},
     "timestamp": "2026-07-01T09:02:00Z", "sessionId": "abc"},
    {"type": "user", "message": {"role": "user", "content": "No, that's wrong: you should use pnpm here, not npm."},
     "timestamp": "2026-07-01T09:03:00Z", "sessionId": "abc"},
]


@pytest.fixture(autouse=True)
def _kg_on_path(monkeypatch):
    """kg on PATH, as in an activated virtualenv or a pip install: the brief names it `kg` (without, it names kg by
    its full path and the workspace: `test_the_brief_names_kg_as_the_agent_can_run_it`)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def write_transcript(path: Path) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPT), encoding="utf-8")
    return path


def _fill(ws, n: int = 12) -> None:
    for i in range(n):
        ws.log("error", f"git push failed on branch {i}: no upstream", now=f"2026-06-{10 + i:02d}T10:00",
               priority="critical" if i == 10 else "high")
    ws.log("learning", "Use pnpm in this repository, not npm", now="2026-06-20T10:00", category="correction",
           priority="medium")


def test_brief_lists_pending_high_items_within_budget_and_is_deterministic(ws):
    _fill(ws)
    a = hooks.session_start_brief(ws, NOW)
    b = hooks.session_start_brief(ws, NOW)
    assert a == b
    assert a["text"].startswith("# kaizen-kg brief — 2026-07-01 09:00\n\n## ⚠️ Pending High-Priority Items (12)")
    assert "(critical)" in a["text"] and "- … 4 more: `kg list --status pending --priority high`" in a["text"]
    assert a["counts"]["pending_high"] == 12 and a["chars"] == len(a["text"]) <= a["budget"]
    small = hooks.session_start_brief(ws, NOW, budget=300)
    assert len(small["text"]) <= 300 and "stats" in small["omitted"]


def test_brief_with_a_message_injects_memory(ws):
    _fill(ws, 2)
    brief = hooks.session_start_brief(ws, NOW, message="install the deps with npm")
    assert "## Memory (kg)" in brief["text"] and "pnpm" in brief["text"].split("## Memory (kg)")[1]
    assert brief["memory"]["items"] >= 1
    assert hooks.session_start_brief(ws, NOW)["memory"] is None


def test_one_brief_reads_no_search_cache_and_matches_a_held_workspace(ws):
    """A one-shot brief asks Kùzu for the search's candidates; it must not first read every node into the
    in-process cache (which pays off only over repeated calls inside `with ws:`). Same brief either way."""
    _fill(ws, 3)
    one = hooks.session_start_brief(ws, NOW, message="git push upstream with npm")
    assert "_search_cache" not in ws.__dict__
    with ws:
        held = hooks.session_start_brief(ws, NOW, message="git push upstream with npm")
        assert "_search_cache" in ws.__dict__
    assert one == held and "## Memory (kg)" in one["text"]


def test_brief_order_comes_from_the_rules(ws, tmp_path):
    _fill(ws, 2)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "hooks.toml").write_text('order = ["stats", "pending_high"]\n', encoding="utf-8")
    import kg

    ws2 = kg.workspace.open_workspace(ws.root, rules_dir=rules)
    text = hooks.session_start_brief(ws2, NOW)["text"]
    assert text.index("## 📊 Stats") < text.index("## ⚠️ Pending")


def test_start_session_opens_one_and_reuses_it_while_open(ws):
    first = hooks.session_start_brief(ws, NOW, start_session=True, source="claude-code")
    assert first["session_started"] and ws.current_session() == first["session"]
    again = hooks.session_start_brief(ws, "2026-07-01T09:30", start_session=True)
    assert again["session"] == first["session"] and not again["session_started"]
    assert f"- Session: {first['session']}" in again["text"]


def test_write_saves_the_seed_context_file(ws):
    brief = hooks.session_start_brief(ws, NOW, write=True)
    assert brief["file"] == "memory/.hook-context.txt"
    assert (ws.root / brief["file"]).read_text(encoding="utf-8") == brief["text"] + "\n"


def test_session_end_reflects_once_and_writes_the_summary(ws, tmp_path):
    sid = hooks.session_start_brief(ws, NOW, start_session=True)["session"]
    t = write_transcript(tmp_path / "abc.jsonl")
    done = hooks.session_end(ws, str(t), "2026-07-01T10:00")
    assert done["session"] == sid and done["reflect"]["findings"] >= 1 and done["reflect"]["logged"]
    assert done["summary_file"] == f"memory/sessions/{sid}.md"
    summary = (ws.root / done["summary_file"]).read_text(encoding="utf-8")
    assert "pnpm" in summary and ws.current_session() is None
    again = hooks.session_end(ws, str(t), "2026-07-01T10:05", session=sid)
    assert again["reflect"]["logged"] == [] and again["reflect"]["read_from"] > 1  # on from where it left off
    assert again["summary_file"] is None and any("ended already" in n for n in again["notes"])


def test_session_end_without_a_kg_session_reflects_into_the_transcripts_session(ws, tmp_path):
    done = hooks.session_end(ws, str(write_transcript(tmp_path / "abc.jsonl")), NOW)
    # reflect --apply writes the summary of the session it logged into (named after the transcript)
    assert done["reflect"]["logged"] and done["summary_file"] == "memory/sessions/abc.md"
    assert not any("no summary written" in n for n in done["notes"])  # (it said so beside the file: QA1 #8)


def test_post_tool_use_logs_failures_only(ws):
    hooks.session_start_brief(ws, NOW, start_session=True)
    ok = hooks.post_tool_use(ws, {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                                  "tool_response": {"stdout": "fine", "exit_code": 0}}, NOW)
    assert ok == {"logged": None, "failed": False}
    bad = hooks.post_tool_use(ws, {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                                   "tool_input": {"command": "git push"},
                                   "error": "fatal: token ghp_abcdefghijklmnopqrstuvwxyz0123456789 rejected"}, NOW)
    node = ws.show(bad["logged"])
    text = json.dumps(node)
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in text  # redacted before it is stored
    assert "claude-code" in text and ws.current_session() in text


def test_brief_folds_pending_items_that_read_the_same_into_one_line(ws):
    # aider retried one edit seven times: the brief showed the same line seven times and hid the other items
    for i in range(7):
        ws.log("error", "edit failed: # 1 SEARCH/REPLACE block failed to match!", now=f"2026-06-20T10:0{i}",
               priority="high")
    for i, what in enumerate(["npm ci failed: lockfile out of date", "pytest: 3 failed", "git push rejected"]):
        ws.log("error", what, now=f"2026-06-19T10:0{i}", priority="high")
    brief = hooks.session_start_brief(ws, NOW)
    lines = [ln for ln in brief["text"].splitlines() if ln.startswith("- [")]
    assert len(lines) == 4 and sum("SEARCH/REPLACE" in ln for ln in lines) == 1
    assert lines[0].endswith("block failed to match! (×7)")
    assert "## ⚠️ Pending High-Priority Items (10)" in brief["text"] and "more" not in brief["text"].split("##")[1]
    small = hooks.session_start_brief(ws, NOW, budget=260)  # cut short: the count left out is of entries
    assert small["text"].endswith("(×7)\n- [ERR-20260619-003] git push rejected\n"
                                  "- … 2 more: `kg list --status pending --priority high`")


def test_the_brief_names_kg_as_the_agent_can_run_it(ws, monkeypatch):
    """QA7 #2: the brief told the agent to run a bare `kg` (`kg log ...`, `kg approve N`, `kg list ...`) where kg was
    installed off PATH and the hooks ran it by its full path: every command it named failed with "command not
    found". Off PATH it names this kg by its full path with the workspace, as `kg install` writes the hooks."""
    import shlex

    _fill(ws)
    on_path = hooks.session_start_brief(ws, NOW)["text"]
    assert "`kg log error|learning|feature" in on_path and "more: `kg list --status pending" in on_path
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    named = f"{shlex.quote(str(Path(sys.executable).with_name('kg')))} -w {shlex.quote(str(ws.root))}"
    off_path = hooks.session_start_brief(ws, NOW)["text"]
    assert f"`{named} log error|learning|feature" in off_path, off_path
    assert f"more: `{named} list --status pending --priority high`" in off_path
    assert "`kg " not in off_path
