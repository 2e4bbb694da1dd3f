"""Days with nothing at all logged are no exposure on either side of a verdict (`verification.unobserved_gap_days`,
kg/lifecycle/verify_watch.py): a spell of more than 14 days in which nobody used the agent (a holiday, the daily
cycle still running) is neither "the rate without the rule" when it falls inside a check, nor "the rate with it" when
it falls after the change. Before, only the rate before the change left it out: a rule taken out for a check over a
holiday was reverted as made worse on "0 in 14.0d" and a critical item raised (QA1 finding 1), and a rule that changed
nothing was confirmed by the holiday after it. Through the real cycle with a replayed `now`."""

from __future__ import annotations

from datetime import datetime, timedelta

import kg
from kg.lifecycle import api

D = timedelta(days=1)
KEY = "git.push.no_upstream"
RULE = "Run git push -u origin HEAD the first time"


def _log(ws, at: datetime) -> None:
    ws.log("error", "git push failed: no upstream branch", area="tooling", pattern_key=KEY, action=RULE, now=at,
           session=f"s{at:%m%d}")


def _promoted(ws, extra: str = "") -> kg.Workspace:
    """Twice a day on Nov 21 and 22, promoted to TOOLS.md on Nov 23 (min_baseline_days 0: a short script)."""
    (ws.root / "kg.toml").write_text("[rules.lifecycle.verification]\nmin_baseline_days = 0\n" + extra)
    (ws.root / "TOOLS.md").write_text("# Tools\n\n## Known Gotchas\n- human gotcha\n")
    ws = kg.open_workspace(ws.root)
    with ws:
        for day in (21, 22):
            _log(ws, datetime(2026, 11, day, 9, 11))
            _log(ws, datetime(2026, 11, day, 9, 12))
        promoted = api.cycle(ws, now=datetime(2026, 11, 23, 6, 15)).as_dict()["promoted"]
    assert [p["pattern_key"] for p in promoted] == [KEY]
    return ws


def _days(ws, first: datetime, last: datetime, per_day: int) -> list[dict]:
    """One cycle a day at 18:00 from `first` to `last`, `per_day` occurrences that morning (0: nobody used it)."""
    out, day = [], first
    with ws:
        while day <= last:
            for m in range(per_day):
                _log(ws, day.replace(hour=9, minute=11 + m))
            out.append(api.cycle(ws, now=day.replace(hour=18)).as_dict())
            day += D
    return out


def test_a_check_over_a_holiday_is_not_the_rate_without_the_rule(ws):
    """The rule halves the mistake (twice a day before, once a day with it) and is still undecided at its deadline
    (four occurrences before it): out for a 14-day check on Dec 21, the day after the agent was last used, and
    nothing at all is logged until after the check ends. Those 14 days are not watched, so they say nothing about
    the rate without the rule: it goes back (before, "0 in 14.0d out for a check" reverted it as made worse, with a
    critical item)."""
    ws = _promoted(ws)
    used = _days(ws, datetime(2026, 11, 23), datetime(2026, 12, 20), 1)
    assert all(r["reverted"] == [] and r["checks"] == [] for r in used)
    idle = _days(ws, datetime(2026, 12, 21), datetime(2027, 1, 10), 0)
    assert [x["verdict"] for r in idle for x in r["reverted"]] == []
    checks = [(r["now"][:10], c["action"]) for r in idle for c in r["checks"]]
    assert checks == [("2026-12-21", "out"), ("2027-01-04", "back")], checks
    (end,) = [v for r in idle for v in r["verified"] if v["check"] and v["check"]["state"] != "out"]
    assert end["verdict"] == "confirmed" and end["action"] == "back", end["summary"]
    # the check's days with nothing logged are not counted as the rate without the rule, and the verdict says so
    assert "0 in 0.0d out for a check counted as the rate without it" in end["summary"], end["summary"]
    assert "d since the change with nothing at all logged" in end["summary"], end["summary"]
    assert f"- {RULE}" in (ws.root / "TOOLS.md").read_text()
    assert ws.list(priority="critical", now=datetime(2027, 1, 10, 19)) == []  # no "kg reverted the rule" item


def test_a_holiday_after_the_change_does_not_confirm_a_rule_that_changed_nothing(ws):
    """The symmetric case (checks off, so the deadline's majority decides): twice a day before the rule and twice a
    day with it, then 16 days with nothing logged before the deadline. Counted as days with the rule and without the
    mistake, they read 24 in 28 days against 2.1/day and confirmed it; left out, 24 in 12.7 days is no cut, and the
    deadline's majority reverts it as ineffective."""
    ws = _promoted(ws, "check_max_out = 0\n")
    used = _days(ws, datetime(2026, 11, 24), datetime(2026, 12, 5), 2)
    assert all(r["reverted"] == [] for r in used)
    idle = _days(ws, datetime(2026, 12, 6), datetime(2026, 12, 31), 0)
    verdicts = [(r["now"][:10], v["verdict"], v["action"]) for r in idle for v in r["verified"]]
    assert verdicts and all(kind != "confirmed" for _, kind, _ in verdicts), verdicts
    (last,) = [v for r in idle for v in r["verified"] if v["action"] in ("revert", "auto_revert")]
    assert last["verdict"] == "ineffective", last["summary"]
    assert "after 24 in 12.7d" in last["summary"], last["summary"]
    assert "15.7d since the change with nothing at all logged" in last["summary"], last["summary"]
