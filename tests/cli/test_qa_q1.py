"""Defects QA reproduced on main, through the real CLI on a real workspace: `kg doctor --dry-run` said of a torn
journal line that it waited to be applied while `kg doctor` sets it aside; an old entry (a preference included)
expired on the first cycle after it was imported; a kg rule reworded inside its block was called withdrawn."""

from __future__ import annotations

NOW = "2026-12-05T06:00:00"


def test_doctor_dry_run_says_a_torn_journal_line_is_set_aside(ws, run_kg):
    assert run_kg(["--now", NOW, "log", "learning", "first thing", "--wait"]).exit_code == 0
    folder = ws.root / "memory" / ".kg"
    with open(folder / "journal.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"broken json\n')
    dry = run_kg(["doctor", "--dry-run"])
    assert dry.exit_code == 0, dry.stderr
    line = next(ln for ln in dry.stdout.splitlines() if "journal:" in ln)
    assert "1 journal line(s) cannot be applied" in line and "journal.rejected" in line, line
    assert "waiting to be applied" not in line, line
    assert not (folder / "journal.rejected").exists()  # a dry run moves nothing
    assert '{"broken json' in (folder / "journal.jsonl").read_text()
    done = run_kg(["doctor"])
    assert done.exit_code == 0, done.stderr
    assert 'broken json' in (folder / "journal.rejected").read_text()
