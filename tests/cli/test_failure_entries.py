"""What an agent reads at its next start after kg reflected on real transcripts (../shared/data/runtimes):
the rule promoted from recurring failures states the lesson, not one occurrence's path, while its events keep
the instances; `kg status` lists under recurring patterns only what recurred."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.baseline_wait_off("the text of a failure's rule")

# tests/conftest.py's shared_data, for a module-scoped fixture
DATA = Path(os.environ.get("KG_SHARED_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")

CC = "runtimes/claude_code/transcripts/"
SESSIONS = ("fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")


@pytest.fixture(scope="module")
def reflected(module_workspace, tmp_path_factory):
    ws, run_kg = module_workspace
    for day, name in enumerate(SESSIONS, start=1):
        done = run_kg(["--now", f"2026-11-0{day}T10:00", "reflect", str(DATA / CC / name), "--apply",
                       "--json"])
        assert done.exit_code == 0, done.stderr
    cycle = run_kg("--now 2025-09-10T10:00 cycle --json")  # the sessions ran on 2025-09-03 and 09-07: entries
    assert cycle.exit_code == 0, cycle.stderr               # are dated by their turns
    return ws, run_kg, cycle.json


def test_the_promoted_rule_states_the_lesson_not_one_occurrence(reflected):
    ws, run_kg, cycle = reflected
    promoted = [p for p in cycle["promoted"] if p["pattern_key"].startswith("err.edit.read_before_write.")]
    assert len(promoted) == 1
    tools = (ws.root / "TOOLS.md").read_text(encoding="utf-8")
    line = next(ln for ln in tools.splitlines() if "has not been read yet" in ln)
    assert line == "- Edit failed: File has not been read yet. Read it first before writing to it."
    # the evidence keeps the instances: Edit, Write and MultiEdit on named files, all under one pattern
    events = run_kg("list --type event --limit 200 --json").json
    members = [e for e in events if e.get("pattern_key") == promoted[0]["pattern_key"]]
    assert {e["text"].split(" ", 1)[0] for e in members} == {"Edit", "Write", "MultiEdit"}
    assert all("/path/to/Demo/" in e["text"] for e in members)


def test_status_lists_only_patterns_that_recurred(reflected):
    _, run_kg, _ = reflected
    out = run_kg("--now 2025-09-10T11:00 status").stdout
    section = out.split("Recurring patterns:", 1)[1].split("\n\n", 1)[0]
    counts = [int(n) for n in re.findall(r": (\d+)x,", section)]
    assert counts and min(counts) >= 2
    data = run_kg("--now 2025-09-10T11:00 status --json").json
    assert data["patterns"] and min(p["recurrence"] for p in data["patterns"]) >= 2  # --json says the same
    assert [p["key"] for p in data["patterns"]] == re.findall(r"^   (\S+): \d+x,", section, re.M)
    every = run_kg("patterns --json").json  # the patterns seen once exist; they just do not recur
    assert any(p["recurrence"] == 1 for p in every)


def test_aider_session_named_by_its_start_time_is_logged(run_kg, shared_data):
    # aider names a session "2025-06-02 14:29:21"; a space is no part of a session id, and the run stopped
    path = shared_data / "runtimes" / "aider" / "aquaticat_monochromatic" / ".aider.chat.history.md"
    done = run_kg(["--now", "2026-11-01T10:00", "reflect", str(path), "--apply", "--json"])
    assert done.exit_code == 0, done.stderr
    assert done.json["session"] == "2025-06-02-14-29-21" and done.json["logged"]


def test_a_failure_that_says_nothing_to_do_is_not_promoted(run_kg, shared_data, tmp_path):
    # aider's "# 1 SEARCH/REPLACE block failed to match!" recurs (27 times in one history, and once more in another
    # session): as a rule it would say only that edits fail; it waits for a logged fix instead, and says so
    history = shared_data / "runtimes" / "aider" / "aider-ai_aider" / "chat-history.part1.md"
    done = run_kg(["--now", "2026-11-01T10:00", "reflect", str(history), "--apply", "--json"])
    assert done.exit_code == 0, done.stderr
    key = next(f["pattern_key"] for f in done.json["findings"] if "SEARCH block failed" in f["summary"])
    # the history's sessions ran 2024-08-05 to 08-12, and its entries are dated by them
    again = run_kg(["--now", "2024-08-13T10:00", "log", "error",
                    "edit failed: # 1 SEARCH/REPLACE block failed to match!", "--pattern-key", key, "--tags",
                    "tool-failure", "--session", "another-day"])
    assert again.exit_code == 0, again.stderr
    cycle = run_kg("--now 2024-08-15T10:00 cycle --json")
    assert cycle.exit_code == 0, cycle.stderr
    assert not [p for p in cycle.json["promoted"] if ".edit_no_match." in p["pattern_key"]]
    waiting = [w for w in cycle.json["waiting"] if ".edit_no_match." in w["pattern_key"]]
    assert waiting and "not what to do" in waiting[0]["reason"]
    tools = Path(run_kg("status --json").json["workspace"]) / "TOOLS.md"
    assert not tools.exists() or "SEARCH" not in tools.read_text(encoding="utf-8")
