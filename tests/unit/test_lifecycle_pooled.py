"""Two options of the verdict, both off by default (measured in rules/lifecycle.toml): a rule tried again judged on
every period it was live (`verification.pool_retries`), and the rate prior fitted to every pattern's rate without
its rules (`verification.prior_source = "patterns"`). Pure functions, no database."""

from __future__ import annotations

from datetime import datetime, timedelta

from kg.core.policy import packaged
from kg.lifecycle import verify
from kg.lifecycle.policy import LifecyclePolicy

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
T0 = datetime(2026, 3, 1, 9, 0)
D = timedelta(days=1)


def days(*xs: float) -> list[datetime]:
    return [T0 + x * D for x in xs]


def test_an_earlier_try_of_the_same_rule_counts_as_after():
    # 8 a day apart before the first try (day 8-22, live, 14 occurrences), 10 after its revert, the retry on day 32
    times = days(*range(8), *range(8, 22), *range(22, 32), 32.5, 34.5)
    first = [(T0 + 8 * D, T0 + 22 * D)]
    own = verify.evidence(times, T0 + 32 * D, T0 + 39 * D, LP, excluded=first, observed_from=T0)
    pooled = verify.evidence(times, T0 + 32 * D, T0 + 39 * D, LP, excluded=first, observed_from=T0, pooled=first)
    assert (own.after, own.t_after) == (2, 7.0)
    assert (pooled.after, pooled.k_after, pooled.t_after) == (16, 16.0, 21.0)
    assert (pooled.k_before, pooled.t_before) == (own.k_before, own.t_before)  # its baseline does not change
    assert "14 in 14.0d of an earlier try counted as after" in pooled.left_out
    # on its own week the retry looks like a rule that works; with its first try's fortnight it does not
    assert verify.judge(own, LP).p_cut > verify.judge(pooled, LP, monitoring=True).p_cut
    assert verify.judge(pooled, LP, monitoring=True).kind == verify.INEFFECTIVE


def test_a_pattern_rate_without_its_rules_counts_only_the_days_without_them():
    # kg watching from T0: a pattern first seen on day 40 may have been there a promotion window (30 days) before
    k, t = verify.rate_without_rules(days(40, 45, 50), [], T0 + 60 * D, LP, observed_from=T0)
    assert (k, t) == (3.0, 50.0)
    # a live rule's days and occurrences are not its rate without it
    k, t = verify.rate_without_rules(days(1, 2, 3, 10, 20), [(T0 + 5 * D, T0 + 25 * D)], T0 + 30 * D, LP,
                                     observed_from=T0)
    assert (k, t) == (3.0, 10.0)

