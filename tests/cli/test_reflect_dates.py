"""`kg reflect --apply` dates each finding when its turn happened, not when kg reflects on it: each runtime's real
transcript from /work/shared/data, reflected long after (`--now` in Dec 2026)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DATA = Path("/work/shared/data/runtimes")
LATER = "2026-12-02T10:00:00"
CASES = {  # transcript -> the days its turns carry (their own timestamps; aider: its "chat started at" headers)
    "codex": (DATA / "codex/transcripts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
              {"2026-05-11"}),
    "claude-code": (DATA / "claude_code/transcripts/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", {"2025-09-07"}),
    "openclaw": (DATA / "openclaw/transcripts/b3db607f-7ae8-4089-b806-44800e961672.jsonl",
                 {"2026-02-26", "2026-02-27"}),
    "aider": (DATA / "aider/aider-ai_aider/chat-history.part1.md", None),
}


@pytest.mark.parametrize("runtime", sorted(CASES))
def test_findings_sessions_and_daily_logs_carry_the_turns_dates(run_kg, ws, runtime):
    path, days = CASES[runtime]
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout's shared data")
    r = run_kg(f"reflect {path} --apply --json --now {LATER}")
    assert r.exit_code == 0, r.stderr
    logged = r.json["logged"]
    assert logged
    dated = {f"{m[0:4]}-{m[4:6]}-{m[6:8]}" for m in (re.search(r"-(\d{8})-", i).group(1) for i in logged)}
    if days is None:  # aider: every day a "chat started at" header names, before the first finding's day
        text = path.read_text(encoding="utf-8")
        days = set(re.findall(r"(?m)^# aider chat started at (\d{4}-\d{2}-\d{2})", text))
    assert dated <= days, (dated, days)
    assert "2026-12-02" not in dated
    shown = run_kg(f"show {logged[-1]} --json")
    assert shown.json["node"]["created_at"][:10] in days
    logs = {p.stem for p in (ws.root / "memory").glob("*.md")}
    assert logs and logs <= days, logs  # the daily logs and the session summary's line go to those days
    summary = (ws.root / r.json["summary_file"]).read_text(encoding="utf-8")
    assert "2026-12-02" not in summary


def test_a_turn_later_than_now_is_dated_now(run_kg, ws):
    """A transcript whose turns lie after `--now` (a clock set back, a replay) never dates an entry later."""
    path, _ = CASES["codex"]
    r = run_kg(f"reflect {path} --apply --json --now 2026-05-11T08:40:00")
    assert r.exit_code == 0, r.stderr
    first, second = r.json["logged"]
    assert run_kg(f"show {first} --json").json["node"]["created_at"].startswith("2026-05-11T08:35")
    assert run_kg(f"show {second} --json").json["node"]["created_at"].startswith("2026-05-11T08:40:00")
