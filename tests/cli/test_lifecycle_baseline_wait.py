"""The wait for a baseline (`verification.min_baseline_days` 14, the held-out choice, set in kg.toml here), as a
user sees it through the real CLI: a pattern ready on a fresh workspace's first days is not promoted, and `kg cycle`
(and its dry run), `kg status`, `kg patterns` and `kg patterns show` say it waits, how far it got and the minute it
becomes eligible, one answer from the promotion gate itself; a cycle at that minute promotes it, one a day earlier
does not; history imported with its own dates counts as watched."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

KEY = "docker.perm"
ACTION = "Add the user to the docker group"


def _on(ws) -> None:
    """The wait, 14 days as the held-out reads chose and the packaged rules have it (set here too: a test of the wait
    does not depend on the default)."""
    with (ws.root / "kg.toml").open("a") as f:
        f.write("\n[rules.lifecycle.verification]\nmin_baseline_days = 14\n")


def _log(run_kg, at: str, session: str, key: str = KEY) -> None:
    r = run_kg(["log", "error", f"{key} permission denied on the socket", "--pattern-key", key, "--area", "tooling",
                "--action", ACTION, "--session", session, "--now", at, "--wait"])
    assert r.exit_code == 0, r.stderr


def _fresh_burst(ws, run_kg) -> None:
    """kg's first events: the pattern three times on May 1 and 2, in three sessions (the wait on)."""
    _on(ws)
    for i, at in enumerate(("2026-05-01T09:00", "2026-05-01T10:00", "2026-05-02T11:00")):
        _log(run_kg, at, f"s{i}")


def _ready(run_kg, now: str) -> dict:
    (p,) = [p for p in run_kg(f"status --json --now {now}").json["lifecycle"]["ready_to_promote"] if p["key"] == KEY]
    return p


def test_status_cycle_and_patterns_say_the_pattern_waits_and_until_when(ws, run_kg):
    _fresh_burst(ws, run_kg)
    now = "2026-05-03T12:00"
    p = _ready(run_kg, now)
    wait = p["baseline"]
    assert wait["by"] == "days" and wait["needed"] == 14 and 2.0 <= wait["watched"] < 2.2
    eligible = wait["eligible"]
    assert "2026-05-15T12:00" < eligible < "2026-05-16T12:00"  # 14 days weighted by the baseline's half-life
    day = datetime.fromisoformat(eligible).strftime("%Y-%m-%d %H:%M")
    assert f"watched {wait['watched']:.1f} of 14 days" in p["waiting"] and day in p["waiting"]
    text = run_kg(f"status --now {now}").stdout
    assert f"{KEY} (3x, 3 sessions) → TOOLS.md (waits: watched {wait['watched']:.1f} of 14 days, eligible from {day})" \
        in text and "verification.min_baseline_days" in text
    for dry in ("--dry-run ", ""):
        report = run_kg(f"cycle {dry}--json --now {now}").json
        assert report["promoted"] == []
        (w,) = [w for w in report["waiting"] if w["pattern_key"] == KEY]
        assert w["baseline"]["eligible"] == eligible and w["reason"] == p["waiting"]
        assert f"⏳ waiting '{KEY}' for TOOLS.md: too little history" in run_kg(f"cycle {dry}--now {now}").stdout
    listed = run_kg(f"patterns --json --now {now}").json
    assert [r["waits"]["eligible"] for r in listed if r["key"] == KEY] == [eligible]
    assert f"{KEY}: watched {wait['watched']:.1f} of 14 days, eligible from {day}" in \
        run_kg(f"patterns --now {now}").stdout
    shown = run_kg(f"patterns show {KEY} --json --now {now}").json
    assert shown["waits"]["eligible"] == eligible
    assert f"waits: {p['waiting']}" in run_kg(f"patterns show {KEY} --now {now}").stdout


def test_status_says_how_to_turn_the_wait_off_in_the_words_patterns_uses(ws, run_kg):
    """Review: `kg patterns` said where the days are set (rules/lifecycle.toml, or kg.toml), `kg status`'s ⏳ line
    named the rule alone, and neither said how to turn the wait off."""
    _fresh_burst(ws, run_kg)
    now = "2026-05-03T12:00"
    (note,) = [line.strip() for line in run_kg(f"patterns --now {now}").stdout.splitlines()
               if "days watched before a rule" in line]
    assert "0 turns the wait off" in note and "[rules.lifecycle.verification] in the workspace's kg.toml" in note
    (line,) = [line for line in run_kg(f"status --now {now}").stdout.splitlines() if "⏳ a pattern" in line]
    assert line.endswith(note), line


def test_promoted_at_the_stated_minute_not_a_day_earlier(ws, run_kg):
    _fresh_burst(ws, run_kg)
    eligible = datetime.fromisoformat(_ready(run_kg, "2026-05-03T12:00")["baseline"]["eligible"])
    _log(run_kg, "2026-05-08T09:00", "s3")  # a later occurrence does not move the day
    early = run_kg(f"cycle --json --now {(eligible - timedelta(days=1)).isoformat()}").json
    assert early["promoted"] == [] and [w["baseline"]["eligible"] for w in early["waiting"]] == [eligible.isoformat()]
    on_time = run_kg(f"cycle --json --now {eligible.isoformat()}").json
    assert [p["pattern_key"] for p in on_time["promoted"]] == [KEY] and on_time["waiting"] == []
    assert ACTION in run_kg("why --json " + json.dumps(f"- {ACTION}") + f" --now {eligible.isoformat()}").stdout


def test_imported_older_history_counts_as_watched(ws, run_kg, tmp_path):
    old = tmp_path / "old.jsonl"
    # a history kept every few days (one entry three weeks before and nothing since would be days nobody
    # watched: verification.unobserved_gap_days, tests/cli/test_lifecycle_unwatched.py)
    old.write_text("".join(json.dumps({"kind": "learning", "summary": f"The staging database is reset on day {d}",
                                       "at": f"2026-04-{d}T09:00:00", "session": "imported"}) + "\n"
                           for d in (10, 15, 20, 25, 30)), encoding="utf-8")
    assert run_kg(f"ingest {old} --json --now 2026-05-01T08:00").exit_code == 0
    _fresh_burst(ws, run_kg)
    assert _ready(run_kg, "2026-05-03T12:00")["baseline"] is None  # watched since April 10: 23 days
    report = run_kg("cycle --json --now 2026-05-03T12:00").json
    assert [p["pattern_key"] for p in report["promoted"]] == [KEY] and report["waiting"] == []
