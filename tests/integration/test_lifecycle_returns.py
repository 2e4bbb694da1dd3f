"""Recovery's "the revert looks wrong" can be bounded (`recovery.max_returns`, 0 by default: measured in
rules/lifecycle.toml): once a pattern's rules were reverted that many times, kg asks a person instead of proposing the
same text again as a retry. Through the real cycle with a replayed `now`; the ask and its numbers are in `kg cycle
--json` and `kg propose --json`."""

from __future__ import annotations

from datetime import datetime, timedelta

import kg
from kg.lifecycle import api

D = timedelta(days=1)
RULE = "Add the user to the docker group"


def _log(ws, at: datetime) -> None:
    ws.log("error", "docker.perm permission denied on socket", now=at, session=f"s{at:%m%d%H}",
           pattern_key="docker.perm", action=RULE, category="tool_gotcha")


def _history(ws, extra: str = "") -> list[tuple[datetime, dict]]:
    """Promoted on May 8 after a week at one a day; one a day with the rule, twice a day without it, one or two a
    day with it again, so each revert looks wrong and recovery brings the same text back. Every proposal that is
    not an ask is approved the day it is made; an ask is left alone. Returns every recovery proposal, (day, item)."""
    with (ws.root / "kg.toml").open("a") as f:
        # min_baseline_days 0: the test is about returns after reverts, not the wait for a baseline
        f.write("\n[rules.lifecycle.verification]\ncheck_max_out = 0\nmin_baseline_days = 0\n" + extra)
    ws = kg.open_workspace(ws.root)
    proposed, state, i = [], "first", 0
    with ws:
        for d in range(8):
            _log(ws, datetime(2026, 5, 1, 10) + d * D)
        assert api.cycle(ws, now=datetime(2026, 5, 8, 12)).as_dict()["promoted"]
        day = datetime(2026, 5, 9)
        while day <= datetime(2026, 8, 31):
            for h in range({"first": 1, "off": 2, "again": 1 + i % 2}[state]):
                _log(ws, day.replace(hour=9 + h))
            r = api.cycle(ws, now=day.replace(hour=12)).as_dict()
            state, i = ("off", 0) if r["reverted"] else (state, i + 1)
            for q in r["proposed"]:
                proposed.append((day, q))
                if not q.get("asked"):
                    assert api.approve(ws, q["number"], now=day.replace(hour=13))["action"] == "applied"
                    state, i = "again", 0
            day += D
    return proposed


def test_after_max_returns_reverts_kg_asks_instead_of_trying_again(ws, run_kg):
    proposed = _history(ws, "[rules.lifecycle.recovery]\nmax_returns = 2\n")
    assert [bool(q.get("asked")) for _, q in proposed] == [False, True], proposed
    (day, ask) = proposed[-1]
    assert ask["recovered"] and ask["mode"] == "ask" and ask["text"] == RULE
    pending = run_kg(f"propose --json --now {day:%Y-%m-%d}T14:00").json
    (q,) = [x for x in pending if x["number"] == ask["number"]]
    # the relapse's numbers and the bound are in what the person reads
    assert "reverted 2 times (recovery.max_returns 2): kg asks before trying it again" in q["motivation"], q
    assert "Judged again on its whole history" in q["motivation"] and "P(ratio" in q["motivation"]


def test_without_the_bound_the_same_text_is_retried_each_time_the_revert_looks_wrong(ws):
    """The default (0, measured in rules/lifecycle.toml): every revert that looks wrong brings the text back."""
    proposed = _history(ws)
    assert len(proposed) >= 2 and not any(q.get("asked") for _, q in proposed), proposed


def test_a_burst_while_the_rule_was_live_does_not_keep_it_out_for_good(ws, run_kg):
    """recovery.max_per_day 2 (rules/lifecycle.toml): a relapse counts at most 2 occurrences of one day. Once a day
    before the rule; with it, 4 retries in one session every fourth day (the days it happens cut to a quarter);
    reverted at the deadline on the 3-a-day count; once a day again since. After the cool-down kg proposes the old
    text again (a reverted text with no new action is asked for), and says why; counted 3 a day the relapse showed
    no sign the rule worked and the pattern stayed reverted for good."""
    with (ws.root / "kg.toml").open("a") as f:
        # min_baseline_days 0, check_max_out 0: the test is about the return after a revert, not the wait or checks
        f.write("\n[rules.lifecycle.verification]\ncheck_max_out = 0\nmin_baseline_days = 0\n")
    ws = kg.open_workspace(ws.root)
    with ws:
        for d in range(8):
            _log(ws, datetime(2026, 5, 1, 10) + d * D)
        assert api.cycle(ws, now=datetime(2026, 5, 8, 12)).as_dict()["promoted"]
        day, live, i = datetime(2026, 5, 9), True, 0
        while day < datetime(2026, 6, 19):
            for h in range((4 if i % 4 == 0 else 0) if live else 1):
                _log(ws, day.replace(hour=8 + h))
            r = api.cycle(ws, now=day.replace(hour=12)).as_dict()
            assert not r["proposed"] and not r["promoted"], r
            if r["reverted"]:
                assert day == datetime(2026, 6, 5) and "over 3/day" in r["reverted"][0]["summary"], r
                live = False
            day, i = day + D, i + 1
        _log(ws, day.replace(hour=8))
    r = run_kg("cycle --json --now 2026-06-19T12:00").json
    (q,) = r["proposed"]
    assert q["recovered"] and q["text"] == RULE and q["mode"] == "ask", r
    (p,) = [x for x in run_kg("propose --json --now 2026-06-19T12:30").json if x["number"] == q["number"]]
    assert "the revert looks wrong" in p["motivation"] and "over 2/day" in p["motivation"], p["motivation"]
