"""A user-view tester's findings (the agent, the analyst, the periodic job), through the real CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("query", ["ERR-20261201-002", "[ERR-20261201-002]", "err-20261201-002",
                                   "what happened in ERR-20261201-002?"])
def test_an_id_in_the_query_returns_that_entry_first(run_kg, query):
    run_kg("log error 'docker build failed: permission denied on the socket' --now 2026-12-01T09:00")
    run_kg("log error 'npm ci failed with ERESOLVE peer dependency conflict' --now 2026-12-01T10:00")
    for minute in ("01", "02", "03"):
        run_kg(f"log learning 'the staging database needs a VPN connection {minute}' --now 2026-12-01T11:{minute}")
    r = run_kg(["search", query, "--now", "2026-12-02", "--json"])
    assert r.exit_code == 0, r.stderr
    top = r.json[0]
    assert (top["source"], top["ref"]) == ("graph", "ERR-20261201-002"), [h["ref"] for h in r.json]
    assert top["match"] != "recent"
    plain = run_kg(["search", query, "--now", "2026-12-02"])
    assert "No results" not in plain.stdout and "ERESOLVE" in plain.stdout.splitlines()[2], plain.stdout


def test_why_on_a_block_marker_names_every_file_it_bounds_and_says_kg_wrote_it(run_kg, ws):
    for name in ("MEMORY.md", "TOOLS.md"):
        (ws.root / name).write_text(f"# {name}\n\nmine\n\n<!-- kaizen-kg:begin kaizen-kg -->\n- a rule\n"
                                    "<!-- kaizen-kg:end kaizen-kg -->\n", encoding="utf-8")
    before = {n: (ws.root / n).read_bytes() for n in ("MEMORY.md", "TOOLS.md")}
    for end in ("begin", "end"):
        r = run_kg(["why", f"<!-- kaizen-kg:{end} kaizen-kg -->", "--json"])
        assert r.exit_code == 0, r.stderr
        assert r.json["source"] == "kg-marker" and r.json["block"] == "kaizen-kg"
        assert r.json["files"] == ["MEMORY.md", "TOOLS.md"], r.json
        assert "edited" not in " ".join(r.json["explanation"])
    text = run_kg(["why", "<!-- kaizen-kg:begin kaizen-kg -->"]).stdout
    assert text.startswith("MEMORY.md, TOOLS.md: <!-- kaizen-kg:begin kaizen-kg -->\n"), text
    assert {n: (ws.root / n).read_bytes() for n in ("MEMORY.md", "TOOLS.md")} == before


def test_why_on_a_human_line_in_two_files_names_both(run_kg, ws):
    for name in ("MEMORY.md", "TOOLS.md"):
        (ws.root / name).write_text(f"# {name}\n\n- keep the staging database reset on Sundays\n", encoding="utf-8")
    r = run_kg(["why", "- keep the staging database reset on Sundays", "--json"])
    assert r.json["source"] == "human" and r.json["files"] == ["MEMORY.md", "TOOLS.md"], r.json


@pytest.mark.parametrize("command", ["search git", "skill find git"])
def test_a_limit_of_zero_is_refused_plainly_and_a_huge_one_means_all(run_kg, command):
    run_kg("log error 'git push failed: no upstream branch' --now 2026-12-01T10:00")
    r = run_kg(f"{command} --limit 0 --now 2026-12-02")
    assert (r.exit_code, r.stderr) == (2, "Error: --limit must be at least 1, not 0\n")
    huge = run_kg(f"{command} --limit 99999999999999999999 --now 2026-12-02 --json")
    assert huge.exit_code == 0, huge.stderr
    assert huge.json == run_kg(f"{command} --now 2026-12-02 --json").json


@pytest.mark.parametrize("command", ["list", "patterns", "graph query all"])
def test_a_listing_takes_a_limit_of_zero_for_all_and_refuses_a_negative_one(run_kg, command):
    """QA3 #5a: `kg list --limit 0` was refused ("must be at least 1") while `kg graph query --limit 0` listed
    everything. A listing's 0 is all, and its --help says so; a ranking's (search, skill find) is refused above."""
    for i in range(3):
        run_kg(f"log error 'git push failed: no upstream branch' --pattern-key git.push.{i} --now 2026-12-01T10:0{i}")
    everything = run_kg(f"{command} --limit 0 --now 2026-12-02 --json")
    assert everything.exit_code == 0, everything.stderr
    assert everything.json == run_kg(f"{command} --limit 1000 --now 2026-12-02 --json").json
    assert everything.json != run_kg(f"{command} --limit 1 --now 2026-12-02 --json").json
    assert "(0: all)" in " ".join(run_kg(f"{command} --help").stdout.split())
    r = run_kg(f"{command} --limit -1")
    assert r.exit_code == 2 and r.stderr.startswith("Error: --limit must be 0"), r.stderr


@pytest.mark.parametrize("char", ["败", "依", "构"])
def test_a_single_chinese_character_finds_the_entries_holding_it(run_kg, char):
    run_kg("log error '构建失败：缺少依赖' --now 2026-12-01T10:00")
    run_kg("log learning 'deploy with the blue-green script' --now 2026-12-01T11:00")
    r = run_kg(["search", char, "--now", "2026-12-02", "--source", "graph", "--json"])
    assert r.exit_code == 0, r.stderr
    assert [h["ref"] for h in r.json] == ["ERR-20261201-001"], r.json
    assert r.json[0]["match"] == "terms" and r.json[0]["unmatched"] == []


DATA = Path("/work/shared/data/runtimes")
REPLAYED = {  # runtime -> (a real transcript, the day it began)
    "claude-code": (DATA / "claude_code/transcripts/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", "2025-09-07"),
    "codex": (DATA / "codex/transcripts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
              "2026-05-11"),
}


@pytest.mark.parametrize("runtime", sorted(REPLAYED))
def test_a_replayed_session_is_dated_as_its_transcript_so_its_id_and_entries_agree(ws, runtime):
    """The runtime's hooks, fed a real transcript long after it was made (as a user replaying it, no --now): the
    session the hook opens and the entries reflection logs into it carry the same day."""
    path, day = REPLAYED[runtime]
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout's shared data")
    payload = {"session_id": "s-1", "transcript_path": str(path), "cwd": str(ws.root), "permission_mode": "default",
               "model": "m"}
    env = {k: v for k, v in os.environ.items() if k != "KG_NOW"} | {"KG_HOOK_WAIT": "1"}
    kg = [str(Path(sys.executable).parent / "kg"), "-w", str(ws.root), "hook"]
    start = subprocess.run(kg + ["session-start", "--start-session", "--runtime", runtime, "--json"], env=env,
                           input=json.dumps({**payload, "hook_event_name": "SessionStart", "source": "startup"}),
                           capture_output=True, text=True)
    assert start.returncode == 0, start.stderr
    assert json.loads(start.stdout)["session"] == f"{day}-001"
    end = subprocess.run(kg + ["session-end", "--runtime", runtime, "--json"], env=env, capture_output=True,
                         text=True, input=json.dumps({**payload, "hook_event_name": "SessionEnd", "reason": "other"}))
    assert end.returncode == 0, end.stderr
    out = json.loads(end.stdout)
    assert out["session"] == f"{day}-001" and out["reflect"]["logged"], out
    assert {i.split("-")[1] for i in out["reflect"]["logged"]} == {day.replace("-", "")}
    assert out["summary_file"] == f"memory/sessions/{day}-001.md"


def test_a_new_session_with_no_transcript_yet_takes_the_clock(run_kg, ws, tmp_path):
    payload = {"session_id": "s-2", "transcript_path": str(tmp_path / "not-yet.jsonl"), "cwd": str(ws.root),
               "hook_event_name": "SessionStart", "source": "startup", "model": "m", "permission_mode": "default"}
    r = run_kg("hook session-start --start-session --runtime claude-code --json --now 2026-12-02T09:00",
               input=json.dumps(payload))
    assert r.json["session"] == "2026-12-02-001"


@pytest.mark.parametrize("where", ["after", "before"])
def test_an_explicit_now_beats_kg_now_and_a_bad_one_is_refused(run_kg, where):
    env = {"KG_NOW": "2026-12-02T08:00:00"}

    def argv(command: str, now: str) -> str:
        return f"{command} --now {now}" if where == "after" else f"--now {now} {command}"

    r = run_kg(argv("log error 'disk full on the build agent' --json", "2026-12-05T10:00"), env=env)
    assert r.exit_code == 0 and r.json["id"] == "ERR-20261205-001", r.stdout + r.stderr
    assert run_kg(argv("cycle --dry-run --json", "2026-12-09"), env=env).json["now"] == "2026-12-09T00:00:00"
    bad = run_kg(argv("cycle --dry-run", "bogus"), env=env)
    assert (bad.exit_code, bad.stderr) == (2, "Error: invalid --now 'bogus': use ISO 8601, for example 2026-11-30 "
                                              "or 2026-11-30T10:35:00\n")


def test_a_session_summarys_frame_is_not_a_search_hit(run_kg):
    run_kg("session start --now 2026-12-01T09:00")
    run_kg("log error 'npm run build failed: generate is not a function' --now 2026-12-01T10:00")
    run_kg("session end --now 2026-12-01T18:00")
    for query in ("generate", "skills generated", "tasks completed", "session summary"):
        hits = run_kg(["search", query, "--now", "2026-12-02", "--source", "sessions", "--json"]).json
        frame = [h["text"] for h in hits if h["text"].startswith(("#", "Generated:", "Skills Generated",
                                                                   "Tasks Completed", "Session Summary"))
                 or h["text"] == "(none)"]
        assert not frame, (query, frame)


@pytest.mark.parametrize("query", ["git push in 2023", "git push 4 years ago"])
def test_words_that_match_only_outside_the_time_named_are_said_to(run_kg, query):
    run_kg("log error 'git push failed: no upstream branch' --now 2026-12-01T10:00")
    r = run_kg(["search", query, "--now", "2026-12-02"])
    assert "nothing in the time named; these match the words at other times" in r.stdout, r.stdout
    assert run_kg(["search", query, "--now", "2026-12-02", "--json"]).json[0]["match"] == "elsewhen"
    inside = run_kg(["search", "git push on December 1", "--now", "2026-12-02", "--json"]).json
    assert inside[0]["match"] == "terms"


def test_a_recurring_error_reaches_the_memory_for_a_message_about_it(run_kg):
    for minute in ("01", "02", "03"):  # medium priority, as a tool failure a hook logs: not on the watch list
        run_kg(f"log error 'npm run build failed: generate is not a function' --priority medium "
               f"--now 2026-12-01T10:{minute}")
    run_kg("log error 'docker pull timed out once' --priority medium --now 2026-12-01T11:00")
    block = run_kg("inject -m 'fix the npm build' --now 2026-12-02T09:00 --json").json["block"]
    assert "- npm run build failed: generate is not a function [ERR-20261201-00" in block, block
    assert "(3×)" in block and "docker" not in block, block
    brief = run_kg("hook session-start -m 'fix the npm build' --now 2026-12-02T09:00").stdout
    assert "npm run build failed: generate is not a function" in brief, brief


def test_the_brief_shows_a_recurring_error_once_under_pending_not_again_under_memory(run_kg):
    head = "edit failed: This SEARCH block failed to exactly match lines in packages/module/src/" + "x" * 30
    for i, name in enumerate(("a.ts", "a.ts", "b.ts", "b.ts")):  # alike once cut to the brief's width
        run_kg(["log", "error", f"{head}/{name}", "--priority", "high", "--now", f"2026-12-01T10:0{i}"])
    brief = run_kg(["hook", "session-start", "-m", "the SEARCH block failed to match", "--now", "2026-12-02"]).stdout
    assert "(×4)" in brief, brief
    assert brief.count("This SEARCH block failed") == 1, brief


def test_graph_report_counts_one_error_in_the_singular(run_kg):
    run_kg("log error 'deploy script failed: token expired' --area infra --now 2026-12-01T10:00")
    text = run_kg("graph report --now 2026-12-02").stdout
    assert "   infra: 1 error, last 2026-12-01\n" in text, text


def test_codex_gets_the_brief_again_after_clear_and_compact(run_kg, ws):
    """Codex's SessionStart source is startup, resume, clear or compact (its hook schema): after /clear or a
    compaction the brief is gone from the context, so kg's hook must match those too (as for Claude Code)."""
    schema = DATA / "codex/hooks/schema/generated/session-start.command.input.schema.json"
    sources = (json.loads(schema.read_text())["properties"]["source"]["enum"] if schema.exists()
               else ["startup", "resume", "clear", "compact"])
    assert run_kg("install codex").exit_code == 0
    groups = json.loads((ws.root / ".codex" / "hooks.json").read_text())["hooks"]["SessionStart"]
    import re

    assert all(any(re.fullmatch(g["matcher"], s) for g in groups) for s in sources), groups


def test_a_failure_payload_naming_neither_tool_nor_error_logs_nothing(run_kg):
    r = run_kg("hook post-tool-use --runtime claude-code --json --now 2026-12-02",
               input=json.dumps({"hook_event_name": "PostToolUseFailure", "session_id": "s"}))
    assert r.exit_code == 0 and r.json == {"logged": None, "failed": False}, r.stdout + r.stderr
    assert run_kg("list --json --now 2026-12-02").json == []


def test_an_id_no_entry_has_is_named_as_missing(run_kg):
    run_kg("log error 'git push failed: no upstream branch' --now 2026-12-01T10:00")
    r = run_kg(["search", "ERR-20991201-001", "--now", "2026-12-02"])
    assert r.stdout.startswith("No results for 'ERR-20991201-001'.\n  (no entry ERR-20991201-001)\n"), r.stdout
    assert run_kg(["search", "[ERR-20991201-001]", "--now", "2026-12-02", "--json"]).json[0]["unmatched"] == [
        "ERR-20991201-001"]


@pytest.mark.parametrize("option", ["--tool-calls", "--repeats"])
def test_skill_check_refuses_a_negative_count(run_kg, option):
    r = run_kg(["skill", "check", option, "-1"])
    assert (r.exit_code, r.stderr) == (2, f"Error: {option} must be a count, 0 or more, not -1\n")


@pytest.mark.parametrize("source", ["resume", "clear", "compact"])
def test_a_resumed_session_goes_on_today_whatever_its_transcripts_first_day(run_kg, source):
    path, _ = REPLAYED["claude-code"]
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout's shared data")
    payload = {"session_id": "s-3", "transcript_path": str(path), "cwd": "/x", "hook_event_name": "SessionStart",
               "source": source, "model": "m", "permission_mode": "default"}
    r = run_kg("hook session-start --start-session --runtime claude-code --json --now 2026-12-02T09:00",
               input=json.dumps(payload))
    assert r.json["session"] == "2026-12-02-001"


def test_a_recurring_pending_high_error_stays_on_the_watch_list_with_its_count(run_kg):
    for minute in ("01", "02"):
        run_kg(f"log error '数据库连接失败：测试库没有启动' --priority high --now 2026-12-01T10:{minute}")
    block = run_kg("inject -m 帮我修复数据库连接问题 --now 2026-12-02T09:00 --json").json["block"]
    assert "### Watch list\n- 数据库连接失败：测试库没有启动 (high, pending) [ERR-20261201-002] (2×)" in block, block
    assert "### Lessons" not in block, block
