"""Every command that writes lasting lifecycle state refuses a --now far past the machine's clock unless --future
says it is meant, as `kg cycle` does; a proposal is not decided before it was made (QA2 #4: `kg verify --now
2027-06-01` confirmed a rule on 223 days that had not happened, `kg approve N --now 2026-01-01` applied a change
before its proposal existed)."""

from __future__ import annotations

import pytest

FAR = "2099-01-01T08:00"  # decades past any machine clock this runs on


@pytest.fixture
def proposal(run_kg):
    """Proposal #1, made at 2026-10-21T08:00: a user's correction, proposed for SOUL.md."""
    for d in ("03", "06", "09", "12", "15", "18"):
        r = run_kg(f"log learning 'User: use pnpm not npm in this repo' --category correction --area tooling "
                   f"--pattern-key pkg.pnpm --session s{d} --now 2026-10-{d}T10:00")
        assert r.exit_code == 0, r.stderr
    assert "proposal #1" in run_kg("cycle --now 2026-10-21T08:00").stdout
    return 1


def test_a_far_future_now_is_refused_by_every_writing_command_unless_meant(run_kg, proposal):
    for args in ("verify", "approve 1", "skip 1 --reason no", "reinforce pat-20261003-001", "pin pat-20261003-001"):
        r = run_kg(f"{args} --now {FAR}")
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        assert "after this machine's clock" in r.stderr and "--future" in r.stderr
    assert run_kg("propose --json").json[0]["number"] == 1  # still pending: nothing was written
    assert run_kg(f"verify --dry-run --now {FAR}").exit_code == 0  # a dry run keeps nothing: no leave needed
    r = run_kg(f"approve 1 --future --now {FAR}")
    assert r.exit_code == 0 and "applied chg-20990101-001" in r.stdout, (r.stdout, r.stderr)


def test_a_proposal_is_not_decided_before_it_was_made(run_kg, proposal):
    for args in ("approve 1", "skip 1 --reason no"):
        r = run_kg(f"{args} --now 2026-01-01T08:00")
        assert r.exit_code == 2 and "before proposal #1 was made (2026-10-21 08:00)" in r.stderr, r.stderr
    assert run_kg("propose --json").json[0]["number"] == 1
    assert "applied chg-20261021-001" in run_kg("approve 1 --now 2026-10-21T09:00").stdout
