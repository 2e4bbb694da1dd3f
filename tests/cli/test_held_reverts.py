"""A revert kg cannot write is held, not recorded as done: a person edited inside the rule's kg block, and kg
never overwrites that, so the rule stays in the file and kg says so (QA2 #3). Spaces an editor leaves at a
line's end are no edit. A read-only file whose block is already current is no problem: kg has nothing to write
there (QA2 #7)."""

from __future__ import annotations

import os
import stat
from datetime import date, timedelta

import pytest

pytestmark = pytest.mark.baseline_wait_off("a revert on the first weeks of a workspace")

RULE = "start the db with docker compose up -d db"
LINE = f"- {RULE}"


def _log_days(run_kg, first: date, days: int, action: bool) -> None:
    for d in range(days):
        day = first + timedelta(days=d)
        extra = f" --action '{RULE}'" if action else ""
        r = run_kg(f"log error 'pytest failed: database connection refused on 5433' --pattern-key tests.db_down "
                   f"--session s{day:%m%d}{extra} --now {day.isoformat()}T09:00")
        assert r.exit_code == 0, r.stderr


def _promoted_then_no_better(run_kg, ws):
    """The rule promoted on 10-21 into TOOLS.md, and the mistake as frequent after it: due to be reverted."""
    _log_days(run_kg, date(2026, 10, 1), 20, action=True)
    assert "promoted 'tests.db_down' to TOOLS.md" in run_kg("cycle --now 2026-10-21T08:00").stdout
    tools = ws.root / "TOOLS.md"
    assert LINE + "\n" in tools.read_text()
    return tools


def test_a_revert_into_a_block_a_person_edited_is_held_and_the_rule_said_to_stay(run_kg, ws):
    tools = _promoted_then_no_better(run_kg, ws)
    tools.write_text(tools.read_text().replace(LINE + "\n", LINE + "\n- my own line\n"))
    edited = tools.read_text()
    _log_days(run_kg, date(2026, 10, 21), 15, action=False)
    r = run_kg("cycle --json --now 2026-11-05T08:00")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["reverted"] == [] and d["files"] == [], (d["reverted"], d["files"])
    (held,) = d["held"]
    assert held["change"] == "chg-20261021-001" and "still in TOOLS.md" in held["reason"]
    assert tools.read_text() == edited  # the person's line, and the rule, as they were
    text = run_kg("cycle --now 2026-11-05T12:00").stdout  # not recorded as done: held again, said again
    assert "✋ held 'tests.db_down' for TOOLS.md: kg would revert chg-20261021-001" in text and "reverted" not in text
    v = run_kg("verify --now 2026-11-05T12:10").stdout  # kg verify holds it and says so too
    assert "✋ held 'tests.db_down' for TOOLS.md" in v and "reverted" not in v, v
    why = run_kg(["why", LINE, "--now", "2026-11-05T12:30"]).stdout
    assert "reverted" not in why
    tools.write_text(edited.replace("- my own line\n", ""))  # the person takes their line out: kg may write again
    d = run_kg("cycle --json --now 2026-11-05T16:00").json
    assert [x["change"] for x in d["reverted"]] == ["chg-20261021-001"] and d["held"] == []
    assert LINE not in (tools.read_text() if tools.exists() else "")
    why = run_kg(["why", LINE, "--now", "2026-11-05T17:00"]).stdout  # settled: no check to come (QA2 #13c)
    assert "reverted on 2026-11-05, no further check" in why and "next check" not in why, why


def test_spaces_an_editor_left_at_a_line_end_are_no_edit(run_kg, ws):
    tools = _promoted_then_no_better(run_kg, ws)
    tools.write_text(tools.read_text().replace(LINE + "\n", LINE + "  \n"))
    assert "nothing to do" in run_kg("cycle --now 2026-10-22T08:00").stdout  # not rewritten, not flagged
    assert LINE + "  \n" in tools.read_text()
    _log_days(run_kg, date(2026, 10, 21), 15, action=False)
    d = run_kg("cycle --json --now 2026-11-05T08:00").json
    assert [x["change"] for x in d["reverted"]] == ["chg-20261021-001"] and d["flags"] == [], d["flags"]
    assert LINE not in (tools.read_text() if tools.exists() else "")


def _read_only(path) -> None:
    os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o222)  # kg's own check reads the mode, root or not


def test_a_read_only_file_whose_block_is_current_is_no_failure(run_kg, ws):
    tools = _promoted_then_no_better(run_kg, ws)
    _read_only(tools)
    for args in ("cycle --now 2026-10-22T08:00", "cycle --dry-run --now 2026-10-22T08:00",
                 "export memory --now 2026-10-22T08:00"):
        r = run_kg(args)
        assert r.exit_code == 0 and "skipped" not in r.stdout, (args, r.stdout, r.stderr)
    _log_days(run_kg, date(2026, 10, 21), 15, action=False)  # now kg has something to write there: said, exit 1
    for args in ("cycle --dry-run --json --now 2026-11-05T08:00", "cycle --json --now 2026-11-05T08:00"):
        r = run_kg(args)
        assert r.exit_code == 1, (args, r.stdout)
        assert [s["path"] for s in r.json["skipped"]] == ["TOOLS.md"] and r.json["reverted"] == []
        assert "read-only" in r.json["held"][0]["reason"]
    assert LINE in tools.read_text()


@pytest.mark.embedded_only("on a team graph a rule one member took out stays paused: another member's "
                           "file may still hold it (kg/lifecycle/verifying.py _out_by_hand)")
def test_a_held_revert_whose_line_the_person_then_took_out_is_reverted_and_the_file_left_alone(run_kg, ws):
    """The person's answer to a held revert can be to delete the rule's line by hand: the change was paused as
    "edited by hand" for good (never judged again while out). Its verdict on the days it was in effect is still a
    revert: recorded, and the person's file (their own line kept) is not rewritten."""
    tools = _promoted_then_no_better(run_kg, ws)
    tools.write_text(tools.read_text().replace(LINE + "\n", LINE + "\n- my own line\n"))
    _log_days(run_kg, date(2026, 10, 21), 15, action=False)
    assert run_kg("cycle --json --now 2026-11-05T08:00").json["held"]
    tools.write_text(tools.read_text().replace(LINE + "\n", ""))  # the rule out, the person's line in
    mine = tools.read_text()
    d = run_kg("cycle --json --now 2026-11-05T16:00").json
    assert [x["change"] for x in d["reverted"]] == ["chg-20261021-001"] and d["held"] == [], (d["reverted"], d["held"])
    assert tools.read_text() == mine
    why = run_kg(["why", LINE, "--now", "2026-11-05T17:00"]).stdout
    assert "reverted on 2026-11-05" in why and "taken out by hand" in why, why
    d = run_kg("cycle --json --now 2026-11-06T08:00").json  # settled: not judged, paused or reverted again
    assert d["reverted"] == [] and d["held"] == [] and not [w for w in d["withdrawn"] if w["action"] != "resumed"]
    assert tools.read_text() == mine


def test_a_rule_taken_out_by_hand_that_was_working_stays_paused(run_kg, ws):
    """Only a revert is carried out for a rule a person took out: one whose days in effect say it helped (or say
    nothing yet) stays paused, and is judged when its line is back."""
    tools = _promoted_then_no_better(run_kg, ws)
    tools.write_text(tools.read_text().replace(LINE + "\n", "- my own line\n"))
    d = run_kg("cycle --json --now 2026-11-05T08:00").json  # no mistake since the rule: not a revert
    assert d["reverted"] == [] and [w["action"] for w in d["withdrawn"]] == ["paused"], d["withdrawn"]
    d = run_kg("cycle --json --now 2026-11-20T08:00").json
    assert d["reverted"] == [] and [w["action"] for w in d["withdrawn"]] == ["still paused"], d["withdrawn"]


def test_a_rule_taken_out_by_hand_is_not_reverted_by_a_deadline_s_majority(run_kg, ws):
    """Its overdue clock moves on by the pause only when the line is back: judged while out, a rule in effect for
    2 days and out for weeks reached "deadline: the majority decides" and was auto-reverted (rev12 #1)."""
    tools = _promoted_then_no_better(run_kg, ws)
    _log_days(run_kg, date(2026, 10, 21), 2, action=False)
    tools.write_text(tools.read_text().replace(LINE + "\n", "- my own line\n"))
    assert [w["action"] for w in run_kg("cycle --json --now 2026-10-23T08:00").json["withdrawn"]] == ["paused"]
    _log_days(run_kg, date(2026, 10, 23), 40, action=False)
    for day in ("10-29", "11-05", "11-12", "11-19", "11-26", "12-03"):
        d = run_kg(f"cycle --json --now 2026-{day}T08:00").json
        assert d["reverted"] == [] and [w["action"] for w in d["withdrawn"]] == ["still paused"], (day, d)


@pytest.mark.embedded_only("on a team graph a rule one member took out stays paused: another member's "
                           "file may still hold it (kg/lifecycle/verifying.py _out_by_hand)")
def test_a_revert_by_hand_is_said_once_as_a_revert_not_also_as_a_pause(run_kg, ws):
    """The cycle that sees the line gone and reverts the change reports the revert only, the same in the dry run
    and the real one (rev12 #6: "paused ... withdrawn by hand" beside "reverted", worded apart in the two)."""
    tools = _promoted_then_no_better(run_kg, ws)
    tools.write_text(tools.read_text().replace(LINE + "\n", LINE + "\n- my own line\n"))
    _log_days(run_kg, date(2026, 10, 21), 15, action=False)
    assert run_kg("cycle --json --now 2026-11-05T08:00").json["held"]
    tools.write_text(tools.read_text().replace(LINE + "\n", ""))
    for args in ("cycle --dry-run --json --now 2026-11-05T16:00", "cycle --json --now 2026-11-05T16:00"):
        d = run_kg(args).json
        assert [x["change"] for x in d["reverted"]] == ["chg-20261021-001"] and d["withdrawn"] == [], (args, d)
