"""Old history ingested with its own dates: the patterns made from it age from when kg learned it, as its entries
do (QA5 #2). A pattern's reinforcement was its newest member's own time, so the first cycle after `kg ingest` of
June-August errors expired their pattern (wont_fix) while the entries stayed pending, and the mistake logged again
today was never promoted; a Claude Code transcript of February reflected today lost its 7 patterns the same way.
Through the real CLI, on either backend."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_data_dir

TRANSCRIPT = shared_data_dir() / "transcripts/claude_code/258c7280-ae70-4798-800f-63464d01a85d.jsonl.gz"
KEY = "tests.db_not_running"
DAYS = ("2026-06-01", "2026-06-03", "2026-06-05", "2026-06-20", "2026-07-10", "2026-08-01")


def _ok(r):
    assert r.exit_code == 0, r.stderr
    return r


def test_a_pattern_of_ingested_old_history_is_not_expired_by_the_first_cycle(ws, run_kg, tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({"kind": "error", "summary": "pytest failed: database not running",
                                       "at": f"{d}T10:00:00", "session": f"h{i}", "pattern_key": KEY,
                                       "action": "start the db with docker compose up -d db"}) + "\n"
                           for i, d in enumerate(DAYS)))
    _ok(run_kg(f"ingest {old} --now 2026-12-05T11:00:00"))
    first = _ok(run_kg("cycle --json --now 2026-12-05T12:00:00")).json
    assert first["decayed"]["expired"] == 0, first["decayed"]
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "active"
    # 88 days after kg learned it: stale, not expired; the decay counts from that day, as for the entries
    later = _ok(run_kg("cycle --json --now 2027-03-03T12:00:00 --future --dry-run")).json
    assert later["decayed"]["expired"] == 0 and later["decayed"]["stale"] >= 1, later["decayed"]
    with (ws.root / "kg.toml").open("a") as f:
        f.write("\n[rules.lifecycle.verification]\nmin_baseline_days = 0\n")
    for s in (1, 2, 3):
        _ok(run_kg(["log", "error", "pytest failed: database not running", "--pattern-key", KEY, "--session",
                    f"today{s}", "--action", "start the db with docker compose up -d db", "--now",
                    f"2026-12-05T1{s}:00:00", "--wait"]))
    rep = _ok(run_kg("cycle --json --now 2026-12-05T14:00:00")).json
    assert [p["pattern_key"] for p in rep["promoted"]] == [KEY], rep


@pytest.mark.skipif(not TRANSCRIPT.is_file(), reason="needs /work/shared/data/transcripts")
def test_the_patterns_of_a_reflected_transcript_are_not_expired_by_the_first_cycle(run_kg):
    transcript = TRANSCRIPT
    _ok(run_kg(f"reflect {transcript} --apply --now 2026-12-05T10:00:00"))  # a session of February 2026
    assert _ok(run_kg("patterns --json --min 1")).json, "the transcript makes patterns"
    rep = _ok(run_kg("cycle --json --now 2026-12-05T12:00:00")).json
    assert rep["decayed"]["expired"] == 0, rep["decayed"]


HAND_WRITTEN = """# Learnings

## [ERR-20260301-001] tooling:pytest_db_down

**Logged**: 2026-03-01T10:00:00
**Priority**: high
**Status**: pending
**Area**: tooling

### Summary
pytest failed: database not running

### Suggested Action
start the db with docker compose up -d db

### Metadata
- Source: error
- Pattern-Key: tests.db_not_running
- Session: h1

---

## [LRN-20260302-001] best_practice:run_formatter

**Logged**: 2026-03-02T10:00:00
**Priority**: medium
**Status**: pending

### Summary
run the formatter before each commit

---
"""


def test_an_imported_old_hand_written_learnings_entry_ages_from_its_import(ws, run_kg):
    """A hand-written `.learnings` entry of March, imported in December: its age counts from the import (when kg
    learned it), as an ingested or reflected one's does; it was reinforced at its own March time, so the first
    cycle expired it and the pattern made from it (wont_fix)."""
    folder = ws.root / ".learnings"
    folder.mkdir()
    (folder / "LEARNINGS.md").write_text(HAND_WRITTEN, encoding="utf-8")
    r = _ok(run_kg("import trail --json --now 2026-12-05T11:00:00"))
    assert r.json["entries"] == 2, r.json
    first = _ok(run_kg("cycle --json --now 2026-12-05T12:00:00")).json
    assert first["decayed"]["expired"] == 0, first["decayed"]
    for entry in ("ERR-20260301-001", "LRN-20260302-001"):
        assert _ok(run_kg(f"show {entry} --json")).json["node"]["status"] == "pending", entry
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "active"
