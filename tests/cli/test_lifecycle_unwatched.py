"""Days count as watched only when kg was watching (`verification.unobserved_gap_days`, issue 16): a transcript
reflected with its own dates (a year before kg was installed) does not stretch a rule's rate before across the
months with nothing logged, so a test-database error that comes every day is not read as 0.1 a day and its rule
labelled "made worse" and removed. A real history a week before kg's own first day still counts as watched. Through
the real CLI, on real transcripts from ../shared/data/runtimes."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tests.conftest import shared_data_dir

RUNTIMES = shared_data_dir() / "runtimes"
CLAUDE = RUNTIMES / "claude_code/transcripts/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"  # 2025-09-03 and 07
AIDER = RUNTIMES / "aider/aider-ai_aider/chat-history.part1.md"  # findings on Aug 6-10 and 12, 2024
KEY = "tests.db_not_running"
pytestmark = pytest.mark.skipif(not RUNTIMES.is_dir(), reason="needs /work/shared/data/runtimes")


def _ok(r):
    assert r.exit_code == 0, r.stderr
    return r


def _log(run_kg, day: date, hour: int = 10) -> None:
    _ok(run_kg(["log", "error", "pytest failed: database not running", "--pattern-key", KEY, "--session",
                f"s{day:%m%d}{hour}", "--now", f"{day}T{hour:02}:00", "--wait"]))


def _cycle(run_kg, day: date) -> dict:
    return _ok(run_kg(f"cycle --json --now {day}T23:00")).json


def test_a_transcript_from_last_year_does_not_make_a_daily_error_look_rare(run_kg):
    _ok(run_kg(f"reflect {CLAUDE} --apply --now 2026-10-01T09:00"))
    start = date(2026, 10, 1)
    days = [start + timedelta(days=i) for i in range(24)]  # the error every day, Oct 1 to 24
    reports = {}
    for d in days:
        _log(run_kg, d)
        if d.day in (3, 10, 16, 24):
            reports[d.day] = _cycle(run_kg, d)
    # promoted once ready (Oct 3) or, with verification.min_baseline_days 14, once 14 days are watched (Oct 16);
    # either way judged a week later on a rate before of about 1 a day (not 3 in 28.8 days = 0.103/day)
    promoted = [d for d, r in reports.items() if KEY in [p["pattern_key"] for p in r["promoted"]]]
    verdicts = [v for r in reports.values() for v in r["verified"]]
    assert promoted in ([3], [16]) and verdicts and all(r["reverted"] == [] for r in reports.values())
    for v in verdicts:  # the rule changed nothing: it made nothing worse
        assert v["pattern_key"] == KEY and v["verdict"] != "made_worse" and v["action"] not in ("revert", "auto_revert")
        assert 0.7 <= v["rate_before"] <= 1.3 and v["stats"]["days_before"] >= 2.5
    assert "critical" not in run_kg("list --json --now 2026-10-24T23:30").stdout


def test_a_real_history_a_week_before_kgs_own_first_day_counts_as_watched(run_kg):
    """aider's own chat history: findings on six of the seven days from Aug 6 to 12, 2024; the user's own sessions
    begin 8 days later (a break of the length the real histories have between sessions), the error three times."""
    _ok(run_kg(f"reflect {AIDER} --apply --now 2024-08-20T09:00"))
    for d, hour in ((date(2024, 8, 20), 10), (date(2024, 8, 20), 11), (date(2024, 8, 21), 9)):
        _log(run_kg, d, hour)
    (p,) = [p for p in _ok(run_kg("status --json --now 2024-08-21T12:00")).json["lifecycle"]["ready_to_promote"]
            if p["key"] == KEY]
    assert p["baseline"] is None  # watched since Aug 6: 15 days, the 8-day break included
    assert [p["pattern_key"] for p in _cycle(run_kg, date(2024, 8, 21))["promoted"]] == [KEY]


def test_silence_after_a_burst_does_not_earn_the_baseline_the_wait_asks_for(run_kg):
    """A burst on one day, then nothing for 16 days: the days since the last event are no more watched when the gate
    asks than when a later verdict sees them closed by the next event (a review: the gate promoted on Nov 17 and the
    verdict then read the burst as the rate before, 3 in 0.6 days)."""
    for hour in (9, 11, 15):
        _log(run_kg, date(2026, 11, 1), hour)
    waits = _cycle(run_kg, date(2026, 11, 2))["waiting"]
    assert [w["pattern_key"] for w in waits] == [KEY]
    report = _cycle(run_kg, date(2026, 11, 17))
    assert report["promoted"] == [] and KEY in [w["pattern_key"] for w in report["waiting"]]
    _ok(run_kg(["log", "learning", "read the docs on the export format", "--session", "s20", "--now",
                "2026-11-20T10:00", "--wait"]))
    assert _cycle(run_kg, date(2026, 11, 24))["promoted"] == []  # watched Nov 1 and Nov 20-24: still waiting
