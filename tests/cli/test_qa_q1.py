"""Defects QA reproduced on main, through the real CLI on a real workspace: `kg doctor --dry-run` said of a torn
journal line that it waited to be applied while `kg doctor` sets it aside; an old entry (a preference included)
expired on the first cycle after it was imported; a kg rule reworded inside its block was called withdrawn."""

from __future__ import annotations

NOW = "2026-12-05T06:00:00"


def test_doctor_dry_run_says_a_torn_journal_line_is_set_aside(ws, run_kg):
    assert run_kg(["--now", NOW, "log", "learning", "first thing", "--wait"]).exit_code == 0
    folder, journal = ws.root / "memory" / ".kg", ws.journal.path  # (a lane of its own on a team graph)
    with open(journal, "a", encoding="utf-8") as fh:
        fh.write('{"broken json\n')
    dry = run_kg(["doctor", "--dry-run"])
    assert dry.exit_code == 0, dry.stderr
    line = next(ln for ln in dry.stdout.splitlines() if "journal:" in ln)
    assert "1 journal line(s) cannot be applied" in line and "journal.rejected" in line, line
    assert "waiting to be applied" not in line, line
    assert not (folder / "journal.rejected").exists()  # a dry run moves nothing
    assert '{"broken json' in journal.read_text()
    done = run_kg(["doctor"])
    assert done.exit_code == 0, done.stderr
    assert 'broken json' in (folder / "journal.rejected").read_text()


def _status(run_kg) -> dict[str, tuple[str, str]]:
    listed = run_kg(["list", "--json", "--limit", "50"])
    assert listed.exit_code == 0, listed.stderr
    return {e["text"]: (e["status"], e["priority"]) for e in listed.json}


def test_an_old_import_is_not_expired_by_the_next_cycle_and_a_preference_never(ws, run_kg):
    items = ('{"kind":"learning","summary":"User prefers tabs over spaces in every file","category":"preference",'
             '"at":"2026-08-01T10:00:00"}\n'
             '{"kind":"learning","summary":"Run the migrations before the seed script","at":"2026-08-01T10:00:00"}\n')
    assert run_kg(["--now", NOW, "ingest", "-"], input=items).exit_code == 0
    first = run_kg(["--now", "2026-12-05T06:15:00", "cycle"])
    assert first.exit_code == 0, first.stderr
    assert "expired (wont_fix)" not in first.stdout or "0 expired (wont_fix)" in first.stdout, first.stdout
    assert _status(run_kg) == {"User prefers tabs over spaces in every file": ("pending", "medium"),
                               "Run the migrations before the seed script": ("pending", "medium")}
    # 90 days after kg learned it the other one expires; the preference is kept until changed
    late = run_kg(["--now", "2027-03-06T06:15:00", "cycle", "--future"])
    assert late.exit_code == 0, late.stderr
    assert _status(run_kg) == {"User prefers tabs over spaces in every file": ("pending", "medium"),
                               "Run the migrations before the seed script": ("wont_fix", "low")}
    retention = run_kg(["retention"])
    assert "when kg learned them" in retention.stdout and "except preference entries" in retention.stdout


RULE = "Add the user to the docker group"


def test_a_rule_reworded_inside_its_block_is_called_edited_not_withdrawn(ws, run_kg):
    from datetime import date, timedelta

    for d in range(21):
        day = date(2026, 5, 1) + timedelta(days=d)
        r = run_kg(f"log error 'docker permission denied on socket' --category tool_gotcha --pattern-key docker.perm "
                   f"--session s{d} --action '{RULE}' --now {day.isoformat()}T10:00")
        assert r.exit_code == 0, r.stderr
    assert "promoted 'docker.perm' to TOOLS.md" in run_kg("cycle --now 2026-05-21T12:00").stdout
    tools = ws.root / "TOOLS.md"
    tools.write_text(tools.read_text().replace(f"- {RULE}", "- Put the user in the docker group (then log in again)"))
    for now in ("2026-05-22T12:00", "2026-05-23T12:00"):  # the cycle that pauses it, and the next
        r = run_kg(f"cycle --now {now}")
        assert r.exit_code == 0, r.stderr
        assert "edited by hand inside its kg block since 2026-05-22" in r.stdout, r.stdout
        assert "withdrawn by hand" not in r.stdout, r.stdout
    status = run_kg("status --now 2026-05-23T13:00")
    assert "edited by hand inside its kg block: reworded" in status.stdout, status.stdout
    assert "taken out of its file by hand" not in status.stdout and "withdrawn by hand" not in status.stdout
    paused = run_kg("status --json --now 2026-05-23T13:00").json["lifecycle"]["verifications_paused"]
    assert [(p["change"], p["how"]) for p in paused] == [("chg-20260521-001", "edited")]
    verify = run_kg("verify --now 2026-05-23T14:00")
    assert "paused (edited by hand inside its kg block since 2026-05-22)" in verify.stdout, verify.stdout
    tools.unlink()  # the file gone: that is a withdrawal
    assert "withdrawn by hand" in run_kg("status --now 2026-05-23T15:00").stdout
