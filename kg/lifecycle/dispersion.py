"""Overdispersion: how much more a pattern's daily counts vary than a Poisson process's would. Pure.

The verdict's test (`kg.lifecycle.stats`) treats every counted occurrence as independent, so a day that brings
three at once (one session's retries, a burst) weighs as three pieces of evidence, and a rule that works is
reverted at 0.95 on one such day in its first week. The quasi-Poisson answer: the counts' variance is φ × their
mean, and the test's information is that of k / φ occurrences in t / φ days (the same rates, a wider posterior;
the negative binomial with a common dispersion gives the same to first order).

φ is Pearson's statistic over the pattern's calendar days (the counts capped per day as the test counts them),
each period between two cuts (the change, a revert, a check) with its own mean, so the rule's own effect is no
variance: X² = Σ_periods (T · Σ n_d² / N − N) on T days and N occurrences, with T − 1 degrees of freedom each.
A Poisson pattern gives X² ≈ its degrees of freedom. The estimate is shrunk toward 1 with the weight of
`strength` days, so a young pattern with one crowded day is not called bursty on that alone, and it is never
below 1 (fewer than Poisson is no reason for more confidence) nor above `ceiling`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime


def index(times: Iterable[datetime], cuts: Sequence[datetime], cap: int, *, strength: float,
          ceiling: float) -> float:
    """φ for the occurrence `times` between the first and last of `cuts` (sorted; each cut starts a new period),
    each calendar day counting at most `cap`; 1.0 when `strength` is 0 (off) or there is nothing to go on."""
    if strength <= 0 or len(cuts) < 2:
        return 1.0
    every = sorted(t for t in times if cuts[0] <= t < cuts[-1])
    x2 = df = 0.0
    for a, b in zip(cuts, cuts[1:], strict=False):
        if b <= a:
            continue
        per_day: dict[object, int] = {}
        for t in every:
            if a <= t < b:
                per_day[t.date()] = per_day.get(t.date(), 0) + 1
        days = (b.date() - a.date()).days + 1
        n = [min(x, cap) for x in per_day.values()]
        total = sum(n)
        if total <= 0 or days < 2:
            continue
        x2 += days * sum(x * x for x in n) / total - total
        df += days - 1
    phi = (x2 + strength) / (df + strength)
    return round(min(max(phi, 1.0), ceiling), 4)
