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


def test_a_rate_before_leaves_the_spell_out_and_the_rate_after_keeps_every_day():
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
