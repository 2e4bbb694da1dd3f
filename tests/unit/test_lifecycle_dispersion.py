"""Overdispersion (`verification.dispersion_strength`, kg/lifecycle/dispersion.py): a pattern whose days come in
bursts carries less information per occurrence than a Poisson one, so a first verification weighs its counts as
fewer. Pure, no database."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta

from kg.core.policy import packaged
from kg.lifecycle import dispersion, verify
from kg.lifecycle.policy import LifecyclePolicy

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
ON = replace(LP, verification=replace(LP.verification, dispersion_strength=10.0))
OFF = replace(LP, verification=replace(LP.verification, dispersion_strength=0.0))
T0 = datetime(2026, 3, 1, 9, 0)
D = timedelta(days=1)


def _days(rng: random.Random, n: int, share: float, size: int) -> list[datetime]:
    return [T0 + d * D + timedelta(hours=h) for d in range(n) if rng.random() < share for h in range(size)]


def test_a_pattern_that_comes_once_a_day_at_most_is_poisson():
    single = _days(random.Random(1), 40, 0.4, 1)
    assert dispersion.index(single, [T0, T0 + 40 * D], 3, strength=10, ceiling=4) == 1.0


def test_a_pattern_that_comes_in_threes_is_overdispersed():
    burst = _days(random.Random(1), 40, 0.2, 3)
    assert 2.0 < dispersion.index(burst, [T0, T0 + 40 * D], 3, strength=10, ceiling=4) <= 3.0
    assert dispersion.index(burst, [T0, T0 + 40 * D], 3, strength=0, ceiling=4) == 1.0  # off
    assert dispersion.index(burst, [T0, T0 + 40 * D], 1, strength=10, ceiling=4) == 1.0  # one a day counted


def test_the_rules_effect_is_no_variance():
    """Three every day before the change, none since: one mean for both would read that as overdispersion; each
    period between two cuts has its own."""
    times = [T0 + d * D + timedelta(hours=h) for d in range(20) for h in range(3)]
    cut = T0 + 19.5 * D
    assert dispersion.index(times, [T0, cut, T0 + 40 * D], 3, strength=10, ceiling=4) == 1.0
    assert dispersion.index(times, [T0, T0 + 40 * D], 3, strength=10, ceiling=4) > 1.0


def test_a_burst_in_the_first_week_is_not_a_revert_at_0_95():
    """18 counted in 16 days before, 9 in the first week after (bursts of three): as Poisson counts P(ratio > 0.5)
    is 0.975, a revert; weighed at φ 2 it is 0.92, and the check goes on."""
    c = verify.Counts(18, 9, 18.0, 16.0, 9.0, 7.0, (), 2.0)
    assert verify.judge(replace(c, dispersion=1.0), ON).kind == verify.INEFFECTIVE
    v = verify.judge(c, ON)
    assert v.kind == verify.INCONCLUSIVE and 0.9 < v.p_not_enough < 0.95, v
    assert "overdispersion φ 2" in v.summary and v.rate_after == round(9 / 7, 4)  # rates as counted
    monitored = verify.judge(c, ON, monitoring=True)  # the monitor's level was chosen on the Poisson posterior
    assert monitored.p_not_enough == verify.judge(replace(c, dispersion=1.0), ON, monitoring=True).p_not_enough


def test_evidence_carries_the_patterns_dispersion_when_on():
    rng = random.Random(3)
    times = _days(rng, 30, 0.35, 3)
    change, now = T0 + 16.5 * D, T0 + 23.5 * D
    assert verify.evidence(times, change, now, OFF, observed_from=T0).dispersion == 1.0
    assert verify.evidence(times, change, now, ON, observed_from=T0).dispersion > 1.5
