"""The lifecycle commands: exact output for the common paths, exit codes and messages for bad input."""

from __future__ import annotations

import pytest


def test_propose_with_nothing(run_kg):
    r = run_kg("propose")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "✅ No proposals at this time.\n", "")
    assert run_kg("propose --json").json == []


def test_cycle_on_an_empty_workspace(run_kg):
    r = run_kg("cycle --now 2026-06-01T06:00")
    assert (r.exit_code, r.stdout) == (0, "🔄 kg cycle at 2026-06-01T06:00:00\n  nothing to do\n")
    d = run_kg("cycle --dry-run --json --now 2026-06-01T06:00").json
    assert d["dry_run"] is True and d["changed"] is False


@pytest.mark.parametrize("args,code,message", [
    ("approve 7", 2, "Error: no proposal #7: `kg propose` lists the pending ones\n"),
    ("skip 7", 2, "Error: say why with --reason \"...\" (it is kept with the proposal)\n"),
    ("skip 7 --reason nope", 2, "Error: no proposal #7: `kg propose` lists the pending ones\n"),
    ("conflicts resolve dec-x --winner a", 2, "Error: no conflict decision 'dec-x': `kg conflicts` lists them\n"),
    ("pin nope", 2, "Error: no node 'nope': `kg list` shows the ids\n"),
    ("reinforce nope", 2, "Error: no node 'nope': `kg list` shows the ids\n"),
    ("cycle --now yesterday", 2, ("Error: invalid --now 'yesterday': use ISO 8601, for example 2026-11-30 or "
                                 "2026-11-30T10:35:00\n")),
])
def test_bad_input(run_kg, args, code, message):
    r = run_kg(args)
    assert (r.exit_code, r.stdout, r.stderr) == (code, "", message)


def test_why_unknown_line_is_bad_input(run_kg):
    r = run_kg(["why", "- nobody wrote this"])
    assert r.exit_code == 2
    assert r.stdout == "not found: - nobody wrote this\n  no kg block holds this line and no change ever wrote it\n"
    assert r.stderr.startswith("Error: kg did not write this line")


@pytest.mark.baseline_wait_off("the proposal flow and status sections")
def test_proposal_flow_and_status_sections(run_kg, ws):
    from kg.lifecycle import api

    for i in range(3):
        run_kg(f"log learning 'merged without review' --category workflow --pattern-key review.skip "
               f"--session s{i} --action 'Ask for a review before merging' --now 2026-06-0{i + 1}T10:00")
    status = api.lifecycle_status(ws, now="2026-06-03T12:00")
    assert [p["key"] for p in status["ready_to_promote"]] == ["review.skip"]
    assert status["ready_to_promote"][0]["target"] == "AGENTS.md"
    run_kg("cycle --now 2026-06-03T12:00")
    r = run_kg("propose")
    assert r.stdout.splitlines()[1:5] == [
        "📋 1 Proposal(s) for Review:",
        "",
        "  [1] PROMOTION → AGENTS.md",
        "      Change: Add workflow rule: 'Ask for a review before merging'",
    ]
    status = api.lifecycle_status(ws, now="2026-06-03T12:00")
    assert status["ready_to_promote"] == [] and status["proposals_pending_total"] == 1
    r = run_kg("approve 1 --now 2026-06-03T13:00")
    assert r.stdout.splitlines()[0].startswith("✅ #1 (promotion): applied chg-20260603-001")
    assert "- Ask for a review before merging\n" in (ws.root / "AGENTS.md").read_text()
    assert run_kg("approve 1").stderr == "Error: proposal #1 is already approved; `kg propose` lists the pending ones\n"
    status = api.lifecycle_status(ws, now="2026-06-10T14:00")
    assert [v["change"] for v in status["verifications_due"]] == ["chg-20260603-001"]
    r = run_kg("verify --now 2026-06-10T14:00 --json")
    assert r.json["verified"][0]["verdict"] == "confirmed"
    assert api.lifecycle_status(ws, now="2026-06-10T14:00")["verifications_due"] == []
    # months later its monthly look is late, and only due: a confirmed rule has no deadline (QA: "overdue: revert")
    late = api.lifecycle_status(ws, now="2026-10-10T14:00")["verifications_due"]
    assert [(v["change"], v["overdue"]) for v in late] == [("chg-20260603-001", "none")]
    brief = run_kg("hook session-start --now 2026-10-10T14:00").stdout
    assert "[chg-20260603-001]" in brief and "overdue" not in brief and ", none" not in brief


def test_pin_and_reinforce(run_kg):
    eid = run_kg("log error 'disk full' --now 2026-01-01T10:00 --json").json["id"]
    run_kg("cycle --now 2026-03-05T10:00")          # 63 days: low and stale
    shown = run_kg(f"show {eid} --json").json["node"]
    assert (shown["priority"], shown["stale"]) == ("low", True)
    r = run_kg(f"reinforce {eid} --now 2026-03-05T11:00")
    assert r.stdout == f"💪 {eid} reinforced at 2026-03-05T11:00:00 (high, pending)\n"
    assert run_kg(f"pin {eid}").stdout == f"📌 {eid} pinned\n"
    run_kg("cycle --now 2027-01-01T10:00 --future")
    shown = run_kg(f"show {eid} --json").json["node"]
    assert (shown["priority"], shown["stale"], shown["status"]) == ("high", False, "pending")


def test_reinforce_a_node_without_a_priority(run_kg):
    """A lesson has no priority: the line said Python's `(None, active)` (a QA pass)."""
    lid = run_kg("node add lesson 'Check the disk before a build' --now 2026-01-01T10:00 --json").json["id"]
    r = run_kg(f"reinforce {lid} --now 2026-03-05T11:00")
    assert (r.exit_code, r.stdout) == (0, f"💪 {lid} reinforced at 2026-03-05T11:00:00 (active)\n")
    d = run_kg(f"reinforce {lid} --now 2026-03-05T11:00 --json").json
    assert (d["priority"], d["status"]) == (None, "active")  # JSON's null, as `kg list --json` writes it


@pytest.mark.parametrize("args", ["propose --now 2026-06-01", "conflicts --now 2026-06-01",
                                  "retention --now 2026-06-01", "status --now 2026-06-01T06:00"])
def test_now_is_accepted_after_any_subcommand(run_kg, args):
    r = run_kg(args)
    assert r.exit_code == 0, r.stderr


def test_why_with_now_after_the_line(run_kg):
    r = run_kg(["why", "- nobody wrote this", "--now", "2026-06-01"])
    # --now after the line is accepted; a line kg never wrote is bad input (exit 2), not a failure
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: kg did not write this line")
    assert r.stdout.startswith("not found: - nobody wrote this\n")


def test_a_cycle_at_a_mistyped_future_day_is_refused(run_kg):
    """(QA pass) `kg cycle --now 2099-01-01` marked every entry stale and won't-fix for good; a later cycle at the
    real time gave nothing back. Refused now, unless --future says the day is meant; a dry run shows it."""
    eid = run_kg("log error 'disk full' --json").json["id"]
    r = run_kg("cycle --now 2099-01-01")
    assert r.exit_code == 2 and "after this machine's clock" in r.stderr and "--future" in r.stderr
    assert run_kg(f"show {eid} --json").json["node"]["status"] == "pending"
    assert run_kg("cycle --now 2099-01-01 --dry-run").exit_code == 0
    assert run_kg("cycle --future --now 2099-01-01").exit_code == 0
    assert run_kg(f"show {eid} --json").json["node"]["stale"] is True


def test_a_dry_run_says_it_applied_the_entries_waiting_in_the_journal(run_kg, ws):
    """QA: with entries waiting in the journal, `kg cycle --dry-run` applied them (as every kg command does: they are
    the agent's acknowledged writes) under a header that said "nothing written". Now it says how many it applied."""
    for i in range(3):
        ws.log("error", f"flaky step {i} failed", now="2026-06-01T10:00", apply=False)
    r = run_kg("cycle --dry-run --now 2026-06-02T10:00")
    assert r.exit_code == 0, r.stderr
    assert "3 acknowledged entries waiting in the journal applied first" in r.stdout
    again = run_kg("cycle --dry-run --now 2026-06-02T10:00 --json")  # nothing waits any more
    assert again.json["journal_applied"] == 0 and "acknowledged" not in run_kg("verify --dry-run").stdout
