"""`kg.lifecycle.verify_watch`: the spells kg was not watching (more than `unobserved_gap_days` from one day with
anything logged to the next) and what they take out of a rule's rate before. Pure, no database."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from kg.core.policy import packaged
from kg.lifecycle import verify, verify_watch
from kg.lifecycle.policy import LifecyclePolicy


@pytest.mark.parametrize(("days", "gap", "spells"), [
    ([], 14, []),
    ([date(2026, 5, 1)], 14, []),
    ([date(2026, 5, 1), date(2026, 5, 15)], 14, []),  # 14 days apart: a break, still watched
    ([date(2026, 5, 1), date(2026, 5, 16)], 14, [(datetime(2026, 5, 2), datetime(2026, 5, 16))]),
    (["2026-05-16", "2026-05-01", "2026-05-03"], 7, [(datetime(2026, 5, 4), datetime(2026, 5, 16))]),  # as text
    ([date(2026, 5, 1), date(2026, 6, 1)], 0, []),  # 0: off
])
def test_the_spells_with_nothing_logged(days, gap, spells):
    assert verify_watch.unwatched(days, gap) == spells


def test_a_rate_before_leaves_the_spell_out():
    policy = LifecyclePolicy.from_mapping(packaged("lifecycle"))
    first = datetime(2025, 9, 3, 1)
    times = [datetime(2026, 11, d, 10) for d in range(20, 30)]
    watched = verify_watch.watched(first, [first.date(), *(t.date() for t in times)], 14)
    assert watched == first and verify_watch.gaps(watched) == [(datetime(2025, 9, 4), datetime(2026, 11, 20))]
    applied, now = datetime(2026, 11, 22, 23), datetime(2026, 11, 29, 23)
    plain = verify.evidence(times, applied, now, policy, observed_from=first)
    less = verify.evidence(times, applied, now, policy, observed_from=watched)
    assert plain.t_before > 28 and 2.9 < less.t_before < 2.96  # Nov 20 00:00 to Nov 22 23:00, weighted
    assert (less.k_before, less.k_after, less.t_after) == (plain.k_before, plain.k_after, plain.t_after)
    assert verify_watch.watched(first, [first.date()], 14) is first  # nothing to leave out: the plain start


def test_an_open_spell_ends_at_now_when_nothing_is_logged_that_day_either():
    """The hours of today before the cycle are no more watched than the days before them; a day with anything
    logged is watched from its midnight."""
    first, last = datetime(2026, 12, 1, 9), date(2026, 12, 5)
    quiet = verify_watch.watched(first, [first.date(), last], 14, datetime(2026, 12, 21, 18))
    assert verify_watch.gaps(quiet) == [(datetime(2026, 12, 6), datetime(2026, 12, 21, 18))]
    logged = verify_watch.watched(first, [first.date(), last, date(2026, 12, 21)], 14, datetime(2026, 12, 21, 18))
    assert verify_watch.gaps(logged) == [(datetime(2026, 12, 6), datetime(2026, 12, 21))]


@pytest.mark.parametrize(("a", "b", "days"), [
    (datetime(2026, 12, 1), datetime(2026, 12, 11), 5.0),      # half of it inside the spell
    (datetime(2026, 12, 7), datetime(2026, 12, 9), 0.0),       # all of it
    (datetime(2026, 12, 20), datetime(2026, 12, 22, 12), 2.5),  # after it
    (datetime(2026, 12, 9), datetime(2026, 12, 8), 0.0),       # empty
])
def test_days_watched_leave_the_spells_out(a, b, days):
    assert verify_watch.days_watched(a, b, [(datetime(2026, 12, 6), datetime(2026, 12, 20))]) == pytest.approx(days)


def test_a_spell_with_nothing_logged_is_no_exposure_after_the_change_nor_in_a_check():
    """QA1 finding 1: the same gap rule for every exposure a verdict counts. Before, the spell's days counted as the
    rate with the rule (after) and, inside a check, as the rate without it (before)."""
    policy = LifecyclePolicy.from_mapping(packaged("lifecycle"))
    first = datetime(2026, 11, 1, 9)
    times = [datetime(2026, 11, d, 9) for d in range(1, 31)]  # daily to Nov 30, then a holiday to Jan 10
    applied, now = datetime(2026, 11, 15, 12), datetime(2027, 1, 10, 12)
    days = [t.date() for t in times] + [date(2027, 1, 10)]
    watched = verify_watch.watched(first, days, 14, now)
    assert verify_watch.gaps(watched) == [(datetime(2026, 12, 1), datetime(2027, 1, 10))]
    check = [(datetime(2026, 12, 20), datetime(2027, 1, 3))]
    plain = verify.evidence(times, applied, now, policy, observed_from=first, checks=check)
    less = verify.evidence(times, applied, now, policy, observed_from=watched, checks=check)
    assert plain.t_after == pytest.approx(56.0 - 14.0)
    assert less.t_after == pytest.approx(15.5 + 0.5)  # to Dec 1, and Jan 10's morning
    assert plain.t_before - less.t_before == pytest.approx(14.0)  # the check's 14 days, none of them watched
    assert (less.k_before, less.k_after) == (plain.k_before, plain.k_after)
    assert "40.0d since the change with nothing at all logged" in less.left_out
    # the relapse of a reverted pattern counts the same days: the rule live Nov 15 to Dec 20, then reverted
    live = [(applied, datetime(2026, 12, 20))]
    on = verify.relapse(times, live, now, policy, observed_from=watched)
    assert on.after_days == pytest.approx(15.5) and on.before_days == pytest.approx(14.125 + 0.5)
