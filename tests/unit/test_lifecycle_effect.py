"""The workspace's effect prior (empirical Bayes over every change), the promotion gate on a thin baseline and the
deadline that waits for evidence: pure functions, no database."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from kg.core.policy import packaged
from kg.lifecycle import effect, stats, verify, verify_wait
from kg.lifecycle.policy import LifecyclePolicy

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
T0 = datetime(2026, 3, 1, 9, 0)
D = timedelta(days=1)


def _with(**kw) -> LifecyclePolicy:
    return replace(LP, verification=replace(LP.verification, **kw))


def counts(before: float, t_before: float, after: float, t_after: float) -> verify.Counts:
    return verify.Counts(int(before), int(after), before, t_before, after, t_after, ())


def _poisson(rng: random.Random, lam: float) -> int:
    k, t = 0, rng.expovariate(1.0)
    while t < lam:
        k += 1
        t += rng.expovariate(1.0)
    return k


def _workspace(rng: random.Random, n: int, effects: list[float]) -> list[tuple[float, float, float, float]]:
    """n changes with long baselines (so each says clearly what its rule did), effects drawn from `effects`."""
    rows = []
    for _ in range(n):
        rate, r = rng.uniform(0.5, 1.0), rng.choice(effects)
        rows.append((float(_poisson(rng, rate * 60)), 60.0, float(_poisson(rng, rate * r * 60)), 60.0))
    return rows


def test_the_vague_prior_is_a_proper_distribution_centred_on_no_effect():
    v = effect.vague()
    assert sum(v.weights) == pytest.approx(1.0)
    assert v.p_below(1.0) == pytest.approx(0.5, abs=0.02) and v.changes == 0


def test_the_likelihood_without_priors_is_the_jeffreys_test():
    """Flat in log r, the grid posterior is the conditional binomial test of kg.lifecycle.stats."""
    flat = effect.EffectPrior(tuple([1 / effect.STEPS] * effect.STEPS), 1)
    post = effect.posterior(flat, 20, 40, 5, 14)
    # the Jeffreys test has ½ on both counts; the flat-in-log-r prior is Gamma(0) on the after rate: k_a - ½
    assert post.p_below(0.8) == pytest.approx(stats.p_ratio_below(0.8, 4.5, 14, 20.5, 40, prior=0.5), abs=0.03)


def test_the_fit_finds_the_workspaces_two_kinds_of_rule():
    rows = _workspace(random.Random(4), 60, [0.2, 1.0])
    prior = effect.fit(rows, strength=2, min_changes=8)
    assert prior.changes == 60
    helps, none = prior.p_below(0.45), prior.p_below(1.6) - prior.p_below(0.6)
    assert helps + none > 0.9 and 0.3 < helps < 0.7          # the mass sits on the two kinds, not between
    assert prior.p_below(0.45) - prior.p_below(0.12) > 0.25  # around 0.2×


def test_too_few_changes_give_the_vague_prior():
    rows = _workspace(random.Random(1), 5, [0.2])
    assert effect.fit(rows, strength=2, min_changes=8) == effect.vague()


def test_a_thin_baseline_borrows_from_the_workspace():
    """2 occurrences before, then 3 in 28 days at a third of the rate: alone the test cannot tell; in a
    workspace where most rules cut the rate to ~0.2×, the rule most likely works too, and the deadline keeps it."""
    c = counts(2, 6, 3, 28)
    alone = verify.judge(c, LP, deadline=True)
    pooled = effect.fit(_workspace(random.Random(2), 40, [0.2, 0.2, 0.2, 1.0]), strength=2, min_changes=8)
    v = verify.judge(c, _with(effect_prior=True, deadline_revert_posterior=0.8), deadline=True, effect=pooled)
    assert v.p_cut > alone.p_cut
    assert v.kind == verify.CONFIRMED and "effect prior from 40 changes" in v.summary


def test_with_the_effect_prior_the_deadline_reverts_only_on_a_likely_failure():
    pooled = effect.fit(_workspace(random.Random(3), 40, [0.2, 1.0]), strength=2, min_changes=8)
    lp = _with(effect_prior=True, deadline_revert_posterior=0.8)
    same = counts(30, 30, 28, 28)              # a long baseline, the same rate after
    assert verify.judge(same, lp, deadline=True, effect=pooled).kind in (verify.INEFFECTIVE, verify.WORSE)
    unsure = counts(3, 10, 5, 28)              # 0.6×, a thin baseline
    v = verify.judge(unsure, lp, deadline=True, effect=pooled)
    assert v.p_not_enough < 0.8 and v.kind == verify.CONFIRMED


def test_the_deadline_waits_until_an_effect_could_show():
    lp = _with(min_expected=4.0)
    rare = counts(2, 30, 1, 28)                # ~0.08/day: 2.3 expected in 28 days without an effect
    assert verify.expected_after(rare) == pytest.approx(28 * 2.5 / 30)
    v = verify.judge(rare, lp, deadline=True)
    assert v.kind == verify.INCONCLUSIVE and "the deadline waits" in v.summary
    assert verify.judge(counts(2, 30, 1, 56), lp, deadline=True).kind != verify.INCONCLUSIVE


@pytest.mark.parametrize("times,short", [
    ([0, 1, 2], True),                         # promoted on its third occurrence: 3 counted
    ([0, 3, 6, 9, 12, 15, 18, 21], False),     # 8 counted (first and trigger kept: kg watched from day 0)
])
def test_a_pattern_waits_for_a_baseline_a_verdict_can_rest_on(times, short):
    lp = _with(min_baseline_events=5.0, min_baseline_days=0.0)  # about the events gate, not the days one
    why = verify_wait.baseline_short([T0 + t * D for t in times], T0 + 22 * D, lp, observed_from=T0)
    assert bool(why) is short
    if short:
        assert "verification.min_baseline_events" in why
    assert verify_wait.baseline_short([T0], T0 + D, _with(min_baseline_events=0.0, min_baseline_days=0.0)) == ""


def test_the_cdf_and_quantile_agree():
    post = effect.posterior(effect.vague(), 10, 20, 4, 14)
    for q in (0.1, 0.5, 0.9):
        assert post.p_below(post.quantile(q)) == pytest.approx(q, abs=0.01)
    assert math.isclose(post.p_below(1e9), 1.0) and post.p_below(0) == 0.0
